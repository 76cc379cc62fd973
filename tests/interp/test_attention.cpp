// attention_hopper in the interpreter: S = 256 at head dims 64 and 128, causal and not, within
// the MMA tolerance of its double reference (which rounds P to bf16 where the kernel does)
// under eager, lazy and 50 PCT schedules; and the parts of its protocol a wrong kernel breaks.
#include <catch2/catch.hpp>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/registry.hpp>

#include "inputs.hpp"
#include "mma_runs.hpp"

using namespace stagecraft;

namespace {

struct built {
  param_values values;
  ir::Kernel kernel;
  std::vector<host_tensor> inputs, expected;
};

built attention(std::int64_t D, std::int64_t causal, std::int64_t B = 1, std::int64_t S = 256, std::int64_t pingpong = 0) {
  auto const& e = registry::global().find("attention_hopper");
  built b;
  b.values = registry::resolve(e, {{"B", B}, {"S", S}, {"D", D}, {"causal", causal}, {"pingpong", pingpong}});
  b.kernel = e.build(b.values);
  b.inputs = testing::random_buffers(b.kernel, 31 + static_cast<std::uint64_t>(D + causal));
  b.expected = b.inputs;
  e.reference(b.expected, b.values);
  return b;
}

}  // namespace

TEST_CASE("attention_hopper: S = 256, D = 64 and 128, causal and not, within the MMA bound under eager, lazy and 50 PCT schedules",
          "[interp][attention]") {
  for (std::int64_t D : {64, 128})
    for (std::int64_t causal : {0, 1}) {
      INFO("D = " << D << ", causal = " << causal);
      auto b = attention(D, causal);
      testing::run_everywhere(b.kernel, b.inputs, b.expected, 50);
    }
}

TEST_CASE("attention_hopper: the causal mask matters, and the reference is not the unmasked one", "[interp][attention]") {
  // A check that cannot fail would pass a kernel that ignores the mask: the causal run must be
  // outside the bound of the non-causal reference.
  auto c = attention(64, 1);
  auto const& e = registry::global().find("attention_hopper");
  auto unmasked = c.inputs;
  auto v = c.values;
  v["causal"] = 0;
  e.reference(unmasked, v);
  const auto r = interp::run(c.kernel, c.inputs, {.schedule = interp::policy::eager});
  REQUIRE(r.ok());
  CHECK(testing::outside_bound(c.kernel, r, c.inputs, c.expected).empty());
  CHECK_FALSE(testing::outside_bound(c.kernel, r, c.inputs, unmasked).empty());
}

TEST_CASE("attention_hopper: two slices (B = 2) read their own K and V rows", "[interp][attention]") {
  auto b = attention(64, 0, 2, 128);
  const auto r = interp::run(b.kernel, b.inputs, {.schedule = interp::policy::lazy});
  REQUIRE(r.ok());
  CHECK(testing::outside_bound(b.kernel, r, b.inputs, b.expected).empty());
}

TEST_CASE("attention_hopper pingpong=1: S = 256 (and 512, two query tiles), D = 64 and 128, causal and not, within the MMA bound under eager, lazy and 50 PCT schedules",
          "[interp][attention][pingpong]") {
  // Causal: consumer 0 skips the block after its diagonal, but must still pass both of its
  // turns on it or consumer 1's diagonal block waits forever; at S = 512 the second query tile
  // skips the most (each consumer a different number of blocks).
  for (std::int64_t S : {256, 512})
    for (std::int64_t D : {64, 128})
      for (std::int64_t causal : {0, 1}) {
        if (S == 512 && !causal) continue;
        INFO("S = " << S << ", D = " << D << ", causal = " << causal);
        auto b = attention(D, causal, 1, S, 1);
        REQUIRE(b.kernel.allocs.size() == attention(D, causal).kernel.allocs.size() + 1);  // the turn barriers
        testing::run_everywhere(b.kernel, b.inputs, b.expected, 50);
      }
}
