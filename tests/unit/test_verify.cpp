#include <catch2/catch.hpp>

#include "common.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {
ir::Kernel good() { return lower(testing::ring_kernel<2>(128, 256)); }

ir::Stmt& first(ir::Kernel& k, ir::StmtOp op) {
  for (auto& s : k.stmts)
    if (s.op == op) return s;
  FAIL("no such op");
  throw;
}
ir::StmtId id_of(ir::Kernel const& k, ir::Stmt const& s) { return static_cast<ir::StmtId>(&s - k.stmts.data()); }
}  // namespace

TEST_CASE("the verifier accepts what lowering produces", "[verify]") { CHECK_NOTHROW(ir::verify(good())); }

TEST_CASE("the verifier rejects malformed IR with a clear message", "[verify]") {
  auto k = good();

  SECTION("a variable used outside its loop") {
    auto& wait = first(k, ir::StmtOp::wait_group);  // the kernel's last statement sits outside every loop
    (void)wait;
    auto& last = k.stmts[k.stmts[k.body].body.back()];
    REQUIRE(last.op == ir::StmtOp::wait_group);
    // Make the top-level wait a barrier wait on an element indexed by the loop variable v1.
    auto const& inner = first(k, ir::StmtOp::barrier_wait);
    last.op = ir::StmtOp::barrier_wait;
    last.refs = inner.refs;
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("kernel 'ring': op #") && Contains("(barrier_wait): uses index variable v1 outside the loop"));
  }
  SECTION("an unindexed barrier array") {
    auto& wait = first(k, ir::StmtOp::barrier_wait);
    k.refs[wait.refs[0]].index.clear();
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("(barrier_wait): Attempting to operate on barrier without indexing, but num_barriers = 2"));
  }
  SECTION("a constant barrier index out of bounds") {
    auto& wait = first(k, ir::StmtOp::barrier_wait);
    k.exprs.push_back({ir::ExprOp::constant, 5});
    k.refs[wait.refs[0]].index[0] = static_cast<ir::ExprId>(k.exprs.size() - 1);
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("Barrier offset is out of bounds: offset = 5 in a dimension of 2"));
  }
  SECTION("a reference to an allocation that does not exist") {
    auto& wait = first(k, ir::StmtOp::barrier_wait);
    k.refs[wait.refs[0]].id = 9;
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("refers to allocation 9, which does not exist"));
  }
  SECTION("a barrier where SMEM is expected") {
    auto& copy = first(k, ir::StmtOp::copy_gmem_to_smem);
    std::swap(copy.refs[1], copy.refs[2]);
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("(copy_gmem_to_smem)"));
  }
  SECTION("a store whose tile has another dtype") {
    auto& st = first(k, ir::StmtOp::store);
    for (auto& v : k.values) v.dtype = ir::DType::f16;
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("op #" + std::to_string(id_of(k, st)) + " (store)"));
  }
  SECTION("a copy whose shapes disagree") {
    auto& copy = first(k, ir::StmtOp::copy_gmem_to_smem);
    k.refs[copy.refs[0]].shape = {32, 64};
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("Expected shapes to match, but src had shape (32, 64) and dst had shape (64, 64)"));
  }
  SECTION("a grid dimension of zero") {
    k.grid[0] = 0;
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("grid dimension 0 must be at least 1, got 0"));
  }
  SECTION("a grid that is not a multiple of the cluster") {
    k.cluster_rank = 1;
    k.cluster[0] = 3;
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("grid dimension 0 (2) must be a multiple of the cluster dimension (3)"));
  }
  SECTION("too much shared memory") {
    k.allocs[0].shape = {16, 64, 64};
    auto& copy = first(k, ir::StmtOp::copy_gmem_to_smem);
    (void)copy;
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("kernel exceeds available shared memory: smem_bytes=262160 > max_smem_bytes=232448"));
  }
  SECTION("a statement reachable twice") {
    auto& top = k.stmts[k.body];
    top.body.push_back(top.body.front());
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("is used twice in the tree"));
  }
  SECTION("a statement reachable from nowhere") {
    k.stmts.push_back({ir::StmtOp::commit_smem});
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("statement #") && Contains("is not reachable from the body"));
  }
  SECTION("wgmma in a Blackwell kernel") {
    auto& c = first(k, ir::StmtOp::commit_smem);
    c.op = ir::StmtOp::wgmma_wait;
    k.target = ir::Target::sm_100a;
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("(wgmma_wait): wgmma is a Hopper instruction, but the kernel targets sm_100a"));
  }
  SECTION("a program_id axis the grid does not have") {
    for (auto& e : k.exprs)
      if (e.op == ir::ExprOp::program_id) e.value = 2;
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("program_id(2) but the grid has 1 dimensions"));
  }
  SECTION("a name that cannot be a C symbol") {
    k.name = "my kernel";
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("the kernel name must be a C identifier"));
  }
}

TEST_CASE("lowering verifies: a kernel with a bad run-time grid is rejected with its name", "[verify]") {
  REQUIRE_THROWS_WITH(lower(testing::ring_kernel<2>(0, 256, 1.0f, "empty_grid")),
                      Contains("kernel 'empty_grid'") && Contains("grid dimension 0 must be at least 1, got 0"));
}

TEST_CASE("the verifier's budgets hold to the unit: at the limit accepted, one unit over rejected", "[verify]") {
  // IR need not come from the front end (the static checks there have their own boundary pairs
  // in tests/failtest/), so the verifier enforces the same limits, to the byte and the column.
  SECTION("SMEM bytes") {
    auto k = lower(kernel<sm_90a>("smem_edge", grid(1), threads(1_c), smem<i8>(shape(int_c<227 * 1024>)), [](auto) { return commit_smem(); }));
    CHECK(ir::smem_bytes(k) == ir::max_smem_bytes);
    CHECK_NOTHROW(ir::verify(k));
    k.allocs[0].shape = {227 * 1024 + 1};
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("kernel 'smem_edge'") && Contains("smem_bytes=232449 > max_smem_bytes=232448"));
  }
  SECTION("TMEM columns") {
    auto k = lower(kernel<sm_100a>("tmem_edge", grid(1), threads(1_c), gmem<f32>("y", shape(128, 256)), tmem<f32>(shape(128_c, 256_c)),
                                   tmem<f32>(shape(128_c, 256_c)), [](auto y, auto acc, auto) {
                                     return store(y.tile(shape(128_c, 256_c), 0_c, 0_c), async_load_tmem(acc));
                                   }));
    CHECK_NOTHROW(ir::verify(k));
    k.allocs[1].shape = {128, 288};
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("tmem_columns=544 > max_tmem_columns=512"));
  }
  SECTION("TMA box dimensions") {
    auto k = lower(kernel<sm_90a>("box_edge", grid(1), threads(1_c), gmem<f32>("x", shape(256_c, 4_c)), smem<f32>(shape(256_c, 4_c)),
                                  barrier(arrivals(1_c)), [](auto x, auto buf, auto full) {
                                    return seq(copy_gmem_to_smem(x.block(0_c, 0_c), buf, full), barrier_wait(full));
                                  }));
    CHECK_NOTHROW(ir::verify(k));
    auto& copy = first(k, ir::StmtOp::copy_gmem_to_smem);
    k.params[0].shape = {257, 4};
    k.allocs[0].shape = {257, 4};
    k.refs[copy.refs[0]].shape = {257, 4};
    k.refs[copy.refs[1]].shape = {257, 4};
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("(copy_gmem_to_smem): a TMA box has at most 256 elements per dimension, but the box (257, 4) has 257 in dimension 0"));
  }
}
