// Lesson 04: TMA loads and expect_tx.
//
// copy_gmem_to_smem(src, dst, bar) is one arrival on `bar` plus "expect bytes(dst) more bytes";
// the TMA engine completes those bytes when they land. A phase completes when its expected
// arrivals are in AND no bytes are pending. Here two loads (x and z) feed one barrier, so it
// expects two arrivals, and each carries its own bytes, derived from the destination's type
// (never typed by hand).
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::lessons {
namespace {

enum class mistake { none, arrive_for_copy, one_arrival };

template <mistake Bug>
ir::Kernel tma_expect_tx() {
  const std::int64_t M = 256, N = 128, steps = N / 64;
  constexpr long long A = Bug == mistake::one_arrival ? 1 : 2;  // MISTAKE (one_arrival): 1 for two loads
  return lower(kernel<sm_90a>(
      "lesson04_tma_expect_tx", grid(M / 128), threads(1_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("z", shape(M, N)), gmem<f32>("y", shape(M, N)),  // (row, col)
      smem<f32>(shape(128_c, 64_c)),             // xs
      smem<f32>(shape(128_c, 64_c)),             // zs
      barrier(arrivals(int_c<A>), count(1_c)),   // loaded: one arrival per load, plus its bytes
      [&](auto x, auto z, auto y, auto xs, auto zs, auto loaded) {
        auto row = program_id();
        return for_(range(steps), [&](auto j) {
          auto load_z = [&] {
            // MISTAKE (arrive_for_copy): "the barrier wants two arrivals", so arrive by hand
            // instead of loading z: the arrival count is met, z's bytes never come.
            if constexpr (Bug == mistake::arrive_for_copy) return barrier_arrive(loaded);
            else return copy_gmem_to_smem(z.block(row, j), zs, loaded);
          }();
          return seq(copy_gmem_to_smem(x.block(row, j), xs, loaded), load_z, barrier_wait(loaded),
                     store(y.tile(shape(128_c, 64_c), row, j), load(xs) + load(zs)));
        });
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 4,
    .slug = "tma_expect_tx",
    .title = "TMA and expect_tx",
    .summary = "A TMA load is an arrival plus expected bytes; a phase needs both its arrivals and all its bytes. "
               "Bytes come from the destination's type, so the count is never wrong by hand; arrivals can be.",
    .build = tma_expect_tx<mistake::none>,
    .reference =
        [](std::vector<host_tensor>& t) {
          auto x = t[0].as<float>();
          auto z = t[1].as<float>();
          auto y = t[2].as<float>();
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] + z[i];
        },
    .twins = {{.name = "arrive_for_copy",
               .mistake = "a hand-written barrier_arrive stands in for z's TMA load",
               .expect = "poison-read",
               .policy = "eager",
               .hardware = "the phase completes with x's bytes alone; the kernel reads zs, which holds whatever SMEM "
                           "held before (too few bytes are never a hang when an arrival is faked: they are stale data)",
               .fix = "load every operand the phase stands for: copy_gmem_to_smem(z.block(row, j), zs, loaded)",
               .build = tma_expect_tx<mistake::arrive_for_copy>},
              {.name = "one_arrival",
               .mistake = "the barrier is declared with arrivals(1) but two loads arrive on it",
               .expect = "missed-phase",
               .policy = "eager",
               .hardware = "each load's arrival (with its bytes) completes a phase on its own, so the barrier completes "
                           "twice per step while the kernel waits once: the parity bit is back where it was, and the "
                           "next wait returns at once (or hangs), before its data has landed",
               .fix = "arrivals(2_c): one per load that arrives on the barrier",
               .build = tma_expect_tx<mistake::one_arrival>}},
});

}  // namespace
}  // namespace stagecraft::lessons
