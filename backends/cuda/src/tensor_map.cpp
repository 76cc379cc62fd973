#include "stagecraft/cuda/tensor_map.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace stagecraft::cuda {

void validate(tensor_map_request const& r) {
  auto fail = [&](std::string const& why) {
    throw tensor_map_error(fmt::format("TMA descriptor for '{}' ({}[{}], box ({})): {}", r.name, ir::dtype_name(r.dtype), fmt::join(r.shape, ", "),
                                       fmt::join(r.box, ", "), why));
  };
  const int rank = static_cast<int>(r.shape.size());
  const std::int64_t elem = ir::dtype_bits(r.dtype) / 8;
  if (rank < 1 || rank > 5) fail(fmt::format("TMA handles 1 to 5 dimensions, this array has {}", rank));
  if (static_cast<int>(r.box.size()) != rank) fail(fmt::format("the box has {} dimensions but the array has {}", r.box.size(), rank));
  if (r.address % 16 != 0) fail(fmt::format("the array's device address 0x{:x} is not 16-byte aligned", r.address));
  if (r.nan_fill && r.dtype != ir::DType::f32 && r.dtype != ir::DType::f16 && r.dtype != ir::DType::bf16)
    fail("the NaN fill (OOB_FILL_NAN_REQUEST_ZERO_FMA) is for floating-point tensor maps (f32, f16, bf16)");
  for (int d = 0; d < rank; ++d) {
    if (r.shape[d] < 1 || r.shape[d] > (std::int64_t{1} << 32))
      fail(fmt::format("dimension {} has extent {}; TMA needs 1 to 2^32", d, r.shape[d]));
    if (r.box[d] < 1 || r.box[d] > 256) fail(fmt::format("box dimension {} is {} elements; TMA boxes are 1 to 256 elements per dimension", d, r.box[d]));
    if (r.box[d] > r.shape[d]) fail(fmt::format("box dimension {} ({}) is larger than the array's extent ({})", d, r.box[d], r.shape[d]));
  }
  const bool packed = ir::dtype_is_unit_packed(r.dtype);  // CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B or 16U4_ALIGN16B
  const std::string what = fmt::format("packed {} ({})", ir::dtype_name(r.dtype), ir::unit_tma_type(r.dtype));
  if (packed) {
    if (r.address % 32 != 0) fail(fmt::format("the array's device address 0x{:x} is not 32-byte aligned, which {} needs", r.address, what));
    if (r.shape[rank - 1] % 128 != 0) fail(fmt::format("{} needs the innermost extent a multiple of 128 elements, not {}", what, r.shape[rank - 1]));
    if (r.swizzle != 0 && r.swizzle != 128) fail(fmt::format("{} loads swizzle 128 B or not at all, not {} B", what, r.swizzle));
  }
  // Strides of every dimension but the innermost, in bytes (GMEM's: unit-packed types packed).
  std::int64_t stride = elem;
  for (int d = rank - 1; d > 0; --d) {
    stride = packed && d == rank - 1 ? r.shape[d] * ir::packed_bits(r.dtype) / 8 : stride * r.shape[d];
    if (packed && stride % 32 != 0) fail(fmt::format("the stride of dimension {} is {} bytes; {} needs multiples of 32 bytes", d - 1, stride, what));
    if (stride % 16 != 0)
      fail(fmt::format("the stride of dimension {} is {} bytes; TMA needs strides that are multiples of 16 bytes (make the inner extent a "
                       "multiple of {} elements)",
                       d - 1, stride, 16 / elem));
    if (stride >= (std::int64_t{1} << 40)) fail(fmt::format("the stride of dimension {} ({} bytes) exceeds 2^40", d - 1, stride));
  }
  if (!r.elem_strides.empty()) {
    if (static_cast<int>(r.elem_strides.size()) != rank)
      fail(fmt::format("the element strides ({}) have {} dimensions but the array has {}", fmt::join(r.elem_strides, ", "), r.elem_strides.size(), rank));
    for (int d = 0; d < rank; ++d)
      if (r.elem_strides[d] < 1 || r.elem_strides[d] > 8)
        fail(fmt::format("element stride {} of dimension {}; TMA element strides are 1 to 8", r.elem_strides[d], d));
    // With interleave NONE the driver ignores the innermost stride: it would be dropped silently.
    if (r.elem_strides[rank - 1] != 1)
      fail(fmt::format("the innermost element stride is {}; TMA does not stride the innermost dimension", r.elem_strides[rank - 1]));
  }
  const std::int64_t inner_bytes = r.box[rank - 1] * elem;
  if (inner_bytes % 16 != 0) fail(fmt::format("the box's inner dimension is {} bytes; it must be a multiple of 16 bytes", inner_bytes));
  if (r.swizzle != 0 && r.swizzle != 32 && r.swizzle != 64 && r.swizzle != 128)
    fail(fmt::format("swizzle must be 0, 32, 64 or 128 bytes, got {}", r.swizzle));
  if (r.swizzle != 0 && inner_bytes > r.swizzle)
    fail(fmt::format("with a {}-byte swizzle the box's inner dimension may span at most {} bytes, but it spans {}", r.swizzle, r.swizzle, inner_bytes));
}

tensor_map_args encode_args(tensor_map_request const& r) {
  validate(r);
  tensor_map_args a;
  a.rank = static_cast<unsigned>(r.shape.size());
  std::uint64_t stride_bits = static_cast<std::uint64_t>(ir::packed_bits(r.dtype));  // GMEM's footprint: unit-packed types packed
  for (unsigned i = 0; i < a.rank; ++i) {  // innermost first
    const auto d = a.rank - 1 - i;
    a.dims[i] = static_cast<std::uint64_t>(r.shape[d]);  // elements, packed ones too ("the number of individual U# values")
    a.box[i] = static_cast<std::uint32_t>(r.box[d]);
    a.elem_strides[i] = r.elem_strides.empty() ? 1u : static_cast<std::uint32_t>(r.elem_strides[d]);
    if (i > 0) a.strides[i - 1] = stride_bits / 8;
    stride_bits *= static_cast<std::uint64_t>(r.shape[d]);
  }
  return a;
}

}  // namespace stagecraft::cuda
