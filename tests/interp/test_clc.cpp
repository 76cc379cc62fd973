// Cluster launch control (ops/clc.hpp) in the interpreter: a canceled cluster never runs and the
// CTA that canceled it does its work; eager hands one CTA everything, lazy leaves every CTA its
// own tile, PCT mixes; the mistakes are reported; the dynamic gemm_blackwell is correct under
// every schedule.
#include <catch2/catch.hpp>

#include <set>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "clc_kernels.hpp"
#include "inputs.hpp"
#include "mma_runs.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;
using interp::check;
using interp::policy;

namespace {

constexpr std::uint64_t input_seed = 20261205;
constexpr std::int64_t tiles = 6;

std::string messages(interp::result const& r) {
  std::string m;
  for (auto const& d : r.diagnostics) m += d.message + "\n";
  return m;
}

// Who took each tile, after checking that every row of y holds one CTA's index.
std::vector<std::int32_t> owners(interp::result const& r) {
  std::vector<std::int32_t> who;
  auto const& y = r.buffers[0];
  for (std::int64_t t = 0; t < tiles; ++t) {
    const auto w = static_cast<std::int32_t>(y.get(t * 32));
    for (std::int64_t j = 1; j < 32; ++j) REQUIRE(static_cast<std::int32_t>(y.get(t * 32 + j)) == w);
    REQUIRE(w >= 0);
    REQUIRE(w <= t);  // clusters run in launch order here: only an earlier CTA can cancel a later one
    who.push_back(w);
  }
  return who;
}

}  // namespace

TEST_CASE("cluster launch control: eager hands CTA 0 every tile, lazy leaves each CTA its own, PCT mixes, and every tile is done once",
          "[interp][clc]") {
  const auto k = testing::clc_owner(tiles);
  const auto in = testing::random_buffers(k, input_seed);
  auto eager = interp::run(k, in, {.schedule = policy::eager});
  INFO(messages(eager));
  REQUIRE(eager.ok());
  CHECK(owners(eager) == std::vector<std::int32_t>(tiles, 0));
  auto lazy = interp::run(k, in, {.schedule = policy::lazy});
  INFO(messages(lazy));
  REQUIRE(lazy.ok());
  CHECK(owners(lazy) == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5});
  std::set<std::vector<std::int32_t>> seen;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    INFO("pct seed " << seed);
    auto r = interp::run(k, in, {.schedule = policy::pct, .seed = seed});
    INFO(messages(r));
    REQUIRE(r.ok());
    seen.insert(owners(r));
  }
  CHECK(seen.size() > 2);  // not only the two extremes
}

TEST_CASE("cluster launch control: a query before the response's barrier wait races its landing", "[interp][clc]") {
  const auto k = testing::clc_owner<testing::clc_mistake::query_before_wait>(tiles);
  auto r = interp::run(k, testing::random_buffers(k, input_seed), {.schedule = policy::eager});
  REQUIRE(r.diagnostics.size() == 1);
  auto const& d = r.diagnostics.front();
  CHECK(d.kind == check::data_race);
  // The loop's test reads response 1 before its barrier wait, in the first round of the loop.
  CHECK_THAT(d.message, Contains("(break_if): data race on SMEM resp[1, 0]: a cluster launch control query (clc_canceled / clc_ctaid) (read) is not "
                                 "ordered after the earlier write by the try_cancel response completing landed[1] of CTA 0 (completion #1)"));
}

TEST_CASE("cluster launch control: a try_cancel after the CTA read a failed response is reported", "[interp][clc]") {
  const auto k = testing::clc_owner<testing::clc_mistake::skip_not_stop>(tiles);
  auto r = interp::run(k, testing::random_buffers(k, input_seed), {.schedule = policy::lazy});
  REQUIRE(r.diagnostics.size() == 1);
  auto const& d = r.diagnostics.front();
  CHECK(d.kind == check::clc_after_failure);
  CHECK_THAT(d.message, Contains("issues try_cancel after its CTA observed a failed response at op #") &&
                            Contains("leave the tile loop when a response says no cluster was canceled"));
}

TEST_CASE("gemm_blackwell clc=1 (dynamic persistent) is within the MMA tolerance under eager, lazy and 30 PCT schedules", "[interp][clc]") {
  auto const& e = registry::global().find("gemm_blackwell");
  for (auto sizes : {param_values{{"M", 512}, {"N", 512}, {"K", 256}}, param_values{{"M", 333}, {"N", 264}, {"K", 192}}}) {
    sizes.insert({"clc", 1});
    const auto vals = registry::resolve(e, sizes);
    const auto k = e.build(vals);
    const auto in = testing::random_buffers(k, input_seed);
    auto expected = in;
    e.reference(expected, vals);
    testing::run_everywhere(k, in, expected, 30);
  }
}
