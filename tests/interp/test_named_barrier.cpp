// Named barriers (bar.sync / bar.arrive) in the interpreter: a two-warpgroup hand-off is correct
// and race-free under every schedule, the happens-before edge really comes from the barrier (the
// same kernel without it races), a count mismatch between the participants of a phase is its own
// diagnostic, and a run-time id out of range names the id.
#include <catch2/catch.hpp>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/stagecraft.hpp>

#include "inputs.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;
using interp::check;
using interp::policy;

namespace {

constexpr std::uint64_t input_seed = 20260723;

// Warpgroup 0 writes buf = x * 2 for block j, warpgroup 1 writes y = buf + 1; barrier 3 says
// "full", barrier 5 "empty" (ids other than 0 and 1, so the id really travels). Sync: with
// Sync false the producer's "empty" wait is gone, and the refill of buf races the consumer's read.
ir::Kernel handoff(bool sync = true) {
  const std::int64_t N = 256, steps = N / 64;
  return lower(kernel<sm_90a>("named_handoff", grid(2), threads(2_c), gmem<f32>("x", shape(128, N)), gmem<f32>("y", shape(128, N)),
                          smem<f32>(shape(64_c, 64_c)),  // buf: (row, col)
                          [&](auto x, auto y, auto buf) {
                            auto row = program_id();
                            auto produce = for_(range(steps), [&](auto j) {
                              auto fill = seq(store(buf, load(x.tile(shape(64_c, 64_c), row, j)) * 2.0f), named_barrier_arrive(3_c, 256_c));
                              return sync ? seq(named_barrier_sync(5_c, 256_c), fill) : fill;
                            });
                            auto consume = for_(range(steps), [&](auto j) {
                              return seq(named_barrier_sync(3_c, 256_c), store(y.tile(shape(64_c, 64_c), row, j), load(buf) + 1.0f),
                                         named_barrier_arrive(5_c, 256_c));
                            });
                            return if_(thread_id() == 0_c, produce, seq(named_barrier_arrive(5_c, 256_c), consume));
                          }));
}

std::string messages(interp::result const& r) {
  std::string m;
  for (auto const& d : r.diagnostics) m += d.message + "\n";
  return m;
}

}  // namespace

TEST_CASE("named barriers: a two-warpgroup hand-off is correct and race-free under eager, lazy and 50 PCT schedules", "[interp][named_barrier]") {
  const auto k = handoff();
  const auto in = testing::random_buffers(k, input_seed);
  INFO("input seed " << input_seed);
  for (auto p : {policy::eager, policy::lazy}) {
    INFO("policy " << interp::policy_name(p));
    auto r = interp::run(k, in, {.schedule = p});
    INFO(messages(r));
    REQUIRE(r.ok());
    for (std::int64_t i = 0; i < in[0].elements(); ++i) {
      const float want = static_cast<float>(in[0].get(i)) * 2.0f + 1.0f;
      REQUIRE(static_cast<float>(r.buffers[1].get(i)) == want);
    }
  }
  auto x = interp::explore(k, in, {.schedule = policy::pct}, 50);
  INFO((x.failure ? messages(*x.failure) : std::string()));
  CHECK(x.schedules == 50);
  CHECK_FALSE(x.failing_seed.has_value());
}

TEST_CASE("named barriers: without the producer's wait on \"empty\" the refill races the consumer's read", "[interp][named_barrier]") {
  const auto k = handoff(false);
  const auto in = testing::random_buffers(k, input_seed);
  auto r = interp::run(k, in, {.schedule = policy::eager});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics.front().kind == check::data_race);
}

TEST_CASE("named barriers: participants of one phase naming different counts are reported", "[interp][named_barrier]") {
  // The mbarrier makes warpgroup 0 open the phase (counting 256) before warpgroup 1 joins it
  // counting 128, under every schedule. (Had 128 come first, it would complete a phase alone:
  // the mismatch is visible only where two counts meet in one phase.)
  const auto k = lower(kernel<sm_90a>("named_mismatch", grid(1), threads(2_c), barrier(arrivals(1_c)), [](auto opened) {
    return if_(thread_id() == 0_c, seq(named_barrier_arrive(3_c, 256_c), barrier_arrive(opened)),
               seq(barrier_wait(opened), named_barrier_sync(3_c, 128_c)));
  }));
  for (auto p : {policy::eager, policy::lazy, policy::pct}) {
    auto r = interp::run(k, {}, {.schedule = p});
    INFO(messages(r));
    REQUIRE(r.diagnostics.size() == 1);
    auto const& d = r.diagnostics.front();
    CHECK(d.kind == check::named_barrier_count_mismatch);
    CHECK(std::string(interp::check_name(d.kind)) == "named-barrier-count-mismatch");
    CHECK_THAT(d.message, Contains("kernel 'named_mismatch'"));
    CHECK_THAT(d.message, Contains("warpgroup 1 of CTA (0, 0, 0) arrives at named barrier 3 (bar 12) counting 128 threads, but warpgroup 0 of "
                                   "CTA (0, 0, 0) opened its phase 0 at op #"));
    CHECK_THAT(d.message, Contains("counting 256"));
  }
}

TEST_CASE("named barriers: a run-time id out of range names the id, a sync nobody completes deadlocks", "[interp][named_barrier]") {
  SECTION("id out of range") {
    const auto k = lower(kernel<sm_90a>("named_oob", grid(1), threads(2_c), [](auto...) {
      return named_barrier_sync(runtime_index(thread_id() * 7_c), 256_c);
    }));
    auto r = interp::run(k, {}, {});
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics.front().kind == check::index_out_of_range);
    CHECK_THAT(r.diagnostics.front().message, Contains("uses id 7, but ids are 0 to 6"));
  }
  SECTION("deadlock") {
    const auto k = lower(kernel<sm_90a>("named_alone", grid(1), threads(2_c), [](auto...) {
      return if_(thread_id() == 0_c, named_barrier_sync(2_c, 256_c));
    }));
    auto r = interp::run(k, {}, {});
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics.front().kind == check::deadlock);
    CHECK_THAT(r.diagnostics.front().message,
               Contains("waits at named barrier 2 (bar 11) for phase 0 to complete: 128/256 threads arrived (warpgroup 0 of CTA"));
  }
}
