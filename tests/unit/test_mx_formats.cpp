// The block-scaled formats (stagecraft/ir/mx_formats.hpp): every code of e2m1, e2m3, e3m2, ue4m3
// and ue8m0 against a decoder written here from the formats' definitions, and the encoders
// against a search for the nearest representable value (ties to the even code, saturation,
// NaN), at every value, every midpoint and its neighbours, and seeded random inputs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <stagecraft/ir/mx_formats.hpp>

using namespace stagecraft::ir;

namespace {

struct spec {
  const char* name;
  mx::minifloat f;
  int sign_bits, ebits, mbits, bias;
  bool nan_all_ones;  // the all-ones magnitude is NaN (ue4m3), else a number
};
const std::vector<spec> specs = {
    {"e2m1", mx::e2m1, 1, 2, 1, 1, false},
    {"e2m3", mx::e2m3, 1, 2, 3, 1, false},
    {"e3m2", mx::e3m2, 1, 3, 2, 3, false},
    {"ue4m3", mx::ue4m3, 0, 4, 3, 7, true},
};

// From the definition: (-1)^s * 2^(e - bias) * (1 + m / 2^M), or 2^(1 - bias) * (m / 2^M) when e = 0.
double by_definition(spec const& s, unsigned code) {
  const unsigned m = code & ((1u << s.mbits) - 1u);
  const unsigned e = (code >> s.mbits) & ((1u << s.ebits) - 1u);
  const bool neg = s.sign_bits && ((code >> (s.ebits + s.mbits)) & 1u);
  if (s.nan_all_ones && e == (1u << s.ebits) - 1u && m == (1u << s.mbits) - 1u) return std::numeric_limits<double>::quiet_NaN();
  const double frac = static_cast<double>(m) / static_cast<double>(1u << s.mbits);
  const double v = e == 0 ? std::pow(2.0, 1 - s.bias) * frac : std::pow(2.0, static_cast<int>(e) - s.bias) * (1.0 + frac);
  return neg ? -v : v;
}

// The code a correct encoder gives: the nearest finite magnitude, ties to the even code; at or
// beyond the largest, the largest; NaN the positive largest (or the NaN code).
unsigned nearest(spec const& s, double x) {
  const unsigned sign_bit = s.sign_bits ? 1u << (s.ebits + s.mbits) : 0u;
  if (std::isnan(x)) return s.f.nan_code >= 0 ? static_cast<unsigned>(s.f.nan_code) : s.f.max_code;
  if (std::signbit(x) && !s.sign_bits) return 0;
  const double a = std::fabs(x);
  if (a >= by_definition(s, s.f.max_code)) return (std::signbit(x) ? sign_bit : 0u) | s.f.max_code;  // saturation
  unsigned best = 0;
  double best_d = std::numeric_limits<double>::infinity();
  for (unsigned c = 0; c <= s.f.max_code; ++c) {
    const double d = std::fabs(by_definition(s, c) - a);
    if (d < best_d || (d == best_d && (c & 1u) == 0)) best = c, best_d = d;
  }
  return (std::signbit(x) ? sign_bit : 0u) | best;
}

}  // namespace

TEST_CASE("mx formats: every code decodes to its definition", "[unit][mx]") {
  for (auto const& s : specs) {
    INFO(s.name);
    for (unsigned c = 0; c < (1u << s.f.bits()); ++c) {
      INFO("code " << c);
      const double want = by_definition(s, c);
      const float got = mx::decode(s.f, c);
      if (std::isnan(want)) CHECK(std::isnan(got));
      else CHECK(static_cast<double>(got) == want);
    }
  }
  // The values everyone quotes.
  const float fp4[] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (unsigned c = 0; c < 8; ++c) {
    CHECK(mx::decode(mx::e2m1, c) == fp4[c]);
    CHECK(mx::decode(mx::e2m1, c | 8u) == -fp4[c]);
  }
  CHECK(mx::decode(mx::e2m3, mx::e2m3.max_code) == 7.5f);
  CHECK(mx::decode(mx::e3m2, mx::e3m2.max_code) == 28.0f);
  CHECK(mx::decode(mx::ue4m3, mx::ue4m3.max_code) == 448.0f);
  CHECK(std::isnan(mx::decode(mx::ue4m3, 0x7fu)));
}

TEST_CASE("mx formats: encoding rounds to the nearest code, ties to even, and saturates", "[unit][mx]") {
  std::mt19937_64 rng(28);
  for (auto const& s : specs) {
    INFO(s.name);
    std::vector<double> probes;
    std::vector<double> mags;
    for (unsigned c = 0; c <= s.f.max_code; ++c) mags.push_back(by_definition(s, c));
    for (std::size_t i = 0; i < mags.size(); ++i) {
      probes.push_back(mags[i]);
      if (i + 1 < mags.size()) {
        const float mid = static_cast<float>((mags[i] + mags[i + 1]) / 2);  // exact: a few bits
        probes.push_back(mid);
        probes.push_back(std::nextafter(mid, 0.0f));
        probes.push_back(std::nextafter(mid, 1e30f));
      }
    }
    const double top = mags.back();
    for (double x : {top * 1.01, top * 4, 1e30, static_cast<double>(std::numeric_limits<float>::infinity()), 1e-30, 1e-45}) probes.push_back(x);
    std::uniform_real_distribution<double> u(0.0, 2.0 * top);
    for (int i = 0; i < 2000; ++i) probes.push_back(static_cast<float>(u(rng)));
    for (double p : probes)
      for (double x : {p, -p}) {
        const float xf = static_cast<float>(x);
        INFO("x = " << xf);
        CHECK(mx::encode(s.f, xf) == nearest(s, xf));
      }
    CHECK(mx::encode(s.f, std::nanf("")) == (s.f.nan_code >= 0 ? static_cast<unsigned>(s.f.nan_code) : s.f.max_code));
  }
  CHECK(mx::encode(mx::e2m1, 5.0f) == 0x6u);    // 5 is halfway between 4 (0x6) and 6 (0x7): the even code
  CHECK(mx::encode(mx::e2m1, -0.25f) == 0x8u);  // halfway between 0 and 0.5: -0
  CHECK(mx::encode(mx::e2m1, 0.26f) == 0x1u);
  CHECK(mx::encode(mx::ue4m3, -3.0f) == 0x0u);  // a scale is never negative
}

