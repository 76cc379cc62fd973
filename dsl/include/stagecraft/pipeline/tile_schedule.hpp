// static_schedule(tiles_m, tiles_n, workers, worker, group): the static persistent tile schedule
// the persistent GEMMs share. `workers` (CTAs, or clusters) loop over a grid of tiles_m x tiles_n
// output tiles; worker w takes linear tiles w, w + workers, w + 2 workers, ... (rounds() of them
// at most; valid(i) is false past the last tile), and linear tile t is the tile (m(i), n(i)) in
// grouped order: down `group` consecutive rows of tiles, column by column, then the next band of
// rows (Triton's GROUP_M, CUTLASS's raster swizzle). A wave of workers then reads about `group`
// row blocks of A and workers / group column blocks of B instead of one row block and all of B:
// L2 holds what the wave re-reads. group = 1 is row-major (each row of tiles in turn). When
// group does not divide tiles_m, the rows of the last, shorter band come last, row-major.
//
//   auto sched = static_schedule(ceil_div(M, 128), ceil_div(N, 256), ctas, program_id(0_c), 8);
//   for_(range(sched.rounds()), [&](auto i) { return if_(sched.valid(i), tile_work(sched.m(i), sched.n(i))); })
//
// Every expression is index arithmetic (a few integer ops per tile, outside the K loop); tiles_m
// and workers may be run-time sizes (--dynamic M).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>

#include "stagecraft/expr/index.hpp"
#include "stagecraft/expr/size.hpp"
#include "stagecraft/expr/stage.hpp"
#include "stagecraft/ops/atomic.hpp"
#include "stagecraft/ops/barrier_ops.hpp"
#include "stagecraft/ops/clc.hpp"
#include "stagecraft/ops/stmt.hpp"

namespace stagecraft {

template <class Worker>
struct tile_schedule {
  size_expr tiles_m;
  std::int64_t tiles_n;
  size_expr workers;
  Worker worker;
  std::int64_t group;

  size_expr tiles() const { return tiles_m * tiles_n; }
  size_expr rounds() const { return ceil_div(tiles(), workers); }  // the most tiles a worker gets
  auto tile(auto i) const { return worker + i * workers; }       // the worker's i-th linear tile
  // A worker's valid tiles are a prefix of its rounds (the loops' ring counters count them all).
  auto valid(auto i) const { return tile(i) < tiles(); }
  // The linear tiles of the whole bands (group rows each) come first, in grouped order; those of
  // the last, shorter band (tiles_m % group rows) after them, row-major. Every divisor is a
  // constant of the build: a division by the last band's height, a run-time value with
  // --dynamic M, cost gemm_hopper's consumers registers and spills. The two forms are blended
  // arithmetically (c * a + (1 - c) * b, c the comparison), as index expressions have no select.
  // The coordinates are plain indices (no static range: they address GMEM blocks, which the
  // interpreter and TMA bound at run time). group = 1 gives the row-major expressions themselves.
  idx<unknown_range> m(auto i) const {
    if (group == 1) return {node_of(tile(i) / tiles_n)};
    auto [t, banded, in_band] = band_of(i);
    auto grouped = t / (group * tiles_n) * group + t % group;
    auto rest = as_index(whole_bands() * group) + (t - banded) / tiles_n;
    return {node_of(in_band * grouped + (1_c - in_band) * rest)};
  }
  idx<unknown_range> n(auto i) const {
    if (group == 1) return {node_of(tile(i) % tiles_n)};
    auto [t, banded, in_band] = band_of(i);
    auto grouped = t % (group * tiles_n) / group;
    auto rest = (t - banded) % tiles_n;
    return {node_of(in_band * grouped + (1_c - in_band) * rest)};
  }

