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
  SECTION("NaN fill of a map that is not floating point") {
    r.nan_fill = true;
    CHECK_NOTHROW(cuda::validate(r));
    r.dtype = ir::DType::i32;
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("TMA descriptor for 'x' (i32[4096, 4096]") &&
                                               Contains("the NaN fill (OOB_FILL_NAN_REQUEST_ZERO_FMA) is for floating-point tensor maps"));
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

// The arrays cuda::launch hands cuTensorMapEncodeTiled (and the host backend encodes): innermost
// first, byte strides of the outer dimensions, and elementStrides.
TEST_CASE("encode_args lists the driver's arrays innermost first, element strides included", "[tensor_map]") {
  SECTION("a plain box: every element stride 1") {
    const auto a = cuda::encode_args(good());
    CHECK(a.rank == 2);
    CHECK(a.dims == std::array<std::uint64_t, 5>{4096, 4096, 0, 0, 0});
    CHECK(a.strides == std::array<std::uint64_t, 4>{4096 * 4, 0, 0, 0});
    CHECK(a.box == std::array<std::uint32_t, 5>{64, 128, 0, 0, 0});
    CHECK(a.elem_strides == std::array<std::uint32_t, 5>{1, 1, 0, 0, 0});
  }
  SECTION("a strided 3-d box: (4, 2, 1) outermost first becomes (1, 2, 4)") {
    // (planes, rows, cols) = (64, 512, 96) f16, box (32, 128, 32): 8 x 64 x 32 elements land.
    cuda::tensor_map_request r{"img", ir::DType::f16, 0x20000, {64, 512, 96}, {32, 128, 32}, 0, {4, 2, 1}};
    const auto a = cuda::encode_args(r);
    CHECK(a.rank == 3);
    CHECK(a.dims == std::array<std::uint64_t, 5>{96, 512, 64, 0, 0});
    CHECK(a.strides == std::array<std::uint64_t, 4>{96 * 2, 96 * 2 * 512, 0, 0});
    CHECK(a.box == std::array<std::uint32_t, 5>{32, 128, 32, 0, 0});
    CHECK(a.elem_strides == std::array<std::uint32_t, 5>{1, 2, 4, 0, 0});
  }
  SECTION("the downsample example's maps: the load's footprint and strides, the store's plain box") {
    // y = 2 * x[::2, :] over (512, 512): 32x64 stages, so the load traverses 64 rows.
    cuda::tensor_map_request load{"x", ir::DType::f32, 0x10000, {512, 512}, {64, 64}, 0, {2, 1}};
    CHECK(cuda::encode_args(load).box == std::array<std::uint32_t, 5>{64, 64, 0, 0, 0});
    CHECK(cuda::encode_args(load).elem_strides == std::array<std::uint32_t, 5>{1, 2, 0, 0, 0});
  }
}

TEST_CASE("bad element strides are named before the driver sees them", "[tensor_map]") {
  auto r = good();
  SECTION("out of 1..8") {
    r.elem_strides = {9, 1};
    REQUIRE_THROWS_WITH(cuda::encode_args(r), Contains("TMA descriptor for 'x'") && Contains("element stride 9 of dimension 0; TMA element strides are 1 to 8"));
    r.elem_strides = {0, 1};
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("element stride 0 of dimension 0"));
  }
  SECTION("the innermost dimension, which the driver would ignore") {
    r.elem_strides = {1, 2};
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("the innermost element stride is 2; TMA does not stride the innermost dimension"));
  }
  SECTION("one per dimension") {
    r.elem_strides = {2};
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("the element strides (2) have 1 dimensions but the array has 2"));
  }
}

// FP6 (CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B): dimensions in elements, strides in the packed
// GMEM's bytes (6 bits an element), and the driver's extra rules for that type.
TEST_CASE("FP6 tensor maps: packed strides and the 16U6_ALIGN16B rules", "[tensor_map][fp6]") {
  cuda::tensor_map_request r{"a", ir::DType::e2m3, 0x10000, {4096, 4096}, {128, 128}, 128};
  CHECK_NOTHROW(cuda::validate(r));
  const auto a = cuda::encode_args(r);
  CHECK(a.dims[0] == 4096);      // elements, not bytes
  CHECK(a.strides[0] == 3072);   // 4096 x 6 / 8 bytes a row
  CHECK(a.box[0] == 128);
  SECTION("32-byte aligned address") {
    r.address = 0x10010;
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("device address 0x10010 is not 32-byte aligned, which packed e2m3 (16U6_ALIGN16B) needs"));
  }
  SECTION("innermost extent a multiple of 128") {
    r.shape = {4096, 4160};
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("packed e2m3 (16U6_ALIGN16B) needs the innermost extent a multiple of 128 elements, not 4160"));
  }
  SECTION("swizzle 128 B or none") {
    r.dtype = ir::DType::e3m2;
    r.box = {128, 64};
    r.swizzle = 64;
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("packed e3m2 (16U6_ALIGN16B) loads swizzle 128 B or not at all, not 64 B"));
  }
  SECTION("kind::f8f6f4's FP4 (16U4_ALIGN16B): two a byte in GMEM") {
    r.dtype = ir::DType::e2m1;
    CHECK(cuda::encode_args(r).strides[0] == 2048);  // 4096 x 4 / 8
    r.shape = {4096, 4104};
    REQUIRE_THROWS_WITH(cuda::validate(r), Contains("packed e2m1 (16U4_ALIGN16B) needs the innermost extent a multiple of 128 elements, not 4104"));
  }
}
