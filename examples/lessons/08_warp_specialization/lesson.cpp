// Lesson 08: warp specialization.
//
// One memory warpgroup (the producer) only issues TMA loads; two compute warpgroups (the
// consumers) only compute. They hand stages over with two barrier arrays: ready[s] (the
// stage has landed: the TMA load's arrival and bytes) and consumed[s] (every consumer is done
// with it: one arrival per consumer). The producer waits on consumed[s] before refilling. Here
// each consumer releases the stage itself (manual_release) as soon as it has read it.
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::lessons {
namespace {

template <bool Bug>
ir::Kernel warp_specialization() {
  constexpr long long K = 2, C = 2;
  const std::int64_t M = 128, N = 512;
  return lower(kernel<sm_90a>(
      "lesson08_warp_specialization", grid(M / 128), threads(int_c<C + 1>),
      gmem<f32>("x", shape(M / 64, 64_c, N)),        // (row block, row, col): one box is a (2, 64, 64) stage
      gmem<f32>("y", shape(M, N)),                   // (row, col)
      smem<f32>(shape(int_c<K>, 2_c, 64_c, 64_c)),   // xs: (stage, half, row, col); consumer c reads half c
      barrier(arrivals(1_c), count(int_c<K>)),       // ready[stage]
      barrier(arrivals(int_c<C>), count(int_c<K>)),  // consumed[stage]: one arrival per consumer
      [&](auto x, auto y, auto xs, auto ready, auto consumed) {
        auto row = program_id();
        return emit_pipeline_warp_specialized<K, C, true>(
            N / 64, ready, consumed, ins(in(x, xs, [&](auto j) { return x.block(row, 0_c, j); })),
            [&](auto j, auto c, auto stage_view, auto release) {  // stage_view: (half, row, col)
              auto read = store(y.tile(shape(64_c, 64_c), row * 2_c + c, j), load(stage_view[c]) * 3.0f);
              if constexpr (Bug) return seq(barrier_arrive(release), read);  // MISTAKE: releases before reading
              else return seq(read, barrier_arrive(release));
            });
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 8,
    .slug = "warp_specialization",
    .title = "Warp specialization",
    .summary = "A producer warpgroup and consumer warpgroups hand stages over with ready and consumed barriers; "
               "a stage is released only after its last read.",
    .build = warp_specialization<false>,
    .reference =
        [](std::vector<host_tensor>& t) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * 3.0f;
        },
    .twins = {{.name = "early_release",
               .mistake = "a consumer arrives on consumed[s] before it reads the stage",
               .expect = "data-race",
               .policy = "pct",
               .hardware = "the producer may refill the stage while the consumer still reads it: some rows of y "
                           "come from the block K steps later, only under some timings",
               .fix = "barrier_arrive(release) after the last read of the stage",
               .build = warp_specialization<true>}},
});

}  // namespace
}  // namespace stagecraft::lessons
