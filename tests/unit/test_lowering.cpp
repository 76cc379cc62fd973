#include <catch2/catch.hpp>

#include <stagecraft/interp/interp.hpp>

#include "common.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

TEST_CASE("lowering keeps declarations, launch shape and op order", "[lowering]") {
  const ir::Kernel k = lower(testing::ring_kernel<3>(256, 512));
  CHECK(k.name == "ring");
  CHECK(k.target == ir::Target::sm_90a);
  CHECK(k.grid[0] == 4);
  CHECK(k.grid_rank == 1);
  CHECK(k.roles == 1);
  REQUIRE(k.params.size() == 2);
  CHECK(k.params[0].name == "x");
  CHECK(k.params[0].shape == std::vector<std::int64_t>{256, 512});
  CHECK(k.params[0].dynamic == std::vector<bool>{true, true});
  REQUIRE(k.allocs.size() == 2);
  CHECK(k.allocs[0].kind == ir::AllocKind::smem);
  CHECK(k.allocs[0].shape == std::vector<std::int64_t>{3, 64, 64});
  CHECK(k.allocs[1].kind == ir::AllocKind::barrier);
  CHECK(k.allocs[1].arrivals == 1);
  CHECK(k.num_vars == 2);

  // Pre-order: the body is #0 and children follow their parents.
  REQUIRE(k.body == 0);
  auto const& top = k.stmts[0];
  REQUIRE(top.op == ir::StmtOp::seq);
  REQUIRE(top.body.size() == 3);
  CHECK(k.stmts[top.body[0]].op == ir::StmtOp::for_);
  CHECK(k.stmts[top.body[1]].op == ir::StmtOp::for_);
  CHECK(k.stmts[top.body[2]].op == ir::StmtOp::wait_group);
  for (std::size_t i = 0; i < k.stmts.size(); ++i)
    for (auto c : k.stmts[i].body) CHECK(c > static_cast<ir::StmtId>(i));

  auto const& loop = k.stmts[top.body[1]];
  CHECK(loop.var == 1);
  auto const& body = k.stmts[loop.body[0]];
  REQUIRE(body.op == ir::StmtOp::seq);
  std::vector<ir::StmtOp> ops;
  for (auto c : body.body) ops.push_back(k.stmts[c].op);
  CHECK(ops == std::vector<ir::StmtOp>{ir::StmtOp::barrier_wait, ir::StmtOp::store, ir::StmtOp::commit_smem,
                                        ir::StmtOp::copy_smem_to_gmem, ir::StmtOp::commit_group, ir::StmtOp::wait_group,
                                        ir::StmtOp::if_});
}

TEST_CASE("copies carry the destination's shape and barrier operands are fully indexed", "[lowering]") {
  const ir::Kernel k = lower(testing::ring_kernel<2>(128, 256));
  int copies = 0;
  for (auto const& s : k.stmts) {
    if (s.op != ir::StmtOp::copy_gmem_to_smem) continue;
    ++copies;
    REQUIRE(s.refs.size() == 3);
    auto const& g = k.refs[s.refs[0]];
    auto const& m = k.refs[s.refs[1]];
    auto const& b = k.refs[s.refs[2]];
    CHECK(g.base == ir::RefBase::param);
    CHECK(g.shape == std::vector<std::int64_t>{64, 64});
    CHECK(g.block.size() == 2);
    CHECK(m.shape == std::vector<std::int64_t>{64, 64});
    CHECK(m.index.size() == 1);
    CHECK(b.index.size() == 1);
  }
  CHECK(copies == 2);
}

TEST_CASE("equal subexpressions are interned once", "[lowering]") {
  const ir::Kernel k = lower(testing::ring_kernel<2>(128, 256));
  for (std::size_t i = 0; i < k.exprs.size(); ++i)
    for (std::size_t j = i + 1; j < k.exprs.size(); ++j) CHECK_FALSE(k.exprs[i] == k.exprs[j]);
}

TEST_CASE("variables are numbered by binding order, independently of earlier kernels", "[lowering]") {
  const ir::Kernel a = lower(testing::ring_kernel<2>(128, 256));
  for (int i = 0; i < 5; ++i) (void)lower(testing::ring_kernel<4>(512, 512));  // consumes raw variable ids
  const ir::Kernel b = lower(testing::ring_kernel<2>(128, 256));
  CHECK(a == b);
  CHECK(ir::print(a) == ir::print(b));
}

