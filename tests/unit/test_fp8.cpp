// ir/fp8.hpp: the e4m3/e5m2 conversions every backend compiles, against a reference written here
// from the formats' definition (OCP 8-bit floating point, as cuda_fp8 implements it):
//   e4m3: 1 sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities, S.1111.111 is NaN
//   e5m2: 1 sign, 5 exponent bits (bias 15), 2 mantissa bits; S.11111.00 is infinity,
//         S.11111.{01,10,11} NaN (IEEE 754 style)
// and the rounding cuda_fp8's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...) performs: nearest,
// ties to an even mantissa; beyond the largest finite value (and at infinity) the largest finite
// value of that sign; NaN to 0x7f.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <stagecraft/host/tensor.hpp>
#include <stagecraft/ir/fp8.hpp>
#include <stagecraft/stagecraft.hpp>

using namespace stagecraft;

namespace {

struct format {
  const char* name;
  int exp_bits, man_bits, bias;
  bool ieee;  // infinities and NaNs as IEEE 754 (all-ones exponent); else only S.1..1 is NaN
  float (*decode)(unsigned char);
  unsigned char (*encode)(float);
};
const format formats[] = {{"e4m3", 4, 3, 7, false, ir::e4m3_to_f32, ir::f32_to_e4m3},
                          {"e5m2", 5, 2, 15, true, ir::e5m2_to_f32, ir::f32_to_e5m2}};

// The value a bit pattern denotes, from the definition (in double: exact for every fp8).
double reference_value(format const& f, unsigned b) {
  const int sign = (b >> 7) & 1;
  const int e = static_cast<int>((b >> f.man_bits) & ((1u << f.exp_bits) - 1));
  const int m = static_cast<int>(b & ((1u << f.man_bits) - 1));
  const int all_ones = (1 << f.exp_bits) - 1;
  const double s = sign ? -1.0 : 1.0;
  if (f.ieee && e == all_ones) return m == 0 ? s * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  if (!f.ieee && e == all_ones && m == (1 << f.man_bits) - 1) return std::numeric_limits<double>::quiet_NaN();
  if (e == 0) return s * std::ldexp(static_cast<double>(m), 1 - f.bias - f.man_bits);
  return s * std::ldexp(static_cast<double>((1 << f.man_bits) + m), e - f.bias - f.man_bits);
}

// The pattern x rounds to: the nearest finite value by exhaustive search (ties: the even
// pattern, which is the even mantissa), saturating; NaN -> 0x7f; a zero result keeps x's sign.
unsigned reference_encode(format const& f, float x) {
  if (std::isnan(x)) return 0x7f;
  const unsigned sign = std::signbit(x) ? 0x80u : 0u;
  const double a = std::fabs(static_cast<double>(x));
  unsigned best = 0;
  double best_d = std::numeric_limits<double>::infinity();
  double largest = 0;
  unsigned largest_code = 0;
  for (unsigned b = 0; b < 0x80; ++b) {
    const double v = reference_value(f, b);
    if (!std::isfinite(v)) continue;
    if (v > largest) largest = v, largest_code = b;
    const double d = std::fabs(v - a);
    if (d < best_d || (d == best_d && (b & 1u) == 0)) best = b, best_d = d;
  }
  if (a > largest) return sign | largest_code;  // saturation (infinity included)
  return sign | best;
}

bool same(float a, double b) { return (std::isnan(a) && std::isnan(b)) || static_cast<double>(a) == b; }

}  // namespace

static_assert(ir::f32_to_e4m3(448.0f) == 0x7e && ir::f32_to_e4m3(1e9f) == 0x7e && ir::f32_to_e5m2(-1e9f) == 0xfb,
              "the conversions are constexpr on the host, as the swizzle is");

TEST_CASE("fp8: every bit pattern decodes to the value the format defines", "[fp8][unit]") {
  for (auto const& f : formats) {
    for (unsigned b = 0; b < 256; ++b) {
      INFO(f.name << " pattern 0x" << std::hex << b);
      const float v = f.decode(static_cast<unsigned char>(b));
      const double want = reference_value(f, b);
      REQUIRE(same(v, want));
      if (want == 0) CHECK(std::signbit(v) == ((b & 0x80) != 0));  // -0 stays -0
    }
  }
  // Landmarks of the two formats, so a reference that drifted with the code would still fail.
  CHECK(ir::e4m3_to_f32(0x7e) == 448.0f);
  CHECK(ir::e4m3_to_f32(0x01) == std::ldexp(1.0f, -9));
  CHECK(ir::e4m3_to_f32(0x08) == std::ldexp(1.0f, -6));
  CHECK(std::isnan(ir::e4m3_to_f32(0x7f)));
  CHECK(std::isnan(ir::e4m3_to_f32(0xff)));
  CHECK(ir::e4m3_to_f32(0x78) == 256.0f);  // S.1111.000 is a number in e4m3
  CHECK(ir::e5m2_to_f32(0x7b) == 57344.0f);
  CHECK(ir::e5m2_to_f32(0x01) == std::ldexp(1.0f, -16));
  CHECK(ir::e5m2_to_f32(0x7c) == std::numeric_limits<float>::infinity());
  CHECK(ir::e5m2_to_f32(0xfc) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(ir::e5m2_to_f32(0x7d)));
  CHECK(ir::e5m2_to_f32(0x3c) == 1.0f);
  CHECK(ir::e4m3_to_f32(0x38) == 1.0f);
}

