// Vocabulary shared by the typed front end, the IR and the backends.
#pragma once
#include <cstdint>
#include <string_view>

namespace stagecraft::ir {

// Appended only: the numeric values are in serialized IR (tests/fuzz/ir_codec.cpp) and hashes.
// e4m3/e5m2: the OCP 8-bit floats wgmma multiplies (stagecraft/ir/fp8.hpp), stored as bytes.
// pred: a mask (comparisons, select's condition), 0 or 1; it lives in registers only (no
// parameter or allocation has it). u8: unsigned bytes (wgmma's .u8 inputs, quantized activations).
// e2m1x2 (two FP4 e2m1 codes in a byte, element 2i in bits 0-3: ir/mx_formats.hpp) and ue4m3
// (NVFP4's unsigned scale codes) are storage types: tensors of them are moved (TMA, tcgen05.cp)
// and read by the block-scaled tcgen05 MMA; as values they read as their byte, as u8 does.
// e2m3 and e3m2 (FP6, ir/mx_formats.hpp) and e2m1 (FP4, one element a byte of footprint, not
// e2m1x2's two) are the sub-byte operands of tcgen05's kind::f8f6f4 and kind::mxf8f6f4, storage
// types too, with two footprints (PTX ISA "Packing formats used for matrices A and B by
// .kind::f8f6f4" in shared memory; CUDA driver API CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B and
// 16U4_ALIGN16B): "unit-packed", with unit_bits b (6 or 4) an element,
//   GMEM: packed, element i of a tensor at bits b i .. b i + b - 1 (low bits first); packed_bits is b;
//   SMEM: 16 elements a 16-byte unit, packed in its first 2 b bytes the same way, the rest
//     padding: one byte of footprint an element, so dtype_bits is 8 and every SMEM address,
//     descriptor and swizzle is an 8-bit operand's. TMA expands GMEM into that (the tensor map's
//     16U6/16U4_ALIGN16B type); element e's code is bits b (e % 16) .. of the unit at byte 16 (e / 16).
enum class DType : std::uint8_t { f32, f16, bf16, i32, u32, i8, e4m3, e5m2, pred, u8, e2m1x2, ue4m3, e2m3, e3m2, e2m1 };
inline constexpr DType last_dtype = DType::e2m1;

constexpr int dtype_bits(DType t) {
  switch (t) {
    case DType::f32: case DType::i32: case DType::u32: return 32;
    case DType::f16: case DType::bf16: return 16;
    case DType::i8: case DType::u8: case DType::e4m3: case DType::e5m2: case DType::pred: case DType::e2m1x2: case DType::ue4m3: case DType::e2m3: case DType::e3m2: case DType::e2m1: return 8;
  }
  return 0;
}
constexpr bool dtype_is_float(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::e4m3 || t == DType::e5m2;
}
constexpr bool dtype_is_fp8(DType t) { return t == DType::e4m3 || t == DType::e5m2; }
constexpr bool dtype_is_fp6(DType t) { return t == DType::e2m3 || t == DType::e3m2; }
// The bits of a unit-packed element (see DType): 6 for FP6, 4 for e2m1; 0 for every other type.
constexpr int unit_bits(DType t) { return dtype_is_fp6(t) ? 6 : t == DType::e2m1 ? 4 : 0; }
constexpr bool dtype_is_unit_packed(DType t) { return unit_bits(t) != 0; }
// The operand formats of tcgen05's kind::f8f6f4 (any two of them pair).
constexpr bool dtype_is_f8f6f4(DType t) { return dtype_is_fp8(t) || dtype_is_unit_packed(t); }
// The bits an element takes in GMEM (host tensors, parameters): dtype_bits, except the
// unit-packed types', packed there (see DType).
constexpr int packed_bits(DType t) { return dtype_is_unit_packed(t) ? unit_bits(t) : dtype_bits(t); }
// The driver's name of the tensor-map type that expands a unit-packed type into SMEM's units.
constexpr const char* unit_tma_type(DType t) { return unit_bits(t) == 6 ? "16U6_ALIGN16B" : "16U4_ALIGN16B"; }
// The 8-bit integers wgmma multiplies (.s8, .u8) into s32.
constexpr bool dtype_is_int8(DType t) { return t == DType::i8 || t == DType::u8; }
// The block-scaled formats' storage types, a byte of codes each (see DType).
constexpr bool dtype_is_packed_code(DType t) { return t == DType::e2m1x2 || t == DType::ue4m3 || dtype_is_unit_packed(t); }
// Bytes whose values are their unsigned codes: u8 and the storage types above.
constexpr bool dtype_is_byte_code(DType t) { return t == DType::u8 || dtype_is_packed_code(t); }
// The values an integer dtype holds (a mask: 0 and 1), for the checks of a fill value and the
// saturation of a float converted to it. Not for the float dtypes.
struct int_range {
  double lo, hi;
};
constexpr int_range range_of(DType t) {
  switch (t) {
    case DType::pred: return {0.0, 1.0};
    case DType::i8: return {-128.0, 127.0};
    case DType::u8: case DType::e2m1x2: case DType::ue4m3: return {0.0, 255.0};
    case DType::e2m3: case DType::e3m2: return {0.0, 63.0};
    case DType::e2m1: return {0.0, 15.0};
    case DType::u32: return {0.0, 4294967295.0};
    default: return {-2147483648.0, 2147483647.0};  // i32
  }
}
constexpr const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::u32: return "u32";
    case DType::i8: return "i8";
    case DType::e4m3: return "e4m3";
    case DType::e5m2: return "e5m2";
    case DType::pred: return "pred";
    case DType::u8: return "u8";
    case DType::e2m1x2: return "e2m1x2";
    case DType::ue4m3: return "ue4m3";
    case DType::e2m3: return "e2m3";
    case DType::e3m2: return "e3m2";
    case DType::e2m1: return "e2m1";
  }
  return "?";
}