 private:
  size_expr whole_bands() const { return tiles_m / group; }
  // The linear tile, how many linear tiles the whole bands hold, and whether t is one of them.
  auto band_of(auto i) const {
    auto t = tile(i);
    auto banded = as_index(whole_bands() * group) * tiles_n;
    return std::tuple{t, banded, t < banded};
  }
};

template <class Worker>
auto static_schedule(size_expr tiles_m, std::int64_t tiles_n, size_expr workers, Worker worker, std::int64_t group = 1) {
  if (group < 1) throw std::invalid_argument("static_schedule: group=" + std::to_string(group) + " must be at least 1 (rows of tiles per band)");
  return tile_schedule<Worker>{tiles_m, tiles_n, workers, worker, group};
}

// clc_tiles<R, Issues>(rounds, resp, full, empty, body): one role's loop over the tiles cluster
// launch control (ops/clc.hpp) hands its CTA, in a kernel launched with one CTA per tile: round 0
// is the CTA's own tile (program_id(0)), round i > 0 the tile of the cluster that response i - 1
// canceled, and the loop ends after the first round whose response canceled none. body(i, t) is
// round i's work on linear tile t. Every role of the CTA runs one such loop over the same
// responses, which pass through a ring of R slots: resp (smem<u32>(shape(R, 4_c))), full
// (barrier(arrivals(1_c), count(R)): response landed) and empty (barrier(arrivals(roles),
// count(R)): every role is done with it). The role with Issues = true asks for round i + 1's tile
// at the start of round i (try_cancel into slot i % R once every role has released response
// i - R), so the answer is in flight while round i works. A role reads response i - 1 during
// round i (its tile) and releases it at the round's end, after waiting for response i, whose
// "canceled none" ends the loop (break_if): no role issues a try_cancel after reading a failure.
// rounds bounds the loop (the grid's tiles: one CTA may be handed all of them).
template <long long R, bool Issues, class Resp, class Full, class Empty, class Body>
auto clc_tiles(size_expr rounds, Resp const& resp, Full const& full, Empty const& empty, Body&& body, src_loc loc = src_loc::current()) {
  static_assert(R >= 2, "clc_tiles<R>: the response ring needs at least two slots (round i reads response i - 1 while response i lands)");
  // Every op the loop adds is the caller's line (the body's are the body's own).
  auto ask = [&](auto i) {
    auto s = stage<R>(i);
    if constexpr (!Issues) return seq();
    else if constexpr (static_int<decltype(i)>) return seq(try_cancel(resp[s], full[s], loc));  // round 0: every slot is free
    else return seq(if_(i >= int_c<R>, barrier_wait(empty[s], loc), loc), try_cancel(resp[s], full[s], loc));
  };
  auto first = seq(ask(0_c), body(0_c, program_id(0_c)), barrier_wait(full[0_c], loc));
  auto rest = for_(
      range(1_c, rounds),
      [&](auto i) {
        auto prev = stage<R>(i + int_c<R - 1>), s = stage<R>(i);  // response i - 1, response i
        // The tile is read from the response once per round (a loop of one trip binds it), not
        // at each use of its coordinates.
        auto work = for_(range(clc_ctaid(resp[prev], 0_c), clc_ctaid(resp[prev], 0_c) + 1_c), [&](auto t) { return body(i, t); }, loc);
        return seq(ask(i), work, barrier_wait(full[s], loc), barrier_arrive(empty[prev], loc), break_if(!clc_canceled(resp[s]), loc));
      },
      loc);
  return seq(first, if_(clc_canceled(resp[0_c]), rest, loc));
}

// ticket_tiles<R, Issues>(tiles, workers, counter, slots, full, empty, body): clc_tiles' loop
// where there is no cluster launch control (Hopper): `workers` persistent CTAs take tickets from
// one grid-wide counter (ops/atomic.hpp: fetch_add), FA3's dynamic scheduler. Round 0 is the
// CTA's own tile, program_id(0) (no ticket: the grid has at most `tiles` CTAs); round i > 0 is
// tile workers + u, u being the ticket taken in round i - 1, and the loop ends after the first
// round whose ticket is past the tiles. So a CTA that finishes early takes the next tile nobody
// has, whatever the SMs' speeds; the order of the tiles is the tickets' (body maps a linear tile
// to its coordinates, e.g. by static_schedule's grouped order). The tickets pass to every role of
// the CTA through a ring of R slots: slots (smem<i32>(shape(R, 1_c))), full (barrier(arrivals(1_c),
// count(R)): the ticket is in its slot) and empty (barrier(arrivals(roles), count(R)): every role
// has read it). The role with Issues = true takes round i + 1's ticket at the start of round i
// (into slot i % R, once every role has released ticket i - R); every role reads ticket i - 1 in
// round i and releases it at the round's end, after waiting for ticket i, which may end the loop.
// counter is a semaphore element (zero at every launch). tiles bounds the loop (one CTA may take
// every tile).
template <long long R, bool Issues, class Counter, class Slots, class Full, class Empty, class Body>
auto ticket_tiles(size_expr tiles, size_expr workers, Counter const& counter, Slots const& slots, Full const& full, Empty const& empty, Body&& body,
                  src_loc loc = src_loc::current()) {
  static_assert(R >= 2, "ticket_tiles<R>: the ticket ring needs at least two slots (round i reads ticket i - 1 while ticket i is taken)");
  auto ask = [&](auto i) {
    auto s = stage<R>(i);
    if constexpr (!Issues) return seq();
    else if constexpr (static_int<decltype(i)>) return seq(fetch_add(counter, 1_c, slots[s], memory_order::relaxed, memory_scope::gpu, loc),
                                                           barrier_arrive(full[s], loc));  // round 0: every slot is free
    else return seq(if_(i >= int_c<R>, barrier_wait(empty[s], loc), loc), fetch_add(counter, 1_c, slots[s], memory_order::relaxed, memory_scope::gpu, loc),
                    barrier_arrive(full[s], loc));
  };
  auto next = [&](auto s) { return fetched(slots[s]) + workers; };  // the tile a ticket stands for
  auto first = seq(ask(0_c), body(0_c, program_id(0_c)), barrier_wait(full[0_c], loc));
  auto rest = for_(
      range(1_c, tiles),
      [&](auto i) {
        auto prev = stage<R>(i + int_c<R - 1>), s = stage<R>(i);  // ticket i - 1, ticket i
        // The tile is read from the slot once per round (a loop of one trip binds it).
        auto work = for_(range(next(prev), next(prev) + 1_c), [&](auto t) { return body(i, t); }, loc);
        return seq(ask(i), work, barrier_wait(full[s], loc), barrier_arrive(empty[prev], loc), break_if(next(s) >= tiles, loc));
      },
      loc);
  return seq(first, if_(next(0_c) < tiles, rest, loc));
}

}  // namespace stagecraft
