#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <random>

#include <stagecraft/host/tensor.hpp>

using namespace stagecraft;

TEST_CASE("f16 conversions round to nearest even", "[host]") {
  CHECK(f32_to_f16(1.0f) == 0x3c00);
  CHECK(f32_to_f16(-2.0f) == 0xc000);
  CHECK(f32_to_f16(65504.0f) == 0x7bff);
  CHECK(f32_to_f16(65520.0f) == 0x7c00);             // rounds up to infinity
  CHECK(f32_to_f16(65519.0f) == 0x7bff);
  CHECK(f32_to_f16(1.0f + 1.0f / 2048) == 0x3c00);    // a tie: to even (down)
  CHECK(f32_to_f16(1.0f + 3.0f / 2048) == 0x3c02);    // a tie: to even (up)
  CHECK(f32_to_f16(std::ldexp(1.0f, -24)) == 0x0001);  // smallest subnormal
  CHECK(f32_to_f16(std::ldexp(1.0f, -25)) == 0x0000);  // a tie at the bottom: to even (zero)
  CHECK(f32_to_f16(std::ldexp(3.0f, -26)) == 0x0001);
  CHECK((f32_to_f16(std::nanf("")) & 0x7c00) == 0x7c00);
}

TEST_CASE("every f16 survives a round trip through f32", "[host]") {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float f = f16_to_f32(bits);
    if (std::isnan(f)) continue;
    REQUIRE(f32_to_f16(f) == bits);
  }
}

TEST_CASE("f32 -> f16 agrees with a reference rounding on random values", "[host]") {
  const std::uint64_t seed = 42;
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::uint32_t> bits(0, 0x477fffff);  // |x| below the f16 overflow threshold
  for (int i = 0; i < 100000; ++i) {
    const float f = std::bit_cast<float>(bits(rng));
    const auto h = f32_to_f16(f);
    // The neighbours of the result must not be closer (ties: the result is even).
    const double x = f, r = f16_to_f32(h);
    const double up = f16_to_f32(static_cast<std::uint16_t>(h + 1)), down = h & 0x7fff ? f16_to_f32(static_cast<std::uint16_t>(h - 1)) : r;
    REQUIRE(std::abs(x - r) <= std::abs(x - up));
    REQUIRE(std::abs(x - r) <= std::abs(x - down));
    if (std::abs(x - r) == std::abs(x - up) || std::abs(x - r) == std::abs(x - down)) REQUIRE((h & 1) == 0);
  }
}

TEST_CASE("bf16 conversions round to nearest even", "[host]") {
  CHECK(f32_to_bf16(1.0f) == 0x3f80);
  CHECK(f32_to_bf16(std::bit_cast<float>(0x3f808000u)) == 0x3f80);  // tie, even stays
  CHECK(f32_to_bf16(std::bit_cast<float>(0x3f818000u)) == 0x3f82);  // tie, odd rounds up
  CHECK(f32_to_bf16(std::bit_cast<float>(0x3f808001u)) == 0x3f81);
  CHECK(bf16_to_f32(0x4049) == std::bit_cast<float>(0x40490000u));
}

TEST_CASE("integer elements wrap around like the GPU's", "[host]") {
  auto t = host_tensor::zeros(ir::DType::i8, {4});
  t.set(0, 127);
  t.set(1, 128);
  t.set(2, -129);
  t.set(3, 300.7);
  CHECK(t.get(0) == 127);
  CHECK(t.get(1) == -128);
  CHECK(t.get(2) == 127);
  CHECK(t.get(3) == 44);
  auto u = host_tensor::zeros(ir::DType::u32, {1});
  u.set(0, -1);
  CHECK(u.get(0) == 4294967295.0);
  REQUIRE_THROWS_AS(u.as<float>(), std::invalid_argument);  // wrong element type: an error, not garbage
}

TEST_CASE("tensor sizes are overflow-checked and never wrap", "[host]") {
  using Catch::Matchers::Contains;
  const std::int64_t big = std::int64_t{1} << 31;
  // 2^64 elements: the product wraps to 0, which used to allocate nothing for a tensor indexed
  // far beyond it.
  REQUIRE_THROWS_WITH(host_tensor::zeros(ir::DType::f32, {big, big, 4}), Contains("shape (2147483648, 2147483648, 4)") && Contains("does not fit"));
  // Fits as an element count, not as bits: the byte count used to wrap.
  REQUIRE_THROWS_WITH(host_tensor::zeros(ir::DType::f32, {big - 1, big - 1}), Contains("4611686014132420609 elements of 32 bits"));
  REQUIRE_THROWS_WITH(host_tensor::zeros(ir::DType::i8, {4, -1}), Contains("extent -1 is negative"));
  CHECK(host_tensor::byte_count(ir::DType::bf16, std::vector<std::int64_t>{3, 5}) == 30);
  CHECK(host_tensor::zeros(ir::DType::f32, {0, 7}).bytes.empty());
  auto t = host_tensor::zeros(ir::DType::f16, {2, 3});
  t.shape = {big, big, big};
  REQUIRE_THROWS_AS(t.elements(), std::invalid_argument);
}

