// y = x * w, where w is one 128x64 tile applied to every column block of x: a pipeline of TMA
// stores through a K-deep ring of output stages, closed and awaited with bulk groups.
//
// w is loaded once by TMA (a single barrier: no index needed). Each step reads its x block with
// ordinary loads, writes the product into the output stage and hands it to the TMA engine as
// its own bulk group. Before a stage is rewritten, the store that last read it (K steps ago)
// must be done reading: at most K-1 groups may still be pending. Any M and N (N a multiple of
// 4: TMA's 16-byte rows): x's tiles are masked (zeros outside; where they divide x the code
// generator emits no predicate), and TMA drops what overhangs y.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

template <long long K>
auto scale_store(std::int64_t M, std::int64_t N) {
  const std::int64_t steps = ceil_div(N, 64);
  return kernel<sm_90a>(
      "scale_store", grid(ceil_div(M, 128)), threads(1_c),
      gmem<f32>("x", shape(M, N)),               // (row, col)
      gmem<f32>("w", shape(128_c, 64_c)),        // (row, col)
      gmem<f32>("y", shape(M, N)),               // (row, col)
      smem<f32>(shape(128_c, 64_c)),             // ws: w, resident
      smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // out: (stage, row, col)
      barrier(arrivals(1_c), count(1_c)),        // w_loaded
      [&](auto x, auto w, auto y, auto ws, auto out, auto w_loaded) {
        auto row = program_id();
        return seq(copy_gmem_to_smem(w.block(0_c, 0_c), ws, w_loaded),
                   barrier_wait(w_loaded),
                   for_(range(steps),
                        [&](auto j) {
                          auto s = stage<K>(j);
                          auto t = shape(128_c, 64_c);
                          return seq(wait_smem_to_gmem(int_c<K - 1>, read_only),
                                     store(out[s], load(x.tile(t, masked(0.0), row, j)) * load(ws)),
                                     commit_smem(),
                                     copy_smem_to_gmem(out[s], y.block(row, j)),
                                     commit_smem_to_gmem_group());
                        }),
                   wait_smem_to_gmem(0_c));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "scale_store",
    .summary = "y = x * w (w one resident 128x64 tile); pipelined TMA stores from a K-deep ring with bulk groups",
    .params = {{.name = "M", .default_value = 256, .help = "rows (any)", .min = 128},
               {.name = "N", .default_value = 512, .help = "columns (a multiple of 4: TMA's 16-byte rows)", .min = 64, .multiple_of = 4},
               {.name = "K", .default_value = 3, .help = "output stages", .allowed = {1, 2, 3, 4}}},
    .build =
        [](param_values const& p) {
          return dispatch<1, 2, 3, 4>(p.at("K"), [&](auto K) { return lower(scale_store<decltype(K)::value>(p.at("M"), p.at("N"))); });
        },
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