enum class Target : std::uint8_t { sm_90a, sm_100a };
constexpr const char* target_name(Target t) { return t == Target::sm_90a ? "sm_90a" : "sm_100a"; }

// Hardware limits the front end and the verifier both enforce.
inline constexpr std::int64_t max_smem_bytes = 227 * 1024;   // per CTA, opt-in maximum
inline constexpr std::int64_t max_tmem_columns = 512;              // per SM, 128 lanes x 32-bit
inline constexpr std::int64_t max_warpgroups = 8;              // 1024 threads per CTA
inline constexpr std::int64_t max_cluster_portable = 8;
inline constexpr std::int64_t max_cluster_nonportable = 16;
// Named barriers (bar.sync / bar.arrive ids): the hardware has 16 per CTA. Id 0 is
// __syncthreads and ids 1..max_warpgroups are the generated code's per-warpgroup barrier
// (prelude wg_sync: bar.sync wg + 1, 128), so user id u is hardware id first_named_barrier + u,
// the same in every kernel (what SASS shows does not depend on the kernel's warpgroup count).
inline constexpr int first_named_barrier = 1 + static_cast<int>(max_warpgroups);
inline constexpr int max_named_barriers = 16 - first_named_barrier;  // user ids 0..6
inline constexpr int named_barrier_granule = 128;  // threads: a warpgroup, the unit that runs a statement
inline constexpr int max_tma_rank = 5;
inline constexpr int max_tma_box = 256;     // elements per dimension of one TMA box
inline constexpr int max_tma_element_stride = 8;  // cuTensorMapEncodeTiled elementStrides: 1 to 8
// What a TMA load with OOB_FILL_NAN_REQUEST_ZERO_FMA writes outside the array: a quiet NaN with
// every payload bit set, for 4- and 2-byte elements. The PTX ISA calls it the OOB-NaN without
// giving its bits; these are ours (the interpreter and the host backend agree on them), not yet
// compared with hardware.
inline constexpr std::uint32_t tma_oob_nan_f32 = 0x7fffffffu;
inline constexpr std::uint16_t tma_oob_nan_16 = 0x7fffu;
// GMEM parameters addressed by plain loads and stores (the interpreter's regions hold 8 extents).
inline constexpr int max_param_rank = 8;
// A kernel-owned workspace is zero-filled on every launch, so its bytes cost time each run: a
// scratch this large is a mistake in its shape, not a split-K buffer.
inline constexpr std::int64_t max_workspace_bytes = std::int64_t{1} << 30;

