// Lesson 02: barrier arrays, and why they are indexed.
//
// A K-deep ring has K stages and K barriers: full[s] says stage s holds its block. Which barrier
// an op means is part of the op, so an array of K > 1 barriers must be indexed, and the index
// must stay inside the array. stagecraft checks both from the types: an unindexed array, or a
// barrier used as if it were data, does not compile (ko_unindexed.cpp, ko_not_array.cpp; the
// compiler's messages are in docs/lessons/02.md); an index whose range the type proves (a stage
// cursor) needs no run-time check; only an index the user opts out with runtime_index(...) is
// checked when the kernel runs, as the twin shows.
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::lessons {
namespace {

template <bool Bug>
ir::Kernel indexing() {
  constexpr long long K = 2;
  const std::int64_t M = 256, N = 512, steps = N / 64;
  return lower(kernel<sm_90a>(
      "lesson02_indexing", grid(M / 128), threads(1_c),
      gmem<f32>("x", shape(M, N)),               // (row, col)
      gmem<f32>("y", shape(M, N)),               // (row, col)
      smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // buf: (stage, row, col)
      barrier(arrivals(1_c), count(int_c<K>)),   // full[stage]
      [&](auto x, auto y, auto buf, auto full) {
        auto row = program_id();
        return for_(range(steps), [&](auto j) {
          auto s = stage<K>(j);  // slot j % K, phase j / K: proven in range by its type
          // MISTAKE: index with the step itself (buf[j] does not compile: its range is 0..7, the
          // array has 2 elements; runtime_index opts out of the check).
          auto slot = [&] {
            if constexpr (Bug) return runtime_index(j);
            else return s;
          }();
          return seq(copy_gmem_to_smem(x.block(row, j), buf[slot], full[slot]),
                     barrier_wait(full[slot]),
                     store(y.tile(shape(128_c, 64_c), row, j), load(buf[slot]) + 1.0f));
        });
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 2,
    .slug = "indexing",
    .title = "Barrier arrays and why they are indexed",
    .summary = "An array of barriers must be indexed, inside its bounds; a barrier is not data. stagecraft "
               "proves both from the types at compile time (the seed errors), and checks at run time only "
               "what the user opted out of.",
    .build = indexing<false>,
    .reference =
        [](std::vector<host_tensor>& t) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] + 1.0f;
        },
    .twins = {{.name = "step_as_index",
               .mistake = "the ring is indexed with the step number (runtime_index(j)) instead of the stage cursor",
               .expect = "index-out-of-range",
               .policy = "eager",
               .hardware = "step 2 addresses full[2] and buf[2], past both arrays: the mbarrier operation lands on "
                           "whatever SMEM follows (another barrier, or data), so the kernel corrupts memory, hangs, or "
                           "faults with an illegal address",
               .fix = "index with the stage cursor s = stage<K>(j), whose slot is j % K by construction",
               .build = indexing<true>}},
});

}  // namespace
}  // namespace stagecraft::lessons
