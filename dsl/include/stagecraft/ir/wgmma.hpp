// wgmma (Hopper warpgroup MMA): the one description of its operands that every backend uses.
//
// The front end checks operand layouts with describe() at compile time; the verifier with the
// same function at run time; the code generator emits the descriptors encode() builds; the
// interpreter decodes those very bits with decode() and reads each operand element from
// element_address(), i.e. from the bytes the tensor core would read. A wrong descriptor, swizzle
// or alignment is then the same wrong answer on the CPU as on the GPU.
//
// Facts used (PTX ISA 8.x, "Asynchronous Warpgroup Level Matrix Shared Memory Layout" and the
// register fragment figures for .m64nNk16/.m64nNk8/.m64nNk32):
//   descriptor bits  0-13 start address >> 4, 16-29 leading byte offset >> 4,
//                    32-45 stride byte offset >> 4, 49-51 base offset, 62-63 swizzle
//                    (0 none, 1 128 B, 2 64 B, 3 32 B)
//   canonical layouts, T = 16 bytes of elements, S = swizzle width in bytes:
//     K-major,  no swizzle: core matrices of 8 rows x 16 B, contiguous (128 B);
//                           LBO = K-adjacent core matrices, SBO = M/N-adjacent ones
//     K-major,  swizzled:   rows of S bytes, 8-row groups SBO apart (LBO unused)
//     MN-major, no swizzle: core matrices of 8 K-rows x 16 B of M/N;
//                           SBO = M/N-adjacent core matrices, LBO = K-adjacent ones
//     MN-major, swizzled:   K-rows of S bytes of M/N, 8-K-row groups SBO apart,
//                           M/N-adjacent swizzle atoms LBO apart
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "stagecraft/ir/swizzle.hpp"
#include "stagecraft/ir/types.hpp"

namespace stagecraft::ir::wgmma {

// K-major: the operand's K dimension is contiguous (A stored (M, K), B stored (N, K));
// MN-major: its M or N dimension is (A stored (K, M), B stored (K, N)).
enum class Major : std::uint8_t { k, mn };

// Elements of K one instruction consumes: 32 bytes of them (k16 for 16-bit types, k8 for tf32,
// k32 for fp8).
constexpr int instr_k(int bits) { return 256 / bits; }

// The input pairs wgmma has (PTX ISA, wgmma.mma_async .atype/.btype): the same 16-bit or tf32
// type on both sides, or any two of e4m3/e5m2, or any two of s8/u8 (.s32.u8.s8 and so on).
constexpr bool input_pair(DType a, DType b) {
  if (dtype_is_fp8(a) || dtype_is_fp8(b)) return dtype_is_fp8(a) && dtype_is_fp8(b);
  if (dtype_is_int8(a) || dtype_is_int8(b)) return dtype_is_int8(a) && dtype_is_int8(b);
  return a == b && (a == DType::f16 || a == DType::bf16 || a == DType::f32);
}
// The accumulators an input type allows: f32 always; f16 for f16 and fp8 inputs; s32 for s8
// (integer products summed exactly, wrapping at 32 bits).
constexpr bool accumulator_for(DType in, DType acc) {
  if (dtype_is_int8(in)) return acc == DType::i32;
  return acc == DType::f32 || (acc == DType::f16 && (in == DType::f16 || dtype_is_fp8(in)));
}
// The N an instruction may have: a multiple of 8 up to 256; for s8, 8, 16, 24 and then multiples
// of 16 (PTX ISA, wgmma .m64nNk32 for .s8/.u8).
constexpr bool n_for(DType in, std::int64_t n) {
  if (n < 8 || n > 256 || n % 8 != 0) return false;
  return !dtype_is_int8(in) || n <= 24 || n % 16 == 0;
}

// Why a layout cannot be described, as a code the front end turns into a compile error.
enum class LayoutError : std::uint8_t {
  none,
  not_2d,            // the view is not a 2-D (rows, cols) tile
  unswizzled_plain,  // no swizzle and no core-matrix tiling: rows are not 16 bytes apart
  bad_tiling,        // a tiling that is neither the swizzle atom's rows nor core matrices
  rows_not_groups,   // the strided dimension is not a multiple of 8 rows (a core-matrix group)
  k_split,           // one instruction's K would straddle two tiles
  mn_major_type,     // MN-major (transposed) operands exist only for 16-bit types
};

constexpr const char* layout_error_text(LayoutError e) {
  // Shared by wgmma and tcgen05 (whose SMEM operands are the same canonical layouts).
  switch (e) {
    case LayoutError::none: return "";
    case LayoutError::not_2d: return "an MMA operand is a 2-D SMEM view";
    case LayoutError::unswizzled_plain:
      return "an unswizzled MMA operand must be tiled in core matrices (tiling(8, 16 bytes of elements)); "
             "or declare the buffer with swizzle(32|64|128)";
    case LayoutError::bad_tiling:
      return "the tensor cores read tiles that are whole swizzle atoms (tiling(rows, swizzle*8/bits) with rows a multiple of 64, or 8) "
             "or core matrices (tiling(8, 128/bits)) without swizzle";
    case LayoutError::rows_not_groups: return "the strided dimension of an MMA operand must be a multiple of 8";
    case LayoutError::k_split: return "one MMA instruction's K (32 bytes) would straddle two tiles";
    case LayoutError::mn_major_type:
      return "MN-major MMA operands (A read as transpose(a), or B as a (K, N) buffer rather than transpose() of an (N, K) one) "
             "must have a 16-bit type (tcgen05's kind::f8f6f4 and kind::i8 also read e4m3/e5m2 and i8/u8 MN-major; wgmma does not)";
  }
  return "?";
}

// How one operand sits in SMEM, as the descriptor describes it. Offsets are in bytes from the
// operand view's first byte. rows/cols: the view as stored (rows, cols), cols contiguous.
struct operand_layout {
  LayoutError error = LayoutError::none;
  Major major = Major::k;
  int bits = 16;
  int swizzle = 0;  // bytes
  std::int64_t rows = 0, cols = 0;
  std::int64_t lbo = 0, sbo = 0;
  // Tiled storage: (rows/tile_rows, cols/tile_cols, tile_rows, tile_cols), row-major.
  std::int64_t tile_rows = 0, tile_cols = 0;

