// The narrow number formats of block-scaled MMA (tcgen05 kind::mxf8f6f4, kind::mxf4,
// kind::mxf4nvf4; issue 28): element codes and scale-factor codes, decoded exactly to f32 and
// encoded from f32, one definition for every backend (as stagecraft/ir/fp8.hpp is for e4m3/e5m2).
//
// Elements (OCP Microscaling formats; no infinity, no NaN):
//   e2m1  FP4: sign, 2 exponent bits (bias 1), 1 mantissa bit; magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6
//   e2m3  FP6: sign, 2 exponent bits (bias 1), 3 mantissa bits; largest 7.5
//   e3m2  FP6: sign, 3 exponent bits (bias 3), 2 mantissa bits; largest 28
// Exponent field 0 is subnormal (mantissa units of 2^(1 - bias - mbits)), as in IEEE.
// Scale factors:
//   ue8m0 a power of two, 2^(code - 127) for codes 0..254; 255 is NaN; no zero
//   ue4m3 e4m3 without its sign (cuBLASLt's CUDA_R_8F_UE4M3: "an unsigned nv_fp8_e4m3"): bias 7,
//         3 mantissa bits, largest 448 (0x7e), 0x7f NaN; NVFP4's per-16-element scale
//
// Encoding from f32 rounds to nearest, ties to even, and saturates: beyond the largest finite
// value (infinities included) gives the largest with the value's sign, NaN gives the positive
// largest for the elements (cuda_fp4.hpp and cuda_fp6.hpp say so of __NV_SATFINITE) and the NaN
// code where the format has one. ue4m3 of a negative value is 0 (a scale is never negative: our
// choice, not a hardware fact). ue8m0 rounds toward zero or toward +infinity, the two modes
// cvt.{rz,rp}.satfinite.ue8m0x2.f32 has, within [2^-127, 2^127].
// Packing (two e2m1 per byte, element 2i in bits 0-3) is how stagecraft stores FP4 tensors; that
// tcgen05 reads them in this order is not yet checked on hardware.
// tests/unit/test_mx_formats.cpp checks every code of every format against a decoder written
// from the definitions above, and the encoders against a nearest-value search.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "stagecraft/ir/types.hpp"