TEST_CASE("an unindexed single barrier refers to element 0", "[lowering]") {
  auto k = lower(kernel<sm_90a>("single", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 64_c)), smem<f32>(shape(64_c, 64_c)),
                                barrier(arrivals(1_c)), [](auto x, auto buf, auto bar) {
                                  return seq(copy_gmem_to_smem(x.block(0_c, 0_c), buf, bar), barrier_wait(bar));
                                }));
  for (auto const& s : k.stmts)
    if (s.op == ir::StmtOp::barrier_wait) {
      auto const& r = k.refs[s.refs[0]];
      REQUIRE(r.index.size() == 1);
      CHECK(k.exprs[r.index[0]].op == ir::ExprOp::constant);
      CHECK(k.exprs[r.index[0]].value == 0);
    }
  CHECK_THAT(ir::print(k), Contains("barrier_wait b1[0]"));
}

TEST_CASE("barrier slices offset the index that follows", "[lowering]") {
  auto k = lower(kernel<sm_90a>("sliced", grid(1), threads(1_c), barrier(arrivals(1_c), count(6_c)), [](auto bar) {
    auto tail = bar.slice(2_c, 4_c);  // elements 2..5
    return for_(range(4_c), [&](auto j) { return barrier_arrive(tail[j]); });
  }));
  CHECK_THAT(ir::print(k), Contains("barrier_arrive b0[2 + v0]"));
}

TEST_CASE("the whole op catalog lowers: Hopper wgmma", "[lowering][catalog]") {
  auto k = lower(kernel<sm_90a>(
      "mma_h", grid(1), threads(1_c), smem<f16>(shape(64_c, 64_c), swizzle(128_c)), smem<f16>(shape(64_c, 64_c), swizzle(128_c)),
      accumulator<f32>(shape(64_c, 64_c)), [](auto a, auto b, auto acc) {
        return seq(store(acc, 0.0f), wgmma(acc, a, b), wgmma_wait(0_c), store(a, cast<f16>(load(acc))), commit_smem());
      }));
  auto text = ir::print(k);
  CHECK_THAT(text, Contains("wgmma acc2 += s0 * s1"));
  CHECK_THAT(text, Contains("wgmma_wait 0"));
  CHECK_THAT(text, Contains("smem s0: f16[64, 64] swizzle=128"));
  CHECK(ir::smem_bytes(k) == 2 * 8192);  // two 64x64 f16 tiles, 1024-byte aligned for the 128B swizzle
}

TEST_CASE("the whole op catalog lowers: Blackwell tcgen05 with TMEM and clusters and multicast", "[lowering][catalog]") {
  auto k = lower(kernel<sm_100a>(
      "mma_b", grid(4), threads(1_c), cluster(2_c), gmem<bf16>("a", shape(256_c, 64_c)), smem<bf16>(shape(128_c, 64_c), swizzle(128_c)),
      smem<bf16>(shape(64_c, 128_c), tiling(64_c, 64_c), swizzle(128_c)), tmem<f32>(shape(128_c, 128_c)),
      smem<bf16>(shape(128_c, 128_c)),  // out
      barrier(arrivals(1_c), count(2_c)), barrier(arrivals(1_c), orders_tensor_core),
      cluster_barrier(collective_axes(0_c), arrivals(2_c)), [](auto a, auto as, auto bs, auto d, auto out, auto loaded, auto mma, auto peers) {
        return seq(copy_gmem_to_smem(a.block(program_id(), 0_c), as, loaded[0_c], collective_axes(0_c)), barrier_wait(loaded[0_c]),
                   tcgen05_mma(d, as, bs, mma, false), tcgen05_commit_arrive(mma), barrier_wait(mma),
                   store(out, cast<bf16>(async_load_tmem(d))), tmem_dealloc(d), barrier_arrive(peers), barrier_wait(peers));
      }));
  auto text = ir::print(k);
  CHECK_THAT(text, Contains("tmem_dealloc t2"));
  CHECK_THAT(text, Contains("cluster=(2)"));
  CHECK_THAT(text, Contains("multicast over cluster axes (0)"));
  CHECK_THAT(text, Contains("tcgen05_mma t2 (accumulate if 0) += s0 * s1  then arrive on b5[0]"));
  CHECK_THAT(text, Contains("tcgen05_commit_arrive b5[0]"));
  CHECK_THAT(text, Contains("async_load_tmem(t2)"));
  CHECK_THAT(text, Contains("cluster_barrier cb6: [1] arrivals=2 collective_axes=(0)"));
  CHECK(ir::tmem_columns(k) == 128);
}

