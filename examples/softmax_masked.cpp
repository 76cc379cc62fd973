// y = softmax(x) along each row of x (M, N) for any N up to 256: no TMA, every row read with
// ordinary loads through a masked tile, so the row need not fill the tile.
//
// CTA b owns rows [16b, 16b + 16). It loads them as one (16, 256) tile of x masked with -inf:
// the columns past N (and the rows past M in the last CTA) read -inf, which the row maximum
// ignores and exp turns into 0, so the row sum ignores them too (the padding is chosen for the
// math that follows: -inf under max, 0 under sum). The store through the masked tile of y
// writes only the elements inside the array. Pallas and Triton users write the same with
// pl.load(..., mask=, other=-inf); here the mask is the tile's and every element is predicated.
//
// Rows past M are all padding: their maximum is -inf and their softmax NaN, but they are never
// stored. The scratch rows keep the row maxima and sums (a tile value is recomputed where it is
// used; see softmax_rows).
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "softmax_reference.hpp"

namespace stagecraft::examples {
namespace {

constexpr std::int64_t max_cols = 256, block_rows = 16;

auto softmax_masked(std::int64_t M, std::int64_t N) {
  return kernel<sm_90a>(
      "softmax_masked", grid(ceil_div(M, block_rows)), threads(1_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)),  // (row, col)
      smem<f32>(shape(16_c)),                                      // row maxima of the CTA's rows
      smem<f32>(shape(16_c)),                                      // row sums of exp(x - max)
      [&](auto x, auto y, auto row_max, auto row_sum) {
        auto rows = program_id();
        auto X = load(x.tile(shape(16_c, 256_c), masked(-INFINITY), rows, 0_c));  // (16, 256): -inf past N and M
        auto shifted = X - broadcast<1>(load(row_max), X);
        return seq(store(row_max, max<1>(X)), store(row_sum, sum<1>(exp(shifted))),
                   store(y.tile(shape(16_c, 256_c), masked(), rows, 0_c), exp(shifted) / broadcast<1>(load(row_sum), X)));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "softmax_masked",
    .summary = "y = softmax of each row of x (M, N), N <= 256: generic loads of a (16, 256) tile masked with -inf, a masked store",
    .params = {{.name = "M", .default_value = 1000, .help = "rows (any)", .min = 1},
               {.name = "N", .default_value = 200, .help = "columns (any up to the tile's 256)", .min = 1, .max = max_cols}},
    .build = [](param_values const& p) { return lower(softmax_masked(p.at("M"), p.at("N"))); },
    .reference = softmax_rows_reference,
});

}  // namespace
}  // namespace stagecraft::examples
