// A kernel that uses sub-views of SMEM views (slice<A>(view, start, extent)) as every operand
// that takes them: register loads and stores (column cuts, a cut of a cut, a start from the loop
// index), a TMA load into half of a swizzled array, and a TMA store of half a tile. Its reference
// is written from the documented meaning: element (r, c) of a sub-view is the view's element
// (start_0 + r, start_1 + c). Part of tile_ops::all(), so the interpreter, the host backend and
// NVRTC all check it.
#pragma once
#include <stagecraft/host/tensor.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::testing::tile_ops {

inline ir::Kernel smem_view_kernel() {
  auto s = shape(128_c, 64_c);
  return lower(kernel<sm_90a>(
      "smem_views", grid(1), threads(1_c), gmem<f32>("x", s), gmem<f16>("xh", shape(64_c, 64_c)), gmem<f32>("bottom", shape(64_c, 64_c)),
      gmem<f32>("cols", shape(128_c, 32_c)), gmem<f32>("rows", shape(64_c, 64_c)), gmem<f32>("patched", s), gmem<f16>("swz", shape(32_c, 16_c)),
      smem<f32>(shape(2_c, 128_c, 64_c)), smem<f16>(shape(128_c, 64_c), swizzle(128_c)), barrier(arrivals(1_c), count(2_c)),
      [=](auto x, auto xh, auto bottom, auto cols, auto rows, auto patched, auto swz, auto buf, auto hb, auto full) {
        auto a = buf[0_c];
        auto b = buf[1_c];
        auto hi = slice<0>(hb, 64_c, 64_c);  // rows 64..127 of the swizzled array: starts on a swizzle pattern (8 KiB in)
        return seq(copy_gmem_to_smem(x.block(0_c, 0_c), a, full[0_c]), copy_gmem_to_smem(xh.block(0_c, 0_c), hi, full[1_c]),
                   barrier_wait(full[0_c]), barrier_wait(full[1_c]),
                   // (128, 32): columns 16..47 of every row
                   store(cols.tile(shape(128_c, 32_c), 0_c, 0_c), load(slice<1>(a, 16_c, 32_c))),
                   // rows 32j .. 32j + 15, j from the loop: a start the range proves inside
                   for_(range(4_c), [&](auto j) { return store(rows.tile(shape(16_c, 64_c), j, 0_c), load(slice<0>(a, j * 32_c, 16_c))); }),
                   // a (32, 16) cut of the swizzled rows, read by generic loads at swizzled addresses
                   store(swz.tile(shape(32_c, 16_c), 0_c, 0_c), load(slice<1>(slice<0>(hi, 8_c, 32_c), 8_c, 16_c))),
                   store(b, load(a)),
                   // a (32, 16) window of b overwritten from another window of a
                   store(slice<1>(slice<0>(b, 8_c, 32_c), 16_c, 16_c), load(slice<1>(slice<0>(a, 40_c, 32_c), 40_c, 16_c)) * 2.0f),
                   commit_smem(),
                   copy_smem_to_gmem(slice<0>(a, 64_c, 64_c), bottom.block(0_c, 0_c)),  // TMA stores half the tile
                   copy_smem_to_gmem(b, patched.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
}

// Buffers in parameter order: x, xh, bottom, cols, rows, patched, swz.
inline void smem_view_reference(std::vector<host_tensor>& t) {
  auto x = [&](std::int64_t r, std::int64_t c) { return t[0].get(r * 64 + c); };
  for (std::int64_t r = 0; r < 64; ++r)
    for (std::int64_t c = 0; c < 64; ++c) t[2].set(r * 64 + c, x(64 + r, c));
  for (std::int64_t r = 0; r < 128; ++r)
    for (std::int64_t c = 0; c < 32; ++c) t[3].set(r * 32 + c, x(r, 16 + c));
  for (std::int64_t j = 0; j < 4; ++j)
    for (std::int64_t q = 0; q < 16; ++q)
      for (std::int64_t c = 0; c < 64; ++c) t[4].set((16 * j + q) * 64 + c, x(32 * j + q, c));
  for (std::int64_t i = 0; i < 128 * 64; ++i) t[5].set(i, t[0].get(i));
  for (std::int64_t r = 0; r < 32; ++r)
    for (std::int64_t c = 0; c < 16; ++c) t[5].set((8 + r) * 64 + 16 + c, static_cast<float>(x(40 + r, 40 + c)) * 2.0f);
  for (std::int64_t r = 0; r < 32; ++r)
    for (std::int64_t c = 0; c < 16; ++c) t[6].set(r * 16 + c, t[1].get((8 + r) * 64 + 8 + c));
}

// C = A * B with K = 128 split over two wgmmas whose B operands are the K-row halves of one
// 128-byte swizzled (128, 64) array: slice<0>(bs, 0_c, 64_c) and slice<0>(bs, 64_c, 64_c), each
// filled by its own TMA load. Rows 64..127 start 8 KiB in, on a swizzle pattern, so the second
// descriptor is the first one's 8 KiB further (A is two K-major stages).
inline ir::Kernel smem_view_wgmma_kernel() {
  return lower(kernel<sm_90a>(
      "smem_view_wgmma", grid(1), threads(1_c), gmem<bf16>("a", shape(64_c, 128_c)), gmem<bf16>("b", shape(128_c, 64_c)),
      gmem<f32>("c", shape(64_c, 64_c)), smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)), smem<bf16>(shape(128_c, 64_c), swizzle(128_c)),
      smem<f32>(shape(64_c, 64_c)), barrier(arrivals(4_c)), accumulator<f32>(shape(64_c, 64_c)),
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto acc) {
        auto b0 = slice<0>(bs, 0_c, 64_c);   // K rows 0..63
        auto b1 = slice<0>(bs, 64_c, 64_c);  // K rows 64..127
        return seq(store(acc, 0.0f), copy_gmem_to_smem(a.block(0_c, 0_c), as[0_c], loaded), copy_gmem_to_smem(a.block(0_c, 1_c), as[1_c], loaded),
                   copy_gmem_to_smem(b.block(0_c, 0_c), b0, loaded), copy_gmem_to_smem(b.block(1_c, 0_c), b1, loaded), barrier_wait(loaded),
                   wgmma(acc, as[0_c], b0), wgmma(acc, as[1_c], b1), wgmma_commit(), wgmma_wait(0_c), store(cs, load(acc)), commit_smem(),
                   copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
}

// c = a * b in double (buffers a, b, c).
inline void smem_view_wgmma_reference(std::vector<host_tensor>& t) {
  for (std::int64_t i = 0; i < 64; ++i)
    for (std::int64_t j = 0; j < 64; ++j) {
      double s = 0;
      for (std::int64_t x = 0; x < 128; ++x) s += t[0].get(i * 128 + x) * t[1].get(x * 64 + j);
      t[2].set(i * 64 + j, s);
    }
}

}  // namespace stagecraft::testing::tile_ops
