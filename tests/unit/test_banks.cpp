// ir::smem_wavefronts, the bank-conflict count behind `stagecraft ptx`'s epilogue line and the
// speed gate's smem_extra_wavefronts: the textbook patterns, worked by hand.
#include <catch2/catch.hpp>

#include <array>
#include <numeric>

#include <stagecraft/ir/banks.hpp>

using stagecraft::ir::smem_wavefronts;

namespace {
std::array<std::uint32_t, 32> lanes(auto f) {
  std::array<std::uint32_t, 32> a{};
  for (std::uint32_t l = 0; l < 32; ++l) a[l] = f(l);
  return a;
}
}  // namespace

TEST_CASE("SMEM wavefronts: consecutive words are one pass, a shared stride costs one per lane in a bank", "[unit][banks]") {
  // 32 lanes, 4 bytes each, consecutive: every bank once
  auto w = smem_wavefronts(lanes([](std::uint32_t l) { return 4 * l; }), 4);
  CHECK(w.actual == 1);
  CHECK(w.ideal == 1);
  // the same word for every lane: a broadcast, one pass
  CHECK(smem_wavefronts(lanes([](std::uint32_t) { return 64u; }), 4).actual == 1);
  // a 128-byte row stride: all 32 lanes in bank 0, 32 distinct words
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return 128 * l; }), 4).actual == 32);
  // gemm_hopper's old epilogue pattern: lane / 4 picks one of 8 rows 512 bytes apart, lane % 4 a
  // 4-byte pair: 8 rows land on the same 4 banks, 8 ways
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return 512 * (l / 4) + 4 * (l % 4); }), 4).actual == 8);
  // the same with the 128-byte swizzle's XOR of the 16-byte chunk by the row: conflict free
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return 128 * (l / 4) + (((l / 4) % 8) << 4) + 4 * (l % 4); }), 4).actual == 1);
  // 16 bytes per lane: four phases of 8 lanes, each 128 contiguous bytes: ideal 4
  w = smem_wavefronts(lanes([](std::uint32_t l) { return 16 * l; }), 16);
  CHECK(w.actual == 4);
  CHECK(w.ideal == 4);
  // 8 bytes per lane with a 256-byte stride: 16 lanes per phase on the same two banks
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return 256 * l; }), 8).actual == 32);
  // 2-byte stores: two lanes per word share it
  CHECK(smem_wavefronts(lanes([](std::uint32_t l) { return 2 * l; }), 2).actual == 1);
}
