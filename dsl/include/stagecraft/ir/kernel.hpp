// ir::Kernel: the lowered kernel as plain run-time data.
//
// Four flat arenas (index expressions, memory references, tile values, statements) linked by
// integer ids, so the IR is cheap to copy, walk, print and hash, and backends need no
// templates. Variables are numbered in binding order (v0, v1, ...) by lowering, which makes the
// IR of equal kernels equal whatever else the process built before.
#pragma once
#include <array>
#include <map>
#include <cstdint>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

#include "stagecraft/ir/types.hpp"

namespace stagecraft::ir {

using ExprId = std::int32_t;
using RefId = std::int32_t;
using ValueId = std::int32_t;
using StmtId = std::int32_t;
inline constexpr std::int32_t none = -1;

struct Expr {
  ExprOp op;
  std::int64_t value = 0;  // constant: value; var: variable number; program_id/cluster_idx: axis
  ExprId a = none, b = none;
  friend bool operator==(Expr const&, Expr const&) = default;
};

struct Param {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::vector<bool> dynamic;  // extent supplied at run time (not part of the C++ type)
  // Kernel-owned scratch (workspace<T>(name, shape)): every launcher allocates it, zero-fills it
  // before the run and frees it after; it is neither a user input nor an output.
  bool workspace = false;
  // A segment table (segment_offsets(name, groups, rows)): groups + 1 nondecreasing i32 offsets
  // from 0 to `segments` rows, where segment g of a packed ragged batch is rows [t[g], t[g + 1])
  // (FlashAttention's cu_seqlens). Launchers check a table before the run and seeded inputs
  // draw one (segments of random sizes, empty ones among them). -1: not a segment table.
  std::int64_t segments = -1;
  // Per dimension: the run-time extent (Kernel::extents) it is, or none when the extent is
  // compiled in. Empty: every extent compiled in. In the front end's declarations (before
  // lowering) the ids are the process-wide ones of tree::extent_id().
  std::vector<std::int32_t> extent;
  bool run_time(std::size_t d) const { return d < extent.size() && extent[d] != none; }
  // A segment table over a run-time number of rows (segment_offsets(name, G, T) with T a
  // run-time extent): the extent `segments` is the value of (a front-end id before lowering).
  std::int32_t segments_extent = none;
  friend bool operator==(Param const&, Param const&) = default;
};

// A run-time extent (run_time("M", m) in the front end): a size passed at launch, not compiled
// in. `value` is the size this kernel was lowered (and verified) for; the generated code never
// reads it, so one compiled kernel serves every value, and ir::bind() re-verifies a kernel for
// another before a launch. Every run-time extent is some parameter's dimension: a launcher
// takes it from the tensors it is given.
struct Extent {
  std::string name;
  std::int64_t value = 1;
  friend bool operator==(Extent const&, Extent const&) = default;
};

struct Alloc {
  AllocKind kind;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> tiling;
  int swizzle = 0;
  int arrivals = 0;
  bool orders_tensor_core = false;
  std::vector<int> collective_axes;
  friend bool operator==(Alloc const&, Alloc const&) = default;
};

enum class RefBase : std::uint8_t { param, alloc };

// A region of memory: `base[index...]` (leading dims fixed) or, for GMEM, the block at `block`
// coordinates (in units of `shape`). An SMEM sub-view (slice<A>(view, start, extent)) is
// `base[index...]` cut to `shape` from `block`: there one element offset per remaining dimension
// (empty: the whole view, at 0). It keeps the allocation's strides, so only some sub-views are
// one contiguous run of bytes (what TMA and MMA operands need; the verifier checks).
// A strided GMEM block (x.block(strides(...), i, j), TMA loads only) has one element stride per
// dimension in `stride` (cuTensorMapEncodeTiled's elementStrides): it moves `shape` elements
// taken every stride[d]-th from a footprint of shape[d] * stride[d], and its coordinates count
// footprints. Empty: every stride 1 (all other refs).
// A masked GMEM block (x.tile(shape, masked(fill), i, j), generic loads and stores only) may
// overhang its array: a load reads `fill` for the elements outside it, a store drops them (each
// element's access is predicated on its coordinates). Empty: the block lies inside the array.
// A windowed GMEM block (x.rows(lo, hi).block/tile(...): one segment of a packed ragged batch)
// counts its dimension-0 coordinate from row `row_lo`, and rows from `row_hi` on are not its own:
// a masked tile reads its fill there and drops its stores as it does outside the array, a plain
// generic tile must end by `row_hi`, and a TMA load reads on into them (the tensor map knows only
// the array; the rows after the window are the next segment's). TMA stores take no window (the
// hardware would write the next segment). none: no window.
struct Ref {
  RefBase base;
  std::int32_t id;
  std::vector<ExprId> index;
  std::vector<ExprId> block;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;
  std::optional<double> fill;
  ExprId row_lo = none, row_hi = none;
  bool windowed() const { return row_lo != none; }
  friend bool operator==(Ref const&, Ref const&) = default;
};

struct Value {
  ValueOp op;
  DType dtype;
  std::vector<std::int64_t> shape;
  ValueId a = none, b = none;
  RefId ref = none;  // load, load_tmem
  double scalar = 0;  // scalar: the value; reductions, broadcast, iota: the axis (types.hpp)
  ValueId c = none;  // select, fma: the third operand (last, so aggregate initialisers keep their order)
  ExprId index = none;  // index: the index expression every element holds
  friend bool operator==(Value const&, Value const&) = default;
};

// Operand order per op (refs):
//   copy_gmem_to_smem: [gmem block, smem view, barrier]   copy_smem_to_gmem: [smem view, gmem block]
//   barrier_arrive/wait, tcgen05_commit_arrive: [barrier] store: [dst] (value: the tile) tmem_dealloc: [tmem]
//   wgmma: [acc, a or none (then value: register A), b] (transpose: bit 0 A, bit 1 B)  tcgen05_mma: [acc, a, b, (sfa, sfb if flag), barrier?] (e0: accumulate)
//   tcgen05_cp: [smem scale block, tmem]
struct Stmt {
  StmtOp op;
  std::vector<StmtId> body;  // seq: children; for_: [body]; if_: [then, else?]
  std::int32_t var = none;   // for_: induction variable
  ExprId e0 = none, e1 = none;  // for_: [lo, hi); if_: condition; tcgen05_mma: accumulate
  std::vector<RefId> refs;
  ValueId value = none;
  // wait_group, wgmma_wait: groups allowed pending. tcgen05_mma, tcgen05_commit_arrive: the CTA
  // group, 2 for cta_group::2 over the cluster's CTA pair, 0 for cta_group::1 (the default).
  std::int64_t n = 0;
  bool flag = false;      // wait_group: read_only; tcgen05_mma: block-scaled
  std::vector<int> axes;  // copy_gmem_to_smem: multicast cluster axes
  // wgmma: which SMEM operands are read transposed. Views are stored (rows, cols), cols
  // contiguous; A is (M, K) unless bit 0 (stored (K, M): MN-major), B is (K, N) unless bit 1
  // (stored (N, K): K-major, the usual C = A * B^T).
  std::uint8_t transpose = 0;
  friend bool operator==(Stmt const&, Stmt const&) = default;
};

// Where the user wrote something: file as the compiler saw it (__FILE__), line from 1; line 0:
// unknown (hand-built IR, a decoded fuzz input).
struct SourceLoc {
  std::string file;
  int line = 0;
  friend bool operator==(SourceLoc const&, SourceLoc const&) = default;
};

// What the user wrote, beside what it means: source locations of the kernel, of every statement
// (indexed like `stmts`) and of every allocation, and the allocations' names ("" when none was
// given: they print as s0, b2, ...). Tables may be shorter than what they describe (hand-built IR
// has none); missing entries are unknown. None of this is semantics: ir::hash and the JIT
// cache ignore locations, so moving a kernel down a file keeps its cached binary. Names reach
// generated code and traces, so the JIT cache key mixes them in (nvrtc::cache_key).
struct DebugInfo {
  SourceLoc kernel;
  std::vector<SourceLoc> stmts;
  std::vector<std::string> alloc_names;
  std::vector<SourceLoc> allocs;
  friend bool operator==(DebugInfo const&, DebugInfo const&) = default;
};

struct Kernel {
  std::string name;
  Target target = Target::sm_90a;
  std::array<std::int64_t, 3> grid{1, 1, 1};
  int grid_rank = 1;
  // Grid dimensions that depend on run-time extents: the expression (of constants and extents
  // only) that `grid` holds the value of. none: a compiled-in dimension.
  std::array<ExprId, 3> grid_expr{none, none, none};
  std::vector<Extent> extents;
  std::array<std::int64_t, 3> cluster{1, 1, 1};
  int cluster_rank = 0;
  bool cluster_nonportable = false;
  // The kernel's roles: thread_id() is 0 .. roles - 1, and role r runs on role_warps[r] warps, 1
  // (a warp) or 4 (a warpgroup), laid out in role order from warp 0 (ir/roles.hpp). Empty: every
  // role is a warpgroup, as threads(n) declares them.
  int roles = 1;
  std::vector<int> role_warps;
  std::vector<Param> params;
  std::vector<Alloc> allocs;
  std::vector<Expr> exprs;
  std::vector<Ref> refs;
  std::vector<Value> values;
  std::vector<Stmt> stmts;
  StmtId body = none;
  int num_vars = 0;
  DebugInfo debug;
  friend bool operator==(Kernel const&, Kernel const&) = default;

