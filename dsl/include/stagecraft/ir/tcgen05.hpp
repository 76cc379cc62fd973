// tcgen05 (Blackwell 5th-generation tensor cores): the one description of an MMA that every
// backend uses, as ir/wgmma.hpp is for Hopper.
//
// The verifier builds a plan with plan_of(); the code generator would emit the 32-bit
// instruction descriptor plan::idesc and the SMEM descriptors encode_smem() builds; the
// interpreter decodes those very bits (decode_idesc, decode_smem) and reads each operand
// element from ir::wgmma::element_address(), i.e. from the bytes the tensor core would read.
// A wrong descriptor is then the same wrong answer on the CPU as on the GPU.
//
// Facts used, as read (PTX ISA 9.x, section 9.7.16.4 "Matrix descriptors"; the same fields as
// CUTLASS's cute::UMMA::InstrDescriptor and Mojo's gpu.mma_sm100.MMASmemDescriptor):
//   instruction descriptor, .kind::f16, .kind::tf32, .kind::f8f6f4 and .kind::i8 (Table
//     "Instruction descriptor format for .kind::tf32, .kind::f16, .kind::f8f6f4 and .kind::i8"):
//     bits 0-1 sparsity selector, 2 sparsity (dense 0), 3 saturate (kind::i8 only),
//     4-5 D type (F16 0, F32 1, S32 2), 6 reserved, 7-9 A type, 10-12 B type
//     (kind::f16: F16 0, BF16 1; kind::tf32: TF32 2; kind::f8f6f4: E4M3 0, E5M2 1, E2M3 3,
//     E3M2 4, E2M1 5; kind::i8: unsigned 8-bit 0, signed 8-bit 1; A and B chosen
//     independently under f8f6f4 and i8), 13 negate A, 14 negate B (not for kind::i8),
//     15 transpose A, 16 transpose B (0: K-major, 1: M/N-major), 17-22 N >> 3, 23 reserved,
//     24-28 M >> 4, 29 reserved, 30-31 maximum shift (.ws only, 0 otherwise).
//   kind::f8f6f4 with 8-bit operands: K = 32 per instruction (32 bytes, as k16 for 16-bit
//     types); the same M and N as kind::f16; transpose is allowed for A and B ("Transpose and
//     Negate operations": yes for f8f6f4, except with the 128 B swizzle of 32 B atoms, which
//     nothing here uses), but an 8-bit B read MN-major needs N a multiple of 16 in [16, 256]
//     with cta_group::1 and of 32 in [32, 256] with cta_group::2 (the table of N shapes for
//     "8bit transpose B"; every describable layout of such a B meets it).
//   kind::f8f6f4 with 6-bit operands (E2M3 3, E3M2 4; PTX ISA "Packing formats used for matrices
//     A and B by .kind::f8f6f4" in SMEM, and the CUDA driver's CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B,
//     which fills that format from packed GMEM): in SMEM 16 elements a 16-byte unit, packed in its
//     first 12 bytes, so K = 32 per instruction reads 32 bytes of footprint and every descriptor is
//     an 8-bit operand's (ir/types.hpp, DType). Any two of E4M3, E5M2, E2M3, E3M2 and E2M1 pair.
//     Read K-major only here (whether M/N-major units transpose is not checked against the ISA).
//   kind::f8f6f4 with 4-bit operands (E2M1 5): the same 16-byte units, 16 elements packed in their
//     first 8 bytes (TMA's CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B), a byte of footprint each: the
//     dtype e2m1, not kind::mxf4's e2m1x2 (two a byte, densely).
//   kind::i8 (s8/u8 into s32, sm_100a): K = 32 per instruction, as f8f6f4's 8-bit operands,
//     the same M and N as kind::f16, transposed operands allowed (CUTLASS's UMMA descriptor notes
//     MN-major for INT8 as for E4M3/E5M2); D's elements are 32-bit columns, s32 wrapping (no
//     saturation: bit 3 stays 0).
//   SMEM matrix descriptor ("Shared memory descriptor"): bits 0-13 start >> 4, 16-29 LBO >> 4,
//     32-45 SBO >> 4, 46-48 fixed 0b001 (the sm_100 version), 49-51 base offset, 52 LBO mode
//     (0 relative; 1 absolute, 48-byte K tiles only), 53-60 zero, 61-63 swizzle
//     (0 none, 1 128 B with 32 B atoms, 2 128 B, 4 64 B, 6 32 B).
//   The canonical layouts the descriptor denotes are wgmma's (ir/wgmma.hpp). And the 3-bit
//   swizzle field at 61-63 holding 2/4/6 is wgmma's 2-bit field at 62-63 holding 1/2/3, bit for
//   bit: an sm_100 descriptor is wgmma's with the version bit 46 set, which is how it is built.
//   TMEM addresses: bits 31-16 lane, 15-0 column (32-bit columns).
//   D of cta_group::1, M = 128 ("Data path layout organization", layout D): row i of D is TMEM
//     lane i, column j is the column at the address's column + j (f32: one column each).
//   D of cta_group::2, M = 256 (layout A of the same section): rows 0-127 are lanes 0-127 of the
//     even CTA of the pair, rows 128-255 lanes 0-127 of the odd one; A is split the same way, and
//     B by columns: N / 2 in each CTA ("each CTA provides (K, N / 2)"). The commit that tracks
//     them is tcgen05.commit.cta_group::2...multicast::cluster with a mask naming both CTAs.
//   tcgen05.ld.32x32b.xN: thread t of the warpgroup (warp w = t / 32) reads lane 32 w + t % 32,
//     register r holds column r; a warp reaches only its own 32-lane sub-partition.
//     tcgen05.st.32x32b.xN is the same map written the other way; tcgen05.wait::st makes the
//     issuing thread wait for its stores, and, as for any tcgen05 op, another thread's (or the
//     tensor core's) later use is ordered by wait::st, fence::before_thread_sync, a thread
//     barrier and fence::after_thread_sync (the ISA's tcgen05 memory-consistency rules).
//   A from TMEM, the [a_tmem] form of tcgen05.mma (".kind::f16 / .kind::tf32 [d], [a], b_desc,
//     idesc, p"; CUTLASS's SM100_MMA_F16BF16_TS / SM100_MMA_TF32_TS): A must be K-major
//     (transpose A, idesc bit 15, is 0); with M = 128, row i of A is TMEM lane i and its K
//     elements lie packed along the 32-bit columns from the address's column, 32 / bits per
//     column, the lower K index in the lower bits (bf16: k = 2c in bits 0-15, 2c + 1 in 16-31).
//     One instruction reads K = 256 / bits elements: 8 columns, whatever the kind.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stagecraft/ir/types.hpp"
#include "stagecraft/ir/wgmma.hpp"