// ---- rules that used to surface after compilation (issue 11) ----------------------------------

namespace {
std::vector<host_tensor> random_inputs(ir::Kernel const& k, std::uint64_t seed, double lo, double hi) {
  auto rng = testing::seeded_rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<host_tensor> out;
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < t.elements(); ++i) t.set(i, dist(rng));
    out.push_back(std::move(t));
  }
  return out;
}
}  // namespace

TEST_CASE("GMEM parameters of rank 6 to 8 lower and run with plain loads and stores", "[lowering]") {
  // Rank 6 used to compile and then fail the verifier's "expected 1 to 5" in lower().
  auto k = lower(kernel<sm_90a>("rank6", grid(2), threads(1_c), gmem<f32>("x", shape(4, 2, 2, 2, 4, 32)),
                                gmem<f32>("y", shape(4, 2, 2, 2, 4, 32)), [](auto x, auto y) {
                                  auto t = [&](auto p) { return p.tile(shape(2_c, 2_c, 2_c, 2_c, 4_c, 32_c), program_id(), 0, 0, 0, 0, 0); };
                                  return store(t(y), load(t(x)) * 3.0f);
                                }));
  CHECK(k.params[0].shape.size() == 6);
  const std::uint64_t seed = 61;
  INFO("input seed " << seed);
  const auto inputs = random_inputs(k, seed, -8, 8);
  const auto r = interp::run(k, inputs);
  for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
  REQUIRE(r.ok());
  for (std::int64_t i = 0; i < inputs[0].elements(); ++i) REQUIRE(r.buffers[1].get(i) == static_cast<float>(inputs[0].get(i) * 3.0f));
}

