// Unsigned division of a 31-bit value by a constant as one 32x32->64 multiply and a shift, the
// form the code generator emits for `x / d` and `x % d` when it knows x lies in [0, 2^31).
//
// Why not plain `x % 3u`: NVVM shrinks it to 8-bit arithmetic when x is a small loop counter,
// which ptxas emulates with byte permutes (a dozen SASS); written as `rem.u32` in inline asm,
// ptxas divided in full. The multiply is two instructions (IMAD.WIDE.U32, SHF) whatever x is.
//
// Correctness (Granlund and Montgomery, "Division by invariant integers using multiplication",
// 1994, theorem 4.2): for N-bit x, s = ceil(log2 d) and k = N + s, m = ceil(2^k / d) gives
// floor(x * m / 2^k) = floor(x / d) for every 0 <= x < 2^N. With N = 31 and d not a power of
// two, d > 2^(s-1), so m < 2^32: a 32-bit constant, and x * m fits in 64 bits.
#pragma once
#include <bit>
#include <cstdint>

namespace stagecraft::ir {

struct udiv_magic {
  std::uint64_t multiplier;  // m < 2^32
  int shift;                 // k, in [33, 62]
  constexpr std::uint32_t divide(std::uint32_t x) const { return static_cast<std::uint32_t>((std::uint64_t{x} * multiplier) >> shift); }
};

// d in [3, 2^31), not a power of two (powers of two are a shift, which NVVM emits best).
constexpr udiv_magic udiv_magic_of(std::uint32_t d) {
  const int s = std::bit_width(d - 1);  // ceil(log2 d) for d >= 2
  const int k = 31 + s;
  const std::uint64_t m = ((std::uint64_t{1} << k) + d - 1) / d;
  return {m, k};
}

}  // namespace stagecraft::ir
