// y[r, c] = sum over j of x[r, 64 j + c]: a reduction along the pipelined dimension. The
// accumulator is an SMEM buffer carried across steps (out_once: set to 0 before the first step,
// stored once after the last); x streams through a K-deep ring. Any M and N (N a multiple of 4:
// TMA's 16-byte rows): a last block that overhangs x lands zeros past column N, which add
// nothing, and y's last row block drops the rows past M.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

template <long long K>
auto row_block_sum(std::int64_t M, std::int64_t N) {
  return kernel<sm_90a>(
      "row_block_sum", grid(ceil_div(M, 128)), threads(1_c),
      gmem<f32>("x", shape(M, N)),              // (row, col)
      gmem<f32>("y", shape(M, 64_c)),           // (row, col)
      smem<f32>(shape(int_c<K>, 128_c, 64_c)),  // xs: (stage, row, col)
      smem<f32>(shape(128_c, 64_c)),            // acc: the carried sum
      barrier(arrivals(1_c), count(int_c<K>)),  // full[stage]
      [&](auto x, auto y, auto xs, auto acc, auto full) {
        auto row = program_id();
        return emit_pipeline<K>(ceil_div(N, 64), full, ins(in(x, xs, [&](auto j) { return x.block(row, j); })),
                                outs(out_once(y, acc, y.block(row, 0_c), 0.0f)),
                                [&](auto, auto xv, auto sum) { return store(sum, load(sum) + load(xv)); });
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "row_block_sum",
    .summary = "y = sum of x's 64-column blocks; reduction along the pipelined dimension with a carried SMEM accumulator",
    .params = {{.name = "M", .default_value = 256, .help = "rows (any)", .min = 128},
               {.name = "N", .default_value = 512, .help = "columns (a multiple of 4: TMA's 16-byte rows)", .min = 64, .multiple_of = 4},
               {.name = "K", .default_value = 3, .help = "max_concurrent_steps", .allowed = {1, 2, 3, 4, 5, 6}}},
    .build =
        [](param_values const& p) {
          return dispatch<1, 2, 3, 4, 5, 6>(p.at("K"), [&](auto K) { return lower(row_block_sum<decltype(K)::value>(p.at("M"), p.at("N"))); });
        },
    .reference =
        [](std::vector<host_tensor>& t, param_values const& p) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          const auto M = p.at("M"), N = p.at("N");
          for (std::int64_t r = 0; r < M; ++r)
            for (std::int64_t c = 0; c < 64; ++c) {
              float s = 0.0f;  // the same order as the kernel: block 0, 1, ...
              for (std::int64_t j = 0; j < ceil_div(N, 64); ++j) s = s + (j * 64 + c < N ? x[r * N + j * 64 + c] : 0.0f);  // TMA's zero fill
              y[r * 64 + c] = s;
            }
        },
});

}  // namespace
}  // namespace stagecraft::examples
