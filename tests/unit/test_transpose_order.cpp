// The transpose order of ir/transpose_order.hpp, which the generated code runs: a bijection of the
// 32 x 32 elements, and on both sides of out(r, c) = in(c, r) every warp instruction touches 32
// different banks, counted through the very swizzle TMA and the generated addressing use
// (ir::swz<128>). The generic row-major order is counted too, as the reason the order exists.
#include <catch2/catch.hpp>

#include <set>

#include <stagecraft/ir/swizzle.hpp>
#include <stagecraft/ir/transpose_order.hpp>

using namespace stagecraft;

namespace {
// The bank of element (row, col) of a 32 x 32 f32 tile at a 1024-byte aligned, 128-byte
// swizzled SMEM address (what the allocator gives a swizzle(128_c) allocation).
unsigned bank(int row, int col, unsigned base = 4096) {
  return (ir::swz<128>(base + static_cast<unsigned>(row * 128 + col * 4)) / 4) % 32;
}
struct counts {
  std::size_t fewest_write_banks = 32, fewest_read_banks = 32, elements = 0;
};
template <class Order>
counts count(Order order, int instructions) {
  counts c;
  std::set<int> all;
  for (int u = 0; u < instructions; ++u)
    for (int warp = 0; warp < 4; ++warp) {
      std::set<unsigned> w, r;
      for (int lane = 0; lane < 32; ++lane) {
        const int i = order(warp * 32 + lane, u);
        all.insert(i);
        w.insert(bank(i / 32, i % 32));  // out(r, c)
        r.insert(bank(i % 32, i / 32));  // in(c, r)
      }
      c.fewest_write_banks = std::min(c.fewest_write_banks, w.size());
      c.fewest_read_banks = std::min(c.fewest_read_banks, r.size());
    }
  c.elements = all.size();
  return c;
}
}  // namespace

TEST_CASE("transpose32: every element once, 32 banks per warp instruction on the write and the read side", "[transpose_order]") {
  const auto c = count([](int t, int u) { return ir::transpose32_element(t, u); }, 8);
  CHECK(c.elements == 1024);
  CHECK(c.fewest_write_banks == 32);
  CHECK(c.fewest_read_banks == 32);
}

TEST_CASE("transpose32: the generic order (4 consecutive elements a thread) would touch only 8 banks a side", "[transpose_order]") {
  // What the store loop does without the order: thread t, step u writes element 4t + u (+ 512).
  const auto c = count([](int t, int u) { return (u / 4) * 512 + 4 * t + u % 4; }, 8);
  CHECK(c.elements == 1024);
  CHECK(c.fewest_write_banks == 8);
  CHECK(c.fewest_read_banks == 8);
}
