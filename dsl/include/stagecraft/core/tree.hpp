// The front end's run-time tree.
//
// Typed front-end objects check everything the compiler can know, then record what they mean
// here: small immutable nodes shared by pointer. `lower()` (compiled once, in the IR library)
// turns a whole tree into a flat `ir::Kernel`. Keeping the typed layer thin over this tree is
// what keeps user translation units quick to compile: the types carry only static facts
// (shapes, dtypes, ranges, counts), never the structure of the expression.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <optional>
#include <string>
#include <vector>

#include "stagecraft/core/source_loc.hpp"
#include "stagecraft/ir/kernel.hpp"

namespace stagecraft::tree {

struct Expr;
struct Value;
struct Stmt;

// A node lives in a block with its reference count; `node<T>` is the shared, immutable handle.
template <class T>
struct node_block {
  std::atomic<int> refs;
  T value;
};
// Out of line (tree.cpp) for the three node types. A kernel TU copies and drops handles at every
// op it writes; with std::shared_ptr each drop expanded into an inline atomic decrement, a
// branch to the disposer and an exception cleanup path, in every op template a kernel
// instantiates: most of the optimised code of a kernel TU. Here a drop is one call.
void retain(node_block<Expr>* p) noexcept;
void retain(node_block<Value>* p) noexcept;
void retain(node_block<Stmt>* p) noexcept;
void release(node_block<Expr>* p) noexcept;
void release(node_block<Value>* p) noexcept;
void release(node_block<Stmt>* p) noexcept;

template <class T>
class node {
 public:
  node() noexcept = default;
  node(std::nullptr_t) noexcept {}
  // Takes over a block made with refs = 1 (tree.cpp's builders).
  explicit node(node_block<T>* adopt) noexcept : p_(adopt) {}
  node(node const& o) noexcept : p_(o.p_) { retain(p_); }
  node(node&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  node& operator=(node o) noexcept {
    node_block<T>* t = p_;
    p_ = o.p_;
    o.p_ = t;
    return *this;
  }
  ~node() { release(p_); }

  T const* operator->() const noexcept { return &p_->value; }
  T const& operator*() const noexcept { return p_->value; }
  explicit operator bool() const noexcept { return p_ != nullptr; }

 private:
  node_block<T>* p_ = nullptr;
};
using ExprP = node<Expr>;
using ValueP = node<Value>;
using StmtP = node<Stmt>;

struct Expr {
  ir::ExprOp op;
  std::int64_t value = 0;  // constant: the value; var: its id; program_id/cluster_idx: the axis
  ExprP a, b;
};

enum class Base : std::uint8_t { param, alloc };

// A reference to memory: a parameter or allocation, the leading dimensions fixed by indexing,
// and for GMEM the block coordinates (in units of the block shape); for an SMEM sub-view `block`
// holds its origin instead, one element offset per remaining dimension (ir::Ref).
//
// Every typed reference (a view, a block, a barrier slot) holds one of these by value and every
// op copies and drops a few, so its special members are defined out of line in tree.cpp: inlined,
// each copy or destruction is three vectors and their shared pointers, expanded again in every
// op template a kernel instantiates, which is most of a kernel TU's optimised code.
struct Ref {
  Base base = Base::alloc;
  int id = -1;
  std::vector<ExprP> index;
  std::vector<ExprP> block;
  std::vector<std::int64_t> shape;  // of the referenced region
  ir::DType dtype = ir::DType::f32;
  std::vector<std::int64_t> stride;  // a strided GMEM block's element strides (ir::Ref); empty: 1
  std::optional<double> fill;        // a masked GMEM block's fill (ir::Ref); empty: not masked
  ExprP row_lo, row_hi;              // a GMEM window's rows [row_lo, row_hi) (ir::Ref); null: none

  Ref() noexcept;
  Ref(Base base, int id, ir::DType dtype, std::vector<std::int64_t> shape) noexcept;
  Ref(Ref const&) noexcept;
  Ref(Ref&&) noexcept;
  Ref& operator=(Ref const&) noexcept;
  Ref& operator=(Ref&&) noexcept;
  ~Ref();
};

struct Value {
  ir::ValueOp op;
  ir::DType dtype;
  std::vector<std::int64_t> shape;
  ValueP a, b;
  Ref ref;            // load, load_tmem
  double scalar = 0;  // scalar: the value; reductions, broadcast, iota: the axis
  ValueP c;           // select, fma: the third operand
  ExprP index;        // index: the index expression every element holds
};

struct Stmt {
  ir::StmtOp op;
  std::vector<StmtP> body;  // seq: children; for: [body]; if: [then, else?]
  int var = -1;             // for: the induction variable's id
  ExprP e0, e1;             // for: [lo, hi); if: condition
  std::vector<Ref> refs;    // operands, in the order the op documents
  ValueP value;             // store: the tile
  std::int64_t n = 0;       // wait_group / wgmma_wait: groups allowed pending
  bool flag = false;        // wait_group: read_only; tcgen05_mma: accumulate
  std::vector<int> axes;    // copy multicast / cluster barrier collective axes
  std::uint8_t transpose = 0;  // wgmma: operands read transposed (ir::Stmt::transpose)
  src_loc loc;              // where the user wrote it (unknown for seq)
};

// Declarations are already plain data: the front end fills the IR's own records.
using ParamDecl = ir::Param;
using AllocDecl = ir::Alloc;

// Filled field by field in kernel(...) for every kernel a TU builds: out-of-line special members
// and appends (below) keep its vectors' code in the library.
struct KernelDesc {
  std::string name;
  ir::Target target;
  std::array<std::int64_t, 3> grid{1, 1, 1};
  int grid_rank = 1;
  std::array<ExprP, 3> grid_expr{};  // dimensions over run-time extents (ir::Kernel::grid_expr)
  std::array<std::int64_t, 3> cluster{1, 1, 1};
  int cluster_rank = 0;
  bool cluster_nonportable = false;
  int roles = 1;
  std::vector<int> role_warps;  // empty: every role a warpgroup (ir::Kernel::role_warps)
  std::vector<ParamDecl> params;
  std::vector<AllocDecl> allocs;
  std::vector<const char*> alloc_names;  // parallel to allocs; null: unnamed
  std::vector<src_loc> alloc_locs;       // parallel to allocs
  src_loc loc;                           // of the kernel(...) call
  StmtP body;

