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

  friend constexpr info operator|(info a, info b) {
    info r{a.features | b.features, a.max_threads < b.max_threads ? a.max_threads : b.max_threads,
           a.max_axis > b.max_axis ? a.max_axis : b.max_axis};
    for (int i = 0; i < 3; ++i)
      r.max_grid[i] = a.max_grid[i] == 0 ? b.max_grid[i] : b.max_grid[i] == 0 || a.max_grid[i] < b.max_grid[i] ? a.max_grid[i] : b.max_grid[i];
    r.named_barrier_threads = a.named_barrier_threads > b.named_barrier_threads ? a.named_barrier_threads : b.named_barrier_threads;
    return r;
  }
  friend constexpr bool operator==(info, info) = default;
};

inline constexpr info no_info{};

template <class... Ts>
constexpr info info_of() {
  return (no_info | ... | Ts::static_info);
}

}  // namespace stagecraft
