// Kernels that use every tile op of the tile algebra (math, reductions, broadcast, iota, full),
// with C++ references written from the ops' documented semantics. The interpreter, the host
// backend and NVRTC tests all take these, so one definition is checked three ways.
#pragma once
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include <stagecraft/host/tensor.hpp>
#include <stagecraft/ir/math.hpp>
#include <stagecraft/stagecraft.hpp>

#include "smem_view_kernels.hpp"
#include "tile_view_kernels.hpp"

namespace stagecraft::testing::tile_ops {

constexpr std::int64_t rows = 64, cols = 32;

struct case_t {
  const char* name;
  ir::Kernel kernel;
  std::function<void(std::vector<host_tensor>&)> reference;  // fills the outputs from the inputs
};

// y_f = f(x) for each element-wise op; p holds positive values (log, rsqrt).
inline ir::Kernel math_kernel() {
  auto s = shape(64_c, 32_c);
  return lower(kernel<sm_90a>(
      "tile_math", grid(1), threads(1_c), gmem<f32>("x", s), gmem<f32>("p", s), gmem<f32>("y_exp", s), gmem<f32>("y_exp2", s),
      gmem<f32>("y_log", s), gmem<f32>("y_rsqrt", s), gmem<f32>("y_tanh", s), gmem<f32>("y_abs", s), gmem<i32>("xi", s), gmem<i32>("yi_abs", s),
      [s](auto x, auto p, auto e, auto e2, auto l, auto rs, auto th, auto ab, auto xi, auto iab) {
        auto t = [&](auto g) { return g.tile(s, 0_c, 0_c); };
        return seq(store(t(e), exp(load(t(x)))), store(t(e2), exp2(load(t(x)))), store(t(l), log(load(t(p)))),
                   store(t(rs), rsqrt(load(t(p)))), store(t(th), tanh(load(t(x)))), store(t(ab), abs(load(t(x)))),
                   store(t(iab), abs(load(t(xi)))));
      }));
}

// Row and column reductions, an integer sum, and a whole row softmax in one expression: a
// reduction under a broadcast under a reduction.
inline ir::Kernel reduce_kernel() {
  auto s = shape(64_c, 32_c);
  auto r = shape(64_c);
  auto c = shape(32_c);
  return lower(kernel<sm_90a>(
      "tile_reduce", grid(1), threads(1_c), gmem<f32>("x", s), gmem<i32>("xi", s), gmem<f32>("row_sum", r), gmem<f32>("row_max", r),
      gmem<f32>("row_min", r), gmem<f32>("col_sum", c), gmem<i32>("row_isum", r), gmem<f32>("softmax", s), gmem<bf16>("xb", s),
      gmem<bf16>("row_bsum", r),
      [=](auto x, auto xi, auto rsum, auto rmax, auto rmin, auto csum, auto risum, auto sm, auto xb, auto rbsum) {
        auto t = [&](auto g) { return g.tile(s, 0_c, 0_c); };
        auto v = [&](auto g) { return g.tile(r, 0_c); };
        auto X = load(t(x));
        auto e = exp(X - broadcast<1>(max<1>(X), X));
        return seq(store(v(rsum), sum<1>(X)), store(v(rmax), max<1>(X)), store(v(rmin), min<1>(X)), store(csum.tile(c, 0_c), sum<0>(X)),
                   store(v(risum), sum<1>(load(t(xi)))), store(t(sm), e / broadcast<1>(sum<1>(e), s)),
                   store(v(rbsum), sum<1>(load(t(xb)))));
      }));
}

// Coordinates as values (a causal-mask-like index arithmetic), floating iota, and fills: of a
// constant, and of one element read at run time (full(shape, tile), a scale factor's form).
inline ir::Kernel iota_kernel() {
  auto s = shape(64_c, 32_c);
  return lower(kernel<sm_90a>("tile_iota", grid(1), threads(1_c), gmem<f32>("x", s), gmem<i32>("idx", s), gmem<f32>("col", s), gmem<f32>("filled", s),
                              gmem<i8>("wrapped", s), gmem<f32>("spread", s), [s](auto x, auto idx, auto col, auto filled, auto wrapped, auto spread) {
                                auto t = [&](auto g) { return g.tile(s, 0_c, 0_c); };
                                return seq(store(t(idx), iota<0>(s) * 100 + iota<1>(s)), store(t(col), iota<1, f32>(s) * 0.5f + load(t(x))),
                                           store(t(filled), full<f32>(s, 0.25f) * load(t(x))),
                                           store(t(wrapped), iota<0, i8>(s) * full<i8>(s, 3)),
                                           store(t(spread), full(s, load(x.tile(shape(1_c, 1_c), 5_c, 7_c))) + load(t(x))));
                              }));
}

// Masks: a causal mask from iota, comparisons of floats (NaN included) and integers, select with
// a scalar, masks counted through cast, and fma.
inline ir::Kernel select_kernel() {
  auto s = shape(64_c, 32_c);
  return lower(kernel<sm_90a>(
      "tile_select", grid(1), threads(1_c), gmem<f32>("x", s), gmem<f32>("z", s), gmem<i32>("xi", s), gmem<f32>("causal", s), gmem<i32>("masks", s),
      gmem<f32>("fused", s), gmem<i32>("picked", s), gmem<f32>("nan_masked", s),
      [s](auto x, auto z, auto xi, auto causal, auto masks, auto fused, auto picked, auto nan_masked) {
        auto t = [&](auto g) { return g.tile(s, 0_c, 0_c); };
        auto X = load(t(x));
        auto Z = load(t(z));
        auto I = load(t(xi));
        auto counted = cast<i32>(X < Z) + cast<i32>(X <= 0.5f) * 2 + cast<i32>(X > Z) * 4 + cast<i32>(X >= Z) * 8 + cast<i32>(I == 7) * 16 +
                       cast<i32>(I != 0) * 32;
        auto q = X / Z;  // 0 / 0 somewhere makes a NaN, which != itself
        return seq(store(t(causal), select(iota<0>(s) >= iota<1>(s), X, -1e30f)), store(t(masks), counted),
                   store(t(fused), fma(X, Z, 0.25f)), store(t(picked), select(I > 0, I, I * -3)),
                   store(t(nan_masked), select(q != q, full<f32>(s, -1.0f), q)));
      }));
}

inline float f(host_tensor const& t, std::int64_t i) { return static_cast<float>(t.get(i)); }

inline std::vector<case_t> all() {
  std::vector<case_t> out;
  out.push_back({"tile_math", math_kernel(), [](std::vector<host_tensor>& b) {
                   for (std::int64_t i = 0; i < rows * cols; ++i) {
                     const float x = f(b[0], i), p = f(b[1], i);
                     b[2].set(i, ir::math_exp(x));
                     b[3].set(i, ir::math_exp2(x));
                     b[4].set(i, ir::math_log(p));
                     b[5].set(i, ir::math_rsqrt(p));
                     b[6].set(i, ir::math_tanh(x));
                     b[7].set(i, std::fabs(x));
                     b[9].set(i, std::abs(b[8].get(i)));
                   }
                 }});
  out.push_back({"tile_reduce", reduce_kernel(), [](std::vector<host_tensor>& b) {
                   auto X = [&](std::int64_t r, std::int64_t c) { return f(b[0], r * cols + c); };
                   for (std::int64_t r = 0; r < rows; ++r) {
                     float s = X(r, 0), mx = X(r, 0), mn = X(r, 0);
                     std::int64_t is = static_cast<std::int64_t>(b[1].get(r * cols));
                     float bs = f(b[8], r * cols);
                     for (std::int64_t c = 1; c < cols; ++c) {
                       s += X(r, c), mx = std::fmax(mx, X(r, c)), mn = std::fmin(mn, X(r, c));
                       is += static_cast<std::int64_t>(b[1].get(r * cols + c));
                       bs += f(b[8], r * cols + c);
                     }
                     b[2].set(r, s), b[3].set(r, mx), b[4].set(r, mn), b[6].set(r, static_cast<double>(is)), b[9].set(r, bs);
                     float total = 0;
                     bool first = true;
                     std::vector<float> e(cols);
                     for (std::int64_t c = 0; c < cols; ++c) {
                       e[c] = ir::math_exp(X(r, c) - mx);
                       total = first ? e[c] : total + e[c];
                       first = false;
                     }
                     for (std::int64_t c = 0; c < cols; ++c) b[7].set(r * cols + c, e[c] / total);
                   }
                   for (std::int64_t c = 0; c < cols; ++c) {
                     float s = X(0, c);
                     for (std::int64_t r = 1; r < rows; ++r) s += X(r, c);
                     b[5].set(c, s);
                   }
                 }});
  out.push_back({"tile_iota", iota_kernel(), [](std::vector<host_tensor>& b) {
                   for (std::int64_t r = 0; r < rows; ++r)
                     for (std::int64_t c = 0; c < cols; ++c) {
                       const auto i = r * cols + c;
                       b[1].set(i, static_cast<double>(r * 100 + c));
                       b[2].set(i, static_cast<float>(c) * 0.5f + f(b[0], i));
                       b[3].set(i, 0.25f * f(b[0], i));
                       b[4].set(i, static_cast<double>(static_cast<std::int8_t>(r * 3)));  // wraps like i8 arithmetic
                       b[5].set(i, f(b[0], 5 * cols + 7) + f(b[0], i));
                     }
                 }});
  out.push_back({"tile_select", select_kernel(), [](std::vector<host_tensor>& b) {
                   for (std::int64_t r = 0; r < rows; ++r)
                     for (std::int64_t c = 0; c < cols; ++c) {
                       const auto i = r * cols + c;
                       const float x = f(b[0], i), z = f(b[1], i);
                       const auto xi = static_cast<std::int64_t>(b[2].get(i));
                       b[3].set(i, r >= c ? x : -1e30f);
                       b[4].set(i, static_cast<double>((x < z) + (x <= 0.5f) * 2 + (x > z) * 4 + (x >= z) * 8 + (xi == 7) * 16 + (xi != 0) * 32));
                       b[5].set(i, std::fma(x, z, 0.25f));
                       b[6].set(i, static_cast<double>(xi > 0 ? xi : xi * -3));
                       const float q = x / z;
                       b[7].set(i, q != q ? -1.0f : q);
                     }
                 }});
  out.push_back({"tile_views", view_kernel(), view_reference});
  out.push_back({"smem_views", smem_view_kernel(), smem_view_reference});
  return out;
}

// Inputs that reach the ops' edges: x over [-30, 30] (exp near its range, tanh saturated), p
// positive over many binades, integers of both signs, a few specials.
inline std::vector<host_tensor> inputs(ir::Kernel const& k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-30.0, 30.0), expo(-60.0, 60.0);
  std::uniform_int_distribution<int> integer(-1000, 1000);
  std::vector<host_tensor> out;
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < t.elements(); ++i) {
      if (!ir::dtype_is_float(p.dtype)) t.set(i, i % 37 == 0 ? 7 : i % 41 == 0 ? 0 : integer(rng));
      else if (p.name == "p") t.set(i, std::exp2(expo(rng)));
      else if (p.name == "z" && i % 29 == 0) t.set(i, 0.0);  // x / 0 (and 0 / 0 where x is 0 too)
      else if (p.name == "x" && i % 58 == 0) t.set(i, 0.0);
      else if (p.name == "z" && i % 31 == 0) t.set(i, 0.5);    // x == z somewhere: the <= / >= edges
      else if (p.name == "x" && i % 31 == 0) t.set(i, 0.5);
      else t.set(i, real(rng));
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace stagecraft::testing::tile_ops
