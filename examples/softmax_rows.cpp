// y = softmax(x) along each row of x (M, 128): blocks of 16 rows stream through a K-deep TMA
// ring (emit_pipeline), and each is reduced where it lands: the row maxima into a 16-element
// SMEM scratch, the sums of exp(x - max) into another, then the normalised row, stored through
// an output ring. exp is the shared implementation (stagecraft/ir/math.hpp), so the interpreter,
// the host backend and the GPU give the same bits; the reference below computes them too.
//
// Why the scratch: a tile value is recomputed wherever it is used (nothing is kept in registers
// between statements), so max<1> written inside the sum would be refolded for every element.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "softmax_reference.hpp"

namespace stagecraft::examples {
namespace {

constexpr std::int64_t cols = 128, block_rows = 16, blocks_per_cta = 4;

// M is a size (expr/size.hpp): with --dynamic M, one compiled kernel takes every M as an argument.
template <long long K>
auto softmax_rows(size_expr M) {
  return kernel<sm_90a>(
      "softmax_rows", grid(ceil_div(M, block_rows * blocks_per_cta)), threads(1_c),
      gmem<f32>("x", shape(M, 128_c)), gmem<f32>("y", shape(M, 128_c)),  // (row, col)
      smem<f32>(shape(int_c<K>, 16_c, 128_c)),  // xs: (stage, row, col)
      smem<f32>(shape(int_c<K>, 16_c, 128_c)),  // ys
      smem<f32>(shape(16_c)),                    // row maxima of the block in hand
      smem<f32>(shape(16_c)),                    // row sums of exp(x - max)
      barrier(arrivals(1_c), count(int_c<K>)),   // full[stage]
      [&](auto x, auto y, auto xs, auto ys, auto row_max, auto row_sum, auto full) {
        auto first = program_id() * int_c<blocks_per_cta>;
        // Any M: the last CTA takes the blocks that are left, and the last block may overhang
        // the array (its padding rows load as zeros, each a row of its own, and are not stored).
        auto steps = min(int_c<blocks_per_cta>, ceil_div(M, block_rows) - first);
        return emit_pipeline<K>(steps, full, ins(in(x, xs, [&](auto j) { return x.block(first + j, 0_c); })),
                                outs(out(y, ys, [&](auto j) { return y.block(first + j, 0_c); })), [&](auto, auto xv, auto yv) {
                                  auto X = load(xv);
                                  auto shifted = X - broadcast<1>(load(row_max), X);
                                  return seq(store(row_max, max<1>(X)), store(row_sum, sum<1>(exp(shifted))),
                                             store(yv, exp(shifted) / broadcast<1>(load(row_sum), X)));
                                });
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "softmax_rows",
    .summary = "y = softmax of each row of x (M, 128): 16-row blocks through a K-deep TMA ring, max and sum along the row",
    .params = {{.name = "M", .default_value = 1024, .help = "rows (any; --dynamic M: a launch argument)", .min = 16, .run_time = true},
               {.name = "K", .default_value = 2, .help = "max_concurrent_steps", .allowed = {1, 2, 3, 4}}},
    .build =
        [](param_values const& p) {
          return dispatch<1, 2, 3, 4>(p.at("K"), [&](auto K) { return lower(softmax_rows<decltype(K)::value>(size_param(p, "M"))); });
        },
    .reference = softmax_rows_reference,
});

}  // namespace
}  // namespace stagecraft::examples
