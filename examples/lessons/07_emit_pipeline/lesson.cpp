// Lesson 07: emit_pipeline and the stage cursor.
//
// emit_pipeline<K> writes the schedule of lessons 02-06 for you: prefetch K steps, per step wait
// on full[s], run the body on the stage's views, fence, store, and refill. The only decision
// left is how long a stage must stay untouched after its step: delay_release<d> keeps it d more
// steps. This body reads the previous step's block too (y_j = x_j + x_{j-1}), so x's stages
// need d = 1; the cursor `stage<K>(j + K - 1)` names step j-1's stage without any arithmetic on
// slots or phases.
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::lessons {
namespace {

template <long long D>
ir::Kernel emit_pipeline_lesson() {
  constexpr long long K = 3;
  const std::int64_t M = 128, N = 512;
  return lower(kernel<sm_90a>(
      "lesson07_emit_pipeline", grid(M / 64), threads(1_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)),  // (row, col)
      smem<f32>(shape(int_c<K>, 64_c, 64_c)),                     // xs: (stage, row, col)
      smem<f32>(shape(int_c<K>, 64_c, 64_c)),                     // ys: (stage, row, col)
      barrier(arrivals(1_c), count(int_c<K>)),                    // full[stage]
      [&](auto x, auto y, auto xs, auto ys, auto full) {
        auto row = program_id();
        // MISTAKE (D = 0): x's stage is refilled right after its own step, under step j+1's read.
        return emit_pipeline<K>(N / 64, full, ins(in(x, xs, [&](auto j) { return x.block(row, j); }, delay_release<D>)),
                                outs(out(y, ys, [&](auto j) { return y.block(row, j); })), [&](auto j, auto xv, auto yv) {
                                  auto previous = stage<K>(j + int_c<K - 1>);  // step j-1's stage
                                  return if_(j >= 1_c, store(yv, load(xv) + load(xs[previous])), store(yv, load(xv)));
                                });
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 7,
    .slug = "emit_pipeline",
    .title = "emit_pipeline and the stage cursor",
    .summary = "A K-deep pipeline from one call: the library owns prefetch, waits, fences, stores and refills; "
               "delay_release<d> says how long a stage must outlive its step.",
    .build = emit_pipeline_lesson<1>,
    .reference =
        [](std::vector<host_tensor>& t) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          const std::size_t N = 512;
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = i % N >= 64 ? x[i] + x[i - 64] : x[i];
        },
    .twins = {{.name = "delay_release_0",
               .mistake = "the input keeps delay_release<0> although the body reads the previous step's stage",
               .expect = "data-race",
               .policy = "eager",
               .hardware = "the TMA refill of step j+K-1 lands in the stage that step j+1 is still reading: y gets "
                           "the wrong x block in some rows, depending on timing",
               .fix = "in(x, xs, map, delay_release<1>)",
               .build = emit_pipeline_lesson<0>}},
});

}  // namespace
}  // namespace stagecraft::lessons