// Bounds of the IR itself, which the verifier enforces so that every backend can walk a verified
// kernel without overflow, deep recursion or exponential work. Far above anything the front end
// builds; they exist for hand-built and corrupted IR.
inline constexpr std::int64_t max_grid_x = (std::int64_t{1} << 31) - 1;  // CUDA's gridDim limits
inline constexpr std::int64_t max_grid_yz = 65535;
inline constexpr std::int64_t max_ctas = (std::int64_t{1} << 31) - 1;     // CTAs are numbered in 32 bits
inline constexpr int max_alloc_rank = 8;             // SMEM views carry stage dimensions before the tile's
inline constexpr std::int64_t max_gmem_bytes = std::int64_t{1} << 48;  // per parameter: byte offsets never overflow
inline constexpr int max_vars = 1 << 16;
inline constexpr int max_nesting = 64;               // statements inside one another (loops, ifs, seqs)
// Index and tile expressions are DAGs (lowering shares equal subexpressions), but backends expand
// them into trees (printed, generated, evaluated); these bound the expanded tree of each.
inline constexpr std::int64_t max_tree_nodes = 4096;
inline constexpr int max_tree_depth = 64;
// All statements' operands together. The bundled kernels expand to under 100 nodes; at 2^22 a
// kernel the verifier accepted took seconds to print and generate, and timed fuzz_ir out.
inline constexpr std::int64_t max_expanded_nodes = std::int64_t{1} << 16;

}  // namespace stagecraft::ir

