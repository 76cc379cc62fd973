// Roles: which roles may run each statement (ir/roles.hpp).
#include "stagecraft/ir/roles.hpp"

#include <optional>

#include <fmt/format.h>

namespace stagecraft::ir {

std::string role_name(Kernel const& k, int r) {
  const int w = first_warp(k, r);
  if (k.role_warps.empty()) return fmt::format("warpgroup {}", r);
  if (role_warps(k, r) == 1) return fmt::format("warp {} (role {})", w, r);
  return fmt::format("warpgroup {} (role {}, warps {}-{})", w / 4, r, w, w + 3);
}

std::string role_label(Kernel const& k, int r) {
  if (k.role_warps.empty()) return fmt::format("wg{}", r);
  return role_warps(k, r) == 1 ? fmt::format("warp{}", first_warp(k, r)) : fmt::format("wg{}", first_warp(k, r) / 4);
}

namespace {

// The value of an index expression in role r where only constants and thread_id() decide it
// (nullopt: something else does). && and || are decided by one side when it alone decides.
std::optional<std::int64_t> role_value(Kernel const& k, ExprId id, int r) {
  auto const& e = k.exprs[static_cast<std::size_t>(id)];
  switch (e.op) {
    case ExprOp::constant: return e.value;
    case ExprOp::thread_id: return r;
    case ExprOp::lnot: {
      const auto a = role_value(k, e.a, r);
      return a ? std::optional<std::int64_t>(!*a) : std::nullopt;
    }
    case ExprOp::land:
    case ExprOp::lor: {
      const auto a = role_value(k, e.a, r), b = role_value(k, e.b, r);
      const bool decides = e.op == ExprOp::lor;  // the value one side decides the result with
      if ((a && (*a != 0) == decides) || (b && (*b != 0) == decides)) return decides;
      if (a && b) return decides ? (*a || *b) : (*a && *b);
      return std::nullopt;
    }
    case ExprOp::add: case ExprOp::sub: case ExprOp::mul: case ExprOp::min: case ExprOp::max:
    case ExprOp::lt: case ExprOp::le: case ExprOp::gt: case ExprOp::ge: case ExprOp::eq: case ExprOp::ne: {
      const auto a = role_value(k, e.a, r), b = role_value(k, e.b, r);
      if (!a || !b) return std::nullopt;
      const auto ua = static_cast<std::uint64_t>(*a), ub = static_cast<std::uint64_t>(*b);
      switch (e.op) {
        case ExprOp::add: return static_cast<std::int64_t>(ua + ub);
        case ExprOp::sub: return static_cast<std::int64_t>(ua - ub);
        case ExprOp::mul: return static_cast<std::int64_t>(ua * ub);
        case ExprOp::min: return std::min(*a, *b);
        case ExprOp::max: return std::max(*a, *b);
        case ExprOp::lt: return *a < *b;
        case ExprOp::le: return *a <= *b;
        case ExprOp::gt: return *a > *b;
        case ExprOp::ge: return *a >= *b;
        case ExprOp::eq: return *a == *b;
        default: return *a != *b;
      }
    }
    default: return std::nullopt;  // vars, program_id, extents, loads; div and mod need care with 0
  }
}

void walk(Kernel const& k, StmtId s, role_set who, std::vector<role_set>& out) {
  out[static_cast<std::size_t>(s)] = who;
  auto const& x = k.stmts[static_cast<std::size_t>(s)];
  if (x.op != StmtOp::if_) {
    for (auto c : x.body) walk(k, c, who, out);
    return;
  }
  role_set then_roles = 0, else_roles = 0;
  for (int r = 0; r < k.roles && r < max_roles; ++r) {
    const role_set bit = role_set{1} << r;
    if (!(who & bit)) continue;
    const auto v = role_value(k, x.e0, r);
    if (!v || *v != 0) then_roles |= bit;
    if (!v || *v == 0) else_roles |= bit;
  }
  walk(k, x.body[0], then_roles, out);
  if (x.body.size() > 1) walk(k, x.body[1], else_roles, out);
}

}  // namespace

std::vector<role_set> stmt_roles(Kernel const& k) {
  std::vector<role_set> out(k.stmts.size(), 0);
  if (k.body >= 0 && static_cast<std::size_t>(k.body) < k.stmts.size()) walk(k, k.body, all_roles(k), out);
  return out;
}

}  // namespace stagecraft::ir
