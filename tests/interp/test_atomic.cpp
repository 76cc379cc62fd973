// Value-returning atomics (ops/atomic.hpp) in the interpreter: tickets from one counter give
// every tile to exactly one CTA under any schedule; a ticket handed to another warpgroup is
// ordered by its barriers (reading it before the wait reads an unwritten or racing slot, and
// refilling the slot before the reader is done is a data race); each op computes what atom computes; and a release publishes to an
// acquire across CTAs, which either order alone does not.
#include <set>

#include <catch2/catch.hpp>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/stagecraft.hpp>

#include "atomic_kernels.hpp"
#include "inputs.hpp"
#include "mma_runs.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;
using interp::check;
using interp::policy;

namespace {

constexpr std::uint64_t input_seed = 20261206;

std::string messages(interp::result const& r) {
  std::string m;
  for (auto const& d : r.diagnostics) m += d.message + "\n";
  return m;
}

// Every row of y (tiles, 32) holds one CTA index in [0, ctas), the same in all 32 columns: each
// tile was done, by one CTA. Returns which CTAs did any.
std::set<std::int64_t> tiles_done_once(host_tensor const& y, std::int64_t tiles, std::int64_t ctas) {
  std::set<std::int64_t> who;
  for (std::int64_t t = 0; t < tiles; ++t) {
    const auto c = static_cast<std::int64_t>(y.get(t * 32));
    INFO("tile " << t);
    REQUIRE((c >= 0 && c < ctas));
    for (std::int64_t j = 1; j < 32; ++j) REQUIRE(static_cast<std::int64_t>(y.get(t * 32 + j)) == c);
    who.insert(c);
  }
  return who;
}

}  // namespace

TEST_CASE("atomics: tickets from fetch_add give every tile to one CTA under eager, lazy and 50 PCT schedules", "[interp][atomic]") {
  const std::int64_t ctas = 3, tiles = 7;
  const auto k = testing::atomic_tickets(ctas, tiles);
  // y starts as -1 everywhere: a tile nobody took would keep it (inputs of i32 are random otherwise).
  auto in = testing::random_buffers(k, input_seed);
  for (std::int64_t i = 0; i < in[0].elements(); ++i) in[0].set(i, -1);
  auto eager = interp::run(k, in, {.schedule = policy::eager});
  INFO(messages(eager));
  REQUIRE(eager.ok());
  CHECK(tiles_done_once(eager.buffers[0], tiles, ctas) == std::set<std::int64_t>{0});  // CTA 0 runs first and takes them all
  auto lazy = interp::run(k, in, {.schedule = policy::lazy});
  INFO(messages(lazy));
  REQUIRE(lazy.ok());
  tiles_done_once(lazy.buffers[0], tiles, ctas);
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    auto r = interp::run(k, in, {.schedule = policy::pct, .seed = seed});
    INFO("pct seed " << seed << "\n" << messages(r));
    REQUIRE(r.ok());
    tiles_done_once(r.buffers[0], tiles, ctas);
  }
}

TEST_CASE("atomics: a ticket handed from a producer to a consumer warpgroup through slots and barriers is race-free, and each of its two "
          "mistakes is a data race that names the slot",
          "[interp][atomic]") {
  const std::int64_t tiles = 9;
  {
    const auto k = testing::atomic_relay(tiles);
    auto in = testing::random_buffers(k, input_seed);
    for (std::int64_t i = 0; i < in[0].elements(); ++i) in[0].set(i, -1);
    for (auto p : {policy::eager, policy::lazy}) {
      auto r = interp::run(k, in, {.schedule = p});
      INFO(interp::policy_name(p) << "\n" << messages(r));
      REQUIRE(r.ok());
      tiles_done_once(r.buffers[0], tiles, 2);
    }
    auto ex = interp::explore(k, in, {.schedule = policy::pct, .seed = 3}, 50);
    INFO((ex.failure ? messages(*ex.failure) : std::string()));
    CHECK(ex.schedules == 50);
    CHECK_FALSE(ex.failing_seed.has_value());
  }
  for (const auto& k : {testing::atomic_relay<testing::relay_mistake::read_before_wait>(tiles),
                        testing::atomic_relay<testing::relay_mistake::no_empty_wait>(tiles)}) {
    INFO(k.name);
    const auto in = testing::random_buffers(k, input_seed);
    auto ex = interp::explore(k, in, {.schedule = policy::pct, .seed = 1}, 50);
    REQUIRE(ex.failing_seed.has_value());
    REQUIRE(ex.failure);
    const auto& d = ex.failure->diagnostics.front();
    INFO(d.message);
    // Reading before the wait meets an unwritten slot first (SMEM starts undefined), or one the
    // producer is still writing; refilling early races the consumer's read.
    CHECK((d.kind == check::data_race || (d.kind == check::poison_read && k.name == "atomic_relay_read_before_wait")));
    CHECK_THAT(d.message, Contains("slots["));
  }
}

