// y = f16(2x + 1), written as the classic hand-rolled double buffer.
//
// CTA i owns the 64-row strip i of x (M, N). While it converts column block j out of one input
// slot, the TMA engine fills the other with block j+1. Results go out through two output slots:
// before a slot is rewritten, the TMA store that read it two steps ago must have finished
// reading (wait_smem_to_gmem(1, read_only): at most the store of step j-1 may still be pending).
// Any M and N (N a multiple of 8): the last blocks overhang, TMA fills and drops their outside.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

auto double_buffer(std::int64_t M, std::int64_t N) {
  const std::int64_t steps = ceil_div(N, 128);
  return kernel<sm_90a>(
      "double_buffer", grid(ceil_div(M, 64)), threads(1_c),
      gmem<f32>("x", shape(M, N)),           // (row, col)
      gmem<f16>("y", shape(M, N)),           // (row, col)
      smem<f32>(shape(2_c, 64_c, 128_c)),    // in:  (slot, row, col)
      smem<f16>(shape(2_c, 64_c, 128_c)),    // out: (slot, row, col)
      barrier(arrivals(1_c), count(2_c)),    // loaded[slot]
      [&](auto x, auto y, auto in, auto out, auto loaded) {
        auto row = program_id();
        auto first = stage<2>(0_c);
        return seq(copy_gmem_to_smem(x.block(row, 0_c), in[first], loaded[first]),
                   for_(range(steps),
                        [&](auto j) {
                          auto cur = stage<2>(j);
                          auto next = cur.advance(1_c);
                          return seq(if_(next.step < steps, copy_gmem_to_smem(x.block(row, next.step), in[next], loaded[next])),
                                     barrier_wait(loaded[cur]),
                                     wait_smem_to_gmem(1_c, read_only),
                                     store(out[cur], cast<f16>(load(in[cur]) * 2.0f + 1.0f)),
                                     commit_smem(),
                                     copy_smem_to_gmem(out[cur], y.block(row, j)),
                                     commit_smem_to_gmem_group());
                        }),
                   wait_smem_to_gmem(0_c));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "double_buffer",
    .summary = "y = f16(2x + 1); a hand-written double buffer of 64x128 f32 blocks, two output slots",
    .params = {{.name = "M", .default_value = 256, .help = "rows (any)", .min = 64},
               {.name = "N", .default_value = 1024, .help = "columns (a multiple of 8: TMA moves the f16 rows in 16-byte units)", .min = 128, .multiple_of = 8}},
    .build = [](param_values const& p) { return lower(double_buffer(p.at("M"), p.at("N"))); },
    .reference =
        [](std::vector<host_tensor>& t, param_values const&) {
          auto x = t[0].as<float>();
          auto y = t[1].as<std::uint16_t>();
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = f32_to_f16(x[i] * 2.0f + 1.0f);
        },
});

}  // namespace
}  // namespace stagecraft::examples
