// The 8-bit floats wgmma multiplies (OCP FP8: E4M3 and E5M2), as one token sequence every
// backend compiles, like the swizzle (stagecraft/ir/swizzle.hpp).
//
// f32 -> fp8 rounds to nearest even and saturates, as cuda_fp8's __nv_cvt_float_to_fp8 with
// __NV_SATFINITE does (cvt.rn.satfinite.e4m3x2.f32 on sm_89+): a finite value beyond the largest
// finite fp8, or an infinity, becomes that largest value with its sign; NaN becomes 0x7f; values
// at or below half the smallest subnormal become a zero of their sign. fp8 -> f32 is exact.
//   e4m3: bias 7, 3 mantissa bits, no infinity, S.1111.111 is NaN, largest finite 448 (0x7e)
//   e5m2: bias 15, 2 mantissa bits, IEEE-like: S.11111.00 is infinity, S.11111.xx NaN,
//         largest finite 57344 (0x7b)
// The interpreter, the host tensors and the codegen's cast<e4m3>() all use these functions;
// NVRTC gets the macro stringified into its prelude, and tests/unit/test_fp8.cpp checks all 256
// patterns of each format against a decoder written from the definition above.
//
// AS_BITS and AS_FLOAT are the f32 <-> bits casts of the side compiling it (std::bit_cast on the
// host, __float_as_uint / __uint_as_float in CUDA).
#pragma once
#include <bit>
#include <cstdint>

#define STAGECRAFT_FP8_FN(QUALIFIERS, AS_BITS, AS_FLOAT)                                          \
  QUALIFIERS unsigned char fp8_encode(float f, int mbits, int bias, unsigned maxnorm) {           \
    const unsigned x = AS_BITS(f);                                                                 \
    const unsigned sign = (x >> 24) & 0x80u;                                                       \
    const unsigned a = x & 0x7fffffffu;                                                            \
    if (a > 0x7f800000u) return 0x7fu; /* NaN, sign dropped as cuda_fp8 does */                    \
    const int e = static_cast<int>(a >> 23);                                                       \
    if (e == 0) return static_cast<unsigned char>(sign); /* f32 subnormals: far below fp8's */     \
    const int t = e - 127 + bias; /* the fp8 biased exponent, < 1 in fp8's subnormal range */      \
    const int shift = 23 - mbits + (t < 1 ? 1 - t : 0);                                            \
    if (shift > 25) return static_cast<unsigned char>(sign);                                       \
    const unsigned sig = (a & 0x7fffffu) | 0x800000u;                                              \
    unsigned q = sig >> shift;                                                                     \
    const unsigned rem = sig & ((1u << shift) - 1u), half = 1u << (shift - 1);                     \
    if (rem > half || (rem == half && (q & 1u))) ++q;                                              \
    /* q carries the implicit bit for normals, so a rounding carry steps the exponent */           \
    unsigned code = t >= 1 ? (static_cast<unsigned>(t - 1) << mbits) + q : q;                      \
    if (code > maxnorm) code = maxnorm;                                                            \
    return static_cast<unsigned char>(sign | code);                                                \
  }                                                                                                \
  QUALIFIERS float fp8_decode(unsigned b, int mbits, int bias, bool has_inf) {                     \
    const unsigned sign = (b & 0x80u) << 24, mag = b & 0x7fu;                                      \
    const unsigned exp = mag >> mbits, man = mag & ((1u << mbits) - 1u);                           \
    if (has_inf ? exp == (0x7fu >> mbits) : mag == 0x7fu)                                          \
      return AS_FLOAT(has_inf && man == 0 ? (sign | 0x7f800000u) : 0x7fffffffu);                   \
    if (exp == 0) /* subnormal: man units of 2^(1 - bias - mbits), an exact product */             \
      return AS_FLOAT(sign | AS_BITS(static_cast<float>(man) *                                     \
                                     AS_FLOAT(static_cast<unsigned>(128 - bias - mbits) << 23)));  \
    return AS_FLOAT(sign | (exp + 127u - static_cast<unsigned>(bias)) << 23 | man << (23 - mbits)); \
  }                                                                                                \
  QUALIFIERS unsigned char f32_to_e4m3(float f) { return fp8_encode(f, 3, 7, 0x7eu); }             \
  QUALIFIERS unsigned char f32_to_e5m2(float f) { return fp8_encode(f, 2, 15, 0x7bu); }            \
  QUALIFIERS float e4m3_to_f32(unsigned char b) { return fp8_decode(b, 3, 7, false); }             \
  QUALIFIERS float e5m2_to_f32(unsigned char b) { return fp8_decode(b, 2, 15, true); }             \
  QUALIFIERS float round_e4m3(float f) { return e4m3_to_f32(f32_to_e4m3(f)); }                     \
  QUALIFIERS float round_e5m2(float f) { return e5m2_to_f32(f32_to_e5m2(f)); }

namespace stagecraft::ir {

STAGECRAFT_FP8_FN(constexpr inline, std::bit_cast<unsigned>, std::bit_cast<float>)

}  // namespace stagecraft::ir
