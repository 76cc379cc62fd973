// y = x with a warp-specialized pipeline: one memory warpgroup streams 128x64 blocks of x into a
// K-deep ring; two compute warpgroups each copy their 64-row half of the stage to y with ordinary
// stores and release the stage. The handshake (ready / consumed barriers) is the library's.
//
// One TMA box of 128 rows lands per stage; consumer c copies rows 64c..64c+63 of it (a slice of
// the stage). Any M and N (N a multiple of 4: TMA's 16-byte rows): the last boxes overhang x
// (zeros land there) and the consumers' stores are masked (predicated only where the tiles do
// not divide y).
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

template <long long K>
auto ws_copy(std::int64_t M, std::int64_t N) {
  constexpr long long C = 2;  // compute warpgroups
  return kernel<sm_90a>(
      "ws_copy", grid(ceil_div(M, 128)), threads(int_c<C + 1>),
      gmem<f32>("x", shape(M, N)),                 // (row, col)
      gmem<f32>("y", shape(M, N)),                 // (row, col)
      smem<f32>(shape(int_c<K>, 128_c, 64_c)),      // xs: (stage, row, col)
      barrier(arrivals(1_c), count(int_c<K>)),      // ready[stage]
      barrier(arrivals(int_c<C>), count(int_c<K>)), // consumed[stage]
      [&](auto x, auto y, auto xs, auto ready, auto consumed) {
        auto row = program_id();
        return emit_pipeline_warp_specialized<K, C>(
            ceil_div(N, 64), ready, consumed, ins(in(x, xs, [&](auto j) { return x.block(row, j); })),
            [&](auto j, auto c, auto stage_view) {  // stage_view: (row, col), 128 rows
              auto t = shape(64_c, 64_c);
              auto half = slice<0>(stage_view, c * 64_c, 64_c);  // (row, col): this consumer's 64 rows
              return store(y.tile(t, masked(), row * 2_c + c, j), load(half));
            });
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "ws_copy",
    .summary = "y = x; a warp-specialized pipeline: 1 memory warpgroup, 2 compute warpgroups, K-deep ring",
    .params = {{.name = "M", .default_value = 256, .help = "rows (any)", .min = 128},
               {.name = "N", .default_value = 512, .help = "columns (a multiple of 4: TMA's 16-byte rows)", .min = 64, .multiple_of = 4},
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
