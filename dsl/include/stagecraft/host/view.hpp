// A user's own array, not copied: what the C++ API runs kernels on (docs/using.md). Dense,
// row-major, dimensions outermost first, exactly like a host_tensor but over memory the user
// owns: a std::vector, a framework's buffer, an mmap'ed file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "stagecraft/ir/types.hpp"

namespace stagecraft {

struct host_view {
  ir::DType dtype = ir::DType::f32;
  std::vector<std::int64_t> shape;
  std::span<std::byte> bytes;
};

// Typed constructors. f16 and bf16 share their storage type, so they name the dtype;
inline host_view view(std::span<float> a, std::vector<std::int64_t> shape) { return {ir::DType::f32, std::move(shape), std::as_writable_bytes(a)}; }
inline host_view view(std::span<std::int32_t> a, std::vector<std::int64_t> shape) { return {ir::DType::i32, std::move(shape), std::as_writable_bytes(a)}; }
inline host_view view(std::span<std::uint32_t> a, std::vector<std::int64_t> shape) { return {ir::DType::u32, std::move(shape), std::as_writable_bytes(a)}; }
inline host_view view(std::span<std::int8_t> a, std::vector<std::int64_t> shape) { return {ir::DType::i8, std::move(shape), std::as_writable_bytes(a)}; }
inline host_view view(std::span<std::uint8_t> a, std::vector<std::int64_t> shape) { return {ir::DType::u8, std::move(shape), std::as_writable_bytes(a)}; }
inline host_view view(ir::DType half, std::span<std::uint16_t> a, std::vector<std::int64_t> shape) { return {half, std::move(shape), std::as_writable_bytes(a)}; }
// e4m3 and e5m2 share theirs too (bytes holding the bit patterns).
inline host_view view(ir::DType fp8, std::span<std::uint8_t> a, std::vector<std::int64_t> shape) { return {fp8, std::move(shape), std::as_writable_bytes(a)}; }

}  // namespace stagecraft
