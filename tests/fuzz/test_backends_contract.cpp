// The code generator on IR the verifier accepts (issue 11, item 7): each case hung or crashed
// it before. The verifier's own cases are in tests/unit/test_verify.cpp.
#include <catch2/catch.hpp>

#include <limits>

#include "stagecraft/nvrtc/codegen.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {
template <class T>
std::int32_t push(std::vector<T>& v, T x) {
  v.push_back(std::move(x));
  return static_cast<std::int32_t>(v.size() - 1);
}

ir::Kernel tiny() {
  ir::Kernel k;
  k.name = "tiny";
  k.params.push_back({"x", ir::DType::f32, {64}, {false}});
  k.body = push(k.stmts, ir::Stmt{ir::StmtOp::seq});
  return k;
}

// `depth` loops nested inside one another around an empty body, each over [0, n).
ir::Kernel nested_loops(int depth, std::int64_t n) {
  auto k = tiny();
  const auto lo = push(k.exprs, ir::Expr{ir::ExprOp::constant, 0});
  const auto hi = push(k.exprs, ir::Expr{ir::ExprOp::constant, n});
  ir::StmtId inner = push(k.stmts, ir::Stmt{ir::StmtOp::seq});
  for (int i = 0; i < depth; ++i) {
    ir::Stmt loop{ir::StmtOp::for_};
    loop.var = k.num_vars++;
    loop.e0 = lo;
    loop.e1 = hi;
    loop.body = {inner};
    inner = push(k.stmts, loop);
  }
  k.stmts[k.body].body = {inner};
  return k;
}
}  // namespace

TEST_CASE("code generation is linear in the loop nesting depth (it was exponential)", "[codegen][contract]") {
  const auto k = nested_loops(ir::max_nesting - 2, 2);
  REQUIRE_NOTHROW(ir::verify(k));
  const auto g = nvrtc::generate(k);
  // (its bounds are static and small: an int counter, codegen's loop_ranges)
  CHECK_THAT(g.source, Contains("int v" + std::to_string(ir::max_nesting - 3) + " = static_cast<int>(0LL)"));
}

TEST_CASE("code generation spells INT64_MIN as a valid C++ expression", "[codegen][contract]") {
  auto k = tiny();
  const auto lo = push(k.exprs, ir::Expr{ir::ExprOp::constant, std::numeric_limits<std::int64_t>::min()});
  ir::Stmt loop{ir::StmtOp::for_};
  loop.var = k.num_vars++;
  loop.e0 = lo;
  loop.e1 = lo;
  loop.body = {push(k.stmts, ir::Stmt{ir::StmtOp::seq})};
  k.stmts[k.body].body = {push(k.stmts, loop)};
  REQUIRE_NOTHROW(ir::verify(k));
  const auto g = nvrtc::generate(k);
  CHECK_THAT(g.source, Contains("(-9223372036854775807LL - 1)"));
  CHECK_THAT(g.source, !Contains("-9223372036854775808LL"));
}

TEST_CASE("code generation handles a fully indexed (rank-0) SMEM store", "[codegen][contract]") {
  auto k = tiny();
  k.allocs.push_back({ir::AllocKind::smem, ir::DType::f32, {2, 64}});
  const auto zero = push(k.exprs, ir::Expr{ir::ExprOp::constant, 0});
  const auto ref = push(k.refs, ir::Ref{ir::RefBase::alloc, 0, {zero, zero}, {}, {}});
  ir::Value one{ir::ValueOp::scalar, ir::DType::f32, {}};
  one.scalar = 1.0;
  ir::Stmt st{ir::StmtOp::store};
  st.refs = {ref};
  st.value = push(k.values, one);
  k.stmts[k.body].body = {push(k.stmts, st)};
  REQUIRE_NOTHROW(ir::verify(k));
  const auto g = nvrtc::generate(k);
  CHECK_THAT(g.source, Contains("store, 1 element(s) per thread"));
}