TEST_CASE("mx formats: ue8m0 is a power of two, rounded toward zero or up, 255 NaN", "[unit][mx]") {
  for (unsigned c = 0; c < 256; ++c) {
    INFO("code " << c);
    const float v = mx::decode_ue8m0(c);
    if (c == 255) {
      CHECK(std::isnan(v));
      continue;
    }
    CHECK(static_cast<double>(v) == std::pow(2.0, static_cast<int>(c) - 127));
    CHECK(mx::encode_ue8m0(v, true) == c);
    CHECK(mx::encode_ue8m0(v, false) == c);
    const float between = v * 1.5f;  // strictly between 2^(c-127) and 2^(c-126)
    CHECK(mx::encode_ue8m0(between, true) == c);
    CHECK(mx::encode_ue8m0(between, false) == std::min(c + 1, 254u));
  }
  CHECK(mx::encode_ue8m0(std::nanf(""), true) == 255u);
  CHECK(mx::encode_ue8m0(0.0f, false) == 0u);
  CHECK(mx::encode_ue8m0(-8.0f, true) == 0u);
  CHECK(mx::encode_ue8m0(std::numeric_limits<float>::infinity(), true) == 254u);
  CHECK(mx::encode_ue8m0(3e38f, false) == 254u);  // above 2^127, saturated
}

TEST_CASE("mx formats: two e2m1 codes per byte, element 2i low", "[unit][mx]") {
  for (unsigned b = 0; b < 256; ++b) {
    const auto byte = static_cast<std::uint8_t>(b);
    CHECK(mx::pack_e2m1(mx::unpack_e2m1(byte, 0), mx::unpack_e2m1(byte, 1)) == byte);
  }
  CHECK(mx::pack_e2m1(mx::encode(mx::e2m1, 1.0f), mx::encode(mx::e2m1, -6.0f)) == 0xf2u);
}

// Unit-packed elements (GMEM, and each 16-byte SMEM unit's first 12 (FP6) or 8 (FP4) bytes):
// element i at bits b i .. b i + b - 1, low bits first. Checked against a bit-by-bit reading of
// that definition: every code at every place of a unit, the unit's other bits random and left
// as they were.
TEST_CASE("mx formats: unit packing (FP6 and kind::f8f6f4's FP4), element i at bits b i, every code at every place of a 16-byte unit",
          "[unit][mx][fp6]") {
  std::mt19937_64 rng(67);
  auto bit = [](std::uint8_t const* u, int b) { return (u[b / 8] >> (b % 8)) & 1u; };
  for (int bits : {6, 4})
    for (int place = 0; place < 16; ++place)
      for (unsigned code = 0; code < (1u << bits); ++code) {
        std::uint8_t unit[16], before[16];
        for (auto& b : unit) b = static_cast<std::uint8_t>(rng());
        std::copy(std::begin(unit), std::end(unit), std::begin(before));
        mx::unit_set(bits, unit, place, code);
        CHECK(mx::unit_get(bits, unit, place) == code);
        for (int b = 0; b < 128; ++b) {
          const bool mine = b >= bits * place && b < bits * place + bits;
          CHECK(bit(unit, b) == (mine ? (code >> (b - bits * place)) & 1u : bit(before, b)));
        }
        // Through a slot address: the unit of slot 16u + place is the u-th.
        std::uint8_t two[32] = {};
        mx::unit_smem_set(bits, two, 16 + place, code);
        CHECK(mx::unit_smem_get(bits, two, 16 + place) == code);
        CHECK(mx::unit_get(bits, two + 16, place) == code);
        CHECK(std::all_of(two, two + 16, [](std::uint8_t x) { return x == 0; }));
      }
  // Four FP6 elements in three bytes: codes 1, 2, 3, 4 are 0b000001, 000010, 000011, 000100.
  std::uint8_t three[3] = {};
  for (unsigned i = 0; i < 4; ++i) mx::unit_set(6, three, i, i + 1);
  CHECK(three[0] == 0x81u);  // 000001 | 10 << 6
  CHECK(three[1] == 0x30u);  // 0000 (rest of 2) | 0011 << 4
  CHECK(three[2] == 0x10u);  // 00 (rest of 3) | 000100 << 2
  // FP4 one to a slot packs as e2m1x2's bytes do in GMEM: element 2i low.
  std::uint8_t one = 0;
  mx::unit_set(4, &one, 0, 0x2u);
  mx::unit_set(4, &one, 1, 0xfu);
  CHECK(one == mx::pack_e2m1(0x2u, 0xfu));
  CHECK(mx::unit_format(DType::e2m3).ebits == 2);
  CHECK(mx::unit_format(DType::e3m2).ebits == 3);
  CHECK(mx::unit_format(DType::e2m1).mbits == 1);
  CHECK(unit_bits(DType::e2m1) == 4);
  CHECK(unit_bits(DType::e3m2) == 6);
  CHECK(unit_bits(DType::e2m1x2) == 0);  // kind::mxf4's dense FP4 is bytes, not units
}
