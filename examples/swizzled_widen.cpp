// y = 2 * f32(x) for an f16 array, through swizzled SMEM on both sides.
//
// Each CTA owns a 64-row strip and walks it in 64x32 blocks: TMA lands the f16 block in SMEM
// with the 64-byte swizzle (its rows are 64 bytes), the warpgroup widens and doubles it into an
// f32 block stored with the 128-byte swizzle (128-byte rows), and TMA stores that. The two
// swizzle patterns differ, so an address mistake in either cannot cancel out in the other.
// The output block is rewritten only once the previous store has read it.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

auto swizzled_widen(std::int64_t M, std::int64_t N) {
  const std::int64_t steps = ceil_div(N, 32);  // the last block may overhang: TMA fills and drops
  return kernel<sm_90a>(
      "swizzled_widen", grid(ceil_div(M, 64)), threads(1_c),
      gmem<f16>("x", shape(M, N)),                      // (row, col)
      gmem<f32>("y", shape(M, N)),                      // (row, col)
      smem<f16>(shape(64_c, 32_c), swizzle(64_c)),     // in: 64-byte rows
      smem<f32>(shape(64_c, 32_c), swizzle(128_c)),    // out: 128-byte rows
      barrier(arrivals(1_c), count(1_c)),               // landed: the in block is there
      [&](auto x, auto y, auto in, auto out, auto landed) {
        auto row = program_id();
        return seq(for_(range(steps),
                        [&](auto j) {
                          return seq(copy_gmem_to_smem(x.block(row, j), in, landed),
                                     barrier_wait(landed),
                                     wait_smem_to_gmem(0_c, read_only),
                                     store(out, cast<f32>(load(in)) * 2.0f),
                                     commit_smem(),
                                     copy_smem_to_gmem(out, y.block(row, j)),
                                     commit_smem_to_gmem_group());
                        }),
                   wait_smem_to_gmem(0_c));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "swizzled_widen",
    .summary = "y = 2 * f32(x), x f16: 64x32 blocks in through 64-byte swizzled SMEM, out through 128-byte swizzled SMEM",
    .params = {{.name = "M", .default_value = 256, .help = "rows (any)", .min = 64},
               {.name = "N", .default_value = 256, .help = "columns (a multiple of 8: TMA's 16-byte rows of f16)", .min = 32, .multiple_of = 8}},
    .build = [](param_values const& p) { return lower(swizzled_widen(p.at("M"), p.at("N"))); },
    .reference =
        [](std::vector<host_tensor>& t, param_values const&) {
          auto x = t[0].as<std::uint16_t>();
          auto y = t[1].as<float>();
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = f16_to_f32(x[i]) * 2.0f;
        },
});

}  // namespace
}  // namespace stagecraft::examples
