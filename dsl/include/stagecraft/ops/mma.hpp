// Tensor-core operations: Hopper wgmma (registers accumulate) and Blackwell tcgen05 (TMEM
// accumulates). Their typing rules live here; which target allows which is checked by kernel().
//
//   wgmma(acc, a[s], transpose(b[s])); wgmma_commit(); wgmma_wait(0_c);
//       // acc: accumulator<f32>(shape(64_c, 256_c)); a[s]: (64, 64) bf16, b[s]: (256, 64) bf16,
//       // both swizzle(128_c): acc(M, N) += A(M, K) * B(N, K)^T, the usual K-major GEMM
//   tcgen05_mma(d_tmem, a_smem, transpose(b_smem), mma_done, k > 0);  // mma_done: orders_tensor_core
//   tcgen05_commit_arrive(mma_done); auto d = async_load_tmem(d_tmem);
#pragma once
#include <tuple>

#include "stagecraft/expr/tile.hpp"
#include "stagecraft/expr/view.hpp"
#include "stagecraft/memory/barrier.hpp"
#include "stagecraft/memory/smem.hpp"
#include "stagecraft/memory/tmem.hpp"
#include "stagecraft/ops/copy.hpp"
#include "stagecraft/ops/stmt.hpp"
#include "stagecraft/ir/wgmma.hpp"

