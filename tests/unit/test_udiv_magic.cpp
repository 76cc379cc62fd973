// ir::udiv_magic: the multiply-and-shift the code generator emits for x / d and x % d on
// 31-bit x. Checked against the division itself on the edges of every interval where the
// quotient changes near the ends of the range, on seeded random x, and exhaustively for the
// ring depths and tile counts kernels use.
#include <catch2/catch.hpp>

#include <bit>
#include <random>

#include <stagecraft/ir/udiv_magic.hpp>

using stagecraft::ir::udiv_magic_of;

TEST_CASE("udiv_magic divides every 31-bit value exactly by constants that are not powers of two", "[unit][codegen]") {
  std::mt19937 rng(20261202);
  std::uniform_int_distribution<std::uint32_t> any(0, 0x7FFFFFFFu);
  std::vector<std::uint32_t> divisors;
  for (std::uint32_t d = 3; d < 2000; ++d) divisors.push_back(d);
  for (std::uint32_t d : {66u, 132u, 1000003u, 0x7FFFFFFFu, 0x40000001u, 0x55555555u, 0x7FFFFFFEu}) divisors.push_back(d);
  for (int i = 0; i < 200; ++i) divisors.push_back(any(rng) | 3u);
  for (std::uint32_t d : divisors) {
    if (std::has_single_bit(d)) continue;
    const auto m = udiv_magic_of(d);
    INFO("d = " << d << ", m = " << m.multiplier << ", k = " << m.shift);
    REQUIRE(m.multiplier < (std::uint64_t{1} << 32));
    auto check = [&](std::uint32_t x) {
      if (m.divide(x) != x / d) FAIL("x = " << x << ": " << m.divide(x) << " != " << x / d);
    };
    for (std::uint32_t x = 0; x < 4096; ++x) check(x);
    for (std::uint32_t x = 0x7FFFFFFFu - 4096; x <= 0x7FFFFFFFu && x >= 0x7FFFF000u - 4096; ++x) check(x);
    // both sides of the quotient's last steps below 2^31
    for (std::uint32_t q = 0x7FFFFFFFu / d, n = 0; q > 0 && n < 64; --q, ++n) check(q * d), check(q * d - 1);
    for (int i = 0; i < 2000; ++i) check(any(rng));
  }
  // the ring depths and tile counts of the bundled kernels, exhaustively over 2^22
  for (std::uint32_t d : {3u, 5u, 6u, 7u, 12u, 66u}) {
    const auto m = udiv_magic_of(d);
    for (std::uint32_t x = 0; x < (1u << 22); ++x)
      if (m.divide(x) != x / d) FAIL("d = " << d << ", x = " << x);
  }
}
