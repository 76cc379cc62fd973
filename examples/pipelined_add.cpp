// y = x + z through emit_pipeline: two inputs streamed through K-deep rings (z released one step
// later than x, as a body reading its previous block would need), one output ring stored with
// TMA. The schedule (prefetch, waits, refills, bulk groups) is the library's, not the kernel's.
// Any M and N (N a multiple of 4: TMA's rows are whole 16-byte units): the last blocks overhang,
// TMA fills the loads' outside with zeros and drops the stores'.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

template <long long K>
auto pipelined_add(std::int64_t M, std::int64_t N) {
  constexpr long long D = K > 1 ? 1 : 0;  // z's delay_release
  return kernel<sm_90a>(
      "pipelined_add", grid(ceil_div(M, 64)), threads(1_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("z", shape(M, N)), gmem<f32>("y", shape(M, N)),  // (row, col)
      smem<f32>(shape(int_c<K>, 64_c, 32_c)),   // xs: (stage, row, col); 6 stages x 3 rings fit in SMEM
      smem<f32>(shape(int_c<K>, 64_c, 32_c)),   // zs
      smem<f32>(shape(int_c<K>, 64_c, 32_c)),   // ys
      barrier(arrivals(2_c), count(int_c<K>)),   // full[stage]: both inputs landed
      [&](auto x, auto z, auto y, auto xs, auto zs, auto ys, auto full) {
        auto row = program_id();
        auto block_of = [&](auto const& array) { return [&, array](auto j) { return array.block(row, j); }; };
        return emit_pipeline<K>(ceil_div(N, 32), full, ins(in(x, xs, block_of(x)), in(z, zs, block_of(z), delay_release<D>)),
                                outs(out(y, ys, block_of(y))),
                                [&](auto, auto xv, auto zv, auto yv) { return store(yv, load(xv) + load(zv)); });
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "pipelined_add",
    .summary = "y = x + z with emit_pipeline: two K-deep input rings (different delay_release), one output ring",
    .params = {{.name = "M", .default_value = 256, .help = "rows (any)", .min = 64},
               {.name = "N", .default_value = 512, .help = "columns (a multiple of 4: TMA's 16-byte rows)", .min = 32, .multiple_of = 4},
               {.name = "K", .default_value = 3, .help = "max_concurrent_steps", .allowed = {1, 2, 3, 4, 5, 6}}},
    .build =
        [](param_values const& p) {
          return dispatch<1, 2, 3, 4, 5, 6>(p.at("K"), [&](auto K) { return lower(pipelined_add<decltype(K)::value>(p.at("M"), p.at("N"))); });
        },
    .reference =
        [](std::vector<host_tensor>& t, param_values const&) {
          auto x = t[0].as<float>();
          auto z = t[1].as<float>();
          auto y = t[2].as<float>();
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] + z[i];
        },
});

}  // namespace
}  // namespace stagecraft::examples