TEST_CASE("fp8: every value round-trips through f32, and NaN becomes 0x7f", "[fp8][unit]") {
  for (auto const& f : formats) {
    for (unsigned b = 0; b < 256; ++b) {
      INFO(f.name << " pattern 0x" << std::hex << b);
      const float v = f.decode(static_cast<unsigned char>(b));
      const unsigned back = f.encode(v);
      if (std::isnan(v)) CHECK(back == 0x7fu);
      else if (std::isinf(v)) CHECK(back == (b & 0x80u) + 0x7bu);  // satfinite: infinity saturates
      else CHECK(back == b);
    }
  }
}

TEST_CASE("fp8: f32 -> fp8 rounds to nearest even and saturates like __NV_SATFINITE", "[fp8][unit]") {
  std::mt19937 rng(20261201);
  for (auto const& f : formats) {
    std::vector<float> probes = {0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::max(),
                                 std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::min(), 1e-30f, 464.0f, 465.0f,
                                 463.99997f, 61440.0f, 61439.996f, -61441.0f};
    // Every midpoint between neighbouring values (the ties), and the floats just either side.
    for (unsigned b = 0; b < 0x7f; ++b) {
      const double lo = reference_value(f, b), hi = reference_value(f, b + 1);
      if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
      const float mid = static_cast<float>((lo + hi) / 2);  // exact: fp8 midpoints fit in f32
      for (float p : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f), static_cast<float>(lo)}) {
        probes.push_back(p);
        probes.push_back(-p);
      }
    }
    // Half the smallest subnormal, and its neighbours: zero, zero, the smallest subnormal.
    const float tiny = static_cast<float>(reference_value(f, 1) / 2);
    probes.insert(probes.end(), {tiny, std::nextafter(tiny, 0.0f), std::nextafter(tiny, 1.0f), -tiny});
    // Random f32 bit patterns over the whole range, and random values in fp8's.
    for (int i = 0; i < 20000; ++i) probes.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
    std::uniform_real_distribution<float> in_range(-70000.0f, 70000.0f);
    for (int i = 0; i < 20000; ++i) probes.push_back(in_range(rng) * std::ldexp(1.0f, -static_cast<int>(rng() % 24)));
    for (float x : probes) {
      INFO(f.name << " of " << x << " (bits 0x" << std::hex << std::bit_cast<std::uint32_t>(x) << ")");
      REQUIRE(static_cast<unsigned>(f.encode(x)) == reference_encode(f, x));
    }
  }
}

TEST_CASE("host_tensor: e4m3/e5m2 elements are set and read through the same conversion", "[fp8][unit][host]") {
  auto t = host_tensor::zeros(ir::DType::e4m3, {4});
  CHECK(t.bytes.size() == 4);
  t.set(0, 1000.0);   // saturates
  t.set(1, -0.3);     // -0.3 -> nearest of 0.28125 / 0.3125: 0.3125 (0xb5)
  t.set(2, 17.0);     // tie between 16 and 18: the even mantissa, 16
  t.set(3, std::nan(""));
  CHECK(t.as<std::uint8_t>()[0] == 0x7e);
  CHECK(t.get(0) == 448.0);
  CHECK(t.get(1) == -0.3125);
  CHECK(t.get(2) == 16.0);
  CHECK(t.as<std::uint8_t>()[3] == 0x7f);
  auto u = host_tensor::zeros(ir::DType::e5m2, {2});
  u.set(0, -1e6);
  u.set(1, 3.0);
  CHECK(u.get(0) == -57344.0);
  CHECK(u.get(1) == 3.0);
  // NaNs compare equal whatever their pattern; a different value does not.
  auto a = host_tensor::zeros(ir::DType::e5m2, {1}), b = a;
  a.as<std::uint8_t>()[0] = 0x7d;
  b.as<std::uint8_t>()[0] = 0xff;
  CHECK(first_difference(a, b) == -1);
  b.as<std::uint8_t>()[0] = 0x7c;  // infinity is not NaN
  CHECK(first_difference(a, b) == 0);
  CHECK(std::string(dtype_name<e4m3>()) == "e4m3");
  CHECK(e5m2::bits == 8);
}