namespace stagecraft::ir {

// Integer (index) expressions: block coordinates, barrier and stage indices, loop bounds,
// conditions. Booleans are integers 0/1. Appended only (serialized IR and hashes).
//   load: an index from memory, element `a` of parameter `value` (x.at(i)): a rank-1 integer
//         parameter the kernel never writes, so the read is a pure function of the index like
//         every other expression (a cu_seqlens table, a grouped GEMM's row offsets).
//   extent: run-time extent `value` (Kernel::extents): a size the kernel takes as a launch
//         argument instead of compiling it in (a GEMM's M, a sequence length), so that one
//         compiled kernel serves all its values.
//   clc_result: what a cluster launch control response says (ops/clc.hpp): `value` is
//         4 * allocation + what (0: the cancel succeeded, 1-3: the canceled cluster's first
//         ctaid along x, y, z), `a` the response's first u32 element in the allocation. It
//         reads SMEM: ordered after the try_cancel's completion by a barrier wait, or a race.
//   fetched: what an atomic_fetch left in its slot (ops/atomic.hpp): the i32 at element `a` of
//         SMEM allocation `value`. It reads SMEM: ordered after the atomic by program order in
//         its warpgroup, or by a barrier in another, or a race.
enum class ExprOp : std::uint8_t {
  constant, var, program_id, cluster_idx, thread_id,
  add, sub, mul, div, mod, min, max,
  lt, le, gt, ge, eq, ne, land, lor, lnot,
  load,
  extent,
  clc_result,
  fetched,
};
inline constexpr ExprOp last_expr_op = ExprOp::fetched;
constexpr bool expr_is_binary(ExprOp op) { return op >= ExprOp::add && op <= ExprOp::lor; }
constexpr bool expr_is_unary(ExprOp op) { return op == ExprOp::lnot || op == ExprOp::load || op == ExprOp::clc_result || op == ExprOp::fetched; }
// The dtypes an index table may have: what x.at(i) reads as a 64-bit index.
constexpr bool dtype_is_index(DType t) { return t == DType::i32 || t == DType::u32; }

// Tile (value) expressions: what a warpgroup computes in registers.
// New ops go at the end: the fuzz corpus encodes them by number.
//   reduce_*: a (rank r+1) -> rank r, axis `scalar` removed; summed in f32 (or 64-bit integers)
//             from index 0 upward, rounded to the dtype once.
//   broadcast: a (rank r) -> rank r+1, axis `scalar` inserted with the extent of the result's.
//   iota: a leaf, every element its coordinate along axis `scalar`.
//   lt ... ne: a, b of one dtype and shape -> a pred tile of that shape.
//   select: c ? a : b elementwise, spelled (a = mask, b = if true, c = if false).
//   fma: a * b + c rounded once (floating point).
//   permute, reshape, slice: views (ir/tile_view.hpp): every result element is one operand
//             element, at an affine function of the result's coordinates. permute's `scalar`
//             packs the permutation (result axis d is operand axis (scalar >> 3d) & 7), slice's
//             the axis and the start (axis + 8 * start); reshape keeps the row-major order.
//   index: a leaf, every element the value of index expression `index` (Value::index) converted
//             to the dtype as a scalar is: a run-time length or offset in tile math (the valid
//             keys of a ragged segment, iota<1>(s) + j * 64 < hi - lo).
enum class ValueOp : std::uint8_t {
  load, load_tmem, scalar, add, sub, mul, div, min, max, neg, exp, cast,
  exp2, log, rsqrt, tanh, abs, reduce_sum, reduce_max, reduce_min, broadcast, iota,
  lt, le, gt, ge, eq, ne, select, fma,
  permute, reshape, slice,
  index,
};
inline constexpr int value_op_count = static_cast<int>(ValueOp::index) + 1;
constexpr bool value_is_compare(ValueOp op) { return op >= ValueOp::lt && op <= ValueOp::ne; }
constexpr bool value_is_ternary(ValueOp op) { return op == ValueOp::select || op == ValueOp::fma; }
constexpr bool value_is_binary(ValueOp op) { return op >= ValueOp::add && op <= ValueOp::max; }
constexpr bool value_is_reduction(ValueOp op) { return op >= ValueOp::reduce_sum && op <= ValueOp::reduce_min; }
// The ops whose `scalar` is an axis (an integer below the rank of the larger shape).
constexpr bool value_has_axis(ValueOp op) { return value_is_reduction(op) || op == ValueOp::broadcast || op == ValueOp::iota; }
// Views of one operand: no arithmetic, only a new place for every element (ir/tile_view.hpp).
constexpr bool value_is_view(ValueOp op) { return op >= ValueOp::permute && op <= ValueOp::slice; }
// Ops that only place values (no arithmetic to count): broadcasts, iotas and views.
constexpr bool value_only_places(ValueOp op) { return op == ValueOp::broadcast || op == ValueOp::iota || value_is_view(op); }
// Element-wise transcendentals and abs: one operand, same dtype and shape (stagecraft/ir/math.hpp).
constexpr bool value_is_math(ValueOp op) { return op == ValueOp::exp || (op >= ValueOp::exp2 && op <= ValueOp::abs); }

// Statements: the operation catalog of DESIGN.md section 4.
enum class StmtOp : std::uint8_t {
  seq, for_, if_,
  copy_gmem_to_smem, copy_smem_to_gmem, commit_group, wait_group, commit_smem,
  barrier_arrive, barrier_wait,
  store,
  wgmma, wgmma_commit, wgmma_wait,
  tcgen05_mma, tcgen05_commit_arrive,
  tmem_dealloc,
  // bar.sync / bar.arrive on a CTA named barrier: e0 the user's id (an index expression), n the
  // thread count (a multiple of 128: every warpgroup's 128 threads take part).
  named_barrier_sync, named_barrier_arrive,
  // A grid-wide semaphore (ops/semaphore.hpp): refs [the counter, a 1-element block of an i32
  // workspace], e0 the value (> 0). signal adds it (a release at .gpu scope), wait blocks until
  // the counter holds at least that much, takes it and acquires.
  semaphore_signal, semaphore_wait,
  // Cluster launch control (ops/clc.hpp, sm_100a): refs [the 16-byte response (4 u32 of SMEM),
  // a barrier]. One thread arrives on the barrier expecting 16 bytes and asks the hardware to
  // cancel a cluster of the grid that has not started; the response lands, and its 16 bytes
  // complete on the barrier, asynchronously (clusterlaunchcontrol.try_cancel).
  try_cancel,
  // Leave the innermost enclosing for_ when e0 is nonzero (the rest of the iteration and every
  // later one are skipped): a loop whose trip count a response decides.
  break_if,
  // An atomic read-modify-write of a semaphore counter that returns what it held (ops/atomic.hpp):
  // refs [the counter, the slot (one i32 of SMEM)], e0 the operand (cas: the new value), e1 cas's
  // expected value, n = atomic_code(op, order, scope). One thread of the warpgroup does it and
  // writes the old value into the slot, then the warpgroup syncs.
  atomic_fetch,
  // tcgen05.cp.cta_group::1.32x128b.warpx4 (ops/mma.hpp tcgen05_copy_scales): refs [a 512-byte
  // SMEM block of u8 scale codes, a u8 TMEM view]. One thread issues it into its tcgen05 stream,
  // before its later MMAs; its commit tracks it as it tracks an MMA.
  tcgen05_cp,
};
inline constexpr StmtOp last_stmt_op = StmtOp::tcgen05_cp;

// atomic_fetch's operation, memory order and scope, packed into Stmt::n (appended only).
enum class Atomic : std::uint8_t { add, min, max, exch, cas };
inline constexpr Atomic last_atomic = Atomic::cas;
enum class MemoryOrder : std::uint8_t { relaxed, acquire, release, acq_rel };
enum class MemoryScope : std::uint8_t { gpu, sys };
struct atomic_spec {
  Atomic op;
  MemoryOrder order;
  MemoryScope scope;
};
constexpr std::int64_t atomic_code(atomic_spec a) {
  return static_cast<std::int64_t>(a.op) | static_cast<std::int64_t>(a.order) << 4 | static_cast<std::int64_t>(a.scope) << 6;
}
constexpr bool atomic_code_ok(std::int64_t n) { return n >= 0 && n < 128 && (n & 15) <= static_cast<std::int64_t>(last_atomic); }
constexpr atomic_spec atomic_of(std::int64_t n) {
  return {static_cast<Atomic>(n & 15), static_cast<MemoryOrder>(n >> 4 & 3), static_cast<MemoryScope>(n >> 6 & 1)};
}
constexpr const char* atomic_name(Atomic a) {
  switch (a) {
    case Atomic::add: return "add";
    case Atomic::min: return "min";
    case Atomic::max: return "max";
    case Atomic::exch: return "exch";
    case Atomic::cas: return "cas";
  }
  return "?";
}
constexpr const char* memory_order_name(MemoryOrder o) {
  switch (o) {
    case MemoryOrder::relaxed: return "relaxed";
    case MemoryOrder::acquire: return "acquire";
    case MemoryOrder::release: return "release";
    case MemoryOrder::acq_rel: return "acq_rel";
  }
  return "?";
}
constexpr bool order_acquires(MemoryOrder o) { return o == MemoryOrder::acquire || o == MemoryOrder::acq_rel; }
constexpr bool order_releases(MemoryOrder o) { return o == MemoryOrder::release || o == MemoryOrder::acq_rel; }
// What the counter holds after op with operand v (cas: v the new value, `expected` the old one it
// replaces), in 32-bit two's complement (atom.add wraps).
constexpr std::int32_t atomic_result(Atomic op, std::int32_t old, std::int32_t v, std::int32_t expected) {
  switch (op) {
    case Atomic::add: return static_cast<std::int32_t>(static_cast<std::uint32_t>(old) + static_cast<std::uint32_t>(v));
    case Atomic::min: return old < v ? old : v;
    case Atomic::max: return old > v ? old : v;
    case Atomic::exch: return v;
    case Atomic::cas: return old == expected ? v : old;
  }
  return old;
}
// What a semaphore op may add or take: 1 to 2^31 - 1 (the counter is an s32; 0 would not wait).
// The front end checks a static value, the verifier a constant one, the interpreter the rest.
constexpr bool semaphore_value_ok(std::int64_t v) { return v > 0 && v <= 0x7fffffff; }

// What a store does with the element it lands on (Stmt::n of store and copy_smem_to_gmem): none
// overwrites it; add, min and max combine with it atomically, element by element, so CTAs that
// nothing orders may reduce into the same GMEM (red.relaxed.gpu.global.<op> for a generic store,
// cp.reduce.async.bulk.tensor.<op> for a TMA store). Two reductions never race each other; a
// plain read or write of an element some unordered access reduces into does.
// Appended only (serialized IR and hashes).
enum class Reduce : std::uint8_t { none, add, min, max };
inline constexpr Reduce last_reduce = Reduce::max;
constexpr const char* reduce_name(Reduce r) {
  switch (r) {
    case Reduce::none: return "none";
    case Reduce::add: return "add";
    case Reduce::min: return "min";
    case Reduce::max: return "max";
  }
  return "?";
}
// The dtypes each reduction takes, the intersection of what red.global and the TMA reduce take
// on sm_90a and sm_100a: add f32, i32, u32; min and max i32, u32 (red has no f32 min/max).
// 16-bit float reductions (red's .noftz f16/bf16 pairs) are not offered yet.
// red/atom .add.f32 round to nearest even and flush subnormal inputs and results to a zero of
// their sign (PTX ISA, atom and red): what the interpreter and the host backend compute for a
// reducing f32 add. Not yet compared with hardware.
constexpr float flush_subnormal(float x) { return (x > -1.17549435e-38f && x < 1.17549435e-38f) ? x * 0.0f : x; }
constexpr float reduce_add_f32(float a, float b) { return flush_subnormal(flush_subnormal(a) + flush_subnormal(b)); }
constexpr bool reduce_takes(Reduce r, DType t) {
  if (r == Reduce::none) return true;
  if (t == DType::i32 || t == DType::u32) return true;
  return r == Reduce::add && t == DType::f32;
}

// What a name in memory is: a GMEM parameter or a scratch allocation.
enum class AllocKind : std::uint8_t { smem, barrier, cluster_barrier, tmem, accumulator };

constexpr const char* alloc_kind_name(AllocKind k) {
  switch (k) {
    case AllocKind::smem: return "smem";
    case AllocKind::barrier: return "barrier";
    case AllocKind::cluster_barrier: return "cluster_barrier";
    case AllocKind::tmem: return "tmem";
    case AllocKind::accumulator: return "accumulator";
  }
  return "?";
}

}  // namespace stagecraft::ir
