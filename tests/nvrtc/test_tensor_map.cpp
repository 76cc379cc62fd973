// Host-side TMA descriptor checks: each bad descriptor gets its own message, not
// CUDA_ERROR_INVALID_VALUE.
#include <catch2/catch.hpp>

#include <stagecraft/cuda/tensor_map.hpp>

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {
cuda::tensor_map_request good() { return {"x", ir::DType::f32, 0x10000, {4096, 4096}, {128, 64}, 0}; }
}  // namespace

TEST_CASE("a valid descriptor passes", "[tensor_map]") {
  CHECK_NOTHROW(cuda::validate(good()));
  auto r = good();
  r.dtype = ir::DType::f16;
  r.box = {64, 64};
  r.swizzle = 128;
  CHECK_NOTHROW(cuda::validate(r));
}

TEST_CASE("each bad descriptor names its rule and values", "[tensor_map]") {
  auto r = good();
  SECTION("misaligned address") {
    r.address = 0x10008;
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("TMA descriptor for 'x' (f32[4096, 4096], box (128, 64))") &&
                                               Contains("device address 0x10008 is not 16-byte aligned"));
  }
  SECTION("rank") {
    r.shape = {2, 2, 2, 2, 2, 2};
    r.box = {1, 1, 1, 1, 1, 4};
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("TMA handles 1 to 5 dimensions, this array has 6"));
  }
  SECTION("box too large") {
    r.box = {512, 64};
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("box dimension 0 is 512 elements; TMA boxes are 1 to 256 elements"));
  }
  SECTION("box larger than the array") {
    r.shape = {64, 4096};
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("box dimension 0 (128) is larger than the array's extent (64)"));
  }
  SECTION("stride not a multiple of 16 bytes") {
    r.shape = {4096, 4094};
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("the stride of dimension 0 is 16376 bytes") && Contains("multiple of 4 elements"));
  }
  SECTION("inner box bytes") {
    r.box = {128, 2};
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("the box's inner dimension is 8 bytes; it must be a multiple of 16 bytes"));
  }
  SECTION("swizzle span") {
    r.swizzle = 64;
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("with a 64-byte swizzle the box's inner dimension may span at most 64 bytes, but it spans 256"));
  }
  SECTION("swizzle value") {
    r.swizzle = 96;
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("swizzle must be 0, 32, 64 or 128 bytes, got 96"));
  }
  SECTION("box rank") {
    r.box = {128};
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("the box has 1 dimensions but the array has 2"));
  }
}
