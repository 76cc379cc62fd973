// Kernels of the value-returning atomics (ops/atomic.hpp), shared by the interpreter's and the
// host backend's tests.
//
// atomic_tickets(ctas, tiles): a dynamic tile scheduler without cluster launch control (FA3's
//   on Hopper): every CTA takes tickets from one counter (fetch_add) until they run past the
//   tiles, and writes its CTA index into the row of y (tiles, 32) of each tile it took. Which CTA
//   takes which tile is the schedule's; that every row is written once is not.
// atomic_relay<Mistake>(tiles): the same tickets taken by warpgroup 0 and handed to warpgroup 1
//   through a ring of two slots with full/empty barriers, as a producer hands a tile index to
//   its consumers.
//   read_before_wait: the consumer reads the slot before waiting for it to be full.
//   no_empty_wait: the producer refills a slot without waiting for the consumer to be done.
// atomic_each_op(): one CTA runs add, min, max, exch and cas (a swap, then a compare that fails)
//   on one counter and writes what each fetched into its row of y (6, 32).
// atomic_publish(release, acquire): CTA 0 writes y = x + 1 and adds 1 to a flag (its order:
//   `release`); CTA 1, launched after it, adds 0 to the flag (`acquire`) and, if it read 1,
//   writes z = 2 y. Only release with acquire orders CTA 1's read of y after CTA 0's write.
#pragma once
#include <cstdint>

#include <stagecraft/stagecraft.hpp>

namespace stagecraft::testing {

inline ir::Kernel atomic_tickets(std::int64_t ctas, std::int64_t tiles) {
  return lower(kernel<sm_90a>(
      "atomic_tickets", grid(ctas), threads(1_c),
      gmem<i32>("y", shape(tiles, 32_c)),     // (tile, 32): the CTA that took the tile
      semaphores("next", shape(1_c)),         // the next ticket
      smem<i32>("slot", shape(1_c)),          // what the last fetch_add returned
      [&](auto y, auto next, auto slot) {
        const auto n = as_index(compiled_in(tiles));
        return for_(range(compiled_in(tiles)), [&](auto) {
          auto t = fetched(slot);
          return seq(fetch_add(next(0_c), 1_c, slot), break_if(t >= n),
                     store(y.tile(shape(1_c, 32_c), t, 0_c), full<i32>(shape(1_c, 32_c), 0) + program_id(0_c)));
        });
      }));
}

enum class relay_mistake { none, read_before_wait, no_empty_wait };

template <relay_mistake Mistake = relay_mistake::none>
ir::Kernel atomic_relay(std::int64_t tiles) {
  const char* name = Mistake == relay_mistake::none ? "atomic_relay" : Mistake == relay_mistake::read_before_wait ? "atomic_relay_read_before_wait"
                                                                                                               : "atomic_relay_no_empty_wait";
  return lower(kernel<sm_90a>(
      name, grid(2), threads(2_c),
      gmem<i32>("y", shape(tiles, 32_c)),                // (tile, 32): the CTA whose consumer did the tile
      semaphores("next", shape(1_c)),
      smem<i32>("slots", shape(2_c, 1_c)),               // (stage, 1): a ticket in flight
      barrier("full", arrivals(1_c), count(2_c)),        // [stage]: the ticket is in its slot
      barrier("empty", arrivals(1_c), count(2_c)),       // [stage]: the consumer is done with it
      [&](auto y, auto next, auto slots, auto full_, auto empty) {
        // Each loop stops at the round whose ticket ran past the tiles (the consumer learns it from
        // that ticket); tiles + 1 rounds bound a CTA that takes them all.
        const auto n = as_index(compiled_in(tiles));
        auto rounds = range(compiled_in(tiles + 1));
        auto producer = for_(rounds, [&](auto i) {
          auto s = stage<2>(i);
          auto refill = [&] {
            if constexpr (Mistake == relay_mistake::no_empty_wait) return seq();
            else return if_(i >= 2_c, barrier_wait(empty[s]));
          };
          return seq(refill(), fetch_add(next(0_c), 1_c, slots[s]), barrier_arrive(full_[s]), break_if(fetched(slots[s]) >= n));
        });
        auto consumer = for_(rounds, [&](auto i) {
          auto s = stage<2>(i);
          auto t = fetched(slots[s]);
          auto work = if_(t < n, store(y.tile(shape(1_c, 32_c), t, 0_c), full<i32>(shape(1_c, 32_c), 0) + program_id(0_c)));
          if constexpr (Mistake == relay_mistake::read_before_wait)
            return seq(work, barrier_wait(full_[s]), break_if(t >= n), barrier_arrive(empty[s]));
          else  // (the last round leaves before its arrival: the producer has stopped too)
            return seq(barrier_wait(full_[s]), work, break_if(t >= n), barrier_arrive(empty[s]));
        });
        return if_(thread_id() == 0_c, producer, consumer);
      }));
}

inline ir::Kernel atomic_each_op() {
  return lower(kernel<sm_90a>(
      "atomic_each_op", grid(1), threads(1_c), gmem<i32>("y", shape(6_c, 32_c)), semaphores("c", shape(1_c)), smem<i32>("slot", shape(1_c)),
      [&](auto y, auto c, auto slot) {
        auto keep = [&](auto row) { return store(y.tile(shape(1_c, 32_c), row, 0_c), full<i32>(shape(1_c, 32_c), 0) + fetched(slot)); };
        return seq(fetch_max(c(0_c), 5_c, slot), keep(0_c),                                  // 0 -> 5
                   fetch_min(c(0_c), int_c<-3>, slot), keep(1_c),                                 // 5 -> -3
                   exchange(c(0_c), 7_c, slot, memory_order::acq_rel), keep(2_c),            // -3 -> 7
                   compare_exchange(c(0_c), 7_c, 9_c, slot), keep(3_c),                      // 7 -> 9 (swapped)
                   compare_exchange(c(0_c), 1_c, 11_c, slot, memory_order::relaxed, memory_scope::sys), keep(4_c),  // 9 stays
                   fetch_add(c(0_c), 2_c, slot, memory_order::release), keep(5_c));         // 9 -> 11
      }));
}

template <class Release, class Acquire>
ir::Kernel atomic_publish(Release release, Acquire acquire) {
  auto t = shape(64_c, 64_c);
  return lower(kernel<sm_90a>(
      "atomic_publish", grid(2), threads(1_c), gmem<f32>("x", t), gmem<f32>("y", t), gmem<f32>("z", t), semaphores("flag", shape(1_c)),
      smem<i32>("slot", shape(1_c)), [&](auto x, auto y, auto z, auto flag, auto slot) {
        auto yt = y.tile(t, 0_c, 0_c);
        auto first = seq(store(yt, load(x.tile(t, 0_c, 0_c)) + 1.0f), fetch_add(flag(0_c), 1_c, slot, release));
        auto second = seq(fetch_add(flag(0_c), 0_c, slot, acquire), if_(fetched(slot) == 1_c, store(z.tile(t, 0_c, 0_c), load(yt) * 2.0f)));
        return if_(program_id(0_c) == 0_c, first, second);
      }));
}

}  // namespace stagecraft::testing
