// The register fragment layouts in stagecraft/ir/wgmma.hpp against the PTX ISA's figures
// ("Register fragment layout for accumulator matrix D" of wgmma .m64nNk16, and "... for matrix A"
// from registers, .m64nNk16 and, 8-bit types, .m64nNk32). The code generator's fragment walks, the packing of A from
// registers and the interpreter's per-thread view all use these two functions, so an entry that
// disagrees here is a wrong answer on the GPU. Entries are written from the figures (thread Tt,
// register di / ai -> (row, col)), not from the formulas.
#include <catch2/catch.hpp>

#include <cstddef>
#include <set>
#include <utility>

#include <stagecraft/ir/wgmma.hpp>

using stagecraft::ir::wgmma::a_element;
using stagecraft::ir::wgmma::a_element8;
using stagecraft::ir::wgmma::accumulator_element;

namespace {
struct entry {
  int thread, reg, row, col;
};

// Each entry of a figure's table against the fragment function; `what` names its register.
template <std::size_t N, class F>
void check_table(entry const (&table)[N], F const& element, const char* what) {
  for (auto const& e : table) {
    INFO("T" << e.thread << " " << what << e.reg);
    const auto c = element(e.thread, e.reg);
    CHECK(c.row == e.row);
    CHECK(c.col == e.col);
  }
}
}  // namespace

TEST_CASE("the accumulator fragment is the ISA's m64nNk16 D layout", "[unit][wgmma]") {
  const entry table[] = {
      // warp 0: T0 holds d0, d1 at row 0, d2, d3 eight rows down, then the next 8 columns
      {0, 0, 0, 0},   {0, 1, 0, 1},   {0, 2, 8, 0},   {0, 3, 8, 1},   {0, 4, 0, 8},   {0, 5, 0, 9},   {0, 6, 8, 8},   {0, 7, 8, 9},
      {1, 0, 0, 2},   {1, 1, 0, 3},   {3, 0, 0, 6},   {3, 3, 8, 7},   {4, 0, 1, 0},   {5, 2, 9, 2},   {31, 0, 7, 6},  {31, 3, 15, 7},
      // warps 1..3: the same, 16 rows further down each
      {32, 0, 16, 0}, {33, 4, 16, 10}, {64, 2, 40, 0}, {96, 1, 48, 1}, {127, 0, 55, 6}, {127, 3, 63, 7},
      // the last column block of N = 256 (d124..d127) and one in the middle (N = 64: d28..d31)
      {0, 124, 0, 248}, {0, 127, 8, 249}, {127, 124, 55, 254}, {127, 127, 63, 255}, {2, 30, 8, 60}, {70, 29, 33, 61},
  };
  check_table(table, [](int t, int i) { return accumulator_element(t, i); }, "d");
}

TEST_CASE("A from registers is the ISA's m64nNk16 A layout", "[unit][wgmma]") {
  const entry table[] = {
      {0, 0, 0, 0},   {0, 1, 0, 1},   {0, 2, 8, 0},   {0, 3, 8, 1},  {0, 4, 0, 8},   {0, 5, 0, 9},    {0, 6, 8, 8},    {0, 7, 8, 9},
      {1, 0, 0, 2},   {3, 5, 0, 15},  {4, 0, 1, 0},   {5, 0, 1, 2},  {5, 7, 9, 11},  {31, 6, 15, 14}, {31, 7, 15, 15},
      {32, 0, 16, 0}, {64, 0, 32, 0}, {65, 3, 40, 3}, {96, 4, 48, 8}, {127, 0, 55, 6}, {127, 6, 63, 14}, {127, 7, 63, 15},
  };
  check_table(table, [](int t, int i) { return a_element(t, i); }, "a");
}

TEST_CASE("8-bit A from registers is the ISA's m64nNk32 A layout", "[unit][wgmma]") {
  // Element e is byte e % 4 of register a(e / 4): a0 row r, columns 4 (lane % 4) + 0..3; a1 eight
  // rows down; a2 and a3 the same 16 columns further right.
  const entry table[] = {
      {0, 0, 0, 0},    {0, 1, 0, 1},    {0, 3, 0, 3},    {0, 4, 8, 0},    {0, 7, 8, 3},    {0, 8, 0, 16},   {0, 11, 0, 19},  {0, 12, 8, 16},
      {0, 15, 8, 19},  {1, 0, 0, 4},    {3, 2, 0, 14},   {3, 15, 8, 31},  {4, 0, 1, 0},    {6, 9, 1, 25},   {31, 0, 7, 12},  {31, 15, 15, 31},
      {32, 0, 16, 0},  {33, 5, 24, 5},  {64, 8, 32, 16}, {97, 13, 56, 21}, {127, 0, 55, 12}, {127, 15, 63, 31},
  };
  check_table(table, [](int t, int i) { return a_element8(t, i); }, "element ");
}

TEST_CASE("each fragment holds every element of its tile exactly once", "[unit][wgmma]") {
  for (int n : {8, 64, 256}) {
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < n / 2; ++i) {
        const auto c = accumulator_element(t, i);
        REQUIRE(c.row >= 0);
        REQUIRE(c.row < 64);
        REQUIRE(c.col >= 0);
        REQUIRE(c.col < n);
        seen.insert({c.row, c.col});
      }
    CHECK(seen.size() == static_cast<std::size_t>(64 * n));
  }
  // A of one k step: `per` elements per thread over (64, K).
  auto a_covers = [](auto element, int per, int K) {
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < per; ++i) {
        const auto c = element(t, i);
        REQUIRE(c.row < 64);
        REQUIRE(c.col < K);
        seen.insert({c.row, c.col});
      }
    CHECK(seen.size() == static_cast<std::size_t>(64 * K));
  };
  a_covers([](int t, int i) { return a_element(t, i); }, 8, 16);
  a_covers([](int t, int i) { return a_element8(t, i); }, 16, 32);
}
