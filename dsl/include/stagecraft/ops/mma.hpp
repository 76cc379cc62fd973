// Tensor-core operations: Hopper wgmma (registers accumulate) and Blackwell tcgen05 (TMEM
// accumulates). Their typing rules live here; which target allows which is checked by kernel().
//
//   wgmma(acc, a_smem, b_smem); wgmma_wait(0_c);            // acc: accumulator<f32>(64k, n)
//   tcgen05_mma(d_tmem, a_smem, b_smem, mma_done, k > 0);    // mma_done: orders_tensor_core
//   tcgen05_commit_arrive(mma_done); auto d = async_load_tmem(d_tmem);
#pragma once
#include "stagecraft/expr/tile.hpp"
#include "stagecraft/memory/barrier.hpp"
#include "stagecraft/memory/smem.hpp"
#include "stagecraft/memory/tmem.hpp"
#include "stagecraft/ops/copy.hpp"
#include "stagecraft/ops/stmt.hpp"

namespace stagecraft {

namespace detail {
// D(M, N) += A(M, K) * B(K, N): shapes and dtypes common to both tensor-core generations.
template <diag::fixed_string Op, class Acc, class A, class B, long long MinM, long long MaxN, long long NStep>
constexpr bool check_mma_operands() {
  using AD = typename A::dtype_t;
  using BD = typename B::dtype_t;
  using CD = typename Acc::dtype_t;
  using Ad = typename A::static_dims;
  using Bd = typename B::static_dims;
  using Cd = typename Acc::static_dims;
  if constexpr (Ad::rank != 2 || Bd::rank != 2 || Cd::rank != 2) {
    STAGECRAFT_ERROR("MMA operands are 2-D views", Op << ": MMA operands are 2-D views, but got A " << Ad{} << ", B " << Bd{}
                                                      << ", D " << Cd{});
    return false;
  } else if constexpr (!std::is_same_v<AD, BD>) {
    STAGECRAFT_ERROR("Expected dtypes to match but A had type T and B had type U",
                     Op << ": Expected dtypes to match but A had type " << dtype_name<AD>() << " and B had type "
                        << dtype_name<BD>());
    return false;
  } else if constexpr (!(std::is_same_v<AD, f16> || std::is_same_v<AD, bf16> || std::is_same_v<AD, i8> ||
                         std::is_same_v<AD, f32>)) {
    STAGECRAFT_ERROR("MMA inputs are f16, bf16, f32 (as tf32) or i8",
                     Op << ": MMA inputs are f16, bf16, f32 (as tf32) or i8, but got " << dtype_name<AD>());
    return false;
  } else if constexpr (std::is_same_v<AD, i8> ? !std::is_same_v<CD, i32>
                                              : !(std::is_same_v<CD, f32> || (std::is_same_v<CD, f16> && std::is_same_v<AD, f16>))) {
    STAGECRAFT_ERROR("MMA accumulator dtype does not fit the inputs",
                     Op << ": " << dtype_name<AD>() << " inputs accumulate in "
                        << (std::is_same_v<AD, i8> ? "i32" : (std::is_same_v<AD, f16> ? "f32 or f16" : "f32")) << ", but the accumulator is "
                        << dtype_name<CD>());
    return false;
  } else if constexpr (Ad::values[0] != Cd::values[0] || Bd::values[1] != Cd::values[1] || Ad::values[1] != Bd::values[0]) {
    STAGECRAFT_ERROR("Expected shapes to match: D(M, N) += A(M, K) * B(K, N)",
                     Op << ": Expected shapes to match: D(M, N) += A(M, K) * B(K, N), but got D " << Cd{} << ", A " << Ad{}
                        << ", B " << Bd{});
    return false;
  } else if constexpr (Cd::values[0] % MinM != 0 || Cd::values[1] % NStep != 0 || Cd::values[1] > MaxN ||
                       Ad::values[1] % (256 / AD::bits) != 0) {
    STAGECRAFT_ERROR("MMA shape not supported by the instruction",
                     Op << ": shape not supported: M = " << Cd::values[0] << " must be a multiple of " << MinM << ", N = "
                        << Cd::values[1] << " a multiple of " << NStep << " up to " << MaxN << ", K = " << Ad::values[1]
                        << " a multiple of " << 256 / AD::bits << " for " << dtype_name<AD>());
    return false;
  } else {
    return true;
  }
}

template <diag::fixed_string Op, class B>
constexpr bool check_mma_barrier() {
  if constexpr (!check_barrier_operand<Op, B>()) {
    return false;
  } else if constexpr (!B::orders_tc) {
    STAGECRAFT_ERROR("MMA barrier must have orders_tensor_core set to True.",
                     Op << ": MMA barrier must have orders_tensor_core set to True. (declare it with barrier(..., orders_tensor_core))");
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
}  // namespace detail

// ---- Hopper ----------------------------------------------------------------------------------
template <class Acc, class A, class B>
auto wgmma(Acc const& acc, A const& a, B const& b, src_loc loc = src_loc::current()) {
  if constexpr (kind_of<Acc> != operand_kind::accumulator) {
    if constexpr (is_barrier_like<Acc>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(Acc);
    else STAGECRAFT_ERROR("wgmma: the accumulator must be a register accumulator",
                          "wgmma: the accumulator must be a register accumulator (accumulator<f32>(shape(m, n))), but got "
                              << detail::kind_name(kind_of<Acc>));
    return stmt<>{};
  } else if constexpr (!detail::check_space<"wgmma", "A must be a SMEM reference or a register tile", A, operand_kind::smem, operand_kind::tile>()) {
    return stmt<>{};
  } else if constexpr (kind_of<B> != operand_kind::smem) {
    if constexpr (is_barrier_like<B>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(B);
    else STAGECRAFT_ERROR("wgmma: B must be a SMEM reference", "wgmma: B must be a SMEM reference, but got " << detail::kind_name(kind_of<B>));
    return stmt<>{};
  } else if constexpr (!detail::check_mma_operands<"wgmma", Acc, A, B, 64, 256, 8>()) {
    return stmt<>{};
  } else {
    tree::StmtP node;
    if constexpr (kind_of<A> == operand_kind::tile)
      node = tree::stmt_op(ir::StmtOp::wgmma, loc, {&acc.ref, nullptr, &b.ref}, {.value = a.node});
    else
      node = tree::stmt_op(ir::StmtOp::wgmma, loc, {&acc.ref, &a.ref, &b.ref});
    return detail::make_stmt<detail::info_of_operands<A, B>() | info{uses_wgmma}>(std::move(node));
  }
}

// Wait until at most n wgmma groups of this warpgroup are in flight.
template <static_int N>
auto wgmma_wait(N, src_loc loc = src_loc::current()) {
  static_assert(N::value >= 0 && N::value <= 7, "wgmma_wait(n): n must be in [0, 7]");
  return detail::make_stmt<info{uses_wgmma}>(tree::stmt_op(ir::StmtOp::wgmma_wait, loc, {}, {.n = N::value}));
}

// ---- Blackwell -------------------------------------------------------------------------------
namespace detail {
template <class Acc, class A, class B, class... Rest>
auto tcgen05_mma(src_loc loc, Acc const& acc, A const& a, B const& b, Rest const&... rest) {
  static_assert(sizeof...(Rest) == 1 || sizeof...(Rest) == 2,
                "tcgen05_mma(acc_tmem, a, b[, barrier], accumulate)");
  if constexpr (kind_of<Acc> != operand_kind::tmem) {
    if constexpr (is_barrier_like<Acc>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(Acc);
    else STAGECRAFT_ERROR("tcgen05_mma: the accumulator must be a TMEM reference",
                          "tcgen05_mma: the accumulator must be a TMEM reference, but got " << detail::kind_name(kind_of<Acc>));
    return stmt<>{};
  } else if constexpr (!detail::check_space<"tcgen05_mma", "A must be a SMEM or TMEM reference", A, operand_kind::smem, operand_kind::tmem>()) {
    return stmt<>{};
  } else if constexpr (kind_of<B> != operand_kind::smem) {
    if constexpr (is_barrier_like<B>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(B);
    else STAGECRAFT_ERROR("tcgen05_mma: B must be a SMEM reference",
                          "tcgen05_mma: B must be a SMEM reference, but got " << detail::kind_name(kind_of<B>));
    return stmt<>{};
  } else if constexpr (!detail::check_mma_operands<"tcgen05_mma", Acc, A, B, 64, 256, 16>()) {
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
      if constexpr (std::is_same_v<Last, bool>) extra.e0 = tree::make_expr(ir::ExprOp::constant, accumulate ? 1 : 0);
      else extra.e0 = node_of(accumulate);
      if constexpr (sizeof...(Rest) == 2) {
        using Bar = std::remove_cvref_t<decltype(std::get<0>(args))>;
        if constexpr (!detail::check_mma_barrier<"tcgen05_mma", Bar>()) {
          return stmt<>{};
        } else {
          return detail::make_stmt<detail::info_of_operands<A, B, Bar>() | info{uses_tcgen05}>(tree::stmt_op(
              ir::StmtOp::tcgen05_mma, loc, {&acc.ref, &a.ref, &b.ref, tree::ptr(detail::barrier_element(std::get<0>(args)))}, extra));
        }
      } else {
        return detail::make_stmt<detail::info_of_operands<A, B>() | info{uses_tcgen05}>(
            tree::stmt_op(ir::StmtOp::tcgen05_mma, loc, {&acc.ref, &a.ref, &b.ref}, extra));
      }
    }
  }
}
}  // namespace detail

// tcgen05_mma(acc_tmem, a, b[, barrier], accumulate)
template <class Acc, class A, class B, class Accumulate>
auto tcgen05_mma(Acc const& acc, A const& a, B const& b, Accumulate const& accumulate, src_loc loc = src_loc::current()) {
  return detail::tcgen05_mma(loc, acc, a, b, accumulate);
}
template <class Acc, class A, class B, class Bar, class Accumulate>
  requires(!std::is_same_v<Accumulate, src_loc>)
auto tcgen05_mma(Acc const& acc, A const& a, B const& b, Bar const& bar, Accumulate const& accumulate, src_loc loc = src_loc::current()) {
  return detail::tcgen05_mma(loc, acc, a, b, bar, accumulate);
}

// Arrive on `bar` once every earlier tcgen05 op of this thread has completed.
template <class Bar>
auto tcgen05_commit_arrive(Bar const& bar, src_loc loc = src_loc::current()) {
  if constexpr (!detail::check_mma_barrier<"tcgen05_commit_arrive", Bar>()) {
    return stmt<>{};
  } else {
    return detail::make_stmt<detail::info_of_operands<Bar>() | info{uses_tcgen05}>(
        tree::stmt_op(ir::StmtOp::tcgen05_commit_arrive, loc, {tree::ptr(detail::barrier_element(bar))}));
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
  } else {
    using DT = typename T::dtype_t;
    using D = typename T::static_dims;
    return tile<DT, D, info{uses_tcgen05}>{tree::value_load(ir::ValueOp::load_tmem, DT::code, D::values, t.ref)};
  }
}

}  // namespace stagecraft
