// C = A * B^T, bf16 in, f32 accumulate, bf16 out: the warp-specialized, persistent Hopper GEMM.
//
// An output tile is 128 x 256; by default two CTAs form a cluster that computes two neighbouring
// tiles along N and shares their A tile (below). Warpgroup 0 (the producer) streams 64-wide K
// slices of A (128 x 64, as two 64-row halves) and B (256 x 64) through an S-deep ring of
// 128-byte swizzled stages with TMA; warpgroups 1 and 2 (the consumers) each own one 64-row half
// of the tile and a 64 x 256 f32 accumulator in registers (128 per thread).
//
// Consumers keep one wgmma group in flight: per step they issue the wgmma over the stage (4
// instructions of m64n256k16), commit it, and wgmma_wait(1) -- which returns once the group of
// the *previous* step has finished -- then release that previous stage to the producer. The
// tensor core therefore always has the next group queued while the consumer waits; releasing
// the current stage there instead would let its refill land under a running wgmma (the zoo's
// zoo_release_under_wait1). The last stage of a tile is released after wgmma_wait(0).
//
// Persistent: the grid has `ctas` CTAs (0: one per tile), and cluster c computes cluster tiles
// c, c + clusters, c + 2 clusters, ... of a grouped order (static_schedule: bands of `raster` = 8
// rows of tiles, column by column, so a wave's CTAs share A and B blocks in L2). The ring's stage and phase follow one step counter that
// runs on across tiles (step = tile_iteration * K/64 + k), so the producer prefetches the next
// tile's first stages while the consumers finish the current one. The epilogue rounds to bf16
// into SMEM a 64 x 128 subtile at a time, laid out as 64 x 64 tiles of 128-byte swizzled rows
// (a warp's fragment store then hits every bank once: no conflicts), and issues one TMA store per
// tile; the stores of the last subtile overlap the next tile's main loop.
//
// One TMA box of A lands as a (128, 64) stage; each consumer's wgmma reads its 64-row half as a
// sub-view (slice<0>), which starts 8 KB in: a whole number of 1024-byte swizzle patterns.
//
// Any M, N, K (N and K multiples of 8: TMA rows are 16-byte units): edge tiles overhang their
// arrays. TMA fills A's and B's outside with zeros, which add nothing, and the stores of C drop
// what lies outside (a consumer half wholly past M stores nothing).
#include <algorithm>
#include <string>
#include <tuple>

#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "gemm_reference.hpp"