TEST_CASE("tensors compare bit-exactly, except that every NaN equals every NaN", "[host]") {
  // The GPU writes canonical NaNs (0x7fffffff, 0x7fff), the host keeps sign and payload.
  std::mt19937 rng(11);
  INFO("seed 11");
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (auto dt : {ir::DType::f32, ir::DType::f16, ir::DType::bf16}) {
    INFO(ir::dtype_name(dt));
    auto a = host_tensor::zeros(dt, {4, 32});
    for (std::int64_t i = 0; i < a.elements(); ++i) a.set(i, dist(rng));
    auto b = a;
    CHECK(first_difference(a, b) == -1);
    auto put = [](host_tensor& t, std::int64_t i, std::uint32_t bits) {
      if (t.dtype == ir::DType::f32) t.as<float>()[i] = std::bit_cast<float>(bits);
      else t.as<std::uint16_t>()[i] = static_cast<std::uint16_t>(bits);
    };
    const bool f32 = dt == ir::DType::f32;
    put(a, 7, f32 ? 0x7fffffffu : 0x7fffu);                                    // the GPU's canonical NaN
    put(b, 7, f32 ? 0xffc00000u : dt == ir::DType::f16 ? 0xfe00u : 0xffc0u);   // the host's -NaN
    put(a, 9, f32 ? 0x7f800001u : dt == ir::DType::f16 ? 0x7c01u : 0x7f81u);   // a signalling payload
    put(b, 9, f32 ? 0x7fc00000u : dt == ir::DType::f16 ? 0x7e00u : 0x7fc0u);
    CHECK(first_difference(a, b) == -1);
    put(a, 20, f32 ? 0x7fffffffu : 0x7fffu);
    put(b, 20, f32 ? 0x7f800000u : dt == ir::DType::f16 ? 0x7c00u : 0x7f80u);  // infinity is a number, not a NaN
    CHECK(first_difference(a, b) == 20);
    b = a;
    put(a, 3, 0);
    put(b, 3, f32 ? 0x80000000u : 0x8000u);  // -0 is not +0
    CHECK(first_difference(a, b) == 3);
  }
  auto i = host_tensor::zeros(ir::DType::i32, {8});
  auto j = i;
  j.set(5, -1);
  CHECK(first_difference(i, j) == 5);
  CHECK_THROWS_WITH(first_difference(i, host_tensor::zeros(ir::DType::u32, {8})), "comparing a i32[8] tensor with a u32[8] one");
}

TEST_CASE("FP6 and kind::f8f6f4 FP4 tensors are packed, 6 or 4 bits an element: sizes, element codes and comparison", "[host][fp6]") {
  using stagecraft::host_tensor;
  namespace ir = stagecraft::ir;
  CHECK(host_tensor::byte_count(ir::DType::e2m3, std::vector<std::int64_t>{3, 128}) == 3 * 96);
  CHECK(host_tensor::byte_count(ir::DType::e3m2, std::vector<std::int64_t>{5}) == 4);  // 30 bits, rounded up
  auto t = host_tensor::zeros(ir::DType::e3m2, {2, 128});
  REQUIRE(t.bytes.size() == 192);
  std::mt19937 rng(71);
  std::vector<unsigned> codes(256);
  for (auto& c : codes) c = rng() % 64;
  for (std::int64_t i = 0; i < 256; ++i) t.set(i, codes[static_cast<std::size_t>(i)]);
  for (std::int64_t i = 0; i < 256; ++i) CHECK(t.get(i) == codes[static_cast<std::size_t>(i)]);
  t.set(7, 64 + 5);  // a code keeps its low 6 bits, as a byte keeps its low 8
  CHECK(t.get(7) == 5);
  CHECK(t.get(6) == codes[6]);
  CHECK(t.get(8) == codes[8]);
  auto u = t;
  CHECK(first_difference(t, u) == -1);
  u.set(200, (codes[200] + 1) % 64);
  CHECK(first_difference(t, u) == 200);  // elements, not bytes
  // kind::f8f6f4's FP4 (e2m1): two a byte, element 2i low, as e2m1x2's bytes.
  auto f4 = host_tensor::zeros(ir::DType::e2m1, {1, 128});
  REQUIRE(f4.bytes.size() == 64);
  f4.set(0, 0x3);
  f4.set(1, 0xa);
  f4.set(2, 0x1f);  // low 4 bits
  CHECK(static_cast<unsigned>(f4.bytes[0]) == 0xa3u);
  CHECK(f4.get(2) == 0xf);
}
