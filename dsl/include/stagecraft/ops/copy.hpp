// TMA copies between GMEM and SMEM, bulk groups and the proxy fence (DESIGN.md section 4).
//
//   copy_gmem_to_smem(x.block(i, j), buf[s], full[s])   // arrive + expect_tx(bytes of buf[s])
//   copy_smem_to_gmem(buf[s], y.block(i, j))            // joins the current bulk group
//   commit_smem_to_gmem_group(); wait_smem_to_gmem(1_c, read_only);
//   commit_smem();                                       // fence.proxy.async
//
// Byte counts always come from the SMEM side's type; nobody types them by hand.
#pragma once
#include "stagecraft/memory/barrier.hpp"
#include "stagecraft/memory/gmem.hpp"
#include "stagecraft/memory/smem.hpp"
#include "stagecraft/ops/reduce.hpp"
#include "stagecraft/ops/stmt.hpp"

namespace stagecraft {

namespace detail {
constexpr const char* kind_name(operand_kind k) {
  switch (k) {
    case operand_kind::gmem_array: return "a GMEM array (take a block of it: x.block(i, j))";
    case operand_kind::gmem_block: return "a GMEM reference";
    case operand_kind::smem: return "a SMEM reference";
    case operand_kind::barrier: case operand_kind::barrier_spec: return "a barrier";
    case operand_kind::cluster_barrier: return "a cluster barrier";
    case operand_kind::tmem: return "a TMEM reference";
    case operand_kind::accumulator: return "a register accumulator";
    case operand_kind::tile: return "a tile value";
    case operand_kind::smem_transposed: return "a transposed SMEM view (only wgmma reads those)";
    case operand_kind::semaphore: return "a semaphore (signal and wait on it: semaphore_signal, semaphore_wait)";
    default: return "something that is not a memory reference";
  }
}

// The first dimension of a TMA box over the hardware's 256 elements (-1: none). A multicast
// box is split along dimension 0 over a cluster only the kernel knows: the verifier checks that
// dimension's per-CTA share.
template <class SDims, bool Multicast>
constexpr int box_dim_too_large() {
  for (int i = Multicast ? 1 : 0; i < SDims::rank; ++i)
    if (SDims::values[i] > ir::max_tma_box) return i;
  return -1;
}

// A strided block's footprint, the box TMA traverses: shape * strides per dimension.
template <class G, class SDims>
constexpr long long footprint(int d) {
  if constexpr (strided_gmem<G>) return SDims::values[d] * G::element_strides::values[d];
  else return SDims::values[d];
}
// The first dimension whose footprint exceeds the hardware's 256 elements (-1: none).
template <class G, class SDims>
constexpr int footprint_too_large() {
  for (int i = 0; i < SDims::rank; ++i)
    if (footprint<G, SDims>(i) > ir::max_tma_box) return i;
  return -1;
}

// TMA's SMEM address alignment: 128 bytes, and for a swizzled array the whole swizzle pattern
// (8 rows of its width, 1024 bytes for 128-byte swizzle). We require the pattern's alignment
// rather than rely on mid-pattern starts: the hardware documents the swizzle for aligned
// buffers, and the wgmma descriptors' base offset would have to follow it too.
template <class S>
constexpr long long tma_smem_alignment() {
  return S::layout_t::swizzle ? 8 * S::layout_t::swizzle : 128;
}

// The rules shared by both copy directions. G is the GMEM block, S the SMEM view.
template <diag::fixed_string Op, class G, class S, bool GmemIsSrc, bool Multicast = false>
constexpr bool check_copy() {
  if constexpr (is_barrier_like<G> || is_barrier_like<S>) {
    STAGECRAFT_REJECT_BARRIER_AS_ARRAY(std::conditional_t<is_barrier_like<G>, G, S>);
    return false;
  } else if constexpr (kind_of<G> != operand_kind::gmem_block) {
    STAGECRAFT_ERROR("the GMEM side of a copy must be a GMEM reference",
                     Op << ": the " << (GmemIsSrc ? "source" : "destination") << " must be a GMEM reference (x.block(i, j)), but got " << kind_name(kind_of<G>));
    return false;
  } else if constexpr (kind_of<S> != operand_kind::smem) {
    STAGECRAFT_ERROR("the SMEM side of a copy must be a SMEM reference",
                     Op << ": the " << (GmemIsSrc ? "destination" : "source") << " must be a SMEM reference, but got " << kind_name(kind_of<S>));
    return false;
  } else if constexpr (error_gmem<G> || std::is_same_v<typename S::static_dims, any_dims>) {
    return false;  // a stand-in for an error already reported (gmem_like, slice of an SMEM view)
  } else {
    using GD = typename G::dtype_t;
    using SD = typename S::dtype_t;
    using SDims = typename S::static_dims;
    using ADims = typename G::array_dims;
    using src_dt = std::conditional_t<GmemIsSrc, GD, SD>;
    using dst_dt = std::conditional_t<GmemIsSrc, SD, GD>;
    constexpr long long bytes = S::bytes;
    constexpr long long row_bytes = SDims::rank > 0 ? SDims::values[SDims::rank > 0 ? SDims::rank - 1 : 0] * SD::bits / 8 : 0;
    if constexpr (!std::is_same_v<GD, SD>) {
      STAGECRAFT_ERROR("Expected dtypes to match but src had type T and dst had type U",
                       Op << ": Expected dtypes to match but src had type " << dtype_name<src_dt>() << " and dst had type "
                          << dtype_name<dst_dt>());
      return false;
    } else if constexpr (!std::is_void_v<typename G::static_dims> && !std::is_same_v<typename G::static_dims, SDims>) {
      using GDims = typename G::static_dims;
      using src_d = std::conditional_t<GmemIsSrc, GDims, SDims>;
      using dst_d = std::conditional_t<GmemIsSrc, SDims, GDims>;
      STAGECRAFT_ERROR("Expected shapes to match, but src had shape S and dst had shape T",
                       Op << ": Expected shapes to match, but src had shape " << src_d{} << " and dst had shape " << dst_d{});
      return false;
    } else if constexpr (ADims::rank != SDims::rank) {
      STAGECRAFT_ERROR("the GMEM array and the SMEM view must have the same rank",
                       Op << ": the GMEM array has shape " << ADims{} << " but the SMEM view has shape " << SDims{}
                          << ": a block needs one extent per dimension"
                          << (ADims::rank > SDims::rank
                                  ? " (give the SMEM array a unit dimension for each extra dimension of the block, e.g. shape(..., 1_c, 64_c, 64_c), "
                                    "and index it with [0_c] where a lower-rank view is needed, as for wgmma operands)"
                                  : ""));
      return false;
    } else if constexpr (SDims::rank < 1 || SDims::rank > ir::max_tma_rank) {
      STAGECRAFT_ERROR("TMA copies are 1- to 5-dimensional", Op << ": TMA copies are 1- to 5-dimensional, but got rank " << SDims::rank);
      return false;
    } else if constexpr (strided_gmem<G> && !GmemIsSrc) {
      // The driver documents elementStrides as what TMA loads (ceil(boxDim / stride) elements);
      // a store that scatters every stride-th element is not a promise it makes.
      STAGECRAFT_ERROR("TMA element strides are for loads: copy_smem_to_gmem takes a plain block (y.block(i, j))",
                       Op << ": TMA element strides " << typename G::element_strides{}
                          << " are for loads (copy_gmem_to_smem): a TMA store writes a dense block (use y.block(i, j))");
      return false;
    } else if constexpr (strided_gmem<G> && Multicast) {
      STAGECRAFT_ERROR("a multicast copy_gmem_to_smem takes a plain block, not a strided one",
                       Op << ": a multicast load splits the rows of its block over the cluster, so with element strides "
                          << typename G::element_strides{} << " it takes a plain block (x.block(i, j))");
      return false;
    } else if constexpr (constexpr int d = footprint_too_large<G, SDims>(); strided_gmem<G> && d >= 0) {
      STAGECRAFT_ERROR("a strided TMA box traverses extent * stride elements, at most 256 per dimension",
                       Op << ": a strided TMA box traverses extent * stride elements, at most " << ir::max_tma_box
                          << " per dimension, but the view " << SDims{} << " with element strides " << typename G::element_strides{}
                          << " traverses " << footprint<G, SDims>(footprint_too_large<G, SDims>()) << " in dimension "
                          << footprint_too_large<G, SDims>() << " (take fewer rows per copy)");
      return false;
    } else if constexpr (constexpr int d = box_dim_too_large<SDims, Multicast>(); d >= 0) {
      STAGECRAFT_ERROR("a TMA box has at most 256 elements per dimension",
                       Op << ": a TMA box has at most " << ir::max_tma_box << " elements per dimension, but the view " << SDims{}
                          << " has " << SDims::values[box_dim_too_large<SDims, Multicast>()] << " in dimension "
                          << box_dim_too_large<SDims, Multicast>() << " (copy it as several smaller views)");
      return false;
    } else if constexpr (bytes % 16 != 0 || row_bytes % 16 != 0) {
      STAGECRAFT_ERROR("TMA copies move a multiple of 16 bytes",
                       Op << ": TMA copies move a multiple of 16 bytes in total and per row, but the view " << SDims{} << " of "
                          << dtype_name<SD>() << " has " << bytes << " bytes and rows of " << row_bytes << " bytes");
      return false;
    } else if constexpr (!S::contiguous) {
      // TMA writes (reads) its box densely in SMEM: a sub-view that cuts its rows has gaps.
      STAGECRAFT_ERROR("a TMA box is dense in SMEM: a sub-view that cuts the rows of its view is not a TMA box",
                       Op << ": a TMA box is dense in SMEM, but the sub-view " << SDims{} << " of the SMEM view " << typename S::full_dims{}
                          << " leaves gaps between its rows (slice the leading dimension, keep the others whole)");
      return false;
    } else if constexpr (S::layout_t::swizzle != 0 && SDims::values[SDims::rank - 1] != S::full_dims::values[SDims::rank - 1]) {
      STAGECRAFT_ERROR("a TMA copy of a swizzled array moves whole swizzled rows: a sub-view may not cut inside a swizzle atom",
                       Op << ": the SMEM array is swizzled (" << S::layout_t::swizzle << " B), and TMA moves whole swizzled rows, but the sub-view "
                          << SDims{} << " of " << typename S::full_dims{} << " cuts its rows inside a swizzle atom");
      return false;
    } else if constexpr (S::start_alignment % tma_smem_alignment<S>() != 0) {
      STAGECRAFT_ERROR("TMA copies need SMEM views that start on a 128-byte boundary, 8 rows of the swizzle for swizzled arrays",
                       Op << ": TMA needs the SMEM view to start on a " << tma_smem_alignment<S>() << "-byte boundary"
                          << (S::layout_t::swizzle ? " (a swizzle pattern spans 8 rows of the swizzle width: a view may not start inside one)" : "")
                          << ", but views " << SDims{} << " of this array start only on " << S::start_alignment
                          << "-byte boundaries (give the view more rows, or pad the array)");
      return false;
    } else if constexpr ([] {
                           // A block may overhang its array (TMA fills what lies outside on a
                           // load and drops it on a store), but the box itself must fit in it.
                           for (int i = 0; i < SDims::rank; ++i)
                             if (ADims::values[i] >= 0 && ADims::values[i] < footprint<G, SDims>(i)) return true;
                           return false;
                         }()) {
      STAGECRAFT_ERROR("a TMA box (a strided block's footprint) may overhang the GMEM array but not exceed its extent",
                       Op << ": the box " << SDims{} << (strided_gmem<G> ? " with its element strides" : "")
                          << " is larger than the GMEM array " << ADims{}
                          << " in some dimension (a block may overhang the array's end, but a TMA box may not exceed its extent)");
      return false;
    } else {
      return true;
    }
  }
}

template <class G, class S>
tree::Ref sized_block(G const& g, S const&) {
  return tree::ref_sized(g.ref, S::static_dims::values);
}
}  // namespace detail

// The pair's load (sm_100a, beside tcgen05_mma_2cta): cp.async.bulk.tensor .cta_group::2. The
// copy lands in this CTA's SMEM as any other, but its arrival (expect_tx of the bytes landing
// here) and the completion of those bytes go to `bar` at the same offset in the even CTA of the
// pair (cluster axis 0), where the pair's MMA thread waits: each CTA's producer loads its halves
// and no relay joins them.
struct pair_leader_t {};
inline constexpr pair_leader_t pair_leader{};

namespace detail {
template <class T>
struct is_pair_leader : std::is_same<T, pair_leader_t> {};

template <class Src, class Dst, class Bar, class... Opts>
auto copy_in(src_loc loc, Src const& src, Dst const& dst, Bar const& bar, Opts...) {
  using Axes = typename first_of<is_axes, void, Opts...>::type;
  constexpr bool pair = (is_pair_leader<Opts>::value || ...);
  constexpr bool ok_copy = detail::check_copy<"copy_gmem_to_smem", Src, Dst, true, !std::is_void_v<Axes>>();
  if constexpr (!ok_copy) {
    return stmt<>{};
  } else if constexpr (kind_of<Bar> == operand_kind::cluster_barrier) {
    STAGECRAFT_ERROR_T(Bar, "copy_gmem_to_smem completes on a barrier of this CTA (barrier(...)), not on a cluster barrier");
    return stmt<>{};
  } else if constexpr (constexpr bool ok = detail::check_barrier_operand<"copy_gmem_to_smem", Bar>(); !ok) {
    return stmt<>{};
  } else if constexpr (!((is_axes<Opts>::value || is_pair_leader<Opts>::value) && ...) ||
                       (0 + ... + (is_axes<Opts>::value ? 1 : 0)) > 1 || (0 + ... + (is_pair_leader<Opts>::value ? 1 : 0)) > 1) {
    STAGECRAFT_ERROR_T(Bar, "copy_gmem_to_smem(src, dst, bar[, collective_axes(...)][, pair_leader]): the options multicast over cluster axes "
                            "and complete on the pair leader's barrier, each at most once");
    return stmt<>{};
  } else {
    static constexpr auto axes = [] {
      if constexpr (std::is_void_v<Axes>) return std::array<int, 0>{};
      else return Axes::array;
    }();
    auto node = tree::stmt_op(ir::StmtOp::copy_gmem_to_smem, loc,
                              {tree::ptr(detail::sized_block(src, dst)), &dst.ref, tree::ptr(detail::barrier_element(bar))},
                              {.n = pair ? 2 : 0, .axes = axes});
    constexpr info opts_info = [] {
      info i{};
      if constexpr (!std::is_void_v<Axes>) i.max_axis = Axes::max_axis;
      // The pair: sm_100a and a cluster with an even axis 0 (kernel() checks both).
      if (pair) i.features = uses_pair_copy;
      return i;
    }();
    return detail::make_stmt<detail::info_of_operands<Dst, Bar>() | opts_info>(std::move(node));
  }
}
}  // namespace detail

// TMA load: one arrival on `bar` plus expect_tx(bytes of dst); the copy engine delivers them.
// Options: collective_axes(...) multicasts over those cluster axes; pair_leader (above) completes
// on the pair leader's `bar`.
template <class Src, class Dst, class Bar>
auto copy_gmem_to_smem(Src const& src, Dst const& dst, Bar const& bar, src_loc loc = src_loc::current()) {
  return detail::copy_in(loc, src, dst, bar);
}
template <class Src, class Dst, class Bar, class O1>
  requires(!std::is_same_v<O1, src_loc>)
auto copy_gmem_to_smem(Src const& src, Dst const& dst, Bar const& bar, O1 o1, src_loc loc = src_loc::current()) {
  return detail::copy_in(loc, src, dst, bar, o1);
}
template <class Src, class Dst, class Bar, class O1, class O2>
  requires(!std::is_same_v<O2, src_loc>)
auto copy_gmem_to_smem(Src const& src, Dst const& dst, Bar const& bar, O1 o1, O2 o2, src_loc loc = src_loc::current()) {
  return detail::copy_in(loc, src, dst, bar, o1, o2);
}

// The mistake the seed page lists next to the unindexed barrier: a TMA load needs a barrier.
template <class Src, class Dst>
auto copy_gmem_to_smem(Src const&, Dst const&) {
  STAGECRAFT_ERROR_T(Src, "Barriers are required for TMA GMEM -> SMEM copies");
  return stmt<>{};
}

// TMA store: joins the current bulk group; completion is observed with wait_smem_to_gmem.
template <class Src, class Dst>
auto copy_smem_to_gmem(Src const& src, Dst const& dst, src_loc loc = src_loc::current()) {
  constexpr bool ok = detail::check_copy<"copy_smem_to_gmem", Dst, Src, false>();
  if constexpr (!ok) {
    return stmt<>{};
  } else {
    return detail::make_stmt<detail::info_of_operands<Src>()>(
        tree::stmt_op(ir::StmtOp::copy_smem_to_gmem, loc, {&src.ref, tree::ptr(detail::sized_block(dst, src))}));
  }
}
// A TMA reduce (ops/reduce.hpp): the box combined into GMEM element by element, atomically.
template <class Src, class Dst, ir::Reduce R>
auto copy_smem_to_gmem(Src const& src, Dst const& dst, reduction<R>, src_loc loc = src_loc::current()) {
  constexpr bool ok = [] {  // the reduction is checked only on a copy that passed (one message, no cascade)
    if constexpr (!detail::check_copy<"copy_smem_to_gmem", Dst, Src, false>()) return false;
    else return detail::check_reduction<"copy_smem_to_gmem", R, Dst>();
  }();
  if constexpr (!ok) {
    return stmt<>{};
  } else {
    return detail::make_stmt<detail::info_of_operands<Src>()>(tree::stmt_op(
        ir::StmtOp::copy_smem_to_gmem, loc, {&src.ref, tree::ptr(detail::sized_block(dst, src))}, {.n = static_cast<std::int64_t>(R)}));
  }
}
template <class Src, class Dst, class Bar>
  requires(!std::is_same_v<Bar, src_loc> && !requires { Bar::op; })
auto copy_smem_to_gmem(Src const&, Dst const&, Bar const&) {
  STAGECRAFT_ERROR_T(Bar, "Barriers are unsupported for SMEM -> GMEM copies (completion is tracked with bulk groups: wait_smem_to_gmem)");
  return stmt<>{};
}

inline stmt<> commit_smem_to_gmem_group(src_loc loc = src_loc::current()) {
  return detail::make_stmt<no_info>(tree::stmt_op(ir::StmtOp::commit_group, loc));
}

struct read_only_t {};
inline constexpr read_only_t read_only{};

// Wait until at most n bulk groups are pending; with read_only, only until their SMEM reads are
// done (enough to reuse the source buffer).
template <class N, class RO = detail::no_opt>
auto wait_smem_to_gmem(N n, RO = {}, src_loc loc = src_loc::current()) {
  static_assert(std::is_same_v<RO, read_only_t> || std::is_same_v<RO, detail::no_opt>, "wait_smem_to_gmem(n[, read_only])");
  if constexpr (!int_like<N>) {
    STAGECRAFT_ERROR_T(N, "wait_smem_to_gmem(n): n must be an integer (the groups allowed to stay pending)");
    return stmt<>{};
  } else {
    if constexpr (static_int<N>) {
      if constexpr (N::value < 0 || N::value > 63)
        STAGECRAFT_ERROR("wait_smem_to_gmem(n): n must be in [0, 63]", "wait_smem_to_gmem(n): n must be in [0, 63], but got " << N::value);
    }
    return detail::make_stmt<no_info>(tree::stmt_op(ir::StmtOp::wait_group, loc, {}, {.n = value_of(n), .flag = std::is_same_v<RO, read_only_t>}));
  }
}

// Generic-proxy SMEM writes before this become visible to TMA and the tensor cores.
inline stmt<> commit_smem(src_loc loc = src_loc::current()) { return detail::make_stmt<no_info>(tree::stmt_op(ir::StmtOp::commit_smem, loc)); }

}  // namespace stagecraft