namespace stagecraft::examples {
namespace {

constexpr long long BM = 128, BN = 256, BK = 64;

// One step g of the producer (k, of tile (m, n)): once every consumer has released step g - S's
// stage, load A's and B's K slice k into it. n_load is the N block B comes from (see gemm_body).
template <long long S, long long Cl>
auto produce_step(auto a, auto b, auto as, auto bs, auto ready, auto consumed, auto m, auto n_load, auto k, auto g) {
  auto s = stage<S>(g);
  auto load_a = [&] {
    if constexpr (Cl == 1) return copy_gmem_to_smem(a.block(m, k), as[s], ready[s]);
    else return copy_gmem_to_smem(a.block(m, k), as[s], ready[s], collective_axes(0_c));
  };
  return seq(if_(g >= int_c<S>, barrier_wait(consumed[s])),  // every consumer released step g - S
             load_a(), copy_gmem_to_smem(b.block(n_load, k), bs[s], ready[s]));
}

// A consumer's tile i (m, n): its 64-row half of the K loop, then the epilogue.
//
// The epilogue, one 64 x 128 column half j of the consumer's 64 x 256 accumulator at a time
// through its 64 x 128 SMEM subtile (two 64 x 64 tiles of 128-byte swizzled rows: the fragment
// store is conflict free; two TMA stores). The subtile is refilled once the stores of the
// previous half have read it; the next tile's main loop runs under the stores of half 1. Half
// the SMEM of a whole-tile staging buys the ring its 4th stage (4 x 48 KB + 2 x 16 KB).
template <long long S>
auto consume_tile(auto c, auto as, auto bs, auto cs, auto ready, auto consumed, auto acc, std::int64_t steps, auto i, auto m, auto n, auto half) {
  auto step = [&](auto k) { return i * steps + k; };  // runs on across tiles
  auto k_loop = for_(range(steps), [&](auto k) {
    auto s = stage<S>(step(k));
    auto previous = s.advance(int_c<S - 1>);  // the stage of step g - 1
    return seq(barrier_wait(ready[s]), wgmma(acc, slice<0>(as[s], half * 64_c, 64_c), transpose(bs[s])), wgmma_commit(),
               wgmma_wait(1_c),  // step g - 1's group is done: its stage is free, this one still runs
               if_(k > 0_c, barrier_arrive(consumed[previous])));
  });
  auto last = stage<S>(step(steps - 1));
  auto store_c = [&](auto j) {
    return store_tile(cs[half], cast<bf16>(slice<1>(load(acc), j * int_c<BN / 2>, int_c<BN / 2>)), c.block(m * 2_c + half, n * 2_c + j), 0_c);
  };
  return seq(store(acc, 0.0f), k_loop, wgmma_wait(0_c), barrier_arrive(consumed[last]), store_c(0_c), store_c(1_c));
}

// Cl = 2: the two CTAs of a 2x1 cluster (neighbours along N) need the same A tile, so each
// loads one 64-row half with a multicast TMA copy that lands in both CTAs; a stage may then be
// refilled only when the consumers of *both* CTAs are done with it, so `consumed` is a cluster
// barrier (each consumer's arrival reaches both CTAs: 2 x 2 per phase).
// M is a size (expr/size.hpp): compiled in, or with --dynamic M a launch argument, and then one
// compiled kernel serves every M (the grid, the tile count and the loop bounds below are
// computed from it at run time; TMA's tensor maps are encoded per launch from the real shapes).
template <long long S, long long Cl>
auto gemm_body(size_expr M, std::int64_t N, std::int64_t K, size_expr clusters, std::int64_t raster) {
  return [=](auto a, auto b, auto c, auto as, auto bs, auto cs, auto ready, auto consumed, auto acc) {
    // Partial tiles: the last K slice, M tile and N tile may overhang their arrays (TMA fills
    // A's and B's outside with zeros, which add nothing, and C's stores drop it). With a cluster
    // of two, the second CTA's N tile may lie wholly past N: it loads the last B tile instead (a
    // load wholly outside is a runaway index to the interpreter), and its store writes nothing.
    const std::int64_t steps = ceil_div(K, BK), blocks_n = ceil_div(N, BN), tiles_n = ceil_div(blocks_n, Cl);
    // Every CTA runs the loop over its tiles to the same bound, the most any cluster gets, and
    // skips the iterations past the last tile: a trip count the JIT knows keeps ptxas' register
    // allocation what it is for one tile, where a per-CTA bound (blockIdx-derived) made the
    // consumers, 128 accumulator registers each, spill.
    // (With a run-time M the bound is a kernel argument: uniform across the CTA, not
    // blockIdx-derived.)
    // Cluster c's cluster tiles (BM x Cl BN) c, c + clusters, ... in bands of `raster` rows of
    // tiles (static_schedule: L2-friendly); its CTAs take the tile's Cl column blocks.
    const auto sched = static_schedule(ceil_div(M, BM), tiles_n, clusters, program_id(0_c) / int_c<Cl>, raster);
    const size_expr rounds = sched.rounds();
    auto m = [&](auto i) { return sched.m(i); };
    auto n = [&](auto i) { return sched.n(i) * int_c<Cl> + program_id(0_c) % int_c<Cl>; };

    // One flat loop over the CTA's steps: the producer runs on 40 registers (setmaxnreg), and a
    // nested tile loop's extra 64-bit counters made ptxas spill there.
    auto producer = for_(range(rounds * steps), [&](auto g) {
      auto i = g / steps, k = g % steps;
      return if_(sched.valid(i), produce_step<S, Cl>(a, b, as, bs, ready, consumed, m(i), min(n(i), blocks_n - 1), k, g));
    });
    auto consumer = [&](auto half) {
      return for_(range(rounds), [&](auto i) { return if_(sched.valid(i), consume_tile<S>(c, as, bs, cs, ready, consumed, acc, steps, i, m(i), n(i), half)); });
    };
    return if_(thread_id() == 0_c, producer,
               seq(if_(thread_id() == 1_c, consumer(0_c)), if_(thread_id() == 2_c, consumer(1_c)), wait_smem_to_gmem(0_c)));
  };
}

// The SMEM and barriers every variant declares (shapes in the comments).
template <long long S>
auto gemm_operands(size_expr M, std::int64_t N, std::int64_t K) {
  return std::tuple{gmem<bf16>("a", shape(M, K)),                                                 // (m, k)
                    gmem<bf16>("b", shape(N, K)),                                                 // (n, k): C = A * B^T
                    gmem<bf16>("c", shape(M, N)),                                                 // (m, n)
                    smem<bf16>(shape(int_c<S>, int_c<BM>, int_c<BK>), swizzle(128_c)),            // as: (stage, m, k), K-major: a consumer's half is 64 rows
                    smem<bf16>(shape(int_c<S>, int_c<BN>, int_c<BK>), swizzle(128_c)),            // bs: (stage, n, k), K-major
                    smem<bf16>(shape(2_c, 64_c, int_c<BN / 2>), tiling(64_c, 64_c), swizzle(128_c)),  // cs: each consumer's C subtile, 64 x 64 swizzled tiles
                    barrier(arrivals(2_c), count(int_c<S>))};                                     // ready[stage]: A and B landed
}

template <long long S, long long Cl>
auto gemm_hopper(size_expr M, std::int64_t N, std::int64_t K, size_expr ctas, std::int64_t raster) {
  auto acc = accumulator<f32>(shape(64_c, int_c<BN>));  // each consumer's own (m, n)
  auto body = gemm_body<S, Cl>(M, N, K, ctas / Cl, raster);
  return std::apply(
      [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto ready) {
        if constexpr (Cl == 1)
          return kernel<sm_90a>("gemm_hopper", grid(ctas), threads(3_c), a, b, c, as, bs, cs, ready,
                                barrier(arrivals(2_c), count(int_c<S>)),  // consumed[stage]: both consumers are done
                                acc, body);
        else
          return kernel<sm_90a>("gemm_hopper", grid(ctas), threads(3_c), cluster(2_c), a, b, c, as, bs, cs, ready,
                                cluster_barrier(collective_axes(0_c), arrivals(2_c), count(int_c<S>)),  // consumed: both CTAs' consumers
                                acc, body);
      },
      gemm_operands<S>(M, N, K));
}

// The same GEMM on a dynamic schedule (tickets = 1): `ctas` persistent CTAs, and a CTA that
// finishes a tile takes the next one nobody has from a grid-wide counter (ticket_tiles,
// pipeline/tile_schedule.hpp: fetch_add), as FA3 does on Hopper, where there is no cluster launch
// control; the tiles then go to whichever SMs are free first. Tickets follow the static grouped
// order. The producer takes the ticket of round i + 1 at the start of round i (a ring of 4 slots,
// 16 bytes of SMEM) and every role reads it from the slot; per tile the roles do what the static
// kernel does, and the ring's step counter still runs on across tiles. One CTA per cluster.
template <long long S>
auto gemm_hopper_tickets(size_expr M, std::int64_t N, std::int64_t K, size_expr ctas, std::int64_t raster) {
  constexpr long long R = 4;
  auto acc = accumulator<f32>(shape(64_c, int_c<BN>));  // each consumer's own (m, n)
  const size_expr tiles = ceil_div(M, BM) * ceil_div(N, BN);
  auto body = [=](auto a, auto b, auto c, auto as, auto bs, auto cs, auto ready, auto consumed, auto counter, auto slots, auto tk_full, auto tk_empty,
                  auto acc) {
    const std::int64_t steps = ceil_div(K, BK);
    // Linear tile t in the static schedule's grouped order (one worker per tile).
    auto order = [&](auto t) { return static_schedule(ceil_div(M, BM), ceil_div(N, BN), tiles, t, raster); };
    auto producer = ticket_tiles<R, true>(tiles, ctas, counter(0_c), slots, tk_full, tk_empty, [&](auto i, auto t) {
      return for_(range(steps), [&](auto k) {
        return produce_step<S, 1>(a, b, as, bs, ready, consumed, order(t).m(0_c), order(t).n(0_c), k, i * steps + k);
      });
    });
    auto consumer = [&](auto half) {
      return ticket_tiles<R, false>(tiles, ctas, counter(0_c), slots, tk_full, tk_empty, [&](auto i, auto t) {
        return consume_tile<S>(c, as, bs, cs, ready, consumed, acc, steps, i, order(t).m(0_c), order(t).n(0_c), half);
      });
    };
    return if_(thread_id() == 0_c, producer,
               seq(if_(thread_id() == 1_c, consumer(0_c)), if_(thread_id() == 2_c, consumer(1_c)), wait_smem_to_gmem(0_c)));
  };
  return std::apply(
      [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto ready) {
        return kernel<sm_90a>("gemm_hopper", grid(ctas), threads(3_c), a, b, c, as, bs, cs, ready,
                              barrier(arrivals(2_c), count(int_c<S>)),  // consumed[stage]: both consumers are done
                              semaphores("tickets", shape(1_c)),        // the next ticket (zero at launch)
                              smem<i32>(shape(int_c<R>, 1_c)),          // slots: (slot, 1), tickets in flight
                              barrier(arrivals(1_c), count(int_c<R>)),  // tk_full[slot]: the producer's ticket is in it
                              barrier(arrivals(3_c), count(int_c<R>)),  // tk_empty[slot]: the three roles have read it
                              acc, body);
      },
      gemm_operands<S>(M, N, K));
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "gemm_hopper",
    .summary = "C = A * B^T (bf16 in, f32 accumulate, bf16 out): 128x256x64 tiles, S-stage TMA ring, 1 producer + 2 wgmma consumer "
               "warpgroups keeping one wgmma group in flight, persistent over tiles",
    .params = {{.name = "M", .default_value = 256, .help = "rows of A and C (any; --dynamic M: a launch argument)", .min = 128, .run_time = true},
               {.name = "N", .default_value = 512, .help = "rows of B, columns of C (bf16 rows of 16-byte TMA units: a multiple of 8)", .min = 256,
                .multiple_of = 8},
               {.name = "K", .default_value = 256, .help = "the reduced dimension (a multiple of 8, as N)", .min = 64, .multiple_of = 8},
               {.name = "stages", .default_value = 4, .help = "pipeline stages (48 KB of SMEM each)", .allowed = {2, 3, 4}},
               {.name = "cluster", .default_value = 2, .help = "CTAs per cluster along N, sharing A by multicast", .allowed = {1, 2}},
               {.name = "ctas", .default_value = 0, .help = "CTAs in the grid, each looping over output tiles (e.g. 132, the SMs of an H100 SXM); "
                "0: one per tile; more than the tiles: one per tile", .min = 0},
               {.name = "raster", .default_value = 8, .help = "persistent tile order: bands of this many rows of tiles, column by column "
                "(L2-friendly; 1: row-major)", .min = 1, .max = 64},
               {.name = "tickets", .default_value = 0, .help = "1: dynamic persistent, each CTA taking its next tile from a grid-wide counter "
                "(fetch_add; FA3's Hopper scheduler); cluster=1, stages=4", .allowed = {0, 1}, .min = 0}},
    .build =
        [](param_values const& p) {
          const auto M = size_param(p, "M");
          const auto N = p.at("N"), cl = p.at("cluster"), ctas = p.at("ctas");
          if (p.at("tickets") == 1) {
            if (cl != 1 || p.at("stages") != 4)
              throw usage_error("gemm_hopper: tickets=1 is offered with cluster=1 and stages=4 (a ticket is one CTA's tile), got cluster=" +
                                std::to_string(cl) + " stages=" + std::to_string(p.at("stages")));
            const size_expr tiles = ceil_div(M, BM) * ceil_div(N, BN);
            return lower(gemm_hopper_tickets<4>(M, N, p.at("K"), ctas == 0 ? tiles : min(ctas, tiles), p.at("raster")));
          }
          if (ctas % cl != 0)
            throw usage_error("gemm_hopper: ctas=" + std::to_string(ctas) + " must be a multiple of cluster=" + std::to_string(cl) +
                              " (the grid is whole clusters)");
          const size_expr tile_ctas = ceil_div(M, BM) * (ceil_div(N, BN * cl) * cl);  // one CTA per output tile, whole clusters
          const size_expr grid_ctas = ctas == 0 ? tile_ctas : min(ctas, tile_ctas);
          return dispatch<"stages", 2, 3, 4>(p, [&](auto S) {
            return dispatch<"cluster", 1, 2>(p, [&](auto C) {
              return lower(gemm_hopper<decltype(S)::value, decltype(C)::value>(M, N, p.at("K"), grid_ctas, p.at("raster")));
            });
          });
        },
    .reference = gemm_abt_reference,
});

}  // namespace
}  // namespace stagecraft::examples
