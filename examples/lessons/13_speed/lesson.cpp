// Lesson 13: speed. The same correct pipeline written four ways, and what each costs.
//
// C = A * B^T, bf16 in, f32 accumulate, bf16 out, on a cluster of two CTAs that are neighbours
// along N and share their A tile: each CTA loads half of its rows and the TMA multicasts them
// into both (collective_axes(0_c)). Warpgroup 0 streams 64-wide K slices through an S-deep ring
// (S = 4);
// warpgroup 1 keeps one wgmma group in flight (lesson 10) and releases the previous stage on
// `consumed`, a cluster barrier: the multicast refills the stage in both CTAs, so both
// consumers must be done with it. The epilogue converts to bf16 into a 128-byte-swizzled SMEM
// tile and stores it with one TMA copy.
//
// Every variant is correct (the interpreter checks all four like any lesson); they differ in
// speed only, and `stagecraft lesson 13` prints why:
//   - two_stages: S = 2. With one wgmma group kept in flight, one stage is being read and only
//     one can be loading: the next slice's load starts a step late, and the modelled consumer
//     waits for much of each load's latency. (S = 1 deadlocks with this consumer: the stage it
//     would release after wgmma_wait(1) is the one the producer must refill first.)
//   - plain_staging: the staging tile is not swizzled. A warp's fragment store puts eight rows
//     128 bytes apart in the same banks: 8-way conflicts, 8x the SMEM wavefronts.
//   - generic_epilogue: the consumer writes C straight to GMEM with ordinary stores. Correct,
//     but a kernel that writes GMEM generically needs its cluster barrier's arrivals at
//     .release.cluster scope (ir::cluster_barrier_scope): every release of a stage in the K loop
//     then carries a cluster-wide fence (a MEMBAR in SASS), where .release.cta costs nothing.
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

#include "../../gemm_reference.hpp"

namespace stagecraft::lessons {
namespace {

enum class epilogue { swizzled_tma, plain_tma, generic };

template <long long S, epilogue E>
ir::Kernel speed() {
  constexpr long long BN = 64;
  const std::int64_t M = 128, N = 256, K = 512, steps = K / 64;
  auto staging = [] {
    if constexpr (E == epilogue::plain_tma) return smem<bf16>(shape(64_c, int_c<BN>));
    else return smem<bf16>(shape(64_c, int_c<BN>), swizzle(128_c));  // one 128-byte row per tile row
  }();
  return lower(kernel<sm_90a>(
      "lesson13_speed", grid(N / BN, M / 64), threads(2_c), cluster(2_c),
      gmem<bf16>("a", shape(M, K)),                                        // (m, k)
      gmem<bf16>("b", shape(N, K)),                                        // (n, k): C = A * B^T
      gmem<bf16>("c", shape(M, N)),                                        // (m, n)
      smem<bf16>(shape(int_c<S>, 64_c, 64_c), swizzle(128_c)),             // as: (stage, m, k), shared by the cluster
      smem<bf16>(shape(int_c<S>, int_c<BN>, 64_c), swizzle(128_c)),        // bs: (stage, n, k)
      staging,                                                             // cs: (m, n), the epilogue's tile
      barrier(arrivals(2_c), count(int_c<S>)),                             // ready[stage]: A and B landed
      cluster_barrier(collective_axes(0_c), arrivals(1_c), count(int_c<S>)),  // consumed[stage]: both CTAs' consumers are done
      accumulator<f32>(shape(64_c, int_c<BN>)),                            // acc: (m, n) in registers
      [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto ready, auto consumed, auto acc) {
        auto n = program_id(0_c);
        auto m = program_id(1_c);
        auto producer = for_(range(steps), [&](auto j) {
          auto s = stage<S>(j);
          return seq(if_(j >= int_c<S>, barrier_wait(consumed[s])), copy_gmem_to_smem(a.block(m, j), as[s], ready[s], collective_axes(0_c)),
                     copy_gmem_to_smem(b.block(n, j), bs[s], ready[s]));
        });
        auto k_loop = for_(range(steps), [&](auto j) {
          auto s = stage<S>(j);
          return seq(barrier_wait(ready[s]), wgmma(acc, as[s], transpose(bs[s])), wgmma_commit(), wgmma_wait(1_c),
                     if_(j > 0_c, barrier_arrive(consumed[s.advance(int_c<S - 1>)])));  // step j - 1's stage
        });
        auto last = stage<S>(as_index(steps - 1));
        auto store_c = [&] {
          if constexpr (E == epilogue::generic) return store(c.tile(shape(64_c, int_c<BN>), m, n), cast<bf16>(load(acc)));
          else
            return seq(store(cs, cast<bf16>(load(acc))), commit_smem(), copy_smem_to_gmem(cs, c.block(m, n)), commit_smem_to_gmem_group(),
                       wait_smem_to_gmem(0_c));
        }();
        auto consumer = seq(store(acc, 0.0f), k_loop, wgmma_wait(0_c), barrier_arrive(consumed[last]), store_c);
        return if_(thread_id() == 0_c, producer, consumer);
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 13,
    .slug = "speed",
    .title = "Speed: stages in flight, barrier scopes, bank conflicts",
    .summary = "Correct is not fast. Keep stages in flight, let cluster barriers release at .cta scope (write C "
               "through SMEM and TMA, not generically), and swizzle the epilogue's SMEM tile.",
    .build = speed<4, epilogue::swizzled_tma>,
    .reference = examples::gemm_abt_reference_of_shapes,
    .variants = {{.name = "two_stages",
                  .change = "S = 2 instead of 4: with a wgmma group in flight, only one stage can be loading",
                  .build = speed<2, epilogue::swizzled_tma>},
                 {.name = "plain_staging",
                  .change = "the epilogue's SMEM tile is not swizzled",
                  .build = speed<4, epilogue::plain_tma>},
                 {.name = "generic_epilogue",
                  .change = "the consumer stores C to GMEM with ordinary stores instead of SMEM + TMA",
                  .build = speed<4, epilogue::generic>}},
});

}  // namespace
}  // namespace stagecraft::lessons
