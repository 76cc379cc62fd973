// Lesson 03: double buffering, and which completion a wait observes.
//
// A producer warpgroup loads step j into stage j % 2 and a consumer copies it out. Each stage's
// `ready` barrier completes once per use of the stage: completion 0 for step s, 1 for step
// s + 2, ... A wait is always for the *next* completion this waiter has not seen (the stage
// cursor's phase), and on hardware a wait only compares one parity bit: completion n and n + 2
// look the same. So the producer may not run two uses ahead: it waits on `consumed[s]` (the
// consumer is done with the stage) before refilling it.
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::lessons {
namespace {

template <bool Bug>
ir::Kernel phases() {
  constexpr long long K = 2;
  const std::int64_t M = 128, N = 512, steps = N / 64;
  return lower(kernel<sm_90a>(
      "lesson03_phases", grid(M / 64), threads(2_c),
      gmem<f32>("x", shape(M, N)),               // (row, col)
      gmem<f32>("y", shape(M, N)),               // (row, col)
      smem<f32>(shape(int_c<K>, 64_c, 64_c)),    // xs: (stage, row, col)
      barrier(arrivals(1_c), count(int_c<K>)),   // ready[stage]: the TMA load's arrival and bytes
      barrier(arrivals(1_c), count(int_c<K>)),   // consumed[stage]: the consumer is done reading
      [&](auto x, auto y, auto xs, auto ready, auto consumed) {
        auto row = program_id();
        auto producer = for_(range(steps), [&](auto j) {
          auto s = stage<K>(j);
          auto load_step = copy_gmem_to_smem(x.block(row, j), xs[s], ready[s]);
          if constexpr (Bug) return load_step;  // MISTAKE: no back-pressure, refill at once
          else return seq(if_(j >= int_c<K>, barrier_wait(consumed[s])), load_step);
        });
        auto consumer = for_(range(steps), [&](auto j) {
          auto s = stage<K>(j);
          return seq(barrier_wait(ready[s]), store(y.tile(shape(64_c, 64_c), row, j), load(xs[s])), barrier_arrive(consumed[s]));
        });
        return if_(thread_id() == 0_c, producer, consumer);
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 3,
    .slug = "phases",
    .title = "Double buffering and phases",
    .summary = "Every completion of a barrier is a phase; a waiter must observe each one in turn. Hardware "
               "keeps one parity bit, so a producer two phases ahead makes a wait return at the wrong time.",
    .build = phases<false>,
    .reference =
        [](std::vector<host_tensor>& t) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          std::copy(x.begin(), x.end(), y.begin());
        },
    .twins = {{.name = "no_backpressure",
               .mistake = "the producer refills a stage without waiting on consumed[s]",
               .expect = "data-race",
               .policy = "eager",
               .hardware = "the TMA refill of step j+2 lands in the stage before the consumer has read step j's block, "
                           "and ready[s] completes again before the consumer's wait for the earlier completion: with "
                           "one parity bit the GPU cannot tell the two apart, so the wait returns on either and the "
                           "consumer copies a block that is being overwritten: wrong or torn rows in y",
               .fix = "before refilling stage s for step j >= K, barrier_wait(consumed[s])",
               .build = phases<true>}},
});

}  // namespace
}  // namespace stagecraft::lessons