  // Out of line (lower.cpp): every kernel TU returns kernels from its registry entry, and the
  // implicit members would expand the teardown of all six arenas and the debug info there.
  Kernel();
  Kernel(Kernel const&);
  Kernel(Kernel&&) noexcept;
  Kernel& operator=(Kernel const&);
  Kernel& operator=(Kernel&&) noexcept;
  ~Kernel();
};

// Where an IR element is, for messages: statements are numbered in pre-order ("op #7"), the
// same numbers the printer shows.
std::string stmt_name(StmtOp op);
// The name the user called the statement by: tcgen05_mma_2cta for a cta_group::2 tcgen05_mma.
std::string stmt_name(Stmt const& s);
std::string expr_op_name(ExprOp op);
std::string value_op_name(ValueOp op);

// The user's name of an allocation, or its number as the printer shows it (s0, b2, cb3, t4, acc5).
std::string alloc_name(Kernel const& k, int alloc);
// "file:line" of a statement or an allocation ("" when unknown).
std::string where(Kernel const& k, StmtId id);
std::string alloc_where(Kernel const& k, int alloc);
// One statement on one line, operands named as the user named them: `barrier_wait full[v0 % 2]`.
std::string describe(Kernel const& k, StmtId id);
// The suffix every diagnostic about a statement carries: "\n  at file:line: <describe>" (just
// "\n  at <describe>" when the location is unknown).
std::string at_source(Kernel const& k, StmtId id);

// A malformed IR (hand-built, or produced by a bug in lowering). The message names the kernel,
// the op and the values involved.
struct VerifyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A well-formed kernel that cannot run as configured: a grid of 0, a grid that is not a multiple
// of the cluster, a block that does not divide its parameter's shape, an op the target lacks.
// These follow from values chosen at run time (problem sizes, --arch), so the mistake is the
// caller's, not a bug: the CLI reports it as a usage error.
struct ConfigError : VerifyError {
  using VerifyError::VerifyError;
};

// Throws VerifyError on the first violated invariant.
void verify(Kernel const& k);

// The kernel for other values of its run-time extents (name -> value; extents not named keep
// theirs): every parameter dimension and grid dimension that depends on them recomputed, then
// verified, so a launch at sizes the kernel was not lowered for gets the checks lowering would
// have made, in the same words (a ConfigError naming the kernel, the op and the values). The
// generated code does not change (it reads run-time extents from its arguments). Throws
// ConfigError for a name that is no run-time extent of the kernel or a value under 1.
Kernel bind(Kernel const& k, std::map<std::string, std::int64_t> const& values);
// The values of the run-time extents from the shapes of the tensors a caller passes (one per
// parameter, in order): each run-time dimension of each parameter gives its extent's value, and
// all that share an extent must agree (ConfigError naming both parameters otherwise). Compiled-in
// dimensions are not checked here (the launcher compares whole shapes after bind()).
std::map<std::string, std::int64_t> extents_of(Kernel const& k, std::vector<std::vector<std::int64_t>> const& shapes);
// bind(k, extents_of(k, shapes)): the kernel for the tensors a caller passes (k itself when it has
// no run-time extent). The interpreter, the host backend and cuda::launch call it, so a kernel
// with run-time extents runs on tensors of any size its rules allow.
Kernel bind_to(Kernel const& k, std::vector<std::vector<std::int64_t>> const& shapes);

// A stable, readable listing: what `stagecraft show` prints.
std::string print(Kernel const& k);

// A 64-bit hash of the canonical form: equal kernels hash equal, any semantic change changes it
// (the JIT cache key).
std::uint64_t hash(Kernel const& k);

// The shared-memory layout every backend uses: the byte offset of each allocation (-1 for
// those not in SMEM: TMEM, register accumulators), and the total.
std::vector<std::int64_t> smem_offsets(Kernel const& k);
std::int64_t smem_bytes(Kernel const& k);
// TMEM columns the kernel's allocations take, each rounded up as tcgen05.alloc rounds it
// (tmem_alloc_columns: a power of two, at least 32).
std::int64_t tmem_columns(Kernel const& k);
std::int64_t tmem_alloc_columns(std::int64_t columns);
// A TMEM allocation is (lanes, columns), or a ring of them, (stages, lanes, columns): stage s is
// 32-bit columns [s * C, (s + 1) * C) of the one tcgen05.alloc, C = tmem_stage_columns(a) (an
// accumulator pipeline: the MMAs fill one stage while the epilogue reads another). -1 for a
// shape of another rank (the verifier's error), or a dimension that is not yet known.
std::int64_t tmem_stage_columns(Alloc const& a);
std::int64_t tmem_stages(Alloc const& a);  // 1 for (lanes, columns)
// Every stage's columns, what its tcgen05.alloc asks for before rounding (-1 as above, or on overflow).
std::int64_t tmem_total_columns(Alloc const& a);

}  // namespace stagecraft::ir