  KernelDesc() noexcept;
  KernelDesc(KernelDesc const&) noexcept;
  KernelDesc(KernelDesc&&) noexcept;
  KernelDesc& operator=(KernelDesc const&) noexcept;
  KernelDesc& operator=(KernelDesc&&) noexcept;
  ~KernelDesc();
};
void add_param(KernelDesc& d, ParamDecl p) noexcept;
void add_alloc(KernelDesc& d, AllocDecl a, const char* name, src_loc loc) noexcept;

// Run-time extents get a process-wide id per name (run_time("M", m): an ExprOp::extent node and
// ParamDecl::extent hold it); lowering numbers a kernel's own extents from 0.
std::int32_t extent_id(std::string const& name);
std::string extent_name(std::int32_t id);

// Variables get a process-unique raw id when their loop is built; lowering renumbers them in
// binding order, so the IR (and its hash) does not depend on how many kernels were built before.
inline int fresh_var_id() {
  static std::atomic<int> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// ---- builders -------------------------------------------------------------------------------
// Compiled once in the IR library: the typed front end only passes pointers and spans, so a
// kernel translation unit generates little code per operation it instantiates. They, and Ref's
// and KernelDesc's copies, are noexcept: all they can throw is bad_alloc while building a tree
// of a few hundred nodes, where terminating is as good as unwinding. Without it every op a
// kernel writes needs an exception landing pad that drops each live temporary handle; those
// pads were a quarter of a kernel TU's optimised code and of its compile time.
using dims_view = std::span<const long long>;

ExprP make_expr(ir::ExprOp op, std::int64_t value = 0, ExprP a = {}, ExprP b = {}) noexcept;

Ref ref_root(Base base, int id, ir::DType dt, dims_view shape) noexcept;
Ref ref_root(Base base, int id, ir::DType dt, std::span<const std::int64_t> shape) noexcept;
// r[index] (+ offset, a pending barrier slice start); drops the first extent unless a barrier.
Ref ref_indexed(Ref const& r, ExprP index, ExprP offset, bool drop_front) noexcept;
// A barrier reference whose remaining dimensions all have extent 1: index them with 0.
Ref ref_element(Ref const& r, int remaining_rank, ExprP offset) noexcept;
Ref ref_block(Ref const& r, std::initializer_list<ExprP> coords) noexcept;
Ref ref_sized(Ref const& r, dims_view shape) noexcept;
// A GMEM block that TMA traverses with these element strides (x.block(strides(...), ...)).
Ref ref_strided(Ref const& r, dims_view stride) noexcept;
// A GMEM block that may overhang its array: loads read `fill` outside it, stores drop it.
Ref ref_masked(Ref const& r, double fill) noexcept;
// The rows [lo, hi) of a GMEM parameter (x.rows(lo, hi)); a window of a window counts from its start.
Ref ref_window(Ref const& r, ExprP lo, ExprP hi) noexcept;
// An SMEM sub-view: `extent` elements of remaining dimension `axis` from `start` (relative to a
// sub-view's own origin).
Ref ref_sliced(Ref const& r, int axis, ExprP start, std::int64_t extent) noexcept;

ValueP value_unary(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a) noexcept;
ValueP value_binary(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a, ValueP b) noexcept;
ValueP value_scalar(ir::DType dt, dims_view shape, double v) noexcept;
// A tile every element of which is the value of an index expression (ir::ValueOp::index).
ValueP value_index(ir::DType dt, dims_view shape, ExprP e) noexcept;
ValueP value_load(ir::ValueOp op, ir::DType dt, dims_view shape, Ref const& r) noexcept;
// Reductions, broadcast (operand a) and iota (no operand): the axis travels in `scalar`.
ValueP value_axis(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a, int axis) noexcept;
ValueP value_ternary(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a, ValueP b, ValueP c) noexcept;
// Views (permute, reshape, slice of operand a): the packed parameter of ir/tile_view.hpp in `scalar`.
ValueP value_view(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a, double param) noexcept;

// The address of an operand, temporaries included (they live to the end of the full expression).
inline Ref const* ptr(Ref const& r) { return &r; }

struct op_extra {
  ValueP value;
  ExprP e0;
  ExprP e1;  // atomic_fetch's cas: the expected value
  std::int64_t n = 0;
  bool flag = false;
  std::span<const int> axes;
  std::uint8_t transpose = 0;
  ~op_extra();  // out of line, as Ref's; still an aggregate, so ops pass {.n = 2}
};
// A leaf statement; a null entry in `refs` is an operand that is not in memory (registers).
// The location is required: every op must say where the user wrote it.
StmtP stmt_op(ir::StmtOp op, src_loc loc, std::initializer_list<Ref const*> refs = {}, op_extra const& extra = {}) noexcept;
StmtP stmt_seq(std::initializer_list<StmtP const*> body) noexcept;
StmtP stmt_for(int var, ExprP lo, ExprP hi, StmtP body, src_loc loc) noexcept;
StmtP stmt_if(ExprP cond, StmtP then_, StmtP else_, src_loc loc) noexcept;

}  // namespace stagecraft::tree
