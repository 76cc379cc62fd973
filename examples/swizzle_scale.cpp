// y = f16(2x + 1) over an (M, N) f16 array, read through 128-byte swizzled SMEM.
//
// TMA writes each 64x64 f16 block (128-byte rows) into a swizzled stage: the 16-byte chunks of
// row r land XORed with r % 8, so the 8 rows a bank cycle touches sit in 8 different banks.
// The generic loads read those physical addresses back through the same pattern; the result
// goes to a plain (unswizzled) stage that a TMA store writes out. A swizzle that disagrees
// between TMA and the generated addressing is therefore a wrong answer, not a slow one.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

template <long long K>
auto swizzle_scale(std::int64_t M, std::int64_t N) {
  const std::int64_t steps = ceil_div(N, 64);  // the last block may overhang: TMA fills and drops
  return kernel<sm_90a>(
      "swizzle_scale", grid(ceil_div(M, 64)), threads(1_c),
      gmem<f16>("x", shape(M, N)),                                // (row, col)
      gmem<f16>("y", shape(M, N)),                                // (row, col)
      smem<f16>(shape(int_c<K>, 64_c, 64_c), swizzle(128_c)),     // in: (stage, row, col), swizzled
      smem<f16>(shape(2_c, 64_c, 64_c)),                          // out: (slot, row, col), plain
      barrier(arrivals(1_c), count(int_c<K>)),                    // full[stage]
      [&](auto x, auto y, auto in, auto out, auto full) {
        auto row = program_id();
        auto prologue = for_(range(int_c<K>), [&](auto j) {
          auto s = stage<K>(j);
          return if_(j < steps, copy_gmem_to_smem(x.block(row, j), in[s], full[s]));
        });
        auto main_loop = for_(range(steps), [&](auto j) {
          auto s = stage<K>(j);
          auto o = stage<2>(j);
          return seq(barrier_wait(full[s]),
                     wait_smem_to_gmem(1_c, read_only),  // out[o]'s store from step j-2 has read it
                     store(out[o], load(in[s]) * 2.0f + 1.0f),
                     commit_smem(),
                     copy_smem_to_gmem(out[o], y.block(row, j)),
                     commit_smem_to_gmem_group(),
                     // in[s] was read by the generic loads above (ordered by program order);
                     // refill it with the block K steps ahead.
                     if_(j + int_c<K> < steps, copy_gmem_to_smem(x.block(row, j + int_c<K>), in[s], full[s])));
        });
        return seq(prologue, main_loop, wait_smem_to_gmem(0_c));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "swizzle_scale",
    .summary = "y = f16(2x + 1); 64x64 f16 blocks through a K-deep ring of 128-byte swizzled stages",
    .params = {{.name = "M", .default_value = 256, .help = "rows (any)", .min = 64},
               {.name = "N", .default_value = 512, .help = "columns (a multiple of 8: TMA's 16-byte rows of f16)", .min = 64, .multiple_of = 8},
               {.name = "K", .default_value = 3, .help = "ring depth (stages)", .allowed = {1, 2, 3, 4}}},
    .build =
        [](param_values const& p) {
          return dispatch<1, 2, 3, 4>(p.at("K"), [&](auto K) { return lower(swizzle_scale<decltype(K)::value>(p.at("M"), p.at("N"))); });
        },
    .reference =
        [](std::vector<host_tensor>& t, param_values const&) {
          auto x = t[0].as<std::uint16_t>();
          auto y = t[1].as<std::uint16_t>();
          // f32 arithmetic, each op rounded as float, then one RNE rounding to f16 (the store).
          for (std::size_t i = 0; i < x.size(); ++i) {
            const float twice = f16_to_f32(x[i]) * 2.0f;
            y[i] = f32_to_f16(twice + 1.0f);
          }
        },
});

}  // namespace
}  // namespace stagecraft::examples
