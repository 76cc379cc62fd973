// Lesson 01: one barrier, two warpgroups.
//
// Warpgroup 0 writes 2x into a shared buffer and arrives on `ready`; warpgroup 1 waits on
// `ready`, then reads the buffer and writes 2x + 1 to y. The barrier has one expected arrival
// per phase: warpgroup 0's arrive completes phase 0, and the wait returns once it has. That
// arrive -> wait pair is the only thing ordering warpgroup 0's writes before warpgroup 1's
// reads.
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::lessons {
namespace {

enum class mistake { none, no_wait, no_arrive };

template <mistake Bug>
ir::Kernel one_barrier() {
  const std::int64_t M = 256;
  return lower(kernel<sm_90a>(
      "lesson01_one_barrier", grid(M / 64), threads(2_c),
      gmem<f32>("x", shape(M, 64)),          // (row, col)
      gmem<f32>("y", shape(M, 64)),          // (row, col)
      smem<f32>(shape(64_c, 64_c)),          // buf: warpgroup 0 writes it, warpgroup 1 reads it
      barrier(arrivals(1_c), count(1_c)),    // ready: one arrival completes a phase
      [&](auto x, auto y, auto buf, auto ready) {
        auto rows = [&](auto a) { return a.tile(shape(64_c, 64_c), program_id(), 0_c); };
        auto producer = [&] {
          auto write = store(buf, load(rows(x)) * 2.0f);
          if constexpr (Bug == mistake::no_arrive) return write;  // MISTAKE: never says it is done
          else return seq(write, barrier_arrive(ready));
        }();
        auto consumer = [&] {
          auto read = store(rows(y), load(buf) + 1.0f);
          if constexpr (Bug == mistake::no_wait) return read;  // MISTAKE: reads without waiting
          else return seq(barrier_wait(ready), read);
        }();
        return if_(thread_id() == 0_c, producer, consumer);
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 1,
    .slug = "one_barrier",
    .title = "One barrier, two warpgroups",
    .summary = "An arrive in one warpgroup and a wait in another order everything before the arrive "
               "before everything after the wait. A phase completes when its expected arrivals are in.",
    .build = one_barrier<mistake::none>,
    .reference =
        [](std::vector<host_tensor>& t) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * 2.0f + 1.0f;
        },
    .twins = {{.name = "no_wait",
               .mistake = "warpgroup 1 reads the buffer without barrier_wait(ready)",
               .expect = "data-race",
               .policy = "eager",
               .hardware = "nothing orders the two warpgroups: warpgroup 1 may read the buffer before, during or after "
                           "warpgroup 0 writes it, so y gets stale SMEM contents (often the previous kernel's data) in "
                           "some rows and the right values in others, differently on every run",
               .fix = "barrier_wait(ready) before the first read of buf",
               .build = one_barrier<mistake::no_wait>},
              {.name = "no_arrive",
               .mistake = "warpgroup 0 never arrives on ready",
               .expect = "deadlock",
               .policy = "eager",
               .hardware = "phase 0 never completes, so warpgroup 1 spins in mbarrier.try_wait for ever: the kernel "
                           "hangs until the watchdog (or the driver's timeout) kills it",
               .fix = "barrier_arrive(ready) after warpgroup 0's last write",
               .build = one_barrier<mistake::no_arrive>}},
});

}  // namespace
}  // namespace stagecraft::lessons
