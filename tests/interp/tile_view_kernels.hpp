// A kernel that uses every tile view (transpose, permute, reshape, slice), on floats, integers,
// bf16 and masks, with a reference written from the views' documented semantics: element
// (c0, c1, ...) of the result is the operand element the view names. Part of tile_ops::all(), so
// the interpreter, the host backend and NVRTC all check it.
#pragma once
#include <stagecraft/host/tensor.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::testing::tile_ops {

inline ir::Kernel view_kernel() {
  auto s = shape(64_c, 32_c);
  auto st = shape(32_c, 64_c);
  return lower(kernel<sm_90a>(
      "tile_views", grid(1), threads(1_c), gmem<f32>("x", s), gmem<i32>("xi", s), gmem<bf16>("xb", s), gmem<f32>("xt", st),
      gmem<i32>("xit", st), gmem<bf16>("xbt", st), gmem<f32>("perm", shape(32_c, 4_c, 16_c)), gmem<f32>("flat", shape(16_c, 128_c)),
      gmem<f32>("cols", shape(64_c, 16_c)), gmem<f32>("rows", shape(16_c, 32_c)), gmem<f32>("mixed", shape(8_c, 64_c)),
      gmem<f32>("masked", st),
      [=](auto x, auto xi, auto xb, auto xt, auto xit, auto xbt, auto perm, auto flat, auto cols, auto rows, auto mixed, auto masked) {
        auto t = [&](auto g) { return g.tile(s, 0_c, 0_c); };
        auto tt = [&](auto g) { return g.tile(st, 0_c, 0_c); };
        auto X = load(t(x));
        auto I = load(t(xi));
        return seq(store(tt(xt), transpose(X)), store(tt(xit), transpose(I)), store(tt(xbt), transpose(load(t(xb)))),
                   // (64, 32) as (4, 16, 32), then axes (2, 0, 1): perm[c][a][b] = x[16a + b][c]
                   store(perm.tile(shape(32_c, 4_c, 16_c), 0_c, 0_c, 0_c), permute<2, 0, 1>(reshape(X, shape(4_c, 16_c, 32_c)))),
                   store(flat.tile(shape(16_c, 128_c), 0_c, 0_c), reshape(X, shape(16_c, 128_c))),
                   store(cols.tile(shape(64_c, 16_c), 0_c, 0_c), slice<1>(X, 8_c, 16_c)),
                   store(rows.tile(shape(16_c, 32_c), 0_c, 0_c), slice<0>(X, 48_c, 16_c)),
                   // a view of a view under arithmetic: rows 4 to 11 of the transpose are columns 4 to 11 of x
                   store(mixed.tile(shape(8_c, 64_c), 0_c, 0_c), slice<0>(transpose(X), 4_c, 8_c) * 2.0f + 1.0f),
                   // a mask is viewed like any tile
                   store(tt(masked), select(transpose(I > 0), transpose(X), -1.0f)));
      }));
}

inline void view_reference(std::vector<host_tensor>& b) {
  constexpr std::int64_t R = 64, C = 32;
  auto x = [&](std::int64_t r, std::int64_t c) { return b[0].get(r * C + c); };
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t c = 0; c < C; ++c) {
      b[3].set(c * R + r, x(r, c));
      b[4].set(c * R + r, b[1].get(r * C + c));
      b[5].set(c * R + r, b[2].get(r * C + c));
      b[11].set(c * R + r, b[1].get(r * C + c) > 0 ? x(r, c) : -1.0);
    }
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t a = 0; a < 4; ++a)
      for (std::int64_t q = 0; q < 16; ++q) b[6].set((c * 4 + a) * 16 + q, x(16 * a + q, c));
  for (std::int64_t i = 0; i < R * C; ++i) b[7].set(i, b[0].get(i));
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t c = 0; c < 16; ++c) b[8].set(r * 16 + c, x(r, 8 + c));
  for (std::int64_t r = 0; r < 16; ++r)
    for (std::int64_t c = 0; c < C; ++c) b[9].set(r * C + c, x(48 + r, c));
  for (std::int64_t r = 0; r < 8; ++r)
    for (std::int64_t c = 0; c < R; ++c) b[10].set(r * R + c, static_cast<float>(x(c, 4 + r)) * 2.0f + 1.0f);
}

}  // namespace stagecraft::testing::tile_ops