TEST_CASE("a store to one fully indexed SMEM element writes that element only", "[lowering]") {
  auto k = lower(kernel<sm_90a>("one_element", grid(1), threads(1_c), gmem<f32>("x", shape(8_c, 32_c)), gmem<f32>("y", shape(8_c, 32_c)),
                                smem<f32>(shape(8_c, 32_c)), barrier(arrivals(1_c)), [](auto x, auto y, auto buf, auto bar) {
                                  return seq(copy_gmem_to_smem(x.block(0_c, 0_c), buf, bar), barrier_wait(bar),
                                             store(buf[3_c][5_c], load(buf[1_c][2_c]) * 2.0f + load(buf[3_c][5_c])), commit_smem(),
                                             copy_smem_to_gmem(buf, y.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                                }));
  const std::uint64_t seed = 62;
  INFO("input seed " << seed);
  const auto inputs = random_inputs(k, seed, -8, 8);
  const auto r = interp::run(k, inputs);
  for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
  REQUIRE(r.ok());
  auto expected = inputs[0];
  expected.set(3 * 32 + 5, static_cast<float>(inputs[0].get(32 + 2)) * 2.0f + static_cast<float>(inputs[0].get(3 * 32 + 5)));
  CHECK(first_difference(r.buffers[1], expected) == -1);
}

TEST_CASE("u32 tiles multiply modulo 2^32 in the interpreter", "[lowering]") {
  // u32 x u32 used to be computed in int64, which overflows (UB) once the product reaches 2^63.
  auto k = lower(kernel<sm_90a>("u32_mul", grid(1), threads(1_c), gmem<u32>("x", shape(256_c)), gmem<u32>("y", shape(256_c)),
                                [](auto x, auto y) {
                                  auto t = [&](auto p) { return p.tile(shape(256_c), 0_c); };
                                  return store(t(y), load(t(x)) * load(t(x)) * load(t(x)));
                                }));
  const std::uint64_t seed = 63;
  INFO("input seed " << seed);
  const auto inputs = random_inputs(k, seed, 3.0e9, 4294967295.0);  // squares above 2^63
  const auto r = interp::run(k, inputs);
  REQUIRE(r.ok());
  auto x = inputs[0].as<std::uint32_t>();
  auto y = r.buffers[1].as<std::uint32_t>();
  for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(y[i] == static_cast<std::uint32_t>(x[i] * x[i] * x[i]));
}

TEST_CASE("program_id of a static grid indexes per-CTA barriers and SMEM without runtime_index", "[lowering]") {
  auto k = lower(kernel<sm_90a>("per_cta", grid(4_c), threads(1_c), gmem<f32>("x", shape(256_c, 32_c)), gmem<f32>("y", shape(256_c, 32_c)),
                                smem<f32>(shape(4_c, 64_c, 32_c)), barrier(arrivals(1_c), count(4_c)),
                                [](auto x, auto y, auto buf, auto bar) {
                                  auto me = program_id();
                                  return seq(copy_gmem_to_smem(x.block(me, 0_c), buf[me], bar[me]), barrier_wait(bar[me]),
                                             store(buf[me], load(buf[me]) + 1.0f), commit_smem(), copy_smem_to_gmem(buf[me], y.block(me, 0_c)),
                                             commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                                }));
  const std::uint64_t seed = 64;
  INFO("input seed " << seed);
  const auto inputs = random_inputs(k, seed, -8, 8);
  const auto r = interp::run(k, inputs);
  for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
  REQUIRE(r.ok());
  for (std::int64_t i = 0; i < inputs[0].elements(); ++i) REQUIRE(r.buffers[1].get(i) == static_cast<float>(inputs[0].get(i) + 1.0f));
}

// Issue 27, edge 7: `auto m = program_id(0_c), n = program_id(1_c);` cannot compile (each axis has
// a type of its own); program_ids<2>() gives both in one declaration. (No lambda captures them
// here: clang 14 cannot capture structured bindings.)
TEST_CASE("program_ids<2>() gives each axis's coordinate in one declaration", "[lowering]") {
  auto k = lower(kernel<sm_90a>("two_axes", grid(4_c, 2_c), threads(1_c), gmem<f32>("x", shape(256_c, 64_c)), gmem<f32>("y", shape(256_c, 64_c)),
                                [](auto x, auto y) {
                                  auto [m, n] = program_ids<2>();
                                  return store(y.tile(shape(64_c, 32_c), m, n), load(x.tile(shape(64_c, 32_c), m, n)) * 3.0f);
                                }));
  const auto inputs = random_inputs(k, 65, -8, 8);
  const auto r = interp::run(k, inputs);
  for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
  REQUIRE(r.ok());
  for (std::int64_t i = 0; i < inputs[0].elements(); ++i) REQUIRE(r.buffers[1].get(i) == static_cast<float>(inputs[0].get(i) * 3.0f));
}

TEST_CASE("the verifier rejects TMA boxes over 256 elements per dimension", "[lowering][verify]") {
  // The front end rejects them at compile time; a hand-built IR reached the launch before.
  auto k = lower(kernel<sm_90a>("big_box", grid(4), threads(1_c), gmem<f32>("x", shape(1024_c, 16_c)), smem<f32>(shape(256_c, 16_c)),
                                barrier(arrivals(1_c)), [](auto x, auto buf, auto bar) {
                                  return seq(copy_gmem_to_smem(x.block(program_id(), 0_c), buf, bar), barrier_wait(bar));
                                }));
  ir::verify(k);
  k.allocs[0].shape = {512, 16};
  for (auto& r : k.refs)
    if (r.base == ir::RefBase::param || r.id == 0) r.shape = {512, 16};  // the block and the SMEM view, not the barrier
  REQUIRE_THROWS_WITH(ir::verify(k), Contains("kernel 'big_box': op #1 (copy_gmem_to_smem): a TMA box has at most 256 elements per dimension, "
                                              "but the box (512, 16) has 512 in dimension 0"));
}

TEST_CASE("the front end's tree is cheap for a kernel TU to copy and drop: one-pointer handles, noexcept builders", "[lowering]") {
  // What keeps kernel TUs quick to compile (docs/codegen.md, compile time): every op copies and
  // drops handles and Refs, and those must be a call, not inlined shared_ptr or vector teardown
  // with an exception landing pad around each.
  using namespace stagecraft::tree;
  CHECK(sizeof(ExprP) == sizeof(void*));
  CHECK(sizeof(StmtP) == sizeof(void*));
  CHECK(noexcept(make_expr(ir::ExprOp::constant, 1)));
  CHECK(noexcept(stmt_op(ir::StmtOp::commit_smem, src_loc{})));
  CHECK(noexcept(ref_indexed(std::declval<Ref const&>(), ExprP{}, ExprP{}, true)));
  CHECK(std::is_nothrow_copy_constructible_v<Ref>);
  CHECK(std::is_nothrow_copy_constructible_v<ExprP>);
  // Shared nodes outlive the handle they were made through, and die with the last one.
  ExprP sum;
  {
    const ExprP seven = make_expr(ir::ExprOp::constant, 7);
    ExprP copy = seven;
    sum = make_expr(ir::ExprOp::add, 0, seven, std::move(copy));
    CHECK_FALSE(static_cast<bool>(copy));  // moved from: empty
  }
  REQUIRE(static_cast<bool>(sum));
  CHECK(sum->a->value == 7);
  CHECK(&*sum->a == &*sum->b);  // one node, two owners
  ExprP other = sum;
  sum = ExprP{};
  CHECK(other->op == ir::ExprOp::add);
}

namespace {
// store(y, load(v)) of one SMEM view v of a (2, 128, 64) ring: the IR of v is the load's ref.
template <class F>
ir::Kernel view_of_ring(F view) {
  return lower(kernel<sm_90a>("sub", grid(1), threads(1_c), gmem<f32>("y", shape(16_c, 16_c)), smem<f32>("ring", shape(2_c, 128_c, 64_c)),
                              [&](auto y, auto ring) { return store(y.tile(shape(16_c, 16_c), 0_c, 0_c), load(view(ring))); }));
}
ir::Ref const& loaded(ir::Kernel const& k) {
  for (auto const& v : k.values)
    if (v.op == ir::ValueOp::load) return k.refs[v.ref];
  throw std::logic_error("no load");
}
std::int64_t const_of(ir::Kernel const& k, ir::ExprId e) {
  REQUIRE(k.exprs[e].op == ir::ExprOp::constant);
  return k.exprs[e].value;
}
}  // namespace

TEST_CASE("SMEM sub-views lower to their origin and extents, slices compose, and an index counts from the origin", "[lowering][smem_views]") {
  // rows 40..55 of columns 8..23 of stage 1, cut in two steps, the second relative to the first
  const auto k = view_of_ring([](auto ring) { return slice<0>(slice<1>(slice<0>(ring[1_c], 32_c, 64_c), 8_c, 16_c), 8_c, 16_c); });
  ir::verify(k);
  auto const& r = loaded(k);
  REQUIRE(r.index.size() == 1);
  CHECK(const_of(k, r.index[0]) == 1);
  CHECK(r.shape == std::vector<std::int64_t>{16, 16});
  REQUIRE(r.block.size() == 2);
  CHECK(k.exprs[r.block[0]].op == ir::ExprOp::add);  // 32 + 8: the starts add up
  CHECK(const_of(k, r.block[1]) == 8);
  CHECK_THAT(ir::print(k), Contains("load(s0[1].sub[32 + 8, 8](16x16))"));
  // Indexing the sliced leading dimension of a sub-view: index 0 of the slice from stage 1 is stage 1.
  const auto k2 = view_of_ring([](auto ring) { return slice<0>(slice<1>(slice<0>(ring, 1_c, 1_c)[0_c], 0_c, 16_c), 0_c, 16_c); });
  ir::verify(k2);
  auto const& r2 = loaded(k2);
  REQUIRE(r2.index.size() == 1);
  auto const& i0 = k2.exprs[r2.index[0]];
  REQUIRE(i0.op == ir::ExprOp::add);
  CHECK(const_of(k2, i0.a) + const_of(k2, i0.b) == 1);
  CHECK(r2.shape == std::vector<std::int64_t>{16, 16});
  // A different start is a different kernel (the JIT cache key).
  const auto a = view_of_ring([](auto ring) { return slice<1>(slice<0>(ring[0_c], 0_c, 16_c), 0_c, 16_c); });
  const auto b = view_of_ring([](auto ring) { return slice<1>(slice<0>(ring[0_c], 16_c, 16_c), 0_c, 16_c); });
  CHECK(ir::hash(a) != ir::hash(b));
}
