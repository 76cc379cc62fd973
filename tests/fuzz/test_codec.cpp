// The fuzz input format (ir_codec) carries every bundled example whole, element strides and MMA
// operand transposes included: decoding an encoded kernel gives the same kernel back, and
// re-encoding gives the same bytes.
#include <catch2/catch.hpp>

#include "ir_codec.hpp"
#include "stagecraft/registry.hpp"
#include "stagecraft/stagecraft.hpp"

using namespace stagecraft;

TEST_CASE("the fuzz codec round-trips every example, TMA element strides and MMA transposes included", "[fuzz]") {
  int strided = 0, transposed = 0;
  for (auto const* e : registry::global().all()) {
    INFO("kernel " << e->name);
    auto k = e->build(registry::resolve(*e, {}));
    k.debug = {};
    const auto bytes = fuzz::encode(k);
    const auto back = fuzz::decode(reinterpret_cast<std::uint8_t const*>(bytes.data()), bytes.size());
    CHECK(back.refs == k.refs);
    CHECK(back.params == k.params);
    CHECK(back.stmts == k.stmts);  // wgmma / tcgen05 transposes (once dropped: gemm_hopper decoded K-major)
    CHECK(back == k);
    CHECK(fuzz::encode(back) == bytes);
    for (auto const& r : back.refs) strided += !r.stride.empty();
    for (auto const& s : back.stmts) transposed += s.transpose != 0;
  }
  CHECK(strided == 2);  // downsample_rows: its prologue's load and its refill
  CHECK(transposed > 0);
}

TEST_CASE("the fuzz codec carries named barriers (ops appended last), and a decoded one verifies and runs", "[fuzz][named_barrier]") {
  auto k = lower(kernel<sm_90a>("named_codec", grid(1), threads(2_c), [](auto...) {
    return seq(named_barrier_arrive(thread_id(), 128_c), named_barrier_sync(thread_id(), 128_c), named_barrier_sync(6_c, 256_c));
  }));
  k.debug = {};
  const auto bytes = fuzz::encode(k);
  const auto back = fuzz::decode(reinterpret_cast<std::uint8_t const*>(bytes.data()), bytes.size());
  CHECK(back == k);
  CHECK(fuzz::encode(back) == bytes);
  CHECK_NOTHROW(ir::verify(back));
  // A count the verifier must refuse in decoded IR (the front end cannot build it).
  auto bad = back;
  for (auto& s : bad.stmts)
    if (s.op == ir::StmtOp::named_barrier_sync) s.n = 96;
  CHECK_THROWS_WITH(ir::verify(bad), Catch::Matchers::Contains("counts 96 threads, but a named barrier's thread count must be a positive multiple of 128"));
}

TEST_CASE("decoded semaphore ops meet the front end's rules in the verifier: a positive value, a counter of an i32 workspace",
          "[fuzz][semaphore]") {
  auto const& e = registry::global().find("splitk_serial");
  const auto k = e.build(registry::resolve(e, {}));
  REQUIRE_NOTHROW(ir::verify(k));
  auto zero = k;
  const auto c0 = static_cast<ir::ExprId>(zero.exprs.size());
  zero.exprs.push_back({ir::ExprOp::constant, 0});
  for (auto& s : zero.stmts)
    if (s.op == ir::StmtOp::semaphore_signal) s.e0 = c0;
  CHECK_THROWS_WITH(ir::verify(zero), Catch::Matchers::Contains("(semaphore_signal): uses the value 0, but a semaphore's value must be 1 to 2^31 - 1"));
  // n is the scope: 0 .gpu, 1 .sys, nothing else.
  auto scoped = k;
  for (auto& s : scoped.stmts)
    if (s.op == ir::StmtOp::semaphore_wait) s.n = 1;
  REQUIRE_NOTHROW(ir::verify(scoped));
  for (auto& s : scoped.stmts)
    if (s.op == ir::StmtOp::semaphore_wait) s.n = 2;
  CHECK_THROWS_WITH(ir::verify(scoped), Catch::Matchers::Contains("(semaphore_wait): has scope code 2, but a semaphore op's scope is 0 (.gpu) or 1 (.sys)"));
  auto f32 = k;
  for (auto& p : f32.params)
    if (p.name == "turn") p.dtype = ir::DType::f32;
  CHECK_THROWS_WITH(ir::verify(f32), Catch::Matchers::Contains("takes parameter 'turn' (workspace f32), but a semaphore is a counter of a kernel-owned i32 array"));
  // A counter of an array that a plain store also writes (the front end cannot say it: the two
  // arrays are told apart by type there).
  auto both = lower(kernel<sm_90a>("sem_and_store", grid(1), threads(1_c), workspace<i32>("w", shape(4_c)), semaphores("turn", shape(4_c)),
                                   [](auto w, auto turn) { return seq(store(w.tile(shape(1_c), 0_c), 1), semaphore_signal(turn(1_c))); }));
  REQUIRE_NOTHROW(ir::verify(both));
  for (auto& s : both.stmts)
    if (s.op == ir::StmtOp::semaphore_signal) both.refs[s.refs[0]].id = 0;  // turn(1) -> w(1)
  CHECK_THROWS_WITH(ir::verify(both), Catch::Matchers::Contains("(store): reads or writes 'w', a semaphore array: its counters are only signalled, waited on and changed by atomics"));
}
