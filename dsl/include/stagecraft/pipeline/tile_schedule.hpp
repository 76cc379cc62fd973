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

}  // namespace stagecraft
