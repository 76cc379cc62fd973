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

// ---- fast mode (docs/codegen.md, "Math modes") ---------------------------------------------------
// What users run on a GPU: the SFU's approximations instead of the polynomials above. The
// kernel-level functions are composed here once from five primitives, approx_ex2, approx_lg2,
// approx_rsqrt, approx_tanh and approx_div, which each side defines its own way: the NVRTC
// prelude as the PTX instructions (ex2.approx.ftz.f32, lg2.approx.ftz.f32, rsqrt.approx.ftz.f32,
// tanh.approx.f32, div.full.f32), the interpreter and the host backend as the C library's
// functions with the same flushing (STAGECRAFT_APPROX_HOST_FN below). The two sides agree within
// the PTX ISA's stated errors (fast_error below), not bit for bit, and outputs are compared with
// that bound (interp::math_tolerance).
#define STAGECRAFT_FAST_MATH_FN(Q)                                                                      \
  Q float fast_exp2(float x) { return approx_ex2(x); }                                                 \
  /* e^x = 2^(x log2 e): one multiply (contracted into the producer's FFMA where it can be) and the   \
     SFU; the rounding of x log2 e adds |x| 2^-24 of relative error (CUDA's __expf does the same) */ \
  Q float fast_exp(float x) { return approx_ex2(x * 1.44269504f); }                                    \
  Q float fast_log(float x) { return approx_lg2(x) * 0.693147181f; }                                   \
  Q float fast_rsqrt(float x) { return approx_rsqrt(x); }                                              \
  Q float fast_tanh(float x) { return approx_tanh(x); }                                                \
  Q float fast_div(float a, float b) { return approx_div(a, b); }

// The primitives on the CPU: the C library's correctly rounded (or nearly: glibc's exp2f, log2f,
// tanhf are within 1 ulp) functions, with the .ftz instructions' flushing of subnormal inputs
// and results to sign-preserving zero. exp2f, log2f, sqrtf and tanhf are the <math.h> names, in
// the global namespace on both sides.
#define STAGECRAFT_APPROX_HOST_FN(Q, AS_BITS, AS_FLOAT)                                                  \
  Q float approx_ftz(float x) { return (AS_BITS(x) & 0x7f800000u) == 0u ? AS_FLOAT(AS_BITS(x) & 0x80000000u) : x; } \
  Q float approx_ex2(float x) { return approx_ftz(::exp2f(approx_ftz(x))); }                           \
  Q float approx_lg2(float x) { return ::log2f(approx_ftz(x)); }                                       \
  Q float approx_rsqrt(float x) { return approx_ftz(1.0f / ::sqrtf(approx_ftz(x))); }                  \
  Q float approx_tanh(float x) { return ::tanhf(x); }                                                  \
  Q float approx_div(float a, float b) { return a / b; }

#include <bit>
#include <cmath>
#include <cstdint>
#include <math.h>  // exp2f, log2f, sqrtf, tanhf in the global namespace (STAGECRAFT_APPROX_HOST_FN)
#include <optional>
#include <string_view>

#include "stagecraft/ir/types.hpp"

namespace stagecraft::ir {

STAGECRAFT_MATH_FN(inline, std::bit_cast<unsigned>, std::bit_cast<float>, std::sqrt)
STAGECRAFT_APPROX_HOST_FN(inline, std::bit_cast<unsigned>, std::bit_cast<float>)
STAGECRAFT_FAST_MATH_FN(inline)

// How tile math is computed (DESIGN.md section 5, "two math modes"). exact: the polynomials
// above, no contraction: interpreter, host backend and GPU agree bit for bit (the CPU backends'
// proof of the generated code). fast: the SFU approximations and FMA contraction: what a GPU
// user runs and benchmarks, compared within interp::math_tolerance's bound.
enum class math_mode : std::uint8_t { exact, fast };
constexpr const char* math_mode_name(math_mode m) { return m == math_mode::fast ? "fast" : "exact"; }
inline std::optional<math_mode> parse_math_mode(std::string_view s) {
  if (s == "exact") return math_mode::exact;
  if (s == "fast") return math_mode::fast;
  return std::nullopt;
}

// The largest relative error the PTX ISA (9.x, "Floating Point Instructions") states for the
// instruction a fast-mode op compiles to, in units of 2^-24 (half an f32 ulp at 1), plus 2 of
// the same units for the exact side's own rounding (the reference computes with the
// polynomials above, correctly rounded within an ulp):
//   ex2.approx.f32   2 ulp from the correctly rounded result, full range       -> 4 + 1 + 2
//   lg2.approx.f32   2^-22 absolute in (0.5, 2), 2^-22 relative outside        -> 4 + 2 (taken as relative to the output's scale)
//   rsqrt.approx.f32 2^-22.9 relative                                          -> 3 + 2
//   tanh.approx.f32  2^-11 relative                                            -> 8192 + 2
//   div.full.f32     2 ulp, full range                                         -> 4 + 1 + 2
// exp adds the rounding of x log2 e: |x| 2^-24 relative, |x| the largest argument the run saw
// (interp::result::max_exp_arg). Returns 0 for ops that round once, correctly, in both modes.
constexpr double fast_error_units(ValueOp op) {
  switch (op) {
    case ValueOp::exp2: case ValueOp::exp: return 7;
    case ValueOp::log: return 6;
    case ValueOp::rsqrt: return 5;
    case ValueOp::tanh: return 8194;
    case ValueOp::div: return 7;
    default: return 0;
  }
}

}  // namespace stagecraft::ir
