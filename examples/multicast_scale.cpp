// y = x * w, w one 128x64 tile shared by the two CTAs of each cluster through a multicast load.
//
// Every CTA of a cluster issues the same collective copy of w: it loads its half of w's rows
// and the TMA engine multicasts that half into both CTAs' SMEM, so w is read from GMEM once per
// cluster. Each CTA's barrier expects the whole tile (its own half and its peer's). Then every
// CTA streams its 128-row strip of x in 128x64 blocks, multiplies by w in registers and hands
// the product to a TMA store; the output stage is rewritten once the previous store has read it.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

auto multicast_scale(std::int64_t M, std::int64_t N) {
  const std::int64_t steps = N / 64;
  return kernel<sm_90a>(
      "multicast_scale", grid(M / 128), threads(1_c), cluster(2_c),
      gmem<f32>("x", shape(M, N)),             // (row, col)
      gmem<f32>("w", shape(128_c, 64_c)),      // (row, col)
      gmem<f32>("y", shape(M, N)),             // (row, col)
      smem<f32>(shape(128_c, 64_c)),           // ws: w, resident
      smem<f32>(shape(128_c, 64_c)),           // out
      barrier(arrivals(1_c), count(1_c)),      // w_loaded: both halves have landed
      [&](auto x, auto w, auto y, auto ws, auto out, auto w_loaded) {
        auto row = program_id();
        return seq(copy_gmem_to_smem(w.block(0_c, 0_c), ws, w_loaded, collective_axes(0_c)),
                   barrier_wait(w_loaded),
                   for_(range(steps),
                        [&](auto j) {
                          return seq(wait_smem_to_gmem(0_c, read_only),
                                     store(out, load(x.tile(shape(128_c, 64_c), row, j)) * load(ws)),
                                     commit_smem(),
                                     copy_smem_to_gmem(out, y.block(row, j)),
                                     commit_smem_to_gmem_group());
                        }),
                   wait_smem_to_gmem(0_c));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "multicast_scale",
    .summary = "y = x * w; w (one 128x64 tile) multicast by TMA into both CTAs of each 2-CTA cluster, products stored by TMA",
    .params = {{.name = "M", .default_value = 512, .help = "rows", .min = 256, .multiple_of = 256},
               {.name = "N", .default_value = 256, .help = "columns", .min = 64, .multiple_of = 64}},
    .build = [](param_values const& p) { return lower(multicast_scale(p.at("M"), p.at("N"))); },
    .reference =
        [](std::vector<host_tensor>& t, param_values const&) {
          auto x = t[0].as<float>();
          auto w = t[1].as<float>();
          auto y = t[2].as<float>();
          const std::int64_t N = t[0].shape[1];
          for (std::int64_t r = 0; r < t[0].shape[0]; ++r)
            for (std::int64_t c = 0; c < N; ++c) y[r * N + c] = x[r * N + c] * w[(r % 128) * 64 + c % 64];
        },
});

}  // namespace
}  // namespace stagecraft::examples
