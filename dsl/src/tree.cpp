// Builders of the front end's run-time tree (see core/tree.hpp): out of line on purpose.
#include "stagecraft/core/tree.hpp"

#include <mutex>
#include <string>
#include <vector>

namespace stagecraft::tree {

namespace {
template <class T>
node<T> make_node(T&& v) {
  return node<T>(new node_block<T>{{1}, std::move(v)});
}
template <class T>
void retain_block(node_block<T>* p) noexcept {
  if (p) p->refs.fetch_add(1, std::memory_order_relaxed);
}
template <class T>
void release_block(node_block<T>* p) noexcept {
  // acq_rel: the last owner sees every write made through the others before it deletes.
  if (p && p->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p;
}
}  // namespace

void retain(node_block<Expr>* p) noexcept { retain_block(p); }
void retain(node_block<Value>* p) noexcept { retain_block(p); }
void retain(node_block<Stmt>* p) noexcept { retain_block(p); }
void release(node_block<Expr>* p) noexcept { release_block(p); }
void release(node_block<Value>* p) noexcept { release_block(p); }
void release(node_block<Stmt>* p) noexcept { release_block(p); }

ExprP make_expr(ir::ExprOp op, std::int64_t value, ExprP a, ExprP b) noexcept {
  return make_node(Expr{op, value, std::move(a), std::move(b)});
}

namespace {
struct extent_names {
  std::mutex m;
  std::vector<std::string> names;
};
extent_names& extents() {
  static extent_names e;
  return e;
}
}  // namespace

std::int32_t extent_id(std::string const& name) {
  auto& e = extents();
  std::lock_guard lock(e.m);
  for (std::size_t i = 0; i < e.names.size(); ++i)
    if (e.names[i] == name) return static_cast<std::int32_t>(i);
  e.names.push_back(name);
  return static_cast<std::int32_t>(e.names.size() - 1);
}
std::string extent_name(std::int32_t id) {
  auto& e = extents();
  std::lock_guard lock(e.m);
  return id >= 0 && static_cast<std::size_t>(id) < e.names.size() ? e.names[static_cast<std::size_t>(id)] : "?";
}

Ref::Ref() noexcept = default;
Ref::Ref(Base base_, int id_, ir::DType dtype_, std::vector<std::int64_t> shape_) noexcept
    : base(base_), id(id_), shape(std::move(shape_)), dtype(dtype_) {}
Ref::Ref(Ref const&) noexcept = default;
Ref::Ref(Ref&&) noexcept = default;
Ref& Ref::operator=(Ref const&) noexcept = default;
Ref& Ref::operator=(Ref&&) noexcept = default;
Ref::~Ref() = default;

op_extra::~op_extra() = default;

KernelDesc::KernelDesc() noexcept = default;
KernelDesc::KernelDesc(KernelDesc const&) noexcept = default;
KernelDesc::KernelDesc(KernelDesc&&) noexcept = default;
KernelDesc& KernelDesc::operator=(KernelDesc const&) noexcept = default;
KernelDesc& KernelDesc::operator=(KernelDesc&&) noexcept = default;
KernelDesc::~KernelDesc() = default;

void add_param(KernelDesc& d, ParamDecl p) noexcept { d.params.push_back(std::move(p)); }
void add_alloc(KernelDesc& d, AllocDecl a, const char* name, src_loc loc) noexcept {
  d.allocs.push_back(std::move(a));
  d.alloc_names.push_back(name);
  d.alloc_locs.push_back(loc);
}

Ref ref_root(Base base, int id, ir::DType dt, dims_view shape) noexcept {
  return Ref{base, id, dt, std::vector<std::int64_t>(shape.begin(), shape.end())};
}
Ref ref_root(Base base, int id, ir::DType dt, std::span<const std::int64_t> shape) noexcept {
  return Ref{base, id, dt, std::vector<std::int64_t>(shape.begin(), shape.end())};
}

Ref ref_indexed(Ref const& r, ExprP index, ExprP offset, bool drop_front) noexcept {
  Ref out = r;
  // Indexing a sub-view's first dimension counts from its origin there, and drops that origin.
  if (drop_front && !out.block.empty()) {
    offset = offset ? make_expr(ir::ExprOp::add, 0, std::move(offset), out.block.front()) : out.block.front();
    out.block.erase(out.block.begin());
  }
  out.index.push_back(offset ? make_expr(ir::ExprOp::add, 0, std::move(offset), std::move(index)) : std::move(index));
  if (drop_front && !out.shape.empty()) out.shape.erase(out.shape.begin());
  return out;
}

Ref ref_sliced(Ref const& r, int axis, ExprP start, std::int64_t extent) noexcept {
  Ref out = r;
  if (out.block.empty())
    for (std::size_t d = 0; d < out.shape.size(); ++d) out.block.push_back(make_expr(ir::ExprOp::constant, 0));
  auto& origin = out.block[static_cast<std::size_t>(axis)];
  // A constant 0 origin (a first slice) is replaced, so the IR of slice<0>(v, j, n) reads `j`.
  const bool zero = origin->op == ir::ExprOp::constant && origin->value == 0;
  origin = zero ? std::move(start) : make_expr(ir::ExprOp::add, 0, origin, std::move(start));
  out.shape[static_cast<std::size_t>(axis)] = extent;
  return out;
}

Ref ref_element(Ref const& r, int remaining_rank, ExprP offset) noexcept {
  Ref out = r;
  for (int d = 0; d < remaining_rank; ++d) out.index.push_back(d == 0 && offset ? offset : make_expr(ir::ExprOp::constant, 0));
  return out;
}

Ref ref_block(Ref const& r, std::initializer_list<ExprP> coords) noexcept {
  Ref out = r;
  out.block.assign(coords.begin(), coords.end());
  return out;
}

Ref ref_sized(Ref const& r, dims_view shape) noexcept {
  Ref out = r;
  out.shape.assign(shape.begin(), shape.end());
  return out;
}

Ref ref_window(Ref const& r, ExprP lo, ExprP hi) noexcept {
  Ref out = r;
  if (out.row_lo) {
    lo = make_expr(ir::ExprOp::add, 0, out.row_lo, std::move(lo));
    hi = make_expr(ir::ExprOp::add, 0, out.row_lo, std::move(hi));
  }
  out.row_lo = std::move(lo);
  out.row_hi = std::move(hi);
  return out;
}

Ref ref_strided(Ref const& r, dims_view stride) noexcept {
  Ref out = r;
  out.stride.assign(stride.begin(), stride.end());
  return out;
}

Ref ref_masked(Ref const& r, double fill) noexcept {
  Ref out = r;
  out.fill = fill;
  return out;
}

namespace {
std::vector<std::int64_t> to_vector(dims_view d) { return {d.begin(), d.end()}; }
}  // namespace

ValueP value_unary(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a) noexcept {
  return make_node(Value{op, dt, to_vector(shape), std::move(a), {}, {}, 0});
}
ValueP value_binary(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a, ValueP b) noexcept {
  return make_node(Value{op, dt, to_vector(shape), std::move(a), std::move(b), {}, 0});
}
ValueP value_scalar(ir::DType dt, dims_view shape, double v) noexcept {
  return make_node(Value{ir::ValueOp::scalar, dt, to_vector(shape), {}, {}, {}, v});
}
ValueP value_index(ir::DType dt, dims_view shape, ExprP e) noexcept {
  return make_node(Value{ir::ValueOp::index, dt, to_vector(shape), {}, {}, {}, 0, {}, std::move(e)});
}
ValueP value_axis(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a, int axis) noexcept {
  return make_node(Value{op, dt, to_vector(shape), std::move(a), {}, {}, static_cast<double>(axis)});
}
ValueP value_ternary(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a, ValueP b, ValueP c) noexcept {
  return make_node(Value{op, dt, to_vector(shape), std::move(a), std::move(b), {}, 0, std::move(c)});
}
ValueP value_view(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a, double param) noexcept {
  return make_node(Value{op, dt, to_vector(shape), std::move(a), {}, {}, param});
}
ValueP value_load(ir::ValueOp op, ir::DType dt, dims_view shape, Ref const& r) noexcept {
  return make_node(Value{op, dt, to_vector(shape), {}, {}, r, 0});
}

StmtP stmt_op(ir::StmtOp op, src_loc loc, std::initializer_list<Ref const*> refs, op_extra const& extra) noexcept {
  Stmt s{op};
  s.loc = loc;
  for (auto const* r : refs) s.refs.push_back(r ? *r : Ref{});
  s.value = extra.value;
  s.e0 = extra.e0;
  s.e1 = extra.e1;
  s.n = extra.n;
  s.flag = extra.flag;
  s.transpose = extra.transpose;
  s.axes.assign(extra.axes.begin(), extra.axes.end());
  return make_node(std::move(s));
}

StmtP stmt_seq(std::initializer_list<StmtP const*> body) noexcept {
  Stmt s{ir::StmtOp::seq};
  for (auto const* b : body) s.body.push_back(*b);
  return make_node(std::move(s));
}

StmtP stmt_for(int var, ExprP lo, ExprP hi, StmtP body, src_loc loc) noexcept {
  Stmt s{ir::StmtOp::for_};
  s.loc = loc;
  s.var = var;
  s.e0 = std::move(lo);
  s.e1 = std::move(hi);
  s.body = {std::move(body)};
  return make_node(std::move(s));
}

StmtP stmt_if(ExprP cond, StmtP then_, StmtP else_, src_loc loc) noexcept {
  Stmt s{ir::StmtOp::if_};
  s.loc = loc;
  s.e0 = std::move(cond);
  s.body = {std::move(then_)};
  if (else_) s.body.push_back(std::move(else_));
  return make_node(std::move(s));
}

}  // namespace stagecraft::tree
