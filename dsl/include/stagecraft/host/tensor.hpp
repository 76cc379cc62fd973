// Host buffers: what users hand to backends and references, and what comes back.
// Plain bytes with a dtype and a shape; typed spans on request.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "stagecraft/ir/types.hpp"

namespace stagecraft::ir {
struct Kernel;
}

namespace stagecraft {

struct host_tensor {
  ir::DType dtype = ir::DType::f32;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> bytes;

  static host_tensor zeros(ir::DType dt, std::vector<std::int64_t> shape);

  std::int64_t elements() const;
  // Elements and bytes of a tensor of that shape, overflow-checked: std::invalid_argument for a
  // negative extent or a count that does not fit in an int64_t.
  static std::int64_t element_count(std::span<const std::int64_t> shape);
  static std::int64_t byte_count(ir::DType dt, std::span<const std::int64_t> shape);
  std::int64_t rows() const { return shape.empty() ? 1 : elements() / shape.back(); }

  // A typed view: T must be the dtype's host storage type (float, uint16_t bits for f16/bf16,
  // int32_t, uint32_t, int8_t).
  template <class T>
  std::span<T> as() {
    check_storage(storage_matches<std::remove_const_t<T>>(dtype), sizeof(T));
    return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
  template <class T>
  std::span<const T> as() const {
    check_storage(storage_matches<T>(dtype), sizeof(T));
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  }

  // Element i as a double / set from a double, with the dtype's rounding (RNE for f16/bf16,
  // wrap-around for integers, RNE with saturation for e4m3/e5m2).
  double get(std::int64_t i) const;
  void set(std::int64_t i, double v);

 private:
  template <class T>
  static constexpr bool storage_matches(ir::DType d) {
    switch (d) {
      case ir::DType::f32: return std::is_same_v<T, float>;
      case ir::DType::f16: case ir::DType::bf16: return std::is_same_v<T, std::uint16_t>;
      case ir::DType::i32: return std::is_same_v<T, std::int32_t>;
      case ir::DType::u32: return std::is_same_v<T, std::uint32_t>;
      case ir::DType::i8: return std::is_same_v<T, std::int8_t>;
      case ir::DType::u8: case ir::DType::e2m1x2: case ir::DType::ue4m3: return std::is_same_v<T, std::uint8_t>;
      case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1: return std::is_same_v<T, std::uint8_t>;  // the packed bytes, not one an element
      case ir::DType::e4m3: case ir::DType::e5m2: return std::is_same_v<T, std::uint8_t>;
      case ir::DType::pred: return std::is_same_v<T, std::uint8_t>;  // 0 or 1 (no parameter has it: ir::DType)
    }
    return false;
  }
  void check_storage(bool matches, std::size_t elem) const;
};

// The first element at which two tensors of the same dtype and shape differ, or -1. Bit-exact
// (the backends promise identical bits), except that every NaN equals every NaN: the GPU writes
// its canonical NaN (0x7fffffff for f32), the host keeps sign and payload, and both are right.
std::int64_t first_difference(host_tensor const& a, host_tensor const& b);

// IEEE binary16 and bfloat16 conversions, round-to-nearest-even.
std::uint16_t f32_to_f16(float f);
float f16_to_f32(std::uint16_t h);
std::uint16_t f32_to_bf16(float f);
float bf16_to_f32(std::uint16_t h);

// One host_tensor per GMEM parameter of `k`, seeded random, never all zeros: what `stagecraft
// run --input-seed S`, the kernel runners, bench and shards all check with, so a seed names the
// same bits everywhere. A workspace parameter's slot is zeros: no launcher reads it.
std::vector<host_tensor> seeded_inputs(ir::Kernel const& k, std::uint64_t seed);

// Replaces each segment table among `inputs` (one tensor per parameter of `k`) with the one
// seeded_inputs(k, seed) draws: for test inputs drawn otherwise, which must still be valid tables.
void seed_segment_tables(ir::Kernel const& k, std::vector<host_tensor>& inputs, std::uint64_t seed);

// Throws std::invalid_argument, naming the table and its values, unless every segment table of
// `k` (segment_offsets) holds what it promises: 0 first, never decreasing, its rows last. Every
// launcher calls it before a run: a bad cu_seqlens is the caller's mistake, not a race to find.
void check_segment_tables(ir::Kernel const& k, std::vector<host_tensor> const& buffers);

// The kernel for these buffers (one per parameter): its run-time extents read off their shapes
// and the kernel re-verified for them (ir::bind_to); a kernel without run-time extents as it is.
// Every launcher runs what this returns, so tensors of any size a run-time extent allows work.
ir::Kernel bind_to_buffers(ir::Kernel const& k, std::vector<host_tensor> const& buffers);

}  // namespace stagecraft
