// Small ragged-batch kernels the interpreter and the host backend both run (tests/interp/
// test_ragged.cpp, tests/host/test_host.cpp): index tables (x.at(i)), windows of rows
// (x.rows(lo, hi)) and tile math with index expressions (ValueOp::index).
#pragma once
#include <vector>

#include <stagecraft/host/tensor.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::testing {

// `t` holds `values` from element 0 on: a hand-made index or segment table in place of the
// seeded one.
inline void set_table(host_tensor& t, std::vector<std::int64_t> const& values) {
  for (std::size_t i = 0; i < values.size(); ++i) t.set(static_cast<std::int64_t>(i), static_cast<double>(values[i]));
}

// Row block g of y = x, block g's rows being [t[g], t[g + 1]) of a table t that is no segment
// table (so the launcher checks nothing and the interpreter finds what goes wrong). Masked: the
// tile's rows past the window are padding; plain: the window must hold the whole tile.
template <bool Masked>
ir::Kernel copy_segments(std::int64_t table_len) {
  auto t = shape(64_c, 64_c);
  return lower(kernel<sm_90a>("copy_segments", grid(3), threads(1_c), gmem<f32>("x", shape(256_c, 64_c)), gmem<i32>("t", shape(table_len)),
                              gmem<f32>("y", shape(256_c, 64_c)), [&](auto x, auto table, auto y) {
                                auto g = program_id(0_c);
                                auto lo = table.at(g), hi = table.at(g + 1_c);
                                if constexpr (Masked)  // an empty segment has no tile: a masked tile wholly past its window is an error
                                  return if_(hi > lo, store(y.rows(lo, hi).tile(t, masked(), 0_c, 0_c), load(x.rows(lo, hi).tile(t, masked(), 0_c, 0_c))));
                                else
                                  return if_(hi > lo, store(y.rows(lo, hi).tile(t, 0_c, 0_c), load(x.rows(lo, hi).tile(t, 0_c, 0_c))));
                              }));
}

// y = x * len + (row within the segment) over a packed ragged batch of 4 segments of 200 rows
// (a segment table), 32-row masked tiles through windows, the tile count and both scalars known
// only at run time: an f32 and an i32 tile of index expressions (ValueOp::index).
inline ir::Kernel segment_scale() {
  auto t = shape(32_c, 64_c);
  return lower(kernel<sm_90a>("segment_scale", grid(4), threads(1_c), gmem<f32>("x", shape(200_c, 64_c)), segment_offsets("t", 4_c, 200),
                              gmem<f32>("y", shape(200_c, 64_c)), [&](auto x, auto table, auto y) {
                                auto g = program_id(0_c);
                                auto lo = table.at(g), hi = table.at(g + 1_c);
                                return for_(range((hi - lo + 31_c) / 32_c), [&](auto j) {
                                  auto in = load(x.rows(lo, hi).tile(t, masked(), j, 0_c));
                                  return store(y.rows(lo, hi).tile(t, masked(), j, 0_c), in * (hi - lo) + cast<f32>(iota<0>(t) + j * 32_c));
                                });
                              }));
}
inline void segment_scale_reference(std::vector<host_tensor>& b) {
  for (std::int64_t g = 0; g < 4; ++g) {
    const auto lo = static_cast<std::int64_t>(b[1].get(g)), hi = static_cast<std::int64_t>(b[1].get(g + 1));
    for (std::int64_t r = lo; r < hi; ++r)
      for (std::int64_t c = 0; c < 64; ++c)
        b[2].set(r * 64 + c, static_cast<float>(static_cast<float>(b[0].get(r * 64 + c)) * static_cast<float>(hi - lo)) + static_cast<float>(r - lo));
  }
}

}  // namespace stagecraft::testing
