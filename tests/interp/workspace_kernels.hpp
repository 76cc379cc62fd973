// A probe of what a kernel-owned workspace holds at launch: y = w + x with w never written
// before it is read, so y == x exactly when the launcher zero-filled w, whatever the caller's
// slot for w holds. Generic: w is read with a plain load, then overwritten with 2x (the
// kernel's own scratch, which must not come back as an output). Tma: w's block is read by a
// TMA load, so the launcher's tensor map covers the workspace too.
#pragma once
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::testing {

template <bool Tma>
ir::Kernel workspace_probe() {
  auto t = shape(64_c, 64_c);
  return lower(kernel<sm_90a>(Tma ? "workspace_probe_tma" : "workspace_probe", grid(1), threads(1_c),
                              gmem<f32>("x", t),                      // (row, col)
                              gmem<f32>("y", t),                      // (row, col): w + x
                              workspace<f32>("w", t),                 // zero at launch
                              smem<f32>(t),                           // buf: w's block (Tma)
                              barrier(arrivals(1_c), count(1_c)),     // loaded: buf holds it
                              [t](auto x, auto y, auto w, auto buf, auto loaded) {
                                if constexpr (Tma)
                                  return seq(copy_gmem_to_smem(w.block(0_c, 0_c), buf, loaded), barrier_wait(loaded),
                                             store(y.tile(t, 0_c, 0_c), load(buf) + load(x.tile(t, 0_c, 0_c))));
                                else
                                  return seq(store(y.tile(t, 0_c, 0_c), load(w.tile(t, 0_c, 0_c)) + load(x.tile(t, 0_c, 0_c))),
                                             store(w.tile(t, 0_c, 0_c), load(x.tile(t, 0_c, 0_c)) * 2.0f));
                              }));
}

}  // namespace stagecraft::testing
