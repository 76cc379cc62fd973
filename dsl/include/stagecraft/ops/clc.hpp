// Cluster launch control (Blackwell, sm_100a): a running CTA takes over the work of a cluster of
// the grid that has not started yet, so one CTA per tile is launched and the tiles still go to
// the SMs that are free (a dynamic persistent schedule, CUTLASS's sm100 tile scheduler).
//
//   try_cancel(resp[s], full[s])   one thread arrives on full[s] expecting 16 bytes and asks the
//                                  hardware to cancel a cluster that has not started
//                                  (clusterlaunchcontrol.try_cancel); the 16-byte response
//                                  lands in resp[s], a row of an smem<u32>(shape(R, 4_c)), and
//                                  its bytes complete full[s], asynchronously
//   clc_canceled(resp[s])          1 if a cluster was canceled (query_cancel.is_canceled)
//   clc_ctaid(resp[s], axis)       that cluster's first CTA's coordinate along axis (its work)
//
// The queries are index expressions that read SMEM: only after barrier_wait(full[s]) has
// observed the response's completion (the interpreter reports a read before it as a data race).
// A canceled cluster never runs. Once a CTA has read a failed response, another try_cancel of it
// is undefined (interpreter: clc-after-failure); a tile loop leaves with break_if. clc_tiles
// (pipeline/tile_schedule.hpp) is the loop a role of a warp-specialized kernel runs.
#pragma once
#include "stagecraft/core/diagnostic.hpp"
#include "stagecraft/expr/index.hpp"
#include "stagecraft/memory/barrier.hpp"
#include "stagecraft/memory/smem.hpp"
#include "stagecraft/ops/stmt.hpp"

namespace stagecraft {

namespace detail {
// A response is one unswizzled row of 4 u32: resp[s] of smem<u32>(shape(R, 4_c)), or a whole
// smem<u32>(shape(4_c)).
template <class V>
constexpr bool clc_response_view() {
  if constexpr (kind_of<V> != operand_kind::smem) return false;
  else return std::is_same_v<typename V::dtype_t, u32> && std::is_same_v<typename V::static_dims, dims<4>> && !V::is_subview &&
              V::layout_t::swizzle == 0 && V::layout_t::tile::rank == 0 && V::full_dims::rank == 1;
}

template <diag::fixed_string Op, class V>
constexpr bool check_clc_response() {
  if constexpr (!clc_response_view<V>()) {
    STAGECRAFT_ERROR_T(V, "cluster launch control: the response is one row of 4 u32 of an unswizzled SMEM allocation: resp[s] of "
                          "smem<u32>(shape(stages, 4_c))");
    return false;
  } else {
    return true;
  }
}

// The first u32 element of the response in its allocation: row s of (R, 4), or 0.
template <class V>
tree::ExprP clc_offset(V const& v) {
  if (v.ref.index.empty()) return tree::make_expr(ir::ExprOp::constant, 0);
  return tree::make_expr(ir::ExprOp::mul, 0, v.ref.index.back(), tree::make_expr(ir::ExprOp::constant, 4));
}

template <class V>
tree::ExprP clc_query(V const& v, int what) {
  return tree::make_expr(ir::ExprOp::clc_result, 4 * static_cast<std::int64_t>(v.ref.id) + what, clc_offset(v));
}
}  // namespace detail

// One thread asks to cancel a cluster that has not started; the response lands in `resp`, its
// 16 bytes completing on `bar` (an arrival expecting them is part of the op).
template <class V, class B>
auto try_cancel(V const& resp, B const& bar, src_loc loc = src_loc::current()) {
  if constexpr (!detail::check_clc_response<"try_cancel", V>()) {
    return stmt<>{};
  } else if constexpr (kind_of<B> == operand_kind::cluster_barrier) {
    STAGECRAFT_ERROR_T(B, "try_cancel completes its response's 16 bytes on a barrier of this CTA (barrier(...)), not on a cluster barrier");
    return stmt<>{};
  } else if constexpr (constexpr bool ok = detail::check_barrier_operand<"try_cancel", B>(); !ok) {
    return stmt<>{};
  } else {
    auto node = tree::stmt_op(ir::StmtOp::try_cancel, loc, {&resp.ref, tree::ptr(detail::barrier_element(bar))});
    return detail::make_stmt<detail::info_of_operands<V, B>() | info{uses_clc}>(std::move(node));
  }
}

// 1 if the response says a cluster was canceled, else 0.
template <class V>
auto clc_canceled(V const& resp) {
  if constexpr (!detail::check_clc_response<"clc_canceled", V>()) return idx<interval(0, 2)>{tree::make_expr(ir::ExprOp::constant, 0)};
  else return idx<interval(0, 2)>{detail::clc_query(resp, 0)};
}

// The canceled cluster's first CTA's coordinate along `axis`, [0, grid[axis]) as program_id's
// (read only when clc_canceled says a cluster was canceled: otherwise it is undefined).
template <class V, class Axis = constant<0>>
auto clc_ctaid(V const& resp, Axis = {}) {
  static_assert(static_int<Axis>, "clc_ctaid(resp, axis): the axis must be a static integer (0_c, 1_c or 2_c)");
  static_assert(Axis::value >= 0 && Axis::value < 3, "clc_ctaid(resp, axis): axis must be 0, 1 or 2");
  using R = idx<range_t{true, 0, 0, 0, 1, detail::axis_value<Axis>()}>;
  if constexpr (!detail::check_clc_response<"clc_ctaid", V>()) return R{tree::make_expr(ir::ExprOp::constant, 0)};
  else return R{detail::clc_query(resp, 1 + static_cast<int>(Axis::value))};
}

}  // namespace stagecraft
