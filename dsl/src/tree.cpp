// Builders of the front end's run-time tree (see core/tree.hpp): out of line on purpose.
#include "stagecraft/core/tree.hpp"

namespace stagecraft::tree {

ExprP make_expr(ir::ExprOp op, std::int64_t value, ExprP a, ExprP b) {
  return std::make_shared<const Expr>(Expr{op, value, std::move(a), std::move(b)});
}

Ref ref_root(Base base, int id, ir::DType dt, dims_view shape) {
  return Ref{base, id, {}, {}, std::vector<std::int64_t>(shape.begin(), shape.end()), dt};
}
Ref ref_root(Base base, int id, ir::DType dt, std::span<const std::int64_t> shape) {
  return Ref{base, id, {}, {}, std::vector<std::int64_t>(shape.begin(), shape.end()), dt};
}

Ref ref_indexed(Ref const& r, ExprP index, ExprP offset, bool drop_front) {
  Ref out = r;
  out.index.push_back(offset ? make_expr(ir::ExprOp::add, 0, std::move(offset), std::move(index)) : std::move(index));
  if (drop_front && !out.shape.empty()) out.shape.erase(out.shape.begin());
  return out;
}

Ref ref_element(Ref const& r, int remaining_rank, ExprP offset) {
  Ref out = r;
  for (int d = 0; d < remaining_rank; ++d) out.index.push_back(d == 0 && offset ? offset : make_expr(ir::ExprOp::constant, 0));
  return out;
}

Ref ref_block(Ref const& r, std::initializer_list<ExprP> coords) {
  Ref out = r;
  out.block.assign(coords.begin(), coords.end());
  return out;
}

Ref ref_sized(Ref const& r, dims_view shape) {
  Ref out = r;
  out.shape.assign(shape.begin(), shape.end());
  return out;
}

namespace {
std::vector<std::int64_t> to_vector(dims_view d) { return {d.begin(), d.end()}; }
}  // namespace

ValueP value_unary(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a) {
  return std::make_shared<const Value>(Value{op, dt, to_vector(shape), std::move(a), {}, {}, 0});
}
ValueP value_binary(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a, ValueP b) {
  return std::make_shared<const Value>(Value{op, dt, to_vector(shape), std::move(a), std::move(b), {}, 0});
}
ValueP value_scalar(ir::DType dt, dims_view shape, double v) {
  return std::make_shared<const Value>(Value{ir::ValueOp::scalar, dt, to_vector(shape), {}, {}, {}, v});
}
ValueP value_axis(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a, int axis) {
  return std::make_shared<const Value>(Value{op, dt, to_vector(shape), std::move(a), {}, {}, static_cast<double>(axis)});
}
ValueP value_ternary(ir::ValueOp op, ir::DType dt, dims_view shape, ValueP a, ValueP b, ValueP c) {
  return std::make_shared<const Value>(Value{op, dt, to_vector(shape), std::move(a), std::move(b), {}, 0, std::move(c)});
}
ValueP value_load(ir::ValueOp op, ir::DType dt, dims_view shape, Ref const& r) {
  return std::make_shared<const Value>(Value{op, dt, to_vector(shape), {}, {}, r, 0});
}

StmtP stmt_op(ir::StmtOp op, src_loc loc, std::initializer_list<Ref const*> refs, op_extra const& extra) {
  Stmt s{op};
  s.loc = loc;
  for (auto const* r : refs) s.refs.push_back(r ? *r : Ref{});
  s.value = extra.value;
  s.e0 = extra.e0;
  s.n = extra.n;
  s.flag = extra.flag;
  s.transpose = extra.transpose;
  s.axes.assign(extra.axes.begin(), extra.axes.end());
  return std::make_shared<const Stmt>(std::move(s));
}

StmtP stmt_seq(std::initializer_list<StmtP const*> body) {
  Stmt s{ir::StmtOp::seq};
  for (auto const* b : body) s.body.push_back(*b);
  return std::make_shared<const Stmt>(std::move(s));
}

StmtP stmt_for(int var, ExprP lo, ExprP hi, StmtP body, src_loc loc) {
  Stmt s{ir::StmtOp::for_};
  s.loc = loc;
  s.var = var;
  s.e0 = std::move(lo);
  s.e1 = std::move(hi);
  s.body = {std::move(body)};
  return std::make_shared<const Stmt>(std::move(s));
}

StmtP stmt_if(ExprP cond, StmtP then_, StmtP else_, src_loc loc) {
  Stmt s{ir::StmtOp::if_};
  s.loc = loc;
  s.e0 = std::move(cond);
  s.body = {std::move(then_)};
  if (else_) s.body.push_back(std::move(else_));
  return std::make_shared<const Stmt>(std::move(s));
}

}  // namespace stagecraft::tree