namespace stagecraft::ir::mx {

struct minifloat {
  int ebits, mbits, bias;
  bool has_sign;
  unsigned max_code;  // the largest finite magnitude's code (sign clear)
  int nan_code;       // -1: no NaN
  constexpr int bits() const { return (has_sign ? 1 : 0) + ebits + mbits; }
};
inline constexpr minifloat e2m1{2, 1, 1, true, 0x7u, -1};
inline constexpr minifloat e2m3{2, 3, 1, true, 0x1fu, -1};
inline constexpr minifloat e3m2{3, 2, 3, true, 0x1fu, -1};
inline constexpr minifloat ue4m3{4, 3, 7, false, 0x7eu, 0x7f};

// The value of `code` (its low f.bits() bits), exactly.
inline float decode(minifloat f, unsigned code) {
  const unsigned mag_bits = static_cast<unsigned>(f.ebits + f.mbits);
  const unsigned mag = code & ((1u << mag_bits) - 1u);
  const bool negative = f.has_sign && ((code >> mag_bits) & 1u);
  if (f.nan_code >= 0 && mag == static_cast<unsigned>(f.nan_code)) return std::nanf("");
  const unsigned e = mag >> f.mbits, m = mag & ((1u << f.mbits) - 1u);
  const float v = e == 0 ? std::ldexp(static_cast<float>(m), 1 - f.bias - f.mbits)
                         : std::ldexp(static_cast<float>((1u << f.mbits) | m), static_cast<int>(e) - f.bias - f.mbits);
  return negative ? -v : v;
}

// The code of x: round to nearest even, saturate (see above).
inline unsigned encode(minifloat f, float x) {
  const unsigned sign_bit = f.has_sign ? 1u << (f.ebits + f.mbits) : 0u;
  if (std::isnan(x)) return f.nan_code >= 0 ? static_cast<unsigned>(f.nan_code) : f.max_code;
  const bool negative = std::signbit(x);
  if (negative && !f.has_sign) return 0;
  const double a = std::fabs(static_cast<double>(x));
  const double largest = decode(f, f.max_code);
  if (a >= largest) return (negative ? sign_bit : 0u) | f.max_code;
  // The quantum of a's binade (the subnormal one below the smallest normal), then a in quanta,
  // rounded to nearest even (exact in double: a is an f32, the quantum a power of two).
  const int emin = 1 - f.bias;
  int e = 0;
  (void)std::frexp(a, &e);  // a = frac * 2^e, frac in [0.5, 1): a's binade is 2^(e-1)
  const int binade = a == 0.0 ? emin : std::max(e - 1, emin);
  const double units = std::nearbyint(std::ldexp(a, f.mbits - binade));  // ties to even (the default rounding mode)
  // units counts quanta of the binade: up to 2^(mbits+1) (a carry into the next binade).
  unsigned mag;
  if (units == 0.0) {
    mag = 0;
  } else {
    const double v = std::ldexp(units, binade - f.mbits);
    int ev = 0;
    (void)std::frexp(v, &ev);
    const int vb = ev - 1;
    if (vb < emin) mag = static_cast<unsigned>(units);  // subnormal: the quanta are the mantissa
    else mag = static_cast<unsigned>(vb + f.bias) << f.mbits | (static_cast<unsigned>(std::ldexp(v, f.mbits - vb)) & ((1u << f.mbits) - 1u));
  }
  if (mag > f.max_code) mag = f.max_code;
  return (negative ? sign_bit : 0u) | mag;  // a negative value that rounds to zero keeps its sign (-0)
}

// ue8m0: 2^(code - 127); 255 NaN.
inline float decode_ue8m0(unsigned code) {
  code &= 0xffu;
  return code == 0xffu ? std::nanf("") : std::ldexp(1.0f, static_cast<int>(code) - 127);
}
// toward_zero: cvt.rz (the largest power of two not above x); else cvt.rp (the smallest not
// below x). Saturated to codes 0..254: zero, negatives and tiny values give 0, infinity 254.
inline unsigned encode_ue8m0(float x, bool toward_zero) {
  if (std::isnan(x)) return 0xffu;
  if (!(x > 0.0f)) return 0u;
  if (std::isinf(x)) return 0xfeu;
  int e = 0;
  const double frac = std::frexp(static_cast<double>(x), &e);  // x = frac * 2^e, frac in [0.5, 1)
  int p = e - 1;                                                // floor(log2 x)
  if (!toward_zero && frac != 0.5) ++p;                         // not a power of two: round up
  const int code = p + 127;
  return static_cast<unsigned>(code < 0 ? 0 : code > 254 ? 254 : code);
}

// Two e2m1 codes in a byte: element 2i in bits 0-3, element 2i + 1 in bits 4-7.
constexpr std::uint8_t pack_e2m1(unsigned even, unsigned odd) { return static_cast<std::uint8_t>((even & 0xfu) | (odd & 0xfu) << 4); }
constexpr unsigned unpack_e2m1(std::uint8_t byte, int which) { return which ? byte >> 4 : byte & 0xfu; }

// Unit-packed elements (FP6 e2m3/e3m2, and e2m1 as kind::f8f6f4 reads it; ir/types.hpp), `bits`
// (6 or 4) each: element i at bits bits * i .. from the first byte's bit 0, low bits first, so an
// element spans at most two bytes. GMEM tensors are this throughout; in SMEM each 16-byte unit
// holds 16 elements this way in its first 2 * bits bytes.
inline unsigned unit_get(int bits, std::uint8_t const* bytes, std::int64_t i) {
  const std::int64_t bit = bits * i, at = bit / 8;
  const int shift = static_cast<int>(bit % 8);
  unsigned w = bytes[at];
  if (shift + bits > 8) w |= static_cast<unsigned>(bytes[at + 1]) << 8;  // the element runs into the next byte
  return (w >> shift) & ((1u << bits) - 1u);
}
inline void unit_set(int bits, std::uint8_t* bytes, std::int64_t i, unsigned code) {
  const std::int64_t bit = bits * i, at = bit / 8;
  const int shift = static_cast<int>(bit % 8);
  const unsigned mask = ((1u << bits) - 1u) << shift, v = (code << shift) & mask;
  bytes[at] = static_cast<std::uint8_t>((bytes[at] & ~mask) | (v & 0xffu));
  if (shift + bits > 8) bytes[at + 1] = static_cast<std::uint8_t>((bytes[at + 1] & ~(mask >> 8)) | (v >> 8));
}
// An element in SMEM's 16-byte units, by its byte of footprint `slot` (an 8-bit operand's address,
// swizzle included: a swizzle permutes whole units): the unit at slot & ~15, element slot % 16 of it.
inline unsigned unit_smem_get(int bits, std::uint8_t const* base, std::int64_t slot) {
  return unit_get(bits, base + (slot & ~std::int64_t{15}), slot & 15);
}
inline void unit_smem_set(int bits, std::uint8_t* base, std::int64_t slot, unsigned code) {
  unit_set(bits, base + (slot & ~std::int64_t{15}), slot & 15, code);
}
// The element format of a unit-packed dtype.
constexpr minifloat unit_format(DType t) { return t == DType::e3m2 ? e3m2 : t == DType::e2m3 ? e2m3 : e2m1; }

}  // namespace stagecraft::ir::mx