TEST_CASE("atomics: add, min, max, exch and cas return what the counter held and leave what atom leaves", "[interp][atomic]") {
  const auto k = testing::atomic_each_op();
  const auto in = testing::random_buffers(k, input_seed);
  const auto r = interp::run(k, in, {.schedule = policy::eager});
  INFO(messages(r));
  REQUIRE(r.ok());
  const std::int64_t want[6] = {0, 5, -3, 7, 9, 9};  // c: 0 -> 5 -> -3 -> 7 -> 9 -> 9 -> 11
  for (std::int64_t row = 0; row < 6; ++row)
    for (std::int64_t j = 0; j < 32; ++j) {
      INFO("row " << row << " column " << j);
      CHECK(static_cast<std::int64_t>(r.buffers[0].get(row * 32 + j)) == want[row]);
    }
  CHECK_THAT(ir::print(k), Contains("fetch_min(c(0), -3, s0)") && Contains("compare_exchange(c(0), 7, 9, s0)") &&
                               Contains("exchange(c(0), 7, s0, memory_order::acq_rel)") &&
                               Contains("compare_exchange(c(0), 1, 11, s0, memory_scope::sys)") && Contains("fetch_add(c(0), 2, s0, memory_order::release)"));
}

TEST_CASE("atomics: a release fetch_add publishes a CTA's writes to a later CTA's acquire, and relaxed on either side is a data race",
          "[interp][atomic]") {
  auto run = [](ir::Kernel const& k) {
    auto in = testing::random_buffers(k, input_seed);
    return std::pair{interp::run(k, in, {.schedule = policy::eager}), in};
  };
  {
    const auto [r, in] = run(testing::atomic_publish(memory_order::release, memory_order::acquire));
    INFO(messages(r));
    REQUIRE(r.ok());
    for (std::int64_t i = 0; i < in[0].elements(); ++i) REQUIRE(r.buffers[2].get(i) == (static_cast<float>(in[0].get(i)) + 1.0f) * 2.0f);
    const auto [rr, in2] = run(testing::atomic_publish(memory_order::acq_rel, memory_order::acq_rel));
    INFO(messages(rr));
    CHECK(rr.ok());
  }
  for (const auto& k : {testing::atomic_publish(memory_order::relaxed, memory_order::acquire),
                        testing::atomic_publish(memory_order::release, memory_order::relaxed)}) {
    const auto [r, in] = run(k);
    INFO(messages(r));
    REQUIRE_FALSE(r.ok());
    CHECK(r.diagnostics.front().kind == check::data_race);
    CHECK_THAT(r.diagnostics.front().message, Contains("data race on GMEM y["));
  }
}

TEST_CASE("atomics: an operand that is not an i32 is a diagnostic naming the counter", "[interp][atomic]") {
  const auto k = lower(kernel<sm_90a>("atomic_wide", grid(2), threads(1_c), gmem<i32>("y", shape(2_c, 32_c)), semaphores("c", shape(1_c)),
                                      smem<i32>("slot", shape(1_c)), [&](auto y, auto c, auto slot) {
                                        return seq(fetch_add(c(0_c), program_id(0_c) * int_c<(1LL << 32)>, slot),
                                                   store(y.tile(shape(1_c, 32_c), program_id(0_c), 0_c), full<i32>(shape(1_c, 32_c), 0) + fetched(slot)));
                                      }));
  const auto r = interp::run(k, testing::random_buffers(k, input_seed), {.schedule = policy::eager});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == check::semaphore_value);
  CHECK_THAT(r.diagnostics[0].message, Contains("add 'c' with the operand 4294967296, which is not an i32"));
}

// gemm_hopper tickets=1 (ticket_tiles: FA3's dynamic scheduler on Hopper) is within the MMA
// tolerance under eager, lazy and 30 PCT schedules, and the tiles go to whoever asks: counted by
// C's TMA stores (8 per tile: two consumers, two halves each, two 64 x 64 boxes a half), each of
// the 12 tiles is done once. The interpreter runs clusters one after another (docs/interpreter.md),
// so the first CTA keeps taking tickets until they run out: 10 tiles to CTA 0 and to the others
// only their own round 0, where the static schedule gives 4 4 4. (The host backend interleaves
// the CTAs: tests/host, [atomic].)
TEST_CASE("gemm_hopper tickets=1: correct under every schedule, each tile done once, the first CTA to run takes what is left", "[interp][atomic]") {
  const auto x = testing::run_registered("gemm_hopper", {{"M", 512}, {"N", 768}, {"K", 128}, {"cluster", 1}, {"ctas", 3}, {"tickets", 1}}, input_seed, 30);
  testing::run_registered("gemm_hopper", {{"M", 333}, {"N", 520}, {"K", 200}, {"cluster", 1}, {"ctas", 2}, {"tickets", 1}}, input_seed, 10);
  for (auto p : {policy::eager, policy::lazy, policy::random, policy::pct}) {
    INFO(interp::policy_name(p));
    const auto r = interp::run(x.kernel, x.in, {.schedule = p, .seed = 7, .trace = true});
    REQUIRE(r.ok());
    int store_lane = -1;
    for (std::size_t l = 0; l < r.timeline.lanes.size(); ++l)
      if (r.timeline.lanes[l] == "tma store") store_lane = static_cast<int>(l);
    REQUIRE(store_lane >= 0);
    std::vector<int> boxes(3, 0);
    for (auto const& ev : r.timeline.events)
      if (ev.what == interp::trace_event::kind::async && ev.lane == store_lane) ++boxes.at(static_cast<std::size_t>(ev.cta));
    CHECK(boxes == std::vector<int>{10 * 8, 8, 8});
  }
  // Usage: one CTA per ticket, the 4-stage ring.
  auto const& e = registry::global().find("gemm_hopper");
  CHECK_THROWS_WITH(e.build(registry::resolve(e, {{"tickets", 1}})),
                    Contains("gemm_hopper: tickets=1 is offered with cluster=1 and stages=4 (a ticket is one CTA's tile), got cluster=2 stages=4"));
}
