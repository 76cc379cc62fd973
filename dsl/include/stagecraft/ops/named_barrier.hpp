// Named barriers: bar.sync / bar.arrive on one of the CTA's hardware barriers, with a thread
// count. What CUTLASS calls NamedBarrier and FlashAttention-3 uses for the ping-pong of its two
// consumer warpgroups: no SMEM object, no phase bookkeeping, one instruction.
//
//   named_barrier_sync(id, threads)    arrive, then wait until `threads` threads have arrived in
//                                      this phase (bar.sync: acquire and release)
//   named_barrier_arrive(id, threads)  arrive and go on (bar.arrive: a release that a later
//                                      bar.sync of the same phase acquires)
//
// `threads` is a compile-time constant, a multiple of 32: every thread of a role runs a statement,
// so a warpgroup arrives with 128 and a single warp with 32 (bar.sync counts 32 per warp); in a
// kernel of warpgroups only (threads(n)) it is a multiple of 128. `id` is an index
// expression, 0 to ir::max_named_barriers - 1; user id u is hardware id
// ir::first_named_barrier + u (0 is __syncthreads, 1..8 the warpgroups' own barriers). A static
// id is checked here, a thread_id()-derived one against num_threads, any other at run time by the
// interpreter and the host backend. Every participant of one phase must name the same count.
#pragma once
#include "stagecraft/core/diagnostic.hpp"
#include "stagecraft/expr/index.hpp"
#include "stagecraft/ops/stmt.hpp"

namespace stagecraft {

namespace detail {
// The id's largest value for the fewest warpgroups (1): what an out-of-range message names.
constexpr long long named_id_reach(range_t r) { return r.lo < 0 ? r.lo : r.hi - 1 + r.nt; }
constexpr bool named_id_out_of_range(range_t r) {
  const long long ids = ir::max_named_barriers;
  return r.known && r.ng == 0 && (r.lo < 0 || (r.nt == 0 && r.hi > ids) || (r.nt != 0 && (ids - r.hi) / r.nt < 1));
}
// A thread_id()-derived id bounds num_threads, as a thread_id()-indexed barrier does.
template <range_t R, long long N>
constexpr info named_info() {
  info x{};
  x.named_barrier_threads = N;
  if (N % ir::named_barrier_granule != 0) x.named_barrier_partial = N;
  if (R.known && R.ng == 0 && R.nt != 0) x.max_threads = (ir::max_named_barriers - R.hi) / R.nt;
  return x;
}

template <diag::fixed_string Op, ir::StmtOp Code, class Id, class Threads>
auto named_barrier_stmt(Id const& id, Threads const&, src_loc loc) {
  if constexpr (!index_like<Id>) {
    STAGECRAFT_ERROR_T(Id, "named barrier: the id must be an integer expression (0_c, or an index such as thread_id())");
    return stmt<>{};
  } else if constexpr (!static_int<Threads>) {
    STAGECRAFT_ERROR_T(Threads, "named barrier: the thread count must be a compile-time constant (256_c, not 256)");
    return stmt<>{};
  } else if constexpr (constexpr long long n = static_cast<long long>(std::remove_cvref_t<Threads>::value);
                       n <= 0 || n % 32 != 0) {
    STAGECRAFT_ERROR("named barrier: the thread count must be a positive multiple of 32",
                     Op << ": the thread count must be a positive multiple of 32, but got " << std::remove_cvref_t<Threads>::value
                        << " (bar.sync counts 32 threads per warp, and every thread of a warp runs the statement: a warp arrives "
                           "with 32, a warpgroup with 128)");
    return stmt<>{};
  } else if constexpr (named_id_out_of_range(range_of<Id>())) {
    STAGECRAFT_ERROR("named barrier: the id is out of range (ids are 0 to 6)",
                     Op << ": the id is out of range: it can be " << named_id_reach(range_of<Id>()) << ", but ids are 0 to "
                        << ir::max_named_barriers - 1 << " (hardware ids " << ir::first_named_barrier
                        << " to 15: 0 is __syncthreads and 1 to " << ir::first_named_barrier - 1 << " are the warpgroups' own barriers)");
    return stmt<>{};
  } else {
    constexpr long long n = static_cast<long long>(std::remove_cvref_t<Threads>::value);
    return make_stmt<named_info<range_of<Id>(), n>()>(tree::stmt_op(Code, loc, {}, {.e0 = node_of(id), .n = n}));
  }
}
}  // namespace detail

// bar.sync id, threads: arrive, then wait for the phase to complete.
template <class Id, class Threads>
auto named_barrier_sync(Id const& id, Threads const& threads, src_loc loc = src_loc::current()) {
  return detail::named_barrier_stmt<"named_barrier_sync", ir::StmtOp::named_barrier_sync>(id, threads, loc);
}

// bar.arrive id, threads: arrive and go on.
template <class Id, class Threads>
auto named_barrier_arrive(Id const& id, Threads const& threads, src_loc loc = src_loc::current()) {
  return detail::named_barrier_stmt<"named_barrier_arrive", ir::StmtOp::named_barrier_arrive>(id, threads, loc);
}

}  // namespace stagecraft
