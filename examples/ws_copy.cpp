// y = x with a warp-specialized pipeline: one memory warpgroup streams 128x64 blocks of x into a
// K-deep ring; two compute warpgroups each copy their 64-row half of the stage to y with ordinary
// stores and release the stage. The handshake (ready / consumed barriers) is the library's.
//
// x is declared as (M/64, 64, N) -- the same bytes as (M, N) -- so that one TMA box lands as a
// (2, 64, 64) stage whose halves the two consumers index.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

template <long long K>
auto ws_copy(std::int64_t M, std::int64_t N) {
  constexpr long long C = 2;  // compute warpgroups
  return kernel<sm_90a>(
      "ws_copy", grid(M / 128), threads(int_c<C + 1>),
      gmem<f32>("x", shape(M / 64, 64_c, N)),      // (row block, row, col)
      gmem<f32>("y", shape(M, N)),                 // (row, col)
      smem<f32>(shape(int_c<K>, 2_c, 64_c, 64_c)),  // xs: (stage, half, row, col)
      barrier(arrivals(1_c), count(int_c<K>)),      // ready[stage]
      barrier(arrivals(int_c<C>), count(int_c<K>)), // consumed[stage]
      [&](auto x, auto y, auto xs, auto ready, auto consumed) {
        auto row = program_id();
        return emit_pipeline_warp_specialized<K, C>(
            N / 64, ready, consumed, ins(in(x, xs, [&](auto j) { return x.block(row, 0_c, j); })),
            [&](auto j, auto c, auto stage_view) {  // stage_view: (half, row, col)
              return store(y.tile(shape(64_c, 64_c), row * 2_c + c, j), load(stage_view[c]));
            });
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "ws_copy",
    .summary = "y = x; a warp-specialized pipeline: 1 memory warpgroup, 2 compute warpgroups, K-deep ring",
    .params = {{.name = "M", .default_value = 256, .help = "rows", .min = 128, .multiple_of = 128},
               {.name = "N", .default_value = 512, .help = "columns", .min = 64, .multiple_of = 64},
               {.name = "K", .default_value = 2, .help = "max_concurrent_steps", .allowed = {1, 2, 3, 4, 5, 6}}},
    .build =
        [](param_values const& p) {
          return dispatch<1, 2, 3, 4, 5, 6>(p.at("K"), [&](auto K) { return lower(ws_copy<decltype(K)::value>(p.at("M"), p.at("N"))); });
        },
    .reference =
        [](std::vector<host_tensor>& t, param_values const&) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          std::copy(x.begin(), x.end(), y.begin());
        },
});

}  // namespace
}  // namespace stagecraft::examples
