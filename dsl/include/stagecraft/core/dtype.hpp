// Element types. Each dtype is a tag type with its IR code, width and host storage type.
#pragma once
#include <cstdint>
#include <type_traits>

#include "stagecraft/ir/types.hpp"

namespace stagecraft {

template <ir::DType Code, int Bits, class Host, bool Float>
struct dtype_tag {
  static constexpr ir::DType code = Code;
  static constexpr int bits = Bits;
  static constexpr bool is_float = Float;
  using host_type = Host;  // how the host stores one element (f16/bf16 as their 16-bit patterns)
};

using f32 = dtype_tag<ir::DType::f32, 32, float, true>;
using f16 = dtype_tag<ir::DType::f16, 16, std::uint16_t, true>;
using bf16 = dtype_tag<ir::DType::bf16, 16, std::uint16_t, true>;
using i32 = dtype_tag<ir::DType::i32, 32, std::int32_t, false>;
using u32 = dtype_tag<ir::DType::u32, 32, std::uint32_t, false>;
using i8 = dtype_tag<ir::DType::i8, 8, std::int8_t, false>;
using u8 = dtype_tag<ir::DType::u8, 8, std::uint8_t, false>;
// The 8-bit floats of Hopper's fp8 tensor cores, stored as their bit patterns (ir/fp8.hpp).
using e4m3 = dtype_tag<ir::DType::e4m3, 8, std::uint8_t, true>;
using e5m2 = dtype_tag<ir::DType::e5m2, 8, std::uint8_t, true>;
// Block-scaled FP4 (tcgen05 kind::mxf4, kind::mxf4nvf4): e2m1x2 is two e2m1 codes a byte (K
// element 2i in bits 0-3), a (rows, K / 2) tensor for K of them; ue4m3 the NVFP4 scale codes (one
// per 16 of K). Storage only: moved by TMA and tcgen05_copy_scales, read by tcgen05_mma with
// block_scale (ir/mx_formats.hpp decodes them).
using e2m1x2 = dtype_tag<ir::DType::e2m1x2, 8, std::uint8_t, false>;
using ue4m3 = dtype_tag<ir::DType::ue4m3, 8, std::uint8_t, false>;
// FP6 operands of tcgen05 kind::f8f6f4 / kind::mxf8f6f4 (e2m3: largest 7.5; e3m2: largest 28).
// A (rows, K) tensor of K values: packed 6 bits an element in GMEM, a byte of footprint an
// element in SMEM (16 to a 16-byte unit, which TMA fills: ir/types.hpp), so an SMEM tile of them
// is sized, swizzled and described as an 8-bit one. Storage only, as e2m1x2.
using e2m3 = dtype_tag<ir::DType::e2m3, 8, std::uint8_t, false>;
using e3m2 = dtype_tag<ir::DType::e3m2, 8, std::uint8_t, false>;
// FP4 as kind::f8f6f4 / kind::mxf8f6f4 read it (pairing with fp8 and FP6: W4A8 and the like): a
// (rows, K) tensor of K values, packed two a byte in GMEM, a byte of footprint each in SMEM (16 to
// a 16-byte unit, the first 8 bytes holding them). kind::mxf4's dense FP4 is e2m1x2.
using e2m1 = dtype_tag<ir::DType::e2m1, 8, std::uint8_t, false>;
// Masks: what comparisons give and select takes. Registers only (no gmem/smem of pred).
using pred = dtype_tag<ir::DType::pred, 8, std::uint8_t, false>;

template <class T>
struct is_dtype_t : std::false_type {};
template <ir::DType C, int B, class H, bool F>
struct is_dtype_t<dtype_tag<C, B, H, F>> : std::true_type {};
template <class T>
concept dtype = is_dtype_t<T>::value;

// Names as the user wrote them, for messages built at compile time.
template <dtype T>
constexpr const char* dtype_name() {
  return ir::dtype_name(T::code);
}

}  // namespace stagecraft
