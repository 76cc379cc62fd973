// Kernels of cluster launch control (ops/clc.hpp), shared by the interpreter's and the host
// backend's tests.
//
// clc_owner<Mistake>(tiles): one CTA per tile is launched (one warpgroup each), and each writes
// the index of the CTA that took a tile into that tile's row of y (tiles, 32) of i32: its own tile
// first, then through a ring of two responses the tiles of the CTAs it canceled, until a response
// cancels none. So y says who did what: under the interpreter's eager schedule CTA 0 takes every
// tile, under lazy every CTA its own, and every row is written once under any schedule.
//   none: clc_tiles, as a kernel writes it.
//   query_before_wait: the loop tests the response of its round before waiting for it to land
//     (break_if first, then barrier_wait): the query races the try_cancel's write.
//   skip_not_stop: a failed response skips the round's work instead of ending the loop, which
//     goes on asking: a try_cancel after the CTA read a failure (undefined on the GPU).
#pragma once
#include <cstdint>

#include <stagecraft/stagecraft.hpp>

namespace stagecraft::testing {

enum class clc_mistake { none, query_before_wait, skip_not_stop };

template <clc_mistake Mistake = clc_mistake::none>
ir::Kernel clc_owner(std::int64_t tiles) {
  const char* name = Mistake == clc_mistake::none ? "clc_owner" : Mistake == clc_mistake::query_before_wait ? "clc_query_before_wait" : "clc_skip_not_stop";
  return lower(kernel<sm_100a>(
      name, grid(tiles), threads(1_c),
      gmem<i32>("y", shape(tiles, 32_c)),     // (tile, 32): the CTA that took the tile
      smem<u32>("resp", shape(2_c, 4_c)),             // (slot, word)
      barrier("landed", arrivals(1_c), count(2_c)),   // [slot]: a response landed
      barrier("freed", arrivals(1_c), count(2_c)),    // [slot]: the warpgroup is done with it
      [&](auto y, auto resp, auto landed, auto freed) {
        auto take = [&](auto t) { return store(y.tile(shape(1_c, 32_c), t, 0_c), full<i32>(shape(1_c, 32_c), 0) + program_id(0_c)); };
        if constexpr (Mistake == clc_mistake::none) {
          return clc_tiles<2, true>(compiled_in(tiles), resp, landed, freed, [&](auto, auto t) { return take(t); });
        } else {
          // clc_tiles written out by hand, with one mistake.
          auto first = seq(try_cancel(resp[0_c], landed[0_c]), take(program_id(0_c)), barrier_wait(landed[0_c]));
          auto rest = for_(range(1_c, compiled_in(tiles)), [&](auto i) {
            auto prev = stage<2>(i + 1_c), s = stage<2>(i);
            auto ask = seq(if_(i >= 2_c, barrier_wait(freed[s])), try_cancel(resp[s], landed[s]));
            if constexpr (Mistake == clc_mistake::query_before_wait)
              return seq(ask, take(clc_ctaid(resp[prev])), break_if(!clc_canceled(resp[s])), barrier_wait(landed[s]), barrier_arrive(freed[prev]));
            else
              return seq(ask, if_(clc_canceled(resp[prev]), take(clc_ctaid(resp[prev]))), barrier_wait(landed[s]), barrier_arrive(freed[prev]));
          });
          if constexpr (Mistake == clc_mistake::query_before_wait) return seq(first, if_(clc_canceled(resp[0_c]), rest));
          else return seq(first, rest);
        }
      }));
}

}  // namespace stagecraft::testing
