// The fuzz input format (ir_codec) carries every memory reference of every bundled example,
// element strides included: decoding an encoded kernel gives its refs back, and re-encoding
// gives the same bytes.
#include <catch2/catch.hpp>

#include "ir_codec.hpp"
#include "stagecraft/registry.hpp"

using namespace stagecraft;

TEST_CASE("the fuzz codec round-trips every example, TMA element strides included", "[fuzz]") {
  int strided = 0;
  for (auto const* e : registry::global().all()) {
    INFO("kernel " << e->name);
    auto k = e->build(registry::resolve(*e, {}));
    k.debug = {};
    const auto bytes = fuzz::encode(k);
    const auto back = fuzz::decode(reinterpret_cast<std::uint8_t const*>(bytes.data()), bytes.size());
    CHECK(back.refs == k.refs);
    CHECK(back.params == k.params);
    CHECK(fuzz::encode(back) == bytes);
    for (auto const& r : back.refs) strided += !r.stride.empty();
  }
  CHECK(strided == 2);  // downsample_rows: its prologue's load and its refill
}
