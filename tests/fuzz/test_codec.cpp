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