namespace stagecraft::ir::tcgen05 {

using wgmma::Major;

// The MMA kinds modelled: into f32, 16-bit inputs, tf32 (f32 in SMEM) and fp8 (e4m3 and e5m2, in
// any pairing: kind::f8f6f4); into s32, 8-bit integers (s8 and u8, in any pairing: kind::i8).
// The block-scaled kinds (tcgen05_mma with block_scale(...)), each product scaled by a scale of
// A's row and one of B's column per block of K, the scales read from TMEM (the block-scaled
// section below): mxf8f6f4, e4m3/e5m2 operands with a ue8m0 scale per 32 of K; mxf4, packed e2m1
// (e2m1x2) with a ue8m0 scale per 32 of K (MXFP4); mxf4nvf4, e2m1x2 with a ue4m3 scale per 16 of
// K (NVFP4).
enum class Kind : std::uint8_t { f16, tf32, f8f6f4, i8, mxf8f6f4, mxf4, mxf4nvf4 };
constexpr const char* kind_name(Kind k) {
  switch (k) {
    case Kind::f16: return "kind::f16";
    case Kind::tf32: return "kind::tf32";
    case Kind::f8f6f4: return "kind::f8f6f4";
    case Kind::i8: return "kind::i8";
    case Kind::mxf8f6f4: return "kind::mxf8f6f4";
    case Kind::mxf4: return "kind::mxf4";
    case Kind::mxf4nvf4: return "kind::mxf4nvf4";
  }
  return "kind::?";
}
constexpr bool kind_scaled(Kind k) { return k == Kind::mxf8f6f4 || k == Kind::mxf4 || k == Kind::mxf4nvf4; }
// The kind that takes operands of type t (t's pairing with the other operand is checked apart).
constexpr Kind kind_of(DType t) {
  return t == DType::f32 ? Kind::tf32 : dtype_is_f8f6f4(t) ? Kind::f8f6f4 : dtype_is_int8(t) ? Kind::i8 : Kind::f16;
}
// The kinds whose A and B formats are chosen independently (e4m3 x e5m2, u8 x s8).
constexpr bool kind_mixes(Kind k) { return k == Kind::f8f6f4 || k == Kind::i8 || k == Kind::mxf8f6f4; }
// What a kind accumulates into: s32 for kind::i8, f32 for the others (f16 D is not modelled).
constexpr DType kind_accumulator(Kind k) { return k == Kind::i8 ? DType::i32 : DType::f32; }

// ---- the 32-bit instruction descriptor -------------------------------------------------------
struct instr_desc {
  int sparsity_selector = 0;
  bool sparse = false;
  bool saturate = false;
  int d_format = 1;  // F32
  int a_format = 1, b_format = 1;  // BF16 (kind::f16)
  bool negate_a = false, negate_b = false;
  Major a_major = Major::k, b_major = Major::k;
  int n = 0, m = 0;
  int max_shift = 0;
};

// The fields both descriptor layouts (this one and the block-scaled one below) keep at the same
// bits: the sparsity flag 2, A and B types 7-12, negation 13-14, transposes 15-16, N >> 3 at 17-22.
template <class D>
constexpr std::uint32_t encode_shared(D const& d) {
  return (std::uint32_t{d.sparse} << 2) | ((static_cast<std::uint32_t>(d.a_format) & 7u) << 7) | ((static_cast<std::uint32_t>(d.b_format) & 7u) << 10) |
         (std::uint32_t{d.negate_a} << 13) | (std::uint32_t{d.negate_b} << 14) | (std::uint32_t{d.a_major == Major::mn} << 15) |
         (std::uint32_t{d.b_major == Major::mn} << 16) | ((static_cast<std::uint32_t>(d.n >> 3) & 0x3Fu) << 17);
}
template <class D>
constexpr void decode_shared(std::uint32_t b, D& d) {
  d.sparse = (b >> 2) & 1u;
  d.a_format = static_cast<int>((b >> 7) & 7u);
  d.b_format = static_cast<int>((b >> 10) & 7u);
  d.negate_a = (b >> 13) & 1u;
  d.negate_b = (b >> 14) & 1u;
  d.a_major = ((b >> 15) & 1u) ? Major::mn : Major::k;
  d.b_major = ((b >> 16) & 1u) ? Major::mn : Major::k;
  d.n = static_cast<int>((b >> 17) & 0x3Fu) << 3;
}

constexpr std::uint32_t encode(instr_desc const& d) {
  return encode_shared(d) | (static_cast<std::uint32_t>(d.sparsity_selector) & 3u) | (std::uint32_t{d.saturate} << 3) |
         ((static_cast<std::uint32_t>(d.d_format) & 3u) << 4) | ((static_cast<std::uint32_t>(d.m >> 4) & 0x1Fu) << 24) |
         ((static_cast<std::uint32_t>(d.max_shift) & 3u) << 30);
}
constexpr instr_desc decode(std::uint32_t b) {
  instr_desc d;
  decode_shared(b, d);
  d.sparsity_selector = static_cast<int>(b & 3u);
  d.saturate = (b >> 3) & 1u;
  d.d_format = static_cast<int>((b >> 4) & 3u);
  d.m = static_cast<int>((b >> 24) & 0x1Fu) << 4;
  d.max_shift = static_cast<int>((b >> 30) & 3u);
  return d;
}
// Bits the table marks reserved (6, 23, 29): a descriptor with any set is malformed.
constexpr std::uint32_t reserved_bits = (1u << 6) | (1u << 23) | (1u << 29);

// Operand and accumulator type codes of the kinds modelled; -1: the kind has no such type.
constexpr int ab_format(Kind k, DType t) {
  if (k == Kind::tf32) return t == DType::f32 ? 2 : -1;
  if (k == Kind::f8f6f4 || k == Kind::mxf8f6f4)
    return t == DType::e4m3 ? 0 : t == DType::e5m2 ? 1 : t == DType::e2m3 ? 3 : t == DType::e3m2 ? 4 : t == DType::e2m1 ? 5 : -1;
  if (k == Kind::mxf4 || k == Kind::mxf4nvf4) return t == DType::e2m1x2 ? 1 : -1;  // packed E2M1 (CUTLASS's MXF4Format)
  if (k == Kind::i8) return t == DType::u8 ? 0 : t == DType::i8 ? 1 : -1;
  return t == DType::f16 ? 0 : t == DType::bf16 ? 1 : -1;
}
constexpr int d_format(DType t) { return t == DType::f32 ? 1 : t == DType::f16 ? 0 : t == DType::i32 ? 2 : -1; }
// What the tensor core reads a format code of `k` as: the DType the interpreter converts from.
// false: the code is not one of the kind's.
constexpr bool ab_type(Kind k, int format, DType& out) {
  if (k == Kind::tf32) {
    if (format != 2) return false;
    out = DType::f32;
    return true;
  }
  if (k == Kind::mxf4 || k == Kind::mxf4nvf4) {
    if (format != 1) return false;
    out = DType::e2m1x2;
    return true;
  }
  if (k == Kind::f8f6f4 || k == Kind::mxf8f6f4) {
    switch (format) {  // 2, 6 and 7 are no formats of the kind
      case 0: out = DType::e4m3; return true;
      case 1: out = DType::e5m2; return true;
      case 3: out = DType::e2m3; return true;
      case 4: out = DType::e3m2; return true;
      case 5: out = DType::e2m1; return true;
      default: return false;
    }
  }
  if (format != 0 && format != 1) return false;
  if (k == Kind::i8) out = format == 0 ? DType::u8 : DType::i8;
  else out = format == 0 ? DType::f16 : DType::bf16;
  return true;
}
// Whether an instruction descriptor's formats are an MMA of kind k: A and B codes of the kind
// (one type for both unless the kind mixes them) and D the kind's accumulator. The interpreter
// and the host backend read the operand types from it.
constexpr bool formats_of(Kind k, instr_desc const& id, DType& a, DType& b) {
  return ab_type(k, id.a_format, a) && ab_type(k, id.b_format, b) && (a == b || kind_mixes(k)) && id.d_format == d_format(kind_accumulator(k));
}

// ---- block scaling: kind::mxf8f6f4, kind::mxf4, kind::mxf4nvf4 with .block_scale -----------
// Facts used, as read (PTX ISA 9.x, 9.7.16.4.2 "Instruction descriptor format for
// .kind::mxf8f6f4, .kind::mxf4 and .kind::mxf4nvf4"; 9.7.16.10.9 tcgen05.mma's block_scale form;
// 9.7.16.8.3 tcgen05.cp; the scale-factor layouts of "Matrix fragments for tcgen05.mma
// block_scale"; cross-checked with CUTLASS's InstrDescriptorBlockScaled and its sm100 block-scaled
// GEMM, which copies each 128-row block of scales with tcgen05.cp 32x128b.warpx4):
//   instruction descriptor: bits 0-1 reserved, 2 sparsity, 3 reserved, 4-5 scale-factor B ID,
//     6 reserved, 7-9 A type, 10-12 B type (E4M3 0, E5M2 1, as f8f6f4), 13 negate A, 14 negate
//     B, 15 transpose A, 16 transpose B, 17-22 N >> 3, 23 scale type (1 UE8M0, 0 UE4M3), 24-26
//     reserved, 27-28 M >> 7, 29-30 scale-factor A ID, 31 reserved. No D type: D is f32.
//   tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 [d], adesc, bdesc, idesc,
//     [sfa], [sfb], enable_input_d: K = 32 per instruction, one ue8m0 scale per row of A and per
//     column of B (.block32 is .scale_vec::1X). The product of element k of A's row i and B's
//     column j is a_ik * sfa_i * b_kj * sfb_j.
//   Where the scales lie (M = 128): A's row i at TMEM lane i, column sfa + i / 32, byte ID_A of
//     that 32-bit cell; B's column j at lane j % 32 (of every lane quarter), column sfb + j / 32,
//     byte ID_B. So one cell holds four K blocks of 32 of one row: the four instructions of a
//     128-deep K slice use one address and the IDs 0, 1, 2, 3. The ISA requires the scales to be
//     replicated in the four 32-lane quarters, which is what tcgen05.cp ... warpx4 writes.
//   tcgen05.cp.cta_group::1.32x128b.warpx4 [taddr], sdesc: 32 rows of 16 bytes from SMEM (the
//     sm_100 matrix descriptor, no swizzle: row r at start + (r / 8) * SBO + (r % 8) * 16) into
//     columns taddr .. taddr + 3 of lanes r, r + 32, r + 64 and r + 96, byte b of the row in
//     byte b % 4 of column b / 4. So the 512-byte block whose byte (i % 32) * 16 + (i / 32) * 4 + kb
//     is the scale of row i for K block kb (the layout cuBLASLt and CUTLASS keep scales in, 128 x 4
//     blocks) lands exactly where the MMA reads it.
//   FP4 (kind::mxf4.block_scale.block32, kind::mxf4nvf4.block_scale.block16; CUTLASS's
//     MXF4Format, MmaMXF4NVF4Op): A and B packed e2m1, two a byte (PTX's "dense" FP4 in SMEM,
//     unlike kind::f8f6f4's E2M1, one a byte), type code 1 (E2M1) in bits 7-9 and 10-12, K-major
//     only (transpose A/B is for E4M3, E5M2, INT8 and the 16/32-bit types). K = 64 per
//     instruction: 32 bytes, the same bytes an fp8 instruction reads, so the SMEM descriptors and
//     their steps are fp8's. Bit 31 (K96 under kind::mxf4) stays 0. Scales per instruction
//     (.scale_vec): 2 ue8m0 for .block32 (IDs 0 or 2: bytes ID and ID + 1 of each cell, the
//     instruction's first and second 32 of K), 4 ue4m3 for .block16 (ID 0, the whole cell: its
//     four 16s of K). A cell holds 4 scales of a row, so an instruction past the first cell reads
//     the next cell: the scale operand's column + 4 per cell (one tcgen05.cp block, 4 columns,
//     per cell). kind::mxf8f6f4 is the same rule with 1 scale an instruction.
//   Ordering: tcgen05.cp then tcgen05.mma from one thread execute in issue order (a pipelined
//     pair); tcgen05.mma then tcgen05.cp is not such a pair, so overwriting scales an earlier
//     MMA may still read needs that MMA's commit waited for. tcgen05.commit tracks copies as it
//     tracks MMAs.
struct tmem_coord_byte {
  int lane, column, byte;
};
struct scaled_desc {
  bool sparse = false;
  int sfb_id = 0, sfa_id = 0;  // byte of the 32-bit scale cell (0-3 for block32)
  int a_format = 0, b_format = 0;
  bool negate_a = false, negate_b = false;
  Major a_major = Major::k, b_major = Major::k;
  int n = 0, m = 0;
  bool ue8m0 = true;
};
constexpr std::uint32_t encode(scaled_desc const& d) {
  return encode_shared(d) | ((static_cast<std::uint32_t>(d.sfb_id) & 3u) << 4) | (std::uint32_t{d.ue8m0} << 23) |
         ((static_cast<std::uint32_t>(d.m >> 7) & 3u) << 27) | ((static_cast<std::uint32_t>(d.sfa_id) & 3u) << 29);
}
constexpr scaled_desc decode_scaled(std::uint32_t b) {
  scaled_desc d;
  decode_shared(b, d);
  d.sfb_id = static_cast<int>((b >> 4) & 3u);
  d.ue8m0 = (b >> 23) & 1u;
  d.m = static_cast<int>((b >> 27) & 3u) << 7;
  d.sfa_id = static_cast<int>((b >> 29) & 3u);
  return d;
}
// Either layout's fields in the unscaled one's struct (a block-scaled D is F32: the layout has
// no D type field): what the interpreter's engine and the host backend check and read.
constexpr instr_desc decode_mma(std::uint32_t bits, bool scaled) {
  if (!scaled) return decode(bits);
  const scaled_desc sd = decode_scaled(bits);
  instr_desc d;
  d.sparse = sd.sparse;
  d.a_format = sd.a_format, d.b_format = sd.b_format;
  d.negate_a = sd.negate_a, d.negate_b = sd.negate_b;
  d.a_major = sd.a_major, d.b_major = sd.b_major;
  d.n = sd.n, d.m = sd.m;
  d.d_format = 1;  // F32
  return d;
}
constexpr std::uint32_t scaled_reserved_bits = 3u | (1u << 3) | (1u << 6) | (7u << 24) | (1u << 31);
// Elements of K one scale covers (block32, or block16 for kind::mxf4nvf4) and scales per
// instruction (.scale_vec::1X, 2X, 4X).
constexpr int scale_block_of(Kind k) { return k == Kind::mxf4nvf4 ? 16 : 32; }
constexpr int scale_vec_of(Kind k) { return k == Kind::mxf4 ? 2 : k == Kind::mxf4nvf4 ? 4 : 1; }
// Values of K in one tensor element: 2 for packed e2m1, 1 for the others.
constexpr int values_per_element(DType t) { return t == DType::e2m1x2 ? 2 : 1; }
// Instruction ks of a statement reads the scale cell group ks * v / 4 (4 columns a group, one
// tcgen05.cp block) from its byte ID (ks * v) % 4 on.
constexpr int scale_group_columns = 4;
constexpr std::int64_t scale_group(std::int64_t ks, int vec) { return ks * vec / 4; }
constexpr int scale_id(std::int64_t ks, int vec) { return static_cast<int>((ks * vec) % 4); }
// The IDs a scale vector may start at: any byte (1X), 0 or 2 (2X), 0 (4X).
constexpr bool scale_id_ok(int id, int vec) { return id % vec == 0; }
// The b-th scale (of scale_vec_of(k)) of A's row i (B's column j), relative to the instruction's
// scale address: lane, 32-bit column and byte (the descriptor's ID, plus b).
constexpr tmem_coord_byte scale_at(int row, int id, int b = 0) { return {row, row / 32, id + b}; }
// tcgen05.cp 32x128b.warpx4: the SMEM byte offset (from the descriptor's start) of byte b of row r.
constexpr std::uint32_t cp_32x128b_offset(std::uint32_t sbo, int row, int byte) {
  return static_cast<std::uint32_t>(row / 8) * sbo + static_cast<std::uint32_t>(row % 8) * 16u + static_cast<std::uint32_t>(byte);
}
constexpr std::uint32_t cp_sbo = 128;  // 8 rows of 16 bytes: the 512-byte block is contiguous
constexpr int cp_rows = 32, cp_row_bytes = 16, cp_columns = 4;

// ---- the 64-bit SMEM matrix descriptor (sm_100) ----------------------------------------------
constexpr std::uint64_t version_bits = std::uint64_t{1} << 46;

constexpr std::uint64_t encode_smem(wgmma::descriptor const& d) { return wgmma::encode(d) | version_bits; }
constexpr std::uint64_t encode_smem(std::uint32_t addr, wgmma::operand_layout const& l) { return wgmma::encode(addr, l) | version_bits; }
// The SMEM descriptor of a 512-byte scale block at shared address addr (tcgen05.cp 32x128b).
constexpr std::uint64_t encode_cp_smem(std::uint32_t addr) { return encode_smem(wgmma::descriptor{.start = addr, .lbo = 0, .sbo = cp_sbo}); }

// Why a descriptor's bits do not describe a canonical layout the tensor core reads.
enum class SmemDescError : std::uint8_t { none, version, lbo_absolute, swizzle_mode, reserved };
constexpr const char* smem_desc_error_text(SmemDescError e) {
  switch (e) {
    case SmemDescError::none: return "";
    case SmemDescError::version: return "bits 46-48 must hold the sm_100 descriptor version 0b001 (a Hopper wgmma descriptor?)";
    case SmemDescError::lbo_absolute: return "bit 52 selects the absolute leading-dimension mode, which only 48-byte K tiles use";
    case SmemDescError::swizzle_mode: return "bits 61-63 hold a swizzle mode other than none, 128 B, 64 B or 32 B";
    case SmemDescError::reserved: return "bits 14-15, 30-31 or 53-60 must be zero";
  }
  return "?";
}
struct smem_desc {
  wgmma::descriptor d;
  SmemDescError error = SmemDescError::none;
};
constexpr smem_desc decode_smem(std::uint64_t bits) {
  smem_desc s{wgmma::decode(bits), SmemDescError::none};
  const auto mode = (bits >> 61) & 7u;
  if (((bits >> 46) & 7u) != 1u) s.error = SmemDescError::version;
  else if ((bits >> 52) & 1u) s.error = SmemDescError::lbo_absolute;
  else if (mode != 0 && mode != 2 && mode != 4 && mode != 6) s.error = SmemDescError::swizzle_mode;
  else if (bits & ((std::uint64_t{3} << 14) | (std::uint64_t{3} << 30) | (std::uint64_t{0xFF} << 53))) s.error = SmemDescError::reserved;
  return s;
}

// ---- TMEM addresses and the tcgen05.ld 32x32b data path -----------------------------------------
constexpr std::uint32_t tmem_address(std::uint32_t lane, std::uint32_t column) { return (lane << 16) | (column & 0xFFFFu); }
constexpr std::uint32_t tmem_lane(std::uint32_t addr) { return addr >> 16; }
constexpr std::uint32_t tmem_column(std::uint32_t addr) { return addr & 0xFFFFu; }

struct tmem_coord {
  int lane, column;
};
// Where register r of thread t (0..127 of the warpgroup) comes from when each warp w loads D
// with tcgen05.ld.32x32b at lane 32 w of D's address: TMEM lane and column relative to D.
constexpr tmem_coord ld_32x32b(int thread, int reg) { return {32 * (thread / 32) + thread % 32, reg}; }

}  // namespace stagecraft::ir::tcgen05

