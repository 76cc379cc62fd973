// The numerics policy (docs/interpreter.md): the shared transcendentals of stagecraft/ir/math.hpp
// against the C library in double precision, the largest error over seeded sweeps of each range
// counted in units in the last place of f32; and their special values.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>

#include <stagecraft/ir/math.hpp>

namespace {

// f32 values in order as integers: the ULP distance is a difference (-0 and +0 are one point).
std::int64_t ordinal(float f) {
  const auto i = std::bit_cast<std::int32_t>(f);
  return i < 0 ? -static_cast<std::int64_t>(i & 0x7fffffff) : i;
}
std::int64_t ulps(float got, float want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want) ? 0 : std::numeric_limits<std::int64_t>::max();
  return std::llabs(ordinal(got) - ordinal(want));
}

template <class F, class G>
std::int64_t max_ulps(const char* name, F ours, G exact, double lo, double hi, bool log_scale = false) {
  std::mt19937_64 rng(20261201);
  std::uniform_real_distribution<double> d(lo, hi);
  std::int64_t worst = 0;
  float at = 0;
  for (int i = 0; i < 400000; ++i) {
    const float x = static_cast<float>(log_scale ? std::exp2(d(rng)) : d(rng));
    const auto u = ulps(ours(x), static_cast<float>(exact(static_cast<double>(x))));
    if (u > worst) worst = u, at = x;
  }
  std::printf("%-6s on [%g, %g]%s: max %lld ulp (at %a)\n", name, lo, hi, log_scale ? " (as powers of 2)" : "", static_cast<long long>(worst), at);
  return worst;
}

}  // namespace

using namespace stagecraft::ir;

TEST_CASE("shared math: exp, exp2, log and rsqrt are within 1 ulp and tanh within 3 ulp of the correctly rounded result", "[math]") {
  CHECK(max_ulps("exp", math_exp, [](double x) { return std::exp(x); }, -104, 89) <= 1);
  CHECK(max_ulps("exp", math_exp, [](double x) { return std::exp(x); }, -1, 1) <= 1);
  CHECK(max_ulps("exp2", math_exp2, [](double x) { return std::exp2(x); }, -151, 129) <= 1);
  CHECK(max_ulps("exp2", math_exp2, [](double x) { return std::exp2(x); }, -1, 1) <= 1);
  CHECK(max_ulps("log", math_log, [](double x) { return std::log(x); }, -149, 128, true) <= 1);
  CHECK(max_ulps("log", math_log, [](double x) { return std::log(x); }, 0.5, 2) <= 1);
  CHECK(max_ulps("rsqrt", math_rsqrt, [](double x) { return 1 / std::sqrt(x); }, -149, 128, true) <= 1);
  CHECK(max_ulps("tanh", math_tanh, [](double x) { return std::tanh(x); }, -12, 12) <= 3);
  CHECK(max_ulps("tanh", math_tanh, [](double x) { return std::tanh(x); }, -0.6, 0.6) <= 3);
  CHECK(max_ulps("tanh", math_tanh, [](double x) { return std::tanh(x); }, -30, -2, true) <= 3);
}

TEST_CASE("shared math: special values follow IEEE and the C library", "[math]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(math_exp(0.0f) == 1.0f);
  CHECK(math_exp(-0.0f) == 1.0f);
  CHECK(math_exp(inf) == inf);
  CHECK(math_exp(-inf) == 0.0f);
  CHECK(math_exp(88.7229f) == inf);     // just above log(FLT_MAX)
  CHECK(math_exp(-103.5f) == 0x1p-149f);  // the smallest subnormal, as the C library rounds it
  CHECK(std::isnan(math_exp(nan)));
  CHECK(math_exp2(128.0f) == inf);
  CHECK(math_exp2(-149.0f) == 0x1p-149f);
  CHECK(math_exp2(-126.5f) == static_cast<float>(std::exp2(-126.5)));  // subnormal, rounded once
  CHECK(math_exp2(10.0f) == 1024.0f);
  CHECK(math_log(1.0f) == 0.0f);
  CHECK(math_log(0.0f) == -inf);
  CHECK(math_log(-0.0f) == -inf);
  CHECK(std::isnan(math_log(-1.0f)));
  CHECK(math_log(inf) == inf);
  CHECK(math_log(0x1p-149f) == static_cast<float>(std::log(0x1p-149)));
  CHECK(math_rsqrt(0.0f) == inf);
  CHECK(math_rsqrt(inf) == 0.0f);
  CHECK(std::isnan(math_rsqrt(-1.0f)));
  CHECK(math_rsqrt(4.0f) == 0.5f);
  CHECK(math_tanh(inf) == 1.0f);
  CHECK(math_tanh(-inf) == -1.0f);
  CHECK(std::signbit(math_tanh(-0.0f)));
  CHECK(math_tanh(0x1p-140f) == 0x1p-140f);
  CHECK(std::isnan(math_tanh(nan)));
  CHECK(math_abs(-0.0f) == 0.0f);
  CHECK_FALSE(std::signbit(math_abs(-0.0f)));
}
