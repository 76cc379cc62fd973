// y = x * w, where w is one 128x64 f32 tile every CTA needs: a cluster of C CTAs loads it once
// from GMEM with a multicast TMA copy into all C CTAs' SMEM.
//
// Every CTA of a cluster issues the same collective copy of w for its share of the rows
// (128 / C of them), and the TMA engine writes every share into every CTA of the group (the
// multicast mask), so each CTA's barrier receives, and expects, the whole tile's bytes: its
// expect_tx comes from the destination's type. Then every CTA streams its 128-row strip of x in
// 128x64 blocks, multiplies by w and hands the product to a TMA store; the output stage is
// rewritten once the previous store has read it. Any M and N (N a multiple of 4): the x tile
// is masked, TMA drops the stores' outside, and a cluster's CTAs past the last strip take their
// share of w (the multicast needs every CTA of the group) and stop.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

template <long long C>
auto multicast_scale(std::int64_t M, std::int64_t N) {
  const std::int64_t steps = ceil_div(N, 64), strips = ceil_div(M, 128);
  return kernel<sm_90a>(
      "multicast_scale", grid(ceil_div(strips, C) * C), threads(1_c), cluster(int_c<C>),
      gmem<f32>("x", shape(M, N)),             // (row, col)
      gmem<f32>("w", shape(128_c, 64_c)),      // (row, col): one tile, shared
      gmem<f32>("y", shape(M, N)),             // (row, col)
      smem<f32>(shape(128_c, 64_c)),           // ws: w, resident in every CTA
      smem<f32>(shape(128_c, 64_c)),           // out
      barrier(arrivals(1_c), count(1_c)),      // w_loaded: this CTA's arrival + every share's bytes
      [&](auto x, auto w, auto y, auto ws, auto out, auto w_loaded) {
        auto row = program_id();
        return seq(copy_gmem_to_smem(w.block(0_c, 0_c), ws, w_loaded, collective_axes(0_c)),
                   barrier_wait(w_loaded),
                   if_(row < strips, for_(range(steps),
                                          [&](auto j) {
                                            return seq(wait_smem_to_gmem(0_c, read_only),
                                                       store(out, load(x.tile(shape(128_c, 64_c), masked(), row, j)) * load(ws)),
                                                       commit_smem(),
                                                       copy_smem_to_gmem(out, y.block(row, j)),
                                                       commit_smem_to_gmem_group());
                                          })),
                   wait_smem_to_gmem(0_c));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "multicast_scale",
    .summary = "y = x * w; w (one 128x64 tile) multicast by TMA into every CTA of each C-CTA cluster, products stored by TMA",
    .params = {{.name = "M", .default_value = 512, .help = "rows (any)", .min = 128},
               {.name = "N", .default_value = 256, .help = "columns (a multiple of 4)", .min = 64, .multiple_of = 4},
               {.name = "C", .default_value = 2, .help = "CTAs per cluster", .allowed = {2, 4}}},
    .build =
        [](param_values const& p) {
          const auto M = p.at("M"), C = p.at("C");
          return dispatch<2, 4>(C, [&](auto c) { return lower(multicast_scale<decltype(c)::value>(M, p.at("N"))); });
        },
    .reference =
        [](std::vector<host_tensor>& t, param_values const&) {
          auto x = t[0].as<float>();
          auto w = t[1].as<float>();
          auto y = t[2].as<float>();
          const auto N = static_cast<std::size_t>(t[0].shape[1]);
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * w[(i / N % 128) * 64 + i % N % 64];
        },
});

}  // namespace
}  // namespace stagecraft::examples