  constexpr std::int64_t mn_extent() const { return major == Major::k ? rows : cols; }
  constexpr std::int64_t k_extent() const { return major == Major::k ? cols : rows; }
  constexpr std::int64_t tile_bytes() const { return tile_rows * tile_cols * bits / 8; }
  // Byte offset of stored element (r, c) before the swizzle is applied (the swizzle acts on
  // the absolute address, so it is applied by whoever adds the base).
  constexpr std::int64_t offset(std::int64_t r, std::int64_t c) const {
    const std::int64_t tiles_per_row = cols / tile_cols;
    const std::int64_t tile = (r / tile_rows) * tiles_per_row + c / tile_cols;
    return tile * tile_bytes() + ((r % tile_rows) * tile_cols + c % tile_cols) * bits / 8;
  }
  // Where the descriptor of the instruction covering M/N from mn0 and K from k0 starts.
  constexpr std::int64_t start(std::int64_t mn0, std::int64_t k0) const {
    return major == Major::k ? offset(mn0, k0) : offset(k0, mn0);
  }
};

// The layout of a (rows, cols) SMEM view of an allocation with the given tiling (0 rank: none)
// and swizzle, read `major`. Untiled arrays are one tile the size of the view. mn_8bit: the
// instruction also reads 8-bit operands MN-major (tcgen05's kind::f8f6f4 and kind::i8; wgmma does not), in
// the same canonical layouts, whose units are bytes.
constexpr operand_layout describe(int bits, std::int64_t rows, std::int64_t cols, int tiling_rank, std::int64_t tile_r,
                                  std::int64_t tile_c, int swizzle, Major major, bool mn_8bit = false) {
  operand_layout l;
  l.major = major;
  l.bits = bits;
  l.swizzle = swizzle;
  l.rows = rows;
  l.cols = cols;
  auto fail = [&](LayoutError e) {
    l.error = e;
    return l;
  };
  if (rows <= 0 || cols <= 0) return fail(LayoutError::not_2d);
  if (major == Major::mn && bits != 16 && !(mn_8bit && bits == 8)) return fail(LayoutError::mn_major_type);
  if (tiling_rank == 0) {
    tile_r = rows;
    tile_c = cols;
  } else if (tiling_rank != 2 || rows % tile_r != 0 || cols % tile_c != 0) {
    return fail(LayoutError::bad_tiling);
  }
  l.tile_rows = tile_r;
  l.tile_cols = tile_c;
  const std::int64_t row_bytes = tile_c * bits / 8;  // bytes of one stored row inside a tile
  const std::int64_t tiles_per_row = cols / tile_c;
  const std::int64_t k_rows = instr_k(bits);          // K of one instruction, MN-major: rows
  if (swizzle == 0) {
    if (row_bytes != 16) return fail(tiling_rank == 0 ? LayoutError::unswizzled_plain : LayoutError::bad_tiling);
    if (tile_r != 8) return fail(LayoutError::bad_tiling);
    // Core matrices are tiles; tiles along cols are adjacent (128 B), along rows a tile-row apart.
    const std::int64_t along_cols = 128, along_rows = tiles_per_row * 128;
    if (major == Major::k) {
      l.lbo = along_cols;  // K-adjacent
      l.sbo = along_rows;  // M/N-adjacent
    } else {
      l.sbo = along_cols;  // M/N-adjacent
      l.lbo = along_rows;  // K-adjacent
    }
    return l;
  }
  if (row_bytes != swizzle) return fail(LayoutError::bad_tiling);
  if (tile_r % 8 != 0) return fail(LayoutError::rows_not_groups);
  if (major == Major::k) {
    // 8-row groups must be uniformly strided over the 64 rows of an instruction (A) or all of
    // N (B): either within one tile, or one group per tile.
    if (tile_r == 8) l.sbo = tiles_per_row * 8 * swizzle;
    else if (tile_r % 64 == 0 || tile_r == rows) l.sbo = 8 * swizzle;
    else return fail(LayoutError::bad_tiling);
    l.lbo = 16;  // unused by swizzled K-major layouts; 1 (in 16-byte units) as is customary
  } else {
    if (tile_r % k_rows != 0) return fail(LayoutError::k_split);
    l.sbo = 8 * swizzle;                           // 8-K-row groups inside a tile
    l.lbo = tile_r * swizzle;                      // the next swizzle atom along M/N: the next tile
  }
  return l;
}

// ---- the 64-bit matrix descriptor ------------------------------------------------------------
struct descriptor {
  std::uint32_t start = 0;  // shared-window byte address
  std::uint32_t lbo = 0, sbo = 0;
  int base_offset = 0;
  int swizzle = 0;  // bytes
};

constexpr int swizzle_mode(int bytes) { return bytes == 128 ? 1 : bytes == 64 ? 2 : bytes == 32 ? 3 : 0; }
constexpr int swizzle_bytes(int mode) { return mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 0; }

constexpr std::uint64_t encode(descriptor const& d) {
  return (std::uint64_t{(d.start >> 4) & 0x3FFFu}) | (std::uint64_t{(d.lbo >> 4) & 0x3FFFu} << 16) |
         (std::uint64_t{(d.sbo >> 4) & 0x3FFFu} << 32) | (std::uint64_t(d.base_offset & 7) << 49) |
         (std::uint64_t(swizzle_mode(d.swizzle)) << 62);
}
constexpr descriptor decode(std::uint64_t bits) {
  descriptor d;
  d.start = static_cast<std::uint32_t>(bits & 0x3FFFu) << 4;
  d.lbo = static_cast<std::uint32_t>((bits >> 16) & 0x3FFFu) << 4;
  d.sbo = static_cast<std::uint32_t>((bits >> 32) & 0x3FFFu) << 4;
  d.base_offset = static_cast<int>((bits >> 49) & 7);
  d.swizzle = swizzle_bytes(static_cast<int>((bits >> 62) & 3));
  return d;
}
// The descriptor of an operand starting at shared-window address `addr`.
constexpr std::uint64_t encode(std::uint32_t addr, operand_layout const& l) {
  return encode(descriptor{addr, static_cast<std::uint32_t>(l.lbo), static_cast<std::uint32_t>(l.sbo), 0, l.swizzle});
}
// The constant part the generated code ORs the run-time address into.
constexpr std::uint64_t descriptor_constant(operand_layout const& l) { return encode(0, l); }
// What an instruction's start offset adds to its operand's descriptor: encode(addr + offset, l)
// == encode(addr, l) + descriptor_step(offset) when addr and offset are multiples of 16 (every
// operand and step is) and addr + offset < 256 KiB, the start field's reach (SMEM is 228 KiB),
// so the 14-bit field never carries into the next. Both backends' descriptors obey it (tcgen05's
// start field is the same).
constexpr std::uint64_t descriptor_step(std::int64_t offset) { return static_cast<std::uint64_t>(offset) >> 4; }

// The shared-window address the tensor core reads for element (mn, k) of one instruction's
// operand (mn < 64 for A, < N for B; k < instr_k), given the descriptor it was issued with.
// Elements are `bits` wide; this is the canonical layout the descriptor denotes, swizzled.
constexpr std::uint32_t element_address(descriptor const& d, Major major, int bits, std::int64_t mn, std::int64_t k) {
  const std::int64_t eb = bits / 8;
  std::int64_t a = d.start;
  if (major == Major::k) {
    const std::int64_t kb = k * eb;
    if (d.swizzle == 0) a += (mn / 8) * d.sbo + (mn % 8) * 16 + (kb / 16) * d.lbo + kb % 16;
    else a += (mn / 8) * d.sbo + (mn % 8) * d.swizzle + kb;
  } else {
    const std::int64_t mb = mn * eb;
    if (d.swizzle == 0) a += (mb / 16) * d.sbo + mb % 16 + (k % 8) * 16 + (k / 8) * d.lbo;
    else a += (mb / d.swizzle) * d.lbo + mb % d.swizzle + (k % 8) * d.swizzle + (k / 8) * d.sbo;
  }
  return swizzle_address(static_cast<std::uint32_t>(a), d.swizzle);
}

// ---- register fragments (per thread of the warpgroup) ------------------------------------------
// As one token sequence, like the swizzle: the NVRTC prelude stringifies it, so the coordinates
// the generated code computes on the GPU are these functions, which the interpreter and the unit
// tests (against the PTX ISA's figures) evaluate on the host.
//   D of .m64nN (f32 or f16 accumulators): thread t holds N/2 elements; element i is at
//     (16 * warp + lane / 4 + 8 * (i / 2 % 2), 8 * (i / 4) + 2 * (lane % 4) + i % 2).
//   A of .m64nNk16 from registers (16-bit types): 8 elements (4 registers of 2) per thread;
//     element i is at (16 * warp + lane / 4 + 8 * (i / 2 % 2), 2 * (lane % 4) + i % 2 + 8 * (i / 4)).
//   A of .m64nNk32 from registers (8-bit types): 16 elements (4 registers of 4 bytes) per thread;
//     element i (register i / 4, byte i % 4) is at
//     (16 * warp + lane / 4 + 8 * (i / 4 % 2), 4 * (lane % 4) + i % 4 + 16 * (i / 8)).
#define STAGECRAFT_WGMMA_FRAGMENT_FN(QUALIFIERS)                                      \
  struct coord {                                                                      \
    int row, col;                                                                     \
  };                                                                                  \
  QUALIFIERS coord accumulator_element(int thread, int i) {                           \
    const int warp = thread / 32, lane = thread % 32;                                 \
    return {16 * warp + lane / 4 + 8 * (i / 2 % 2), 8 * (i / 4) + 2 * (lane % 4) + i % 2}; \
  }                                                                                   \
  QUALIFIERS coord a_element(int thread, int i) {                                     \
    const int warp = thread / 32, lane = thread % 32;                                 \
    return {16 * warp + lane / 4 + 8 * (i / 2 % 2), 2 * (lane % 4) + i % 2 + 8 * (i / 4)}; \
  }                                                                                   \
  QUALIFIERS coord a_element8(int thread, int i) {                                    \
    const int warp = thread / 32, lane = thread % 32;                                 \
    return {16 * warp + lane / 4 + 8 * (i / 4 % 2), 4 * (lane % 4) + i % 4 + 16 * (i / 8)}; \
  }

STAGECRAFT_WGMMA_FRAGMENT_FN(constexpr inline)

}  // namespace stagecraft::ir::wgmma

