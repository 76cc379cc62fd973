// barrier_arrive / barrier_wait. Phases are implicit: each waiter counts the completions it has
// observed, so nobody passes a parity (DESIGN.md section 3).
#pragma once
#include "stagecraft/memory/barrier.hpp"
#include "stagecraft/ops/stmt.hpp"

namespace stagecraft {

namespace detail {
template <diag::fixed_string Op, ir::StmtOp Code, class B>
auto barrier_stmt(B const& b, src_loc loc) {
  constexpr bool ok = check_barrier_operand<Op, B>();
  if constexpr (!ok) {
    return stmt<>{};
  } else {
    auto node = tree::stmt_op(Code, loc, {tree::ptr(barrier_element(b))});
    constexpr info cluster_axes = [] {
      info i{};
      if constexpr (B::is_cluster) i.max_axis = 0;  // needs a cluster at all; axes checked with the declaration
      return i;
    }();
    return make_stmt<info_of_operands<B>() | cluster_axes>(std::move(node));
  }
}
}  // namespace detail

// One arrival (a cluster barrier: one arrival on each peer CTA named by its collective axes).
template <class B>
auto barrier_arrive(B const& b, src_loc loc = src_loc::current()) {
  return detail::barrier_stmt<"barrier_arrive", ir::StmtOp::barrier_arrive>(b, loc);
}

// Wait for the next completion of the barrier's phase this warpgroup has not yet observed.
template <class B>
auto barrier_wait(B const& b, src_loc loc = src_loc::current()) {
  return detail::barrier_stmt<"barrier_wait", ir::StmtOp::barrier_wait>(b, loc);
}

}  // namespace stagecraft
