// y = 2x + 1 with a pipelined pipeline: each CTA walks `strips` row strips one after another (the
// outer loop), and streams each strip's column blocks through an inner emit_pipeline. Barrier
// phases simply continue from one inner pipeline to the next: nobody resets a parity. Any M and
// N (N a multiple of 4: TMA's 16-byte rows): blocks overhang the last rows and columns, and the
// last CTA skips the strips past the end (only trailing ones, so the phases still line up).
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

template <long long K>
auto strip_pipelines(std::int64_t M, std::int64_t N, std::int64_t strips) {
  const std::int64_t row_blocks = ceil_div(M, 64);
  return kernel<sm_90a>(
      "strip_pipelines", grid(ceil_div(row_blocks, strips)), threads(1_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)),  // (row, col)
      smem<f32>(shape(int_c<K>, 64_c, 64_c)),                   // xs: (stage, row, col)
      smem<f32>(shape(int_c<K>, 64_c, 64_c)),                   // ys
      barrier(arrivals(1_c), count(int_c<K>)),                  // full[stage]
      [&](auto x, auto y, auto xs, auto ys, auto full) {
        return for_(range(strips), [&](auto i) {
          auto row = program_id() * strips + i;
          return if_(row < row_blocks, emit_pipeline<K>(ceil_div(N, 64), full, ins(in(x, xs, [&](auto j) { return x.block(row, j); })),
                                                        outs(out(y, ys, [&](auto j) { return y.block(row, j); })),
                                                        [&](auto, auto xv, auto yv) { return store(yv, load(xv) * 2.0f + 1.0f); }));
        });
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "strip_pipelines",
    .summary = "y = 2x + 1; an outer loop over row strips around an inner emit_pipeline (a pipelined pipeline)",
    .params = {{.name = "M", .default_value = 256, .help = "rows (any)", .min = 64},
               {.name = "N", .default_value = 512, .help = "columns (a multiple of 4: TMA's 16-byte rows)", .min = 64, .multiple_of = 4},
               {.name = "strips", .default_value = 2, .help = "row strips per CTA", .min = 1, .max = 64},
               {.name = "K", .default_value = 2, .help = "max_concurrent_steps", .allowed = {1, 2, 3, 4, 5, 6}}},
    .build =
        [](param_values const& p) {
          return dispatch<1, 2, 3, 4, 5, 6>(p.at("K"), [&](auto K) {
            return lower(strip_pipelines<decltype(K)::value>(p.at("M"), p.at("N"), p.at("strips")));
          });
        },
    .reference =
        [](std::vector<host_tensor>& t, param_values const&) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * 2.0f + 1.0f;
        },
});

}  // namespace
}  // namespace stagecraft::examples
