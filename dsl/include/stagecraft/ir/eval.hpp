// Index expressions evaluated on the host: one definition of their arithmetic for every backend
// that evaluates them (the interpreter, the bench's work model), so they cannot drift apart.
//
//   ir::eval_index(k, id, [&](ir::Expr const& leaf) { ... },
//                  [&](ir::Expr const& load, std::int64_t i) { /* element i of an index table */ },
//                  [&] { /* division by zero */ });
//
// Arithmetic is 64-bit two's complement, as the generated code's `long long` wraps on the GPU:
// overflow and INT64_MIN / -1 wrap here too instead of being undefined. A division or modulo by
// zero calls `div_by_zero` (which may report and return, or throw) and then yields 0.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>

#include "stagecraft/ir/kernel.hpp"

namespace stagecraft::ir {

// leaf(e): the value of a constant, var, program_id, cluster_idx or thread_id node. A run-time
// extent is the value the kernel holds for it (Kernel::extents: ir::bind sets them).
// load(e, i): element i of index table e.value (x.at(i)); the caller checks i against its extent.
// For a clc_result (e.op), what the response at u32 element i of its allocation says; for a
// fetched, the i32 at element i of the atomic's slot allocation.
template <class Leaf, class Load, class DivByZero>
std::int64_t eval_index(Kernel const& k, ExprId id, Leaf&& leaf, Load&& load, DivByZero&& div_by_zero) {
  auto const& e = k.exprs[id];
  auto sub = [&](ExprId c) { return eval_index(k, c, leaf, load, div_by_zero); };
  switch (e.op) {
    case ExprOp::constant: case ExprOp::var: case ExprOp::program_id: case ExprOp::cluster_idx: case ExprOp::thread_id:
      return leaf(e);
    case ExprOp::extent: return k.extents[static_cast<std::size_t>(e.value)].value;
    case ExprOp::lnot: return !sub(e.a);
    case ExprOp::load:
    case ExprOp::clc_result:
    case ExprOp::fetched: return load(e, sub(e.a));  // memory: an index table, a response or an atomic's slot in SMEM
    default: break;
  }
  const auto x = sub(e.a), y = sub(e.b);
  const auto ux = static_cast<std::uint64_t>(x), uy = static_cast<std::uint64_t>(y);
  switch (e.op) {
    case ExprOp::add: return static_cast<std::int64_t>(ux + uy);
    case ExprOp::sub: return static_cast<std::int64_t>(ux - uy);
    case ExprOp::mul: return static_cast<std::int64_t>(ux * uy);
    case ExprOp::div:
    case ExprOp::mod:
      if (y == 0) {
        div_by_zero();
        return 0;
      }
      if (y == -1) return e.op == ExprOp::div ? static_cast<std::int64_t>(std::uint64_t{0} - ux) : 0;
      return e.op == ExprOp::div ? x / y : x % y;
    case ExprOp::min: return std::min(x, y);
    case ExprOp::max: return std::max(x, y);
    case ExprOp::lt: return x < y;
    case ExprOp::le: return x <= y;
    case ExprOp::gt: return x > y;
    case ExprOp::ge: return x >= y;
    case ExprOp::eq: return x == y;
    case ExprOp::ne: return x != y;
    case ExprOp::land: return x && y;
    case ExprOp::lor: return x || y;
    default: return 0;
  }
}

// An expression the host evaluates before a launch (a grid dimension over run-time extents:
// Kernel::grid_expr): constants and run-time extents only. `refused` is the first leaf of any
// other kind (a loop variable, program_id, an index table read), and then `value` is empty; so it
// is after a division by zero (`refused` null).
struct host_eval {
  std::optional<std::int64_t> value;
  Expr const* refused = nullptr;
};
inline host_eval eval_on_host(Kernel const& k, ExprId id) {
  host_eval r;
  bool div_zero = false;
  const auto v = eval_index(
      k, id,
      [&](Expr const& e) {
        if (e.op != ExprOp::constant && !r.refused) r.refused = &e;
        return e.value;
      },
      [&](Expr const& e, std::int64_t) {
        if (!r.refused) r.refused = &e;
        return std::int64_t{0};
      },
      [&] { div_zero = true; });
  if (!r.refused && !div_zero) r.value = v;
  return r;
}

}  // namespace stagecraft::ir
