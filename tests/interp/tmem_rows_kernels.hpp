// Row statements over TMEM tiles, the shapes FA4's softmax and correction take, without an MMA
// (the host backend runs them): the code generator runs consecutive ones that read the same
// tiles as one pass over the row (nvrtc tcgen05.cpp, fused_rows), and must stop a run where a
// statement reads what an earlier one of it writes.
#pragma once
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::testing::tmem_rows {

// op #1 fills t from x. #2 a = max<1>(t) and #3 t := t - a stay apart (#3 reads a, which #2
// writes); #4 b = sum<1>(exp2(t - 1/4) + 1) reads the t #3 writes, so a run starts there: #4,
// #5 u := (exp2(t - 1/4) * 2 - t) / 2 and #6 a = a + min<1>(1 - t / 2) are one pass, exp2(t - 1/4)
// computed once per element. In fast math their adds, subtracts, multiplies and multiply-adds
// (either operand the product) are the f32x2 pair instructions. Then y = u, a and b out.
inline auto kernel() {
  const auto tile = shape(128_c, 64_c);
  return lower(stagecraft::kernel<sm_100a>(
      "tmem_rows", grid(1), threads(warpgroup), gmem<f32>("x", tile), gmem<f32>("y", tile), gmem<f32>("ra", shape(128_c)),
      gmem<f32>("rb", shape(128_c)), smem<f32>("a", shape(128_c)), smem<f32>("b", shape(128_c)), tmem<f32>("t", tile), tmem<f32>("u", tile),
      [=](auto x, auto y, auto ra, auto rb, auto a, auto b, auto t, auto u) {
        auto whole = [&](auto g) { return g.tile(tile, 0_c, 0_c); };
        auto row = [&](auto g) { return g.tile(shape(128_c), 0_c); };
        return seq(store_tmem(t, load(whole(x))), store(a, max<1>(async_load_tmem(t))), store_tmem(t, async_load_tmem(t) - broadcast<1>(load(a), tile)),
                   store(b, sum<1>(exp2(async_load_tmem(t) - 0.25f) + 1.0f)),
                   store_tmem(u, (exp2(async_load_tmem(t) - 0.25f) * 2.0f - async_load_tmem(t)) * 0.5f),
                   store(a, load(a) + min<1>(1.0f - async_load_tmem(t) * 0.5f)), store(whole(y), async_load_tmem(u)), store(row(ra), load(a)),
                   store(row(rb), load(b)), tmem_dealloc(t), tmem_dealloc(u));
      }));
}

}  // namespace stagecraft::testing::tmem_rows
