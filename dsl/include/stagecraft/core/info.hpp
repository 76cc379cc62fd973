// Static facts that travel up the tree from operands to the kernel.
//
// Some rules can only be checked where the kernel is declared: whether wgmma/tcgen05 are
// allowed depends on the target, and whether `thread_id()` / `program_id()` index within bounds
// depends on `num_threads` / the grid. Every view, tile and statement type carries an `info` value; combining nodes
// combines their infos, and `kernel()` checks the result once.
#pragma once
#include <cstdint>

namespace stagecraft {

enum feature : unsigned {
  uses_wgmma = 1u << 0,    // Hopper only
  uses_tcgen05 = 1u << 1,  // Blackwell only
  // Which CTA group the kernel's tcgen05 MMAs and commits use: PTX requires one .cta_group for
  // every tcgen05 instruction of a kernel, and cta_group::2 needs the CTA pair of a cluster.
  uses_tcgen05_single = 1u << 2,
  uses_tcgen05_pair = 1u << 3,
  // A TMA load that completes on the pair leader's barrier (.cta_group::2): sm_100a, the CTA pair.
  uses_pair_copy = 1u << 4,
  // Cluster launch control (ops/clc.hpp): sm_100a.
  uses_clc = 1u << 5,
};

struct info {
  unsigned features = 0;
  // The largest num_threads for which every thread_id()-derived index is in bounds.
  long long max_threads = 1 << 20;
  // The highest cluster axis a multicast or cluster barrier names (-1: none).
  int max_axis = -1;
  // Per grid axis, the largest extent for which every program_id()-derived index is in bounds
  // (0: no such index). A plain array keeps the types in diagnostics short.
  long long max_grid[3] = {0, 0, 0};
  // The most threads any named barrier of the body counts (0: none): the kernel must have them.
  long long named_barrier_threads = 0;
  // A named barrier's count that is not a multiple of 128 (0: none): only warp roles arrive with it.
  long long named_barrier_partial = 0;
  // Ops a single warp cannot issue (ir/roles.hpp), per kind (warp_op): bit r is set when role r
  // (thread_id() == r) may run one. An op sets every bit; if_ on a condition it can read keeps
  // its branches' roles (range_t::may_true/may_false). kernel() compares them with the roles
  // threads(...) declares as single warps.
  unsigned warp_ops[3] = {0, 0, 0};

  friend constexpr info operator|(info a, info b) {
    info r{a.features | b.features, a.max_threads < b.max_threads ? a.max_threads : b.max_threads,
           a.max_axis > b.max_axis ? a.max_axis : b.max_axis};
    for (int i = 0; i < 3; ++i)
      r.max_grid[i] = a.max_grid[i] == 0 ? b.max_grid[i] : b.max_grid[i] == 0 || a.max_grid[i] < b.max_grid[i] ? a.max_grid[i] : b.max_grid[i];
    r.named_barrier_threads = a.named_barrier_threads > b.named_barrier_threads ? a.named_barrier_threads : b.named_barrier_threads;
    r.named_barrier_partial = a.named_barrier_partial ? a.named_barrier_partial : b.named_barrier_partial;
    for (int i = 0; i < 3; ++i) r.warp_ops[i] = a.warp_ops[i] | b.warp_ops[i];
    return r;
  }
  // The same facts for a branch that only the roles in `roles` may take.
  constexpr info only_roles(unsigned roles) const {
    info r = *this;
    for (auto& w : r.warp_ops) w &= roles;
    return r;
  }
  friend constexpr bool operator==(info, info) = default;
};

// What needs a warpgroup: wgmma (.sync.aligned over 128 threads), tile math (a tile's elements
// spread over 128 lanes), a TMEM load (a warp reaches one quarter of TMEM's 128 lanes).
enum warp_op : int { warp_op_wgmma = 0, warp_op_tile = 1, warp_op_tmem_load = 2 };
constexpr info needs_warpgroup(warp_op k, unsigned features = 0) {
  info i{features};
  i.warp_ops[k] = ~0u;
  return i;
}

inline constexpr info no_info{};

template <class... Ts>
constexpr info info_of() {
  return (no_info | ... | Ts::static_info);
}

}  // namespace stagecraft
