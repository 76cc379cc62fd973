// Transcendentals of tile math, as one token sequence every backend compiles (the numerics policy,
// docs/interpreter.md).
//
// CUDA's expf and the C library's exp are both good to about an ulp but not the same function, so
// a kernel using exp could never be compared bit for bit between the interpreter and the GPU. These
// are written with nothing but IEEE f32 operations that every backend rounds identically: + - * /
// and sqrt (correctly rounded in NVRTC's default -prec-div/-prec-sqrt, and in C++), comparisons
// and bit moves. Contraction into FMA would change the roundings, so NVRTC compiles with
// --fmad=false and the host compilers with -ffp-contract=off; the polynomials are Taylor series in
// Horner form, evaluated in f32 after an exact range reduction. NVRTC gets the macro stringified
// into the prelude (backends/nvrtc/src/prelude.hpp), the host backend compiles that prelude text,
// and the interpreter instantiates it below: one definition, three compilers, the same bits.
//
// The arguments name the three primitives each side spells differently: f32 -> bits, bits -> f32,
// and a correctly rounded square root.
#pragma once

#define STAGECRAFT_MATH_FN(Q, AS_BITS, AS_FLOAT, SQRT)                                                  \
  /* round to nearest integer (ties to even) for |x| < 2^22: the 1.5 * 2^23 trick, exact in f32 */      \
  Q float math_rint(float x) { return (x + 12582912.0f) - 12582912.0f; }                               \
  /* p * 2^k, p in [1/2, 2), k an integer in [-152, 129]: the first step is exact, so only the last \
     rounds (to a subnormal or to infinity) */                                                                      \
  Q float math_ldexp(float p, int k) {                                                                 \
    if (k > 127) { p = p * AS_FLOAT(254u << 23); k -= 127; }                                           \
    else if (k < -126) { p = p * AS_FLOAT(27u << 23); k += 100; }                                      \
    return p * AS_FLOAT(static_cast<unsigned>(k + 127) << 23);                                         \
  }                                                                                                    \
  Q float math_copysign(float m, float s) { return AS_FLOAT((AS_BITS(m) & 0x7fffffffu) | (AS_BITS(s) & 0x80000000u)); } \
  Q float math_abs(float x) { return AS_FLOAT(AS_BITS(x) & 0x7fffffffu); }                             \
  /* 2^x = 2^k * 2^r, k = rint(x), |r| <= 1/2 (exact); 2^r = e^(r ln2), Taylor to degree 8 */           \
  Q float math_exp2(float x) {                                                                         \
    if (!(x == x)) return x;                                                                           \
    if (x > 129.0f) return AS_FLOAT(0x7f800000u);                                                      \
    if (x < -151.0f) return 0.0f;                                                                      \
    const float k = math_rint(x), r = x - k;                                                           \
    float p = 1.017808601e-7f;                                                                         \
    p = p * r + 1.321548679e-6f;                                                                       \
    p = p * r + 1.525273380e-5f;                                                                       \
    p = p * r + 1.540353039e-4f;                                                                       \
    p = p * r + 1.333355815e-3f;                                                                       \
    p = p * r + 9.618129108e-3f;                                                                       \
    p = p * r + 5.550410866e-2f;                                                                       \
    p = p * r + 2.402265070e-1f;                                                                       \
    p = p * r + 6.931471806e-1f;                                                                       \
    p = p * r + 1.0f;                                                                                  \
    return math_ldexp(p, static_cast<int>(k));                                                         \
  }                                                                                                    \
  /* e^x = 2^k * e^r, k = rint(x / ln2), r = x - k ln2 with ln2 split in two (Cody and Waite: k times  \
     the high part is exact for |k| < 256), |r| <= ln2 / 2; e^r by Taylor to degree 8 */               \
  Q float math_exp(float x) {                                                                          \
    if (!(x == x)) return x;                                                                           \
    if (x > 89.0f) return AS_FLOAT(0x7f800000u);                                                       \
    if (x < -104.0f) return 0.0f;                                                                      \
    const float k = math_rint(x * 1.44269504f);                                                        \
    const float r = (x - k * 6.93145752e-1f) - k * 1.42860682e-6f;                                     \
    float p = 2.4801587e-5f;                                                                           \
    p = p * r + 1.9841270e-4f;                                                                         \
    p = p * r + 1.3888889e-3f;                                                                         \
    p = p * r + 8.3333333e-3f;                                                                         \
    p = p * r + 4.1666667e-2f;                                                                         \
    p = p * r + 1.6666667e-1f;                                                                         \
    p = p * r + 0.5f;                                                                                  \
    p = p * r + 1.0f;                                                                                  \
    p = p * r + 1.0f;                                                                                  \
    return math_ldexp(p, static_cast<int>(k));                                                         \
  }                                                                                                    \
  /* x = 2^e * m, m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact); log(1 + f) = 2 atanh(s), s = f / (2 + f), \
     summed as f - (f^2/2 - s (f^2/2 + R)) so the leading terms are not rounded away (fdlibm's form) */ \
  Q float math_log(float x) {                                                                          \
    if (!(x == x)) return x;                                                                           \
    if (x < 0.0f) return AS_FLOAT(0x7fc00000u);                                                        \
    if (x == 0.0f) return AS_FLOAT(0xff800000u);                                                       \
    if (AS_BITS(x) == 0x7f800000u) return x;                                                           \
    int e = 0;                                                                                         \
    if (x < AS_FLOAT(0x00800000u)) { x = x * AS_FLOAT(0x4b000000u); e = -23; } /* subnormal: * 2^23 */  \
    const unsigned bits = AS_BITS(x);                                                                  \
    e += static_cast<int>(bits >> 23) - 127;                                                           \
    float m = AS_FLOAT((bits & 0x007fffffu) | 0x3f800000u);                                            \
    if (m > 1.41421356f) { m = m * 0.5f; e += 1; }                                                     \
    const float f = m - 1.0f, s = f / (2.0f + f), z = s * s, hfsq = 0.5f * f * f;                      \
    float r = 1.8181818e-1f;                                                                           \
    r = r * z + 2.2222222e-1f;                                                                         \
    r = r * z + 2.8571429e-1f;                                                                         \
    r = r * z + 4.0000001e-1f;                                                                         \
    r = r * z + 6.6666669e-1f;                                                                         \
    r = r * z;                                                                                         \
    const float ef = static_cast<float>(e);                                                            \
    return ef * 6.93145752e-1f + (f - (hfsq - (s * (hfsq + r) + ef * 1.42860682e-6f)));                \
  }                                                                                                    \
  /* two correctly rounded operations; not rsqrt.approx, which no CPU reproduces */                    \
  Q float math_rsqrt(float x) { return 1.0f / SQRT(x); }                                               \
  /* tanh |x| = t / (t + 2), t = e^(2|x|) - 1 by its Taylor series (no cancellation) below 0.55;      \
     1 - 2 / (e^(2|x|) + 1) above, where the result is at least 1/2 and the subtraction loses little */ \
  Q float math_tanh(float x) {                                                                         \
    if (!(x == x)) return x;                                                                           \
    const float a = math_abs(x);                                                                       \
    float t;                                                                                           \
    if (a < 2.44140625e-4f) t = a; /* below 2^-12, tanh a = a within half an ulp */                    \
    else if (a > 9.5f) t = 1.0f;                                                                       \
    else if (a < 0.55f) {                                                                              \
      const float y = a + a;                                                                           \
      float p = 2.5052108e-8f;                                                                         \
      p = p * y + 2.7557319e-7f;                                                                       \
      p = p * y + 2.7557319e-6f;                                                                       \
      p = p * y + 2.4801587e-5f;                                                                       \
      p = p * y + 1.9841270e-4f;                                                                       \
      p = p * y + 1.3888889e-3f;                                                                       \
      p = p * y + 8.3333333e-3f;                                                                       \
      p = p * y + 4.1666667e-2f;                                                                       \
      p = p * y + 1.6666667e-1f;                                                                       \
      p = p * y + 0.5f;                                                                                \
      p = p * y + 1.0f;                                                                                \
      const float em1 = p * y;                                                                         \
      t = em1 / (em1 + 2.0f);                                                                          \
    } else {                                                                                           \
      t = 1.0f - 2.0f / (math_exp(a + a) + 1.0f);                                                      \
    }                                                                                                  \
    return math_copysign(t, x);                                                                        \
  }

#include <bit>
#include <cmath>

namespace stagecraft::ir {

STAGECRAFT_MATH_FN(inline, std::bit_cast<unsigned>, std::bit_cast<float>, std::sqrt)

}  // namespace stagecraft::ir