namespace stagecraft {

namespace detail {
// D(M, N) += A(M, K) * B(K, N): shapes and dtypes common to both tensor-core generations.
// Fp8: the instruction also takes e4m3/e5m2 operands, in any pairing (wgmma's .e4m3.e5m2 etc.).
// BSplit = 2: a cta_group::2 MMA, where each CTA of the pair holds N / 2 of B's columns and
// the whole N of its D rows.
template <diag::fixed_string Op, class Acc, class A, class B, long long MinM, long long MaxN, long long NStep, bool Fp8 = false,
          long long BSplit = 1, bool Fp4 = false>
constexpr bool check_mma_operands() {
  using AD = typename A::dtype_t;
  using BD = typename B::dtype_t;
  using CD = typename Acc::dtype_t;
  // tcgen05 (Fp4) reads FP6 and unpacked FP4 (e2m1) in kind::f8f6f4 beside fp8: one family there, any two pair.
  constexpr bool a_fp8 = Fp4 ? ir::dtype_is_f8f6f4(AD::code) : ir::dtype_is_fp8(AD::code);
  constexpr bool b_fp8 = Fp4 ? ir::dtype_is_f8f6f4(BD::code) : ir::dtype_is_fp8(BD::code);
  constexpr bool a_int8 = ir::dtype_is_int8(AD::code), b_int8 = ir::dtype_is_int8(BD::code);  // s8/u8 pair freely
  constexpr bool a_fp4 = Fp4 && AD::code == ir::DType::e2m1x2;  // tcgen05's packed FP4 (block-scaled only: tcgen05_mma says so)
  using Ad = typename A::static_dims;
  using Bd = typename B::static_dims;
  using Cd = typename Acc::static_dims;
  if constexpr (Ad::rank != 2 || Bd::rank != 2 || Cd::rank != 2) {
    STAGECRAFT_ERROR("MMA operands are 2-D views", Op << ": MMA operands are 2-D views, but got A " << Ad{} << ", B " << Bd{}
                                                      << ", D " << Cd{});
    return false;
  } else if constexpr (Fp8 && a_fp8 != b_fp8) {
    STAGECRAFT_ERROR("an fp8 operand pairs only with an fp8 one",
                     Op << ": an fp8 operand pairs only with an fp8 one (e4m3 or e5m2" << (Fp4 ? "; tcgen05 also e2m3, e3m2 or e2m1" : "")
                        << "), but A is " << dtype_name<AD>() << " and B is " << dtype_name<BD>());
    return false;
  } else if constexpr (a_int8 != b_int8) {
    STAGECRAFT_ERROR("an 8-bit integer operand pairs only with an 8-bit integer one",
                     Op << ": an 8-bit integer operand pairs only with an 8-bit integer one (i8 or u8), but A is " << dtype_name<AD>()
                        << " and B is " << dtype_name<BD>());
    return false;
  } else if constexpr (!std::is_same_v<AD, BD> && !(Fp8 && a_fp8) && !a_int8) {
    STAGECRAFT_ERROR("Expected dtypes to match but A had type T and B had type U",
                     Op << ": Expected dtypes to match but A had type " << dtype_name<AD>() << " and B had type "
                        << dtype_name<BD>());
    return false;
  } else if constexpr (!(std::is_same_v<AD, f16> || std::is_same_v<AD, bf16> || a_int8 || std::is_same_v<AD, f32> || (Fp8 && a_fp8) || a_fp4)) {
    STAGECRAFT_ERROR("MMA inputs are f16, bf16, f32 (as tf32), i8 or u8",
                     Op << ": MMA inputs are f16, bf16, f32 (as tf32), i8 or u8, but got " << dtype_name<AD>());
    return false;
  } else if constexpr (a_int8 ? !std::is_same_v<CD, i32> : a_fp4 ? !std::is_same_v<CD, f32> : !ir::wgmma::accumulator_for(AD::code, CD::code)) {
    STAGECRAFT_ERROR("MMA accumulator dtype does not fit the inputs",
                     Op << ": " << dtype_name<AD>() << " inputs accumulate in "
                        << (a_int8 ? "i32" : (ir::wgmma::accumulator_for(AD::code, ir::DType::f16) ? "f32 or f16" : "f32"))
                        << ", but the accumulator is " << dtype_name<CD>());
    return false;
  } else if constexpr (BSplit == 1 && (Ad::values[0] != Cd::values[0] || Bd::values[1] != Cd::values[1] || Ad::values[1] != Bd::values[0])) {
    STAGECRAFT_ERROR("Expected shapes to match: D(M, N) += A(M, K) * B(K, N)",
                     Op << ": Expected shapes to match: D(M, N) += A(M, K) * B(K, N), but got D " << Cd{} << ", A " << Ad{}
                        << ", B " << Bd{});
    return false;
  } else if constexpr (BSplit != 1 && (Ad::values[0] != Cd::values[0] || Bd::values[1] * BSplit != Cd::values[1] || Ad::values[1] != Bd::values[0])) {
    STAGECRAFT_ERROR("Expected the shapes in each CTA to be D(M, N), A(M, K) and half of B, (K, N / 2)",
                     Op << ": Expected the shapes in each CTA to be D(M, N), A(M, K) and half of B, (K, N / 2), but got D " << Cd{} << ", A "
                        << Ad{} << ", B " << Bd{});
    return false;
  } else if constexpr (Cd::values[0] % MinM != 0 || Cd::values[1] % NStep != 0 || Cd::values[1] > MaxN ||
                       Ad::values[1] % (256 / AD::bits) != 0) {
    STAGECRAFT_ERROR("MMA shape not supported by the instruction",
                     Op << ": shape not supported: M = " << Cd::values[0] << " must be a multiple of " << MinM << ", N = "
                        << Cd::values[1] << " a multiple of " << NStep << " up to " << MaxN << ", K = " << Ad::values[1]
                        << " a multiple of " << 256 / AD::bits << " for " << dtype_name<AD>());
    return false;
  } else if constexpr (a_int8 && !ir::wgmma::n_for(AD::code, Cd::values[1])) {
    STAGECRAFT_ERROR("8-bit integer MMA N must be 8, 16, 24 or a multiple of 16",
                     Op << ": shape not supported: N = " << Cd::values[1] << " for " << dtype_name<AD>()
                        << " inputs must be 8, 16, 24 or a multiple of 16 (.m64nNk32.s32 of s8/u8)");
    return false;
  } else {
    return true;
  }
}

template <diag::fixed_string Op, class B, int Group = 1>
constexpr bool check_mma_barrier() {
  if constexpr (!check_barrier_operand<Op, B>()) {
    return false;
  } else if constexpr (!B::orders_tc) {
    STAGECRAFT_ERROR("MMA barrier must have orders_tensor_core set to True.",
                     Op << ": MMA barrier must have orders_tensor_core set to True. (declare it with barrier(..., orders_tensor_core))");
    return false;
  } else if constexpr (Group == 2 && kind_of<std::remove_cvref_t<B>> == operand_kind::cluster_barrier) {
    // The commit's multicast already reaches the same element in both CTAs: a cluster barrier,
    // whose every arrival goes to all its CTAs, would count each twice.
    STAGECRAFT_ERROR("a pair commit arrives on a barrier(...) of each CTA of the pair, not on a cluster_barrier",
                     Op << ": a pair commit arrives on a barrier(...) of each CTA of the pair, not on a cluster_barrier (declare it with "
                           "barrier(..., orders_tensor_core))");
    return false;
  } else {
    return true;
  }
}

template <diag::fixed_string Op, diag::fixed_string Role, class T, operand_kind... Allowed>
constexpr bool check_space() {
  if constexpr (is_barrier_like<T>) {
    STAGECRAFT_REJECT_BARRIER_AS_ARRAY(T);
    return false;
  } else if constexpr (((kind_of<T> != Allowed) && ...)) {
    STAGECRAFT_ERROR("MMA operand in the wrong memory space",
                     Op << ": " << Role << ", but got " << kind_name(kind_of<T>));
    return false;
  } else {
    return true;
  }
}
// The layout wgmma reads an SMEM operand with, from its type: the one ir::wgmma::describe()
// the verifier and both backends use.
template <class V>
constexpr ir::wgmma::operand_layout operand_layout_of(ir::wgmma::Major major, bool mn_8bit = false) {
  using D = typename V::static_dims;
  using L = typename V::layout_t;
  using T = typename L::tile;
  if constexpr (D::rank != 2) {
    return ir::wgmma::describe(V::dtype_t::bits, 0, 0, 0, 0, 0, 0, major, mn_8bit);
  } else {
    constexpr int tr = T::rank;
    ir::wgmma::operand_layout l = ir::wgmma::describe(V::dtype_t::bits, D::values[0], D::values[1], tr == 0 ? 0 : 2,
                                                      tr == 2 ? T::values[0] : D::values[0], tr >= 1 ? T::values[tr - 1] : D::values[1],
                                                      static_cast<int>(L::swizzle), major, mn_8bit);
    if (tr == 1 || tr > 2) l.error = ir::wgmma::LayoutError::bad_tiling;
    return l;
  }
}

// An operand as it is stored: a transposed view's underlying view; an SMEM view itself.
template <class V>
struct stored_of {
  using type = V;
};
template <class V>
  requires requires { typename V::stored_t; }
struct stored_of<V> {
  using type = typename V::stored_t;
};

template <diag::fixed_string Op, diag::fixed_string Role, class V, ir::wgmma::Major Major>
constexpr bool check_wgmma_layout() {
  if constexpr (kind_of<V> == operand_kind::tile) {
    return true;
  } else {
    using S = typename stored_of<V>::type;
    constexpr auto l = operand_layout_of<S>(Major);
    // A descriptor addresses its operand from one start address with the strides of its swizzle
    // mode: a sub-view is one only when it is whole rows of a swizzled 2-D view that start on a
    // swizzle pattern (8 rows), since the hardware swizzles by absolute address. (Unswizzled and
    // tiled views' core matrices would have to start on an 8-row boundary the type cannot prove.)
    if constexpr (S::is_subview && (S::static_dims::rank != 2 || S::layout_t::tile::rank != 0 || S::layout_t::swizzle == 0 || !S::contiguous ||
                                    S::start_alignment % (8 * S::layout_t::swizzle) != 0)) {
      STAGECRAFT_ERROR("a sub-view a wgmma descriptor cannot describe: only whole rows of a swizzled 2-D view, starting on a swizzle pattern",
                       Op << ": " << Role << " is the sub-view " << typename S::static_dims{} << " of " << typename S::full_dims{}
                          << " (swizzle " << S::layout_t::swizzle << " B, starting on " << S::start_alignment
                          << "-byte boundaries): a wgmma descriptor describes only whole rows of a swizzled 2-D view that start on a swizzle "
                             "pattern (8 rows of the swizzle width, " << 8 * S::layout_t::swizzle << " B); slice the rows, or index a stage");
      return false;
    } else if constexpr (l.error != ir::wgmma::LayoutError::none) {
      STAGECRAFT_ERROR("an operand layout wgmma cannot describe",
                       Op << ": " << Role << " (" << dtype_name<typename S::dtype_t>() << " " << typename S::static_dims{} << ", swizzle "
                          << S::layout_t::swizzle << " B, tiling " << typename S::layout_t::tile{} << "): an operand layout wgmma cannot describe: "
                          << ir::wgmma::layout_error_text(l.error));
      return false;
    } else {
      return true;
    }
  }
}

// tcgen05's SMEM operands are wgmma's canonical layouts (ir::tcgen05::plan_of describes them with
// the same function), except that kind::f8f6f4 and kind::i8 also read 8-bit operands MN-major. TMEM A has no
// SMEM layout.
template <diag::fixed_string Op, diag::fixed_string Role, class V, ir::wgmma::Major Major>
constexpr bool check_tcgen05_layout() {
  if constexpr (kind_of<V> == operand_kind::tmem) {
    return true;
  } else {
    using S = typename stored_of<V>::type;
    constexpr auto l = operand_layout_of<S>(Major, S::dtype_t::bits == 8);  // f8f6f4 and i8 read 8-bit operands MN-major too
    // The tcgen05 generator builds its descriptors from whole views (backends/*/tcgen05.cpp);
    // the verifier says the same for hand-built IR.
    if constexpr (S::is_subview) {
      STAGECRAFT_ERROR("a sub-view tcgen05_mma does not read",
                       Op << ": " << Role << " is the sub-view " << typename S::static_dims{} << " of " << typename S::full_dims{}
                          << ", which tcgen05_mma does not read: pass a whole view (index a stage)");
      return false;
    } else if constexpr (l.error != ir::wgmma::LayoutError::none) {
      STAGECRAFT_ERROR("an operand layout tcgen05 cannot describe",
                       Op << ": " << Role << " (" << dtype_name<typename S::dtype_t>() << " " << typename S::static_dims{} << ", swizzle "
                          << S::layout_t::swizzle << " B, tiling " << typename S::layout_t::tile{} << "): an operand layout tcgen05 cannot describe: "
                          << ir::wgmma::layout_error_text(l.error));
      return false;
    } else {
      return true;
    }
  }
}
}  // namespace detail

// transpose(view): a 2-D SMEM view read by wgmma with rows and columns swapped. No data moves:
// the operand's major-ness is what changes. b (N, K) in SMEM, wgmma(acc, a, transpose(b)) is
// acc += A * B^T with K contiguous in both operands, the layout every dtype supports.
template <class V>
struct transposed_smem {
  static constexpr operand_kind kind = operand_kind::smem_transposed;
  using stored_t = V;
  using dtype_t = typename V::dtype_t;
  using static_dims = dims<V::static_dims::values[1], V::static_dims::values[0]>;
  static constexpr info static_info = V::static_info;
  tree::Ref ref;
};

// transpose(tile) of a register tile is the other transpose, a view of its elements
// (expr/view.hpp): one name, as in NumPy, whatever the operand lives in.
template <class V>
auto transpose(V const& v) {
  if constexpr (is_tile<V>) {
    return detail::transpose_tile(v);
  } else if constexpr (kind_of<V> != operand_kind::smem) {
    if constexpr (is_barrier_like<V>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(V);
    else STAGECRAFT_ERROR("transpose(x) takes a register tile or a 2-D SMEM view", "transpose(x) takes a register tile or a 2-D SMEM view, but got " << detail::kind_name(kind_of<V>));
    return stmt<>{};
  } else if constexpr (V::static_dims::rank != 2) {
    STAGECRAFT_ERROR("transpose(view) takes a 2-D SMEM view",
                     "transpose(view) takes a 2-D SMEM view, but the view has shape " << typename V::static_dims{} << ": index its leading dimensions first");
    return stmt<>{};
  } else {
    return transposed_smem<V>{v.ref};
  }
}

// ---- Hopper ----------------------------------------------------------------------------------
template <class Acc, class A, class B>
auto wgmma(Acc const& acc, A const& a, B const& b, src_loc loc = src_loc::current()) {
  if constexpr (kind_of<Acc> != operand_kind::accumulator) {
    if constexpr (is_barrier_like<Acc>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(Acc);
    else STAGECRAFT_ERROR("wgmma: the accumulator must be a register accumulator",
                          "wgmma: the accumulator must be a register accumulator (accumulator<f32>(shape(m, n))), but got "
                              << detail::kind_name(kind_of<Acc>));
    return stmt<>{};
  } else if constexpr (!detail::check_space<"wgmma", "A must be a SMEM reference or a register tile", A, operand_kind::smem,
                                              operand_kind::smem_transposed, operand_kind::tile>()) {
    return stmt<>{};
  } else if constexpr (!detail::check_space<"wgmma", "B must be a SMEM reference", B, operand_kind::smem, operand_kind::smem_transposed>()) {
    return stmt<>{};
  } else if constexpr (!detail::check_mma_operands<"wgmma", Acc, A, B, 64, 256, 8, true>()) {
    return stmt<>{};
  } else if constexpr (kind_of<A> == operand_kind::tile && A::dtype_t::bits != 16 && A::dtype_t::bits != 8) {
    STAGECRAFT_ERROR("wgmma: A from registers must have a 16-bit or 8-bit type",
                     "wgmma: A from registers must have a 16-bit or 8-bit type (f16, bf16, e4m3, e5m2, i8 or u8), but it is "
                         << dtype_name<typename A::dtype_t>());
    return stmt<>{};
  } else if constexpr (!detail::check_wgmma_layout<"wgmma", "A", A,
                                                   kind_of<A> == operand_kind::smem_transposed ? ir::wgmma::Major::mn : ir::wgmma::Major::k>() ||
                       !detail::check_wgmma_layout<"wgmma", "B", B,
                                                   kind_of<B> == operand_kind::smem_transposed ? ir::wgmma::Major::k : ir::wgmma::Major::mn>()) {
    return stmt<>{};
  } else {
    constexpr std::uint8_t transpose =
        (kind_of<A> == operand_kind::smem_transposed ? 1 : 0) | (kind_of<B> == operand_kind::smem_transposed ? 2 : 0);
    tree::StmtP node;
    if constexpr (kind_of<A> == operand_kind::tile)
      node = tree::stmt_op(ir::StmtOp::wgmma, loc, {&acc.ref, nullptr, &b.ref}, {.value = a.node, .transpose = transpose});
    else
      node = tree::stmt_op(ir::StmtOp::wgmma, loc, {&acc.ref, &a.ref, &b.ref}, {.transpose = transpose});
    return detail::make_stmt<detail::info_of_operands<A, B>() | needs_warpgroup(warp_op_wgmma, uses_wgmma)>(std::move(node));
  }
}

// Close the group of wgmma ops this warpgroup issued since the last commit (wgmma.commit_group).
inline auto wgmma_commit(src_loc loc = src_loc::current()) {
  return detail::make_stmt<needs_warpgroup(warp_op_wgmma, uses_wgmma)>(tree::stmt_op(ir::StmtOp::wgmma_commit, loc));
}

// Wait until at most n wgmma groups of this warpgroup are in flight.
template <static_int N>
auto wgmma_wait(N, src_loc loc = src_loc::current()) {
  static_assert(N::value >= 0 && N::value <= 7, "wgmma_wait(n): n must be in [0, 7]");
  return detail::make_stmt<needs_warpgroup(warp_op_wgmma, uses_wgmma)>(tree::stmt_op(ir::StmtOp::wgmma_wait, loc, {}, {.n = N::value}));
}

// ---- Blackwell -------------------------------------------------------------------------------
namespace detail {
// Group 1: tcgen05.mma.cta_group::1, this CTA's SMEM into its TMEM. Group 2: cta_group::2 over the
// CTA pair of a cluster (cluster ranks 2p and 2p + 1 along axis 0): issued by the even CTA, it
// reads A (each CTA's M rows) and B (each CTA's N / 2 columns) from both CTAs' SMEM at the same
// offsets and writes each CTA's M rows of D, the whole N, into that CTA's TMEM.
template <int Group>
struct tcgen05_names {
  // One declarator each: the two deduce different fixed_string sizes, which clang refuses in one.
  static constexpr diag::fixed_string mma{"tcgen05_mma"};
  static constexpr diag::fixed_string commit{"tcgen05_commit_arrive"};
};
template <>
struct tcgen05_names<2> {
  static constexpr diag::fixed_string mma{"tcgen05_mma_2cta"};
  static constexpr diag::fixed_string commit{"tcgen05_commit_arrive_2cta"};
};
template <int Group>
constexpr const char* tcgen05_mma_name = Group == 2 ? "tcgen05_mma_2cta" : "tcgen05_mma";
template <int Group>
constexpr info tcgen05_group_info = info{uses_tcgen05 | (Group == 2 ? uses_tcgen05_pair : uses_tcgen05_single)};

template <class SA, class SB>
struct block_scale_t {
  SA a;
  SB b;
};
template <class T>
inline constexpr bool is_block_scale = false;
template <class SA, class SB>
inline constexpr bool is_block_scale<block_scale_t<SA, SB>> = true;

// The scales of a block-scaled MMA: TMEM views of ue8m0 codes (u8) or of ue4m3 codes (NVFP4);
// one check, one message.
template <class S>
constexpr bool check_scales() {
  if constexpr (kind_of<S> != operand_kind::tmem) {
    STAGECRAFT_ERROR("block_scale(sfa, sfb): the scales are TMEM references (copy them there with tcgen05_copy_scales)",
                     "block_scale(sfa, sfb): the scales are TMEM references (copy them there with tcgen05_copy_scales), but got "
                         << detail::kind_name(kind_of<S>));
    return false;
  } else if constexpr (!std::is_same_v<typename S::dtype_t, u8> && !std::is_same_v<typename S::dtype_t, ue4m3>) {
    STAGECRAFT_ERROR("block_scale(sfa, sfb): the scales are ue8m0 codes in u8 TMEM or ue4m3 codes in ue4m3 TMEM",
                     "block_scale(sfa, sfb): the scales are ue8m0 codes in u8 TMEM or ue4m3 codes in ue4m3 TMEM, but got " << dtype_name<typename S::dtype_t>());
    return false;
  } else {
    return true;
  }
}

// The scales' refs of a block-scaled tcgen05_mma (null: an unscaled one).
struct mma_scales {
  tree::Ref const* a = nullptr;
  tree::Ref const* b = nullptr;
};

template <int Group, bool Scaled, class Acc, class A, class B, class... Rest>
auto tcgen05_mma(src_loc loc, mma_scales sc, Acc const& acc, A const& a, B const& b, Rest const&... rest) {
  static_assert(sizeof...(Rest) == 1 || sizeof...(Rest) == 2,
                "tcgen05_mma(acc_tmem, a, b[, barrier], accumulate) / tcgen05_mma_2cta(acc_tmem, a, b[, barrier], accumulate)");
  constexpr auto op = tcgen05_names<Group>::mma;
  if constexpr (kind_of<Acc> != operand_kind::tmem) {
    if constexpr (is_barrier_like<Acc>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(Acc);
    else STAGECRAFT_ERROR("tcgen05_mma: the accumulator must be a TMEM reference",
                          tcgen05_mma_name<Group> << ": the accumulator must be a TMEM reference, but got " << detail::kind_name(kind_of<Acc>));
    return stmt<>{};
  } else if constexpr (!detail::check_space<op, "A must be a SMEM or TMEM reference", A, operand_kind::smem,
                                              operand_kind::smem_transposed, operand_kind::tmem>()) {
    return stmt<>{};
  } else if constexpr (kind_of<B> != operand_kind::smem && kind_of<B> != operand_kind::smem_transposed) {
    if constexpr (is_barrier_like<B>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(B);
    else STAGECRAFT_ERROR("tcgen05_mma: B must be a SMEM reference",
                          tcgen05_mma_name<Group> << ": B must be a SMEM reference, but got " << detail::kind_name(kind_of<B>));
    return stmt<>{};
  } else if constexpr (!detail::check_mma_operands<op, Acc, A, B, 64, 256, 16, true, Group, true>()) {  // fp8: kind::f8f6f4, s8/u8: kind::i8, e2m1x2
    return stmt<>{};
  } else if constexpr (!Scaled && std::is_same_v<typename A::dtype_t, e2m1x2>) {
    // ir::tcgen05::plan_of says the same for hand-built IR.
    STAGECRAFT_ERROR("e2m1x2 (packed FP4) operands are read by the block-scaled MMA only: give tcgen05_mma a block_scale(sfa, sfb)",
                     tcgen05_mma_name<Group> << ": e2m1x2 (packed FP4) operands are read by the block-scaled MMA only (kind::mxf4, kind::mxf4nvf4): "
                                                "give tcgen05_mma a block_scale(sfa, sfb)");
    return stmt<>{};
  } else if constexpr ((ir::dtype_is_unit_packed(A::dtype_t::code) || ir::dtype_is_unit_packed(B::dtype_t::code)) &&
                       (kind_of<A> != operand_kind::smem || kind_of<B> != operand_kind::smem_transposed)) {
    // ir::tcgen05::plan_of says the same for hand-built IR.
    STAGECRAFT_ERROR("FP6 and FP4 operands of kind::f8f6f4 are read K-major only, from SMEM: A (M, K) as it is, B (N, K) as transpose(b)",
                     tcgen05_mma_name<Group> << ": FP6 and FP4 operands of kind::f8f6f4 (e2m3, e3m2, e2m1) are read K-major only, from SMEM: A "
                                                "stored (M, K) as it is, B stored (N, K) as transpose(b), but A is "
                                             << dtype_name<typename A::dtype_t>() << " and B " << dtype_name<typename B::dtype_t>());
    return stmt<>{};
  } else if constexpr (kind_of<A> == operand_kind::tmem && A::dtype_t::bits == 8) {
    // ir::tcgen05::plan_of says the same for hand-built IR.
    STAGECRAFT_ERROR("A from TMEM is modelled for kind::f16 (f16, bf16) and kind::tf32 only: keep A in SMEM",
                     tcgen05_mma_name<Group> << ": A from TMEM is modelled for kind::f16 (f16, bf16) and kind::tf32 only, but A is "
                                             << dtype_name<typename A::dtype_t>() << " (" << (ir::dtype_is_f8f6f4(A::dtype_t::code) ? "kind::f8f6f4" : "kind::i8")
                                             << "): keep A in SMEM");
    return stmt<>{};
  } else if constexpr (kind_of<A> == operand_kind::tmem && Group == 2) {
    STAGECRAFT_ERROR("A from TMEM is modelled for cta_group::1 only (tcgen05_mma): keep A in SMEM for the pair MMA",
                     "tcgen05_mma_2cta: A from TMEM is modelled for cta_group::1 only (tcgen05_mma): keep A in SMEM for the pair MMA");
    return stmt<>{};
  } else if constexpr (!detail::check_tcgen05_layout<op, "A", A, kind_of<A> == operand_kind::smem_transposed ? ir::wgmma::Major::mn
                                                                                                             : ir::wgmma::Major::k>() ||
                       !detail::check_tcgen05_layout<op, "B", B, kind_of<B> == operand_kind::smem_transposed ? ir::wgmma::Major::k
                                                                                                             : ir::wgmma::Major::mn>()) {
    return stmt<>{};
  } else {
    auto args = std::tie(rest...);
    using Last = std::remove_cvref_t<decltype(std::get<sizeof...(Rest) - 1>(args))>;
    if constexpr (!(index_like<Last> || std::is_same_v<Last, bool>)) {
      STAGECRAFT_ERROR_T(Last, "tcgen05_mma: the last argument says whether to accumulate (a bool or an index condition such as k > 0)");
      return stmt<>{};
    } else {
      auto const& accumulate = std::get<sizeof...(Rest) - 1>(args);
      tree::op_extra extra;
      // As for wgmma: which operands are read M/N-major is the transpose bits (ir::tcgen05::plan_of).
      extra.transpose = static_cast<std::uint8_t>((kind_of<A> == operand_kind::smem_transposed ? 1 : 0) | (kind_of<B> == operand_kind::smem_transposed ? 2 : 0));
      extra.n = Group == 2 ? 2 : 0;  // ir::Stmt::n: the CTA group
      extra.flag = sc.a != nullptr;  // ir::Stmt::flag: block-scaled, the scales after B
      if constexpr (std::is_same_v<Last, bool>) extra.e0 = tree::make_expr(ir::ExprOp::constant, accumulate ? 1 : 0);
      else extra.e0 = node_of(accumulate);
      if constexpr (sizeof...(Rest) == 2) {
        using Bar = std::remove_cvref_t<decltype(std::get<0>(args))>;
        if constexpr (!detail::check_mma_barrier<op, Bar, Group>()) {
          return stmt<>{};
        } else {
          const auto element = detail::barrier_element(std::get<0>(args));  // alive until the node copied its ref
          auto const* bar = tree::ptr(element);
          return detail::make_stmt<detail::info_of_operands<A, B, Bar>() | tcgen05_group_info<Group>>(
              sc.a ? tree::stmt_op(ir::StmtOp::tcgen05_mma, loc, {&acc.ref, &a.ref, &b.ref, sc.a, sc.b, bar}, extra)
                   : tree::stmt_op(ir::StmtOp::tcgen05_mma, loc, {&acc.ref, &a.ref, &b.ref, bar}, extra));
        }
      } else {
        return detail::make_stmt<detail::info_of_operands<A, B>() | tcgen05_group_info<Group>>(
            sc.a ? tree::stmt_op(ir::StmtOp::tcgen05_mma, loc, {&acc.ref, &a.ref, &b.ref, sc.a, sc.b}, extra)
                 : tree::stmt_op(ir::StmtOp::tcgen05_mma, loc, {&acc.ref, &a.ref, &b.ref}, extra));
      }
    }
  }
}

// tcgen05_mma(d, a, b, block_scale(sfa, sfb)[, barrier], accumulate): the scales' own checks,
// then the unscaled statement's with their refs after B (ir::tcgen05::plan_of: shapes, formats).
template <class Acc, class A, class B, class SA, class SB, class... Rest>
auto tcgen05_mma_scaled(src_loc loc, Acc const& acc, A const& a, B const& b, block_scale_t<SA, SB> const& sc, Rest const&... rest) {
  if constexpr (!check_scales<SA>() || !check_scales<SB>()) {
    return stmt<>{};
  } else if constexpr (!std::is_same_v<typename SA::dtype_t, typename SB::dtype_t>) {
    STAGECRAFT_ERROR("block_scale(sfa, sfb): both scales have one format (u8: ue8m0, or ue4m3)",
                     "block_scale(sfa, sfb): both scales have one format (u8: ue8m0, or ue4m3), but sfa is " << dtype_name<typename SA::dtype_t>()
                                                                                                          << " and sfb " << dtype_name<typename SB::dtype_t>());
    return stmt<>{};
  } else if constexpr (kind_of<A> == operand_kind::tmem || !requires { A::dtype_t::code; } || !requires { B::dtype_t::code; }) {
    STAGECRAFT_ERROR("a block-scaled tcgen05_mma reads A and B from SMEM (e4m3/e5m2/e2m3/e3m2/e2m1: kind::mxf8f6f4; e2m1x2: kind::mxf4, kind::mxf4nvf4)",
                     "tcgen05_mma with block_scale: reads A and B from SMEM (e4m3/e5m2/e2m3/e3m2/e2m1: kind::mxf8f6f4; e2m1x2: kind::mxf4, kind::mxf4nvf4)");
    return stmt<>{};
  } else if constexpr (!((ir::dtype_is_f8f6f4(A::dtype_t::code) && ir::dtype_is_f8f6f4(B::dtype_t::code) && std::is_same_v<typename SA::dtype_t, u8>) ||
                         (std::is_same_v<typename A::dtype_t, e2m1x2> && std::is_same_v<typename B::dtype_t, e2m1x2>))) {
    STAGECRAFT_ERROR("a block-scaled tcgen05_mma reads e4m3/e5m2/e2m3/e3m2/e2m1 A and B with u8 (ue8m0) scales, or e2m1x2 A and B with u8 (ue8m0) or ue4m3 scales",
                     "tcgen05_mma with block_scale: reads e4m3/e5m2/e2m3/e3m2/e2m1 A and B with u8 (ue8m0) scales (kind::mxf8f6f4), or e2m1x2 A and B with u8 "
                     "(ue8m0, kind::mxf4) or ue4m3 scales (kind::mxf4nvf4), but A is "
                         << dtype_name<typename A::dtype_t>() << ", B is " << dtype_name<typename B::dtype_t>() << " and the scales are "
                         << dtype_name<typename SA::dtype_t>());
    return stmt<>{};
  } else if constexpr (std::is_same_v<typename A::dtype_t, e2m1x2> &&
                       (kind_of<A> == operand_kind::smem_transposed || kind_of<B> != operand_kind::smem_transposed)) {
    STAGECRAFT_ERROR("packed FP4 is read K-major only: A (M, K / 2) as it is, B (N, K / 2) as transpose(b)",
                     "tcgen05_mma with block_scale: packed FP4 (e2m1x2) is read K-major only: A stored (M, K / 2) as it is, B stored (N, K / 2) "
                     "as transpose(b)");
    return stmt<>{};
  } else {
    auto st = tcgen05_mma<1, true>(loc, mma_scales{&sc.a.ref, &sc.b.ref}, acc, a, b, rest...);
    return make_stmt<decltype(st)::static_info | info_of_operands<SA, SB>()>(std::move(st.node));
  }
}

template <class Axes>
constexpr bool names_axis_0() {
  for (int x : Axes::array)
    if (x == 0) return true;
  return false;
}
// Axes: none, or (the pair commit only) the collective_axes(...) of the other pairs it also
// arrives in: those whose MMAs read what this pair's CTAs multicast to them, and the reverse.
template <int Group, class Bar, class... Axes>
auto tcgen05_commit_arrive(Bar const& bar, src_loc loc, Axes...) {
  constexpr auto op = tcgen05_names<Group>::commit;
  if constexpr (!detail::check_mma_barrier<op, Bar, Group>()) {
    return stmt<>{};
  } else if constexpr (!((detail::is_axes<Axes>::value) && ...)) {
    STAGECRAFT_ERROR_T(Bar, "tcgen05_commit_arrive_2cta(bar[, collective_axes(...)]): the optional second argument names the cluster axes of the "
                            "other pairs the commit also arrives in");
    return stmt<>{};
  } else if constexpr ((names_axis_0<Axes>() || ...)) {
    STAGECRAFT_ERROR("a pair commit always arrives in both CTAs of its pair: its collective_axes name the other pairs' axes, 1 or 2, never 0",
                     "tcgen05_commit_arrive_2cta: a pair commit always arrives in both CTAs of its pair (cluster axis 0): its collective_axes name the axes along "
                     "which the other pairs lie whose MMAs read this pair's multicast loads, 1 or 2, never 0 (declare cluster(2_c, P) "
                     "and multicast along axis 1)");
    return stmt<>{};
  } else {
    static constexpr std::array<int, (0 + ... + Axes::size)> axes = [] {
      std::array<int, (0 + ... + Axes::size)> a{};
      if constexpr (sizeof...(Axes) == 1) a = (Axes::array, ...);
      return a;
    }();
    constexpr info axes_info = [] {
      info i{};
      ((i.max_axis = Axes::max_axis), ...);
      return i;
    }();
    return detail::make_stmt<detail::info_of_operands<Bar>() | tcgen05_group_info<Group> | axes_info>(tree::stmt_op(
        ir::StmtOp::tcgen05_commit_arrive, loc, {tree::ptr(detail::barrier_element(bar))}, {.n = Group == 2 ? 2 : 0, .axes = axes}));
  }
}
}  // namespace detail

// tcgen05_mma(acc_tmem, a, b[, barrier], accumulate)
template <class Acc, class A, class B, class Accumulate>
auto tcgen05_mma(Acc const& acc, A const& a, B const& b, Accumulate const& accumulate, src_loc loc = src_loc::current()) {
  return detail::tcgen05_mma<1, false>(loc, {}, acc, a, b, accumulate);
}
template <class Acc, class A, class B, class Bar, class Accumulate>
  requires(!std::is_same_v<Accumulate, src_loc>)
auto tcgen05_mma(Acc const& acc, A const& a, B const& b, Bar const& bar, Accumulate const& accumulate, src_loc loc = src_loc::current()) {
  return detail::tcgen05_mma<1, false>(loc, {}, acc, a, b, bar, accumulate);
}

// tcgen05_mma(acc_tmem, a, b, block_scale(sfa, sfb)[, barrier], accumulate): the block-scaled MMA
// (kind::mxf8f6f4.block_scale.block32): e4m3/e5m2 A and B, each product of row i of A and column
// j of B times sfa_i * sfb_j, one ue8m0 scale per 32 elements of K (ir/tcgen05.hpp). sfa and sfb
// are u8 TMEM (a whole allocation or a ring's stage) holding the scales where the tensor core
// reads them: row i's at lane i, byte kb of 32-bit column i / 32 for the kb-th 32 of K, which is
// what tcgen05_copy_scales puts there. One statement covers at most 128 of K (four IDs of a cell).
template <class SA, class SB>
auto block_scale(SA const& sfa, SB const& sfb) {
  return detail::block_scale_t<SA, SB>{sfa, sfb};
}
template <class Acc, class A, class B, class SA, class SB, class Accumulate>
auto tcgen05_mma(Acc const& acc, A const& a, B const& b, detail::block_scale_t<SA, SB> const& sc, Accumulate const& accumulate,
                 src_loc loc = src_loc::current()) {
  return detail::tcgen05_mma_scaled(loc, acc, a, b, sc, accumulate);
}
template <class Acc, class A, class B, class SA, class SB, class Bar, class Accumulate>
  requires(!std::is_same_v<Accumulate, src_loc>)
auto tcgen05_mma(Acc const& acc, A const& a, B const& b, detail::block_scale_t<SA, SB> const& sc, Bar const& bar, Accumulate const& accumulate,
                 src_loc loc = src_loc::current()) {
  return detail::tcgen05_mma_scaled(loc, acc, a, b, sc, bar, accumulate);
}

// tcgen05_mma_2cta(acc_tmem, a, b[, barrier], accumulate): the pair MMA (cta_group::2). Every
// operand is this CTA's half: acc (128, N) and a (128, K) its rows, b (K, N / 2) its columns.
// Only the pair's even CTA issues it (if_(cluster_idx(0_c) % 2_c == 0_c, ...)); the kernel needs
// a cluster whose axis 0 has an even extent.
template <class Acc, class A, class B, class Accumulate>
auto tcgen05_mma_2cta(Acc const& acc, A const& a, B const& b, Accumulate const& accumulate, src_loc loc = src_loc::current()) {
  return detail::tcgen05_mma<2, false>(loc, {}, acc, a, b, accumulate);
}
template <class Acc, class A, class B, class Bar, class Accumulate>
  requires(!std::is_same_v<Accumulate, src_loc>)
auto tcgen05_mma_2cta(Acc const& acc, A const& a, B const& b, Bar const& bar, Accumulate const& accumulate,
                      src_loc loc = src_loc::current()) {
  return detail::tcgen05_mma<2, false>(loc, {}, acc, a, b, bar, accumulate);
}

// tcgen05_copy_scales(src, dst[, group]): tcgen05.cp.cta_group::1.32x128b.warpx4, one 512-byte
// block of scale codes (ue8m0 in u8, or ue4m3) from SMEM into TMEM, asynchronously, issued by one
// thread into its tcgen05 stream. src: 32 rows of 16 bytes, unswizzled (smem<u8>(shape(S, 32_c,
// 16_c)), a stage of it), in the 128 x 4 block layout cuBLASLt and CUTLASS keep scales in: byte
// (i % 32) * 16 + (i / 32) * 4 + kb is the scale of row i for its kb-th block of K. dst: TMEM of the
// same type, columns 4 group .. 4 group + 3 of every lane (group: a static integer, 0 if left
// out); row r of src lands in lanes r, r + 32, r + 64 and r + 96, where block_scale(...) reads it.
// A statement whose K needs more than 4 scales per row reads the next 4-column group per 4
// scales (block_scale), which is what the group argument fills.
// Order: a tcgen05_mma the same thread issues later reads what it copied (the two execute in
// issue order); anyone else, and any refill of src, must be ordered after it by a
// tcgen05_commit_arrive's barrier, as for an MMA. The copy must also be ordered after every MMA
// still reading the columns it overwrites (the ISA does not order an MMA before a later copy).
namespace detail {
template <long long Group, class Src, class Dst>
auto tcgen05_copy_scales(Src const& src, Dst const& dst, src_loc loc) {
  if constexpr (kind_of<Src> != operand_kind::smem) {
    if constexpr (is_barrier_like<Src>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(Src);
    else STAGECRAFT_ERROR("tcgen05_copy_scales(src, dst): src is a SMEM view of scale codes",
                          "tcgen05_copy_scales(src, dst): src is a SMEM view of scale codes, but got " << detail::kind_name(kind_of<Src>));
    return stmt<>{};
  } else if constexpr (kind_of<Dst> != operand_kind::tmem) {
    if constexpr (is_barrier_like<Dst>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(Dst);
    else STAGECRAFT_ERROR("tcgen05_copy_scales(src, dst): dst is a TMEM reference",
                          "tcgen05_copy_scales(src, dst): dst is a TMEM reference, but got " << detail::kind_name(kind_of<Dst>));
    return stmt<>{};
  } else if constexpr (!std::is_same_v<typename Src::dtype_t, typename Dst::dtype_t> ||
                       !(std::is_same_v<typename Src::dtype_t, u8> || std::is_same_v<typename Src::dtype_t, ue4m3>)) {
    STAGECRAFT_ERROR("tcgen05_copy_scales copies scale codes: u8 (ue8m0) or ue4m3, the same type in SMEM and in TMEM",
                     "tcgen05_copy_scales copies scale codes: u8 (ue8m0) or ue4m3, the same type in SMEM and in TMEM, but src is "
                         << dtype_name<typename Src::dtype_t>() << " and dst " << dtype_name<typename Dst::dtype_t>());
    return stmt<>{};
  } else if constexpr (Group < 0) {
    STAGECRAFT_ERROR("tcgen05_copy_scales(src, dst, group): the column group is 0 or more",
                     "tcgen05_copy_scales(src, dst, group): the column group is 0 or more, but got " << Group);
    return stmt<>{};
  } else {
    // The verifier checks the 512 unswizzled bytes and that dst's lanes hold the group's 16 bytes
    // (ir verify: tcgen05_cp).
    tree::op_extra extra;
    if constexpr (Group != 0) extra.e0 = tree::make_expr(ir::ExprOp::constant, Group);
    return detail::make_stmt<detail::info_of_operands<Src, Dst>() | detail::tcgen05_group_info<1>>(
        tree::stmt_op(ir::StmtOp::tcgen05_cp, loc, {&src.ref, &dst.ref}, extra));
  }
}
}  // namespace detail

template <class Src, class Dst>
auto tcgen05_copy_scales(Src const& src, Dst const& dst, src_loc loc = src_loc::current()) {
  return detail::tcgen05_copy_scales<0>(src, dst, loc);
}
template <class Src, class Dst, long long G>
auto tcgen05_copy_scales(Src const& src, Dst const& dst, constant<G>, src_loc loc = src_loc::current()) {
  return detail::tcgen05_copy_scales<G>(src, dst, loc);
}

// Arrive on `bar` once every earlier tcgen05 op of this thread has completed.
template <class Bar>
auto tcgen05_commit_arrive(Bar const& bar, src_loc loc = src_loc::current()) {
  return detail::tcgen05_commit_arrive<1>(bar, loc);
}
// The pair's commit (tcgen05.commit.cta_group::2 ... multicast::cluster, mask: both CTAs of the
// pair): once this thread's earlier pair MMAs have completed, one arrival on `bar` in each CTA
// of the pair, the same barrier element in both. With collective_axes(1_c) (cluster(2_c, P)):
// in every CTA of the P pairs along axis 1 as well, the 2P CTAs that multicast A into each other:
// a stage's empty barrier there then counts one arrival per pair (arrivals(P)), so no CTA refills
// a stage, in its SMEM or its peers', before every pair's MMA over it completed.
template <class Bar>
auto tcgen05_commit_arrive_2cta(Bar const& bar, src_loc loc = src_loc::current()) {
  return detail::tcgen05_commit_arrive<2>(bar, loc);
}
template <class Bar, class Axes>
  requires(!std::is_same_v<Axes, src_loc>)
auto tcgen05_commit_arrive_2cta(Bar const& bar, Axes axes, src_loc loc = src_loc::current()) {
  return detail::tcgen05_commit_arrive<2>(bar, loc, axes);
}

// tcgen05.dealloc: free a TMEM allocation. Every TMEM allocation is freed exactly once, by the
// warpgroup that runs this, after every MMA into it has completed (waited for through its
// commit's barrier) and every async_load_tmem of it is done; nothing uses it afterwards. The
// verifier rejects what the statement tree shows (no dealloc, a dealloc in a loop, a use after
// it in the same sequence), the interpreter the rest.
template <class T>
auto tmem_dealloc(T const& t, src_loc loc = src_loc::current()) {
  if constexpr (kind_of<T> != operand_kind::tmem) {
    if constexpr (is_barrier_like<T>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(T);
    else STAGECRAFT_ERROR("tmem_dealloc: expected a TMEM allocation",
                          "tmem_dealloc: expected a TMEM allocation, but got " << detail::kind_name(kind_of<T>));
    return stmt<>{};
  } else {
    return detail::make_stmt<info{uses_tcgen05}>(tree::stmt_op(ir::StmtOp::tmem_dealloc, loc, {&t.ref}));
  }
}

// tcgen05.ld: TMEM to registers.
template <class T>
auto async_load_tmem(T const& t) {
  if constexpr (kind_of<T> != operand_kind::tmem) {
    if constexpr (is_barrier_like<T>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(T);
    else STAGECRAFT_ERROR("async_load_tmem: expected a TMEM reference",
                          "async_load_tmem: expected a TMEM reference, but got " << detail::kind_name(kind_of<T>));
    return tile<f32, any_dims>{};
  } else if constexpr (std::is_same_v<typename T::static_dims, any_dims>) {
    return tile<typename T::dtype_t, any_dims>{};  // a view an error already reported
  } else if constexpr (T::static_dims::rank != 2) {
    STAGECRAFT_ERROR("async_load_tmem reads a (lanes, columns) TMEM view: index a stage of the ring, d[s]",
                     "async_load_tmem reads a (lanes, columns) TMEM view, but this one has shape " << typename T::static_dims{}
                                                                                                   << ": index a stage of the ring, d[s]");
    return tile<f32, any_dims>{};
  } else {
    using DT = typename T::dtype_t;
    using D = typename T::static_dims;
    return tile<DT, D, needs_warpgroup(warp_op_tmem_load, uses_tcgen05)>{tree::value_load(ir::ValueOp::load_tmem, DT::code, D::values, t.ref)};
  }
}

// tcgen05.st: a register tile into TMEM, the way async_load_tmem reads it (the 32x32b data path:
// thread t of the warpgroup writes lane t, warp w reaching its lanes 32w..32w+31), so row i of
// the tile is lane i. 16-bit elements pack two to a 32-bit column, the even one in the low half:
// tmem<bf16>(shape(128_c, K)) takes K / 2 columns, the layout a tcgen05_mma reads A from TMEM in.
// The generator waits for the stores (tcgen05.wait::st) before the warpgroup's next op; a
// tcgen05_mma that reads them must be ordered after it by a barrier (barrier_arrive by this
// warpgroup, barrier_wait by the MMA's), and the store must be ordered after every MMA still
// reading those columns (wait on their commit's barrier first).
template <class T, class V>
auto store_tmem(T const& t, V const& value, src_loc loc = src_loc::current()) {
  if constexpr (kind_of<T> != operand_kind::tmem) {
    if constexpr (is_barrier_like<T>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(T);
    else STAGECRAFT_ERROR("store_tmem: expected a TMEM reference", "store_tmem: expected a TMEM reference, but got " << detail::kind_name(kind_of<T>));
    return stmt<>{};
  } else if constexpr (!is_tile<V>) {
    STAGECRAFT_ERROR_T(V, "store_tmem(tmem, tile): the value must be a register tile");
    return stmt<>{};
  } else if constexpr (error_tile<V>) {
    return stmt<>{};  // a stand-in for an error already reported
  } else if constexpr (!std::is_same_v<typename V::dtype_t, typename T::dtype_t>) {
    STAGECRAFT_ERROR("store_tmem: Expected dtypes to match but the tile had type T and the TMEM allocation type U",
                     "store_tmem: Expected dtypes to match but the tile had type " << dtype_name<typename V::dtype_t>()
                                                                                   << " and the TMEM allocation type " << dtype_name<typename T::dtype_t>()
                                                                                   << " (convert with cast<T>(...))");
    return stmt<>{};
  } else if constexpr (!std::is_same_v<typename V::static_dims, typename T::static_dims>) {
    STAGECRAFT_ERROR("store_tmem: Expected shapes to match, but the tile had shape S and the TMEM allocation shape T",
                     "store_tmem: Expected shapes to match, but the tile had shape " << typename V::static_dims{} << " and the TMEM allocation shape "
                                                                                      << typename T::static_dims{} << " (row i of the tile is lane i)");
    return stmt<>{};
  } else if constexpr (T::dtype_t::bits != 16 && T::dtype_t::bits != 32) {
    STAGECRAFT_ERROR("store_tmem writes 16- or 32-bit elements",
                     "store_tmem writes 16- or 32-bit elements (two or one to a 32-bit TMEM column), but the TMEM allocation is "
                         << dtype_name<typename T::dtype_t>());
    return stmt<>{};
  } else {
    return detail::make_stmt<detail::info_of_operands<V>() | needs_warpgroup(warp_op_tile, uses_tcgen05)>(
        tree::stmt_op(ir::StmtOp::store, loc, {&t.ref}, {.value = value.node}));
  }
}

}  // namespace stagecraft