namespace stagecraft::ir {
struct Kernel;
struct Stmt;
}

namespace stagecraft::ir::tcgen05 {

// One tcgen05_mma statement as the instructions it issues: K / ik of them, each
// tcgen05.mma.cta_group::<cta_group>.<kind> with the statement's M and N, chained on D in TMEM.
// cta_group 1: M = 128, this CTA's A (M, K) and B (K, N). cta_group 2 (the pair, issued by the
// even CTA): M = 256; each CTA holds A's 128 rows of its own and N / 2 of B's columns (CTA 0 the
// first half) at the same SMEM offsets, which is why one pair of SMEM descriptors serves both,
// and receives its 128 rows of D, the whole N, in its own TMEM at the same address. `a` and `b`
// describe one CTA's part.
struct plan {
  int cta_group = 1;
  Kind kind = Kind::f16;
  // A and B have one type, except under kind::f8f6f4 (e4m3 and e5m2) and kind::i8 (s8 and u8),
  // whose formats pair freely. d: f32, or i32 for kind::i8.
  DType a_type = DType::bf16, b_type = DType::bf16, d = DType::f32;
  std::int64_t m = 0, n = 0, k = 0;
  int ik = 16;
  wgmma::operand_layout a, b;  // a: unused when A is in TMEM
  // A from TMEM (the [a_tmem] form): instruction ks reads 8 columns from a_column(ks) on,
  // relative to A's first column. cta_group::1, kind::f16 or kind::tf32 only (plan_of).
  bool a_tmem = false;
  std::int64_t a_column(std::int64_t ks) const { return ks * ik * dtype_bits(a_type) / 32; }
  std::uint32_t idesc = 0;  // the instruction descriptor every instruction of the statement takes
  // Block-scaled (kind_scaled(kind)): instruction ks reads scale_vec scales from byte
  // scale_id(ks) of cell group scale_group(ks) (the ID in its descriptor, the group a column
  // offset of its scale addresses); the scales' TMEM addresses are the statement's sfa and sfb.
  bool scaled = false;
  int scale_vec = 1;
  std::uint32_t idesc_at(std::int64_t ks) const {
    const auto id = static_cast<std::uint32_t>(scale_id(ks, scale_vec));
    return scaled ? idesc | id << 29 | id << 4 : idesc;
  }
  std::int64_t scale_column(std::int64_t ks) const { return scaled ? scale_group(ks, scale_vec) * scale_group_columns : 0; }
  std::int64_t k_steps() const { return k / ik; }
  std::int64_t a_start(std::int64_t ks) const { return a.start(0, ks * ik); }
  std::int64_t b_start(std::int64_t ks) const { return b.start(0, ks * ik); }
  // "kind::f16 m128n256k16 bf16", "kind::f8f6f4 m128n256k32 e4m3.e5m2", "kind::i8 m128n256k32 u8.i8"
  std::string shape_suffix() const;
};

// The values_per_element(t) K values of the operand element at p, as the tensor core reads them:
// wgmma::operand_value's one, or the two e2m1 codes of an e2m1x2 byte (element 2i in bits 0-3),
// or an FP6 element's code from the 16-byte SMEM unit its slot p (shared address `address`: its
// low 4 bits are the slot's place in the unit) lies in (ir/types.hpp).
void operand_values(DType t, std::byte const* p, std::uint32_t address, float* out);

// tcgen05_mma's operands: [acc, a, b], then [sfa, sfb] when it is block-scaled (Stmt::flag),
// then the barrier of its fused commit, if any (ir::none if not).
std::int32_t mma_commit_barrier(Stmt const& s);

// The plan of tcgen05_mma statement `s` of `k`; throws VerifyError naming the kernel and op when
// the operands are not an MMA this description models.
plan plan_of(Kernel const& k, Stmt const& s);

// The first TMEM column of each TMEM allocation (-1 for other allocations): allocations lie
// one after another in declaration order (the 512-column budget is checked by the verifier).
std::vector<std::int64_t> tmem_columns_of(Kernel const& k);

}  // namespace stagecraft::ir::tcgen05
