// y = (x - mean) * rsqrt(var + eps) [* gamma + beta] along each row of x (M, 128), the shape of
// softmax_rows: blocks of 16 rows stream through a K-deep TMA ring (emit_pipeline); each block's
// row means go to a 16-element SMEM scratch, then the reciprocal standard deviations (from the
// centred squares, two passes: no E[x^2] - E[x]^2 cancellation), then the normalised rows go out
// through an output ring. gamma and beta (128 each) are optional: with affine = 0 they are not
// read. rsqrt is the shared implementation (stagecraft/ir/math.hpp), so the interpreter, the
// host backend and the GPU give the same bits, and the reference below computes them too.
#include <stagecraft/ir/math.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

constexpr std::int64_t cols = 128, block_rows = 16, blocks_per_cta = 4;
constexpr float eps = 1e-5f;

template <long long K, bool Affine>
auto layernorm_rows(std::int64_t M) {
  return kernel<sm_90a>(
      "layernorm_rows", grid(ceil_div(M, block_rows * blocks_per_cta)), threads(1_c),
      gmem<f32>("x", shape(M, 128_c)), gmem<f32>("y", shape(M, 128_c)),  // (row, col)
      gmem<f32>("gamma", shape(128_c)), gmem<f32>("beta", shape(128_c)),  // (col)
      smem<f32>(shape(int_c<K>, 16_c, 128_c)),                           // xs: (stage, row, col)
      smem<f32>(shape(int_c<K>, 16_c, 128_c)),                           // ys
      smem<f32>(shape(16_c)),                                            // row means of the block in hand
      smem<f32>(shape(16_c)),                                            // their 1 / sqrt(var + eps)
      barrier(arrivals(1_c), count(int_c<K>)),                           // full[stage]
      [&](auto x, auto y, auto gamma, auto beta, auto xs, auto ys, auto mean, auto rstd, auto full) {
        auto first = program_id() * int_c<blocks_per_cta>;
        // Any M: the last CTA takes the blocks that are left, and the last block may overhang
        // (its padding rows load as zeros: rows of their own, mean 0 and rstd 1/sqrt(eps), never stored).
        auto steps = min(int_c<blocks_per_cta>, ceil_div(M, block_rows) - first);
        return emit_pipeline<K>(steps, full, ins(in(x, xs, [&](auto j) { return x.block(first + j, 0_c); })),
                                outs(out(y, ys, [&](auto j) { return y.block(first + j, 0_c); })), [&](auto, auto xv, auto yv) {
                                  auto X = load(xv);
                                  auto centred = X - broadcast<1>(load(mean), X);
                                  auto normed = centred * broadcast<1>(load(rstd), X);
                                  auto vec = [&](auto g) { return broadcast<0>(load(g.tile(shape(128_c), 0_c)), X); };
                                  auto result = [&] {
                                    if constexpr (Affine) return normed * vec(gamma) + vec(beta);
                                    else return normed;
                                  }();
                                  return seq(store(mean, sum<1>(X) / 128.0f), store(rstd, rsqrt(sum<1>(centred * centred) / 128.0f + eps)),
                                             store(yv, result));
                                });
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "layernorm_rows",
    .summary = "y = layernorm of each row of x (M, 128), optional gamma/beta: 16-row blocks through a K-deep TMA ring, mean and variance along the row",
    .params = {{.name = "M", .default_value = 1024, .help = "rows (any)", .min = 16},
               {.name = "K", .default_value = 2, .help = "max_concurrent_steps", .allowed = {1, 2, 3, 4}},
               {.name = "affine", .default_value = 1, .help = "1: times gamma plus beta; 0: gamma and beta are not read", .allowed = {0, 1}, .min = 0}},
    .build =
        [](param_values const& p) {
          return dispatch<1, 2, 3, 4>(p.at("K"), [&](auto K) {
            return p.at("affine") ? lower(layernorm_rows<decltype(K)::value, true>(p.at("M")))
                                  : lower(layernorm_rows<decltype(K)::value, false>(p.at("M")));
          });
        },
    .reference =
        [](std::vector<host_tensor>& t, param_values const& p) {
          // The kernel's order and precision: f32 folds from column 0, each op rounded to f32.
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          auto g = t[2].as<float>();
          auto b = t[3].as<float>();
          const bool affine = p.at("affine") != 0;
          const std::size_t rows = x.size() / cols;
          for (std::size_t r = 0; r < rows; ++r) {
            const float* xr = &x[r * cols];
            float s = xr[0];
            for (std::size_t c = 1; c < cols; ++c) s += xr[c];
            const float mu = s / 128.0f;
            float q = (xr[0] - mu) * (xr[0] - mu);
            for (std::size_t c = 1; c < cols; ++c) {
              const float d = xr[c] - mu;
              const float d2 = d * d;
              q += d2;
            }
            const float var = q / 128.0f;
            const float rs = ir::math_rsqrt(var + eps);
            for (std::size_t c = 0; c < cols; ++c) {
              const float n = (xr[c] - mu) * rs;
              if (!affine) {
                y[r * cols + c] = n;
              } else {
                const float ng = n * g[c];
                y[r * cols + c] = ng + b[c];
              }
            }
          }
        },
});

}  // namespace
}  // namespace stagecraft::examples
