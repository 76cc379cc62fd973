// The fuzz input format (ir_codec) carries every bundled example whole, element strides and MMA
// operand transposes included: decoding an encoded kernel gives the same kernel back, and
// re-encoding gives the same bytes.
#include <catch2/catch.hpp>

#include "ir_codec.hpp"
#include "stagecraft/registry.hpp"

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
