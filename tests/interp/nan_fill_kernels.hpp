// TMA's NaN fill (x.block(masked(NAN), ...), OOB_FILL_NAN_REQUEST_ZERO_FMA): block 1 of 64 rows
// of x (100, 64) overhangs by 28 rows, which land in SMEM as TMA's OOB-NaN; a TMA store puts the
// whole tile into rows 64..127 of y (128, 64), so y shows the fill's bits exactly (no
// conversion between). z = buf + 1 through a generic f32 store: the NaN reaches an output, which
// is what the fill is for (a plausible zero there would hide the bug).
#pragma once
#include <cmath>

#include <stagecraft/stagecraft.hpp>

namespace stagecraft::testing {

template <class DT>
ir::Kernel nan_fill_probe(const char* name) {
  auto t = shape(64_c, 64_c);
  return lower(kernel<sm_90a>(name, grid(1), threads(1_c),
                              gmem<DT>("x", shape(100_c, 64_c)),    // (row, col)
                              gmem<DT>("y", shape(128_c, 64_c)),    // (row, col): rows 64.. the tile
                              gmem<f32>("z", t),                    // (row, col): the tile + 1
                              smem<DT>(t),                          // buf: x's block 1, padded
                              barrier(arrivals(1_c), count(1_c)),   // loaded
                              [t](auto x, auto y, auto z, auto buf, auto loaded) {
                                return seq(copy_gmem_to_smem(x.block(masked(NAN), 1_c, 0_c), buf, loaded), barrier_wait(loaded),
                                           copy_smem_to_gmem(buf, y.block(1_c, 0_c)), commit_smem_to_gmem_group(),
                                           store(z.tile(t, 0_c, 0_c), cast<f32>(load(buf)) + 1.0f), wait_smem_to_gmem(0_c));
                              }));
}

}  // namespace stagecraft::testing
