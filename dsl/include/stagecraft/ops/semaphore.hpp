// Signal and wait on a grid-wide semaphore (memory/semaphore.hpp): how CTAs that share no
// cluster take turns, e.g. a deterministic ("serial") split-K where slice s adds its partial
// into C only after slice s - 1 has:
//
//   seq(if_(s > 0, semaphore_wait(turn(rb, s), 1)),        // acquire: slice s-1's C is visible
//       store(c_tile, load(c_tile) + load(part)),
//       if_(s + 1 < S, semaphore_signal(turn(rb, s + 1), 1)))  // release C to slice s+1
//
//   semaphore_signal(sem, v)  add v (> 0) to the counter, a release at .gpu scope: everything the
//                             warpgroup did before is visible to whoever's wait it satisfies
//                             (the warpgroup syncs, then one thread: red.release.gpu.global.add)
//   semaphore_wait(sem, v)    block until the counter holds at least v (> 0), then take v from it
//                             and acquire: the signallers' writes are visible to the warpgroup
//                             (one thread spins on ld.acquire.gpu and takes v with atom.cas, then
//                             the warpgroup syncs)
//
//   semaphore_signal(sem, v, memory_scope::sys), semaphore_wait(sem, v, memory_scope::sys)
//                             the same at .sys scope (ops/memory_order.hpp): a counter in
//                             host-mapped or peer memory that the host or another GPU signals
//                             or waits on too
//
// A statement of a warpgroup, like barrier_arrive: one signal, one wait per warpgroup, not per
// thread. The counter counts what was signalled minus what was taken, so several waiters share it
// only by taking turns; a wait nothing can satisfy is the interpreter's deadlock, which names the
// semaphore, what it holds and what the wait needs.
//
// Forward progress: a CTA may wait only for CTAs launched before it (or in its cluster). The GPU
// does not run every CTA of a large grid at once, and one that waits for a CTA not yet resident
// waits for ever. The interpreter runs clusters in launch order, so a wait on a later cluster is
// its deadlock; the host backend, which otherwise draws the cluster order from its seed, keeps
// launch order for kernels with semaphores. CUTLASS's serial split-K and stream-K fix-up rely on
// the same order.
#pragma once
#include "stagecraft/core/diagnostic.hpp"
#include "stagecraft/expr/index.hpp"
#include "stagecraft/memory/semaphore.hpp"
#include "stagecraft/ops/memory_order.hpp"
#include "stagecraft/ops/stmt.hpp"

namespace stagecraft {

namespace detail {
// A static value must be 1 to 2^31 - 1; a run-time one is checked by the interpreter.
template <class V>
constexpr bool positive_value() {
  if constexpr (static_int<V>) return ir::semaphore_value_ok(static_cast<std::int64_t>(std::remove_cvref_t<V>::value));
  else return true;
}

template <diag::fixed_string Op, ir::StmtOp Code, class S, class V, class Sc>
auto semaphore_stmt(S const& sem, V const& v, src_loc loc) {
  if constexpr (!std::is_same_v<std::remove_cvref_t<S>, semaphore_elem>) {
    if constexpr (kind_of<S> == operand_kind::semaphore)
      STAGECRAFT_ERROR_T(S, "semaphore_signal/semaphore_wait take one counter: index the semaphore array, sem(i, j)");
    else
      STAGECRAFT_ERROR_T(S, "semaphore_signal/semaphore_wait take a semaphore counter (semaphores(name, shape), then sem(i, j))");
    return stmt<>{};
  } else if constexpr (!index_like<V>) {
    STAGECRAFT_ERROR_T(V, "semaphore_signal/semaphore_wait: the value must be an integer expression (1, or an index such as s + 1)");
    return stmt<>{};
  } else if constexpr (!positive_value<V>()) {
    STAGECRAFT_ERROR("semaphore_signal/semaphore_wait: the value must be positive",
                     Op << ": the value must be 1 to 2^31 - 1, but got " << std::remove_cvref_t<V>::value
                        << " (a signal adds it to the counter, a wait takes it: a wait for 0 would not wait)");
    return stmt<>{};
  } else if constexpr (!is_scope_tag<Sc>) {
    STAGECRAFT_ERROR_T(Sc, "semaphore_signal/semaphore_wait: after the value comes the scope, memory_scope::gpu or memory_scope::sys (the order "
                           "is fixed: a signal releases, a wait acquires)");
    return stmt<>{};
  } else {
    return make_stmt<no_info>(tree::stmt_op(Code, loc, {&sem.ref}, {.e0 = node_of(v), .n = static_cast<std::int64_t>(Sc::scope)}));
  }
}
}  // namespace detail

// Add v to the counter, releasing what this warpgroup did before (red.release.gpu, or .sys).
template <class S, class V = constant<1>, class Sc = memory_scope_tag<ir::MemoryScope::gpu>>
auto semaphore_signal(S const& sem, V const& v = {}, Sc = {}, src_loc loc = src_loc::current()) {
  return detail::semaphore_stmt<"semaphore_signal", ir::StmtOp::semaphore_signal, S, V, Sc>(sem, v, loc);
}

// Wait until the counter holds at least v, take v, and acquire what its signallers released.
template <class S, class V = constant<1>, class Sc = memory_scope_tag<ir::MemoryScope::gpu>>
auto semaphore_wait(S const& sem, V const& v = {}, Sc = {}, src_loc loc = src_loc::current()) {
  return detail::semaphore_stmt<"semaphore_wait", ir::StmtOp::semaphore_wait, S, V, Sc>(sem, v, loc);
}

}  // namespace stagecraft