namespace stagecraft::ir {
struct Kernel;
struct Stmt;
}

namespace stagecraft::ir::wgmma {

// ---- what the tensor cores compute ----------------------------------------------------------
// One rule for the interpreter's engines (wgmma and tcgen05) and the host backend's runtime, so
// that they agree bit for bit. Per instruction, the ik products of an output element are summed
// exactly in double (bf16/f16/fp8/s8 products are exact there, tf32 ones too), then added to D
// with one rounding.
//
// The value the tensor core multiplies for an operand element of type t stored at p:
// bf16/f16/e4m3/e5m2/s8/u8 as they are, f32 as tf32 (its low 13 mantissa bits are not read).
float operand_value(DType t, std::byte const* p);
// d (one element of D, of type acc) += sum: f32 and f16 with one rounding in their own type,
// s32 wrapping at 32 bits (s8 products sum to an exact integer).
void accumulate_f16(std::uint16_t* d, double sum);
inline void accumulate(DType acc, void* d, double sum) {
  if (acc == DType::f32) {
    float* f = static_cast<float*>(d);
    *f = static_cast<float>(static_cast<double>(*f) + sum);
  } else if (acc == DType::i32) {
    auto* i = static_cast<std::int32_t*>(d);
    *i = static_cast<std::int32_t>(static_cast<std::uint32_t>(*i) + static_cast<std::uint32_t>(static_cast<std::int64_t>(sum)));
  } else {
    accumulate_f16(static_cast<std::uint16_t*>(d), sum);
  }
}

// One wgmma statement as the instructions it issues: M/64 x K/instr_k of them, each
// m64nNk<instr_k>. Built from a verified kernel; both backends iterate over it.
struct plan {
  // A and B have one type, except e4m3 and e5m2, which pair freely (kind .e4m3.e5m2 etc.).
  DType a_type = DType::bf16, b_type = DType::bf16, acc = DType::f32;
  std::int64_t m = 0, n = 0, k = 0;
  int ik = 16;
  bool a_in_registers = false;
  operand_layout a, b;  // a unused when A comes from registers
  std::int64_t m_blocks() const { return m / 64; }
  std::int64_t k_steps() const { return k / ik; }
  // Byte offsets (from the operand view's first byte) where instruction (mb, ks) reads.
  std::int64_t a_start(std::int64_t mb, std::int64_t ks) const { return a.start(64 * mb, ks * ik); }
  std::int64_t b_start(std::int64_t ks) const { return b.start(0, ks * ik); }
  // "m64n256k16.f32.bf16.bf16", "m64n128k32.f32.e4m3.e5m2"
  std::string shape_suffix() const;
};

// An SMEM operand of statement `id` as the tensor core reads it: the (rows, cols) of the
// allocation's two trailing dimensions (the ref fixes the others) and their layout read `major`.
// Throws VerifyError "kernel 'k': op #id (op): role ..." when the layout cannot be described.
// Shared by wgmma and tcgen05 (ir/tcgen05.hpp), whose SMEM operands are the same canonical layouts.
struct smem_operand {
  DType dtype;
  std::int64_t rows = 0, cols = 0;
  operand_layout layout;
};
smem_operand smem_operand_of(Kernel const& k, std::int32_t id, std::int32_t rid, Major major, const char* op, const char* role,
                             bool mn_8bit = false);

// The plan of wgmma statement `s` of `k`; throws VerifyError naming the kernel and op when an
// operand layout cannot be described (IR built by hand: the front end rejects these).
plan plan_of(Kernel const& k, Stmt const& s);

}  // namespace stagecraft::ir::wgmma
