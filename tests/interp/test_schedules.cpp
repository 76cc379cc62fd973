// The schedulers themselves: a seed really selects a schedule, exploration really walks through
// seeds, and PCT's change points really preempt a runnable warpgroup. Each test has a kernel
// whose outcome depends on exactly the interleaving under test, so a scheduler that ignores its
// seed or its change points fails here, not just somewhere downstream.
#include <catch2/catch.hpp>

#include <set>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/stagecraft.hpp>

#include "inputs.hpp"

using namespace stagecraft;
using interp::policy;

namespace {

// wg0 arrives twice on an arrivals(1) barrier; wg1 waits twice. Correct only if wg1 observes the
// first completion before the second one: round-robin (eager, lazy) always interleaves them so,
// while a random schedule that runs wg0 twice in a row makes wg1 miss a phase.
ir::Kernel arrive_twice() {
  return lower(kernel<sm_90a>("arrive_twice", grid(1), threads(2_c), barrier(arrivals(1_c)), [](auto b) {
    return if_(thread_id() == 0_c, seq(barrier_arrive(b), barrier_arrive(b)), seq(barrier_wait(b), barrier_wait(b)));
  }));
}

// The lost update: each warpgroup reads the counter y into its private SMEM row, does Window
// other ops, and writes back its copy + 1. No synchronisation at all, so with the race checks on
// it is reported under every schedule; with them off, the update is lost only if the other
// warpgroup's whole read-modify-write lands inside this one's window. wg1 first spends Lead ops
// elsewhere, so round-robin never overlaps the windows; strict priorities (PCT without change
// points) never preempt a runnable warpgroup, so they cannot either: only a change point inside a
// window, which demotes the running warpgroup, loses the update.
constexpr long long Window = 8, Lead = 2 * Window + 4;
ir::Kernel lost_update() {
  return lower(kernel<sm_90a>("lost_update", grid(1), threads(2_c), gmem<f32>("y", shape(16_c)),
                              smem<f32>(shape(2_c, 16_c)),  // (warpgroup, element): each one's copy of y
                              [](auto y, auto mine) {
                                auto counter = y.tile(shape(16_c), 0_c);
                                auto pad = [](auto n) { return for_(range(n), [](auto) { return commit_smem(); }); };
                                auto bump = seq(store(mine[thread_id()], load(counter)), pad(int_c<Window>),
                                                store(counter, load(mine[thread_id()]) + 1.0f));
                                return if_(thread_id() == 0_c, bump, seq(pad(int_c<Lead>), bump));
                              }));
}

// How many of the two updates landed in y (the same in every element), in f32 as the kernel adds.
int increments(ir::Kernel const& k, std::vector<host_tensor> const& in, interp::options o) {
  o.checks = false;
  auto r = interp::run(k, in, o);
  for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
  REQUIRE(r.ok());
  int landed = -1;
  for (std::int64_t i = 0; i < 16; ++i) {
    const float before = static_cast<float>(in[0].get(i)), after = static_cast<float>(r.buffers[0].get(i));
    const int n = after == before + 1.0f + 1.0f ? 2 : after == before + 1.0f ? 1 : 0;
    if (i == 0) landed = n;
    REQUIRE(n == landed);
  }
  return landed;
}

std::string schedule_of(ir::Kernel const& k, std::vector<host_tensor> const& in, interp::options o) {
  o.trace = true;
  o.checks = false;
  return interp::to_chrome_json(interp::run(k, in, o).timeline);
}

}  // namespace

TEST_CASE("a seed selects the schedule: random and pct give many schedules over a few seeds", "[interp][schedules]") {
  const auto k = lost_update();
  const auto in = testing::random_buffers(k, 17);
  INFO("input seed 17");
  for (auto p : {policy::random, policy::pct}) {
    INFO("policy " << interp::policy_name(p));
    std::set<std::string> seen;
    for (std::uint64_t s = 0; s < 16; ++s) seen.insert(schedule_of(k, in, {.schedule = p, .seed = s}));
    CHECK(seen.size() >= (p == policy::random ? 15u : 4u));
    // and the same seed, the same schedule
    CHECK(schedule_of(k, in, {.schedule = p, .seed = 5}) == schedule_of(k, in, {.schedule = p, .seed = 5}));
  }
  // PCT without change points is a strict priority order: of two independent warpgroups, one
  // runs to its end first. The seed picks which, so both orders appear.
  std::set<std::string> orders;
  for (std::uint64_t s = 0; s < 16; ++s) orders.insert(schedule_of(k, in, {.schedule = policy::pct, .seed = s, .pct_depth = 1}));
  CHECK(orders.size() == 2);
}

TEST_CASE("explore runs a different schedule per seed and reports the first failing one", "[interp][schedules]") {
  const auto k = arrive_twice();
  REQUIRE(interp::run(k, {}, {.schedule = policy::eager}).ok());
  REQUIRE(interp::run(k, {}, {.schedule = policy::lazy}).ok());
  // Which of 40 random seeds miss the phase: some must, some must not.
  std::vector<bool> fails;
  for (std::uint64_t s = 0; s < 40; ++s) {
    auto r = interp::run(k, {}, {.schedule = policy::random, .seed = s});
    if (!r.ok()) REQUIRE(r.diagnostics[0].kind == interp::check::missed_phase);
    fails.push_back(!r.ok());
  }
  const auto failing = std::count(fails.begin(), fails.end(), true);
  INFO(failing << " of 40 random schedules miss the phase");
  CHECK(failing >= 8);
  CHECK(failing <= 32);
  // Start explore at a passing seed: it must walk on to the first failing one, and stop there.
  std::uint64_t base = 0;
  while (fails[base]) ++base;
  std::uint64_t first = base;
  while (first < fails.size() && !fails[first]) ++first;
  REQUIRE(first < fails.size());
  auto ex = interp::explore(k, {}, {.schedule = policy::random, .seed = base}, 40);
  REQUIRE(ex.failing_seed.has_value());
  CHECK(*ex.failing_seed == first);
  CHECK(ex.schedules == static_cast<int>(first - base + 1));
  // The failing seed replays exactly.
  auto again = interp::run(k, {}, {.schedule = policy::random, .seed = *ex.failing_seed});
  REQUIRE_FALSE(again.ok());
  CHECK(again.diagnostics[0].message == ex.failure->diagnostics[0].message);
}

TEST_CASE("pct's change points preempt: a lost update that needs one is found by pct, not by eager, lazy or strict priorities",
          "[interp][schedules]") {
  const auto k = lost_update();
  const auto in = testing::random_buffers(k, 23);
  INFO("input seed 23");
  // The race itself is visible to the checks under any schedule, the default one included.
  auto checked = interp::run(k, in, {.schedule = policy::eager});
  REQUIRE_FALSE(checked.ok());
  CHECK(checked.diagnostics[0].kind == interp::check::data_race);

  CHECK(increments(k, in, {.schedule = policy::eager}) == 2);
  CHECK(increments(k, in, {.schedule = policy::lazy}) == 2);
  int lost_without = 0, lost_with = 0;
  std::uint64_t a_lost_seed = 0;
  for (std::uint64_t s = 0; s < 200; ++s) {
    lost_without += increments(k, in, {.schedule = policy::pct, .seed = s, .pct_depth = 1}) != 2;
    const int d = increments(k, in, {.schedule = policy::pct, .seed = s, .pct_depth = 3});
    CHECK((d == 2 || d == 1));
    if (d == 1 && lost_with++ == 0) a_lost_seed = s;
  }
  INFO("pct depth 3 lost the update in " << lost_with << " of 200 schedules");
  CHECK(lost_without == 0);
  CHECK(lost_with >= 10);
  // A lost update replays with its seed.
  CHECK(increments(k, in, {.schedule = policy::pct, .seed = a_lost_seed, .pct_depth = 3}) == 1);
}

// options::choose (the learner's --step): the chooser's picks are the schedule. Running wg0
// twice in a row is what makes arrive_twice's waiter miss a phase; alternating is clean. The
// chooser sees the runnable agents first, then async work, and barrier states it can read.
TEST_CASE("a chooser drives the schedule: its picks decide the outcome and replay exactly", "[interp][schedules]") {
  const auto k = arrive_twice();
  auto run_with = [&](auto pick) {
    std::vector<interp::step_point> seen;
    interp::options o;
    o.choose = [&](interp::step_point const& p) {
      seen.push_back(p);
      return static_cast<std::size_t>(pick(p));
    };
    auto r = interp::run(k, {}, o);
    return std::pair(std::move(r), std::move(seen));
  };
  // Always the first runnable agent: wg0 arrives twice before wg1 waits once.
  auto [twice, seen] = run_with([](interp::step_point const&) { return 0; });
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.diagnostics.front().kind == interp::check::missed_phase);
  REQUIRE(!seen.empty());
  CHECK(seen.front().step == 0);
  REQUIRE(seen.front().barriers.size() == 1);
  CHECK(seen.front().barriers.front() == "b0[0]: 0 completed (phase 0 open), arrivals 0/1, tx 0 bytes pending");
  CHECK(seen.front().choices.size() == 1);  // wg1 is blocked on its wait
  CHECK(seen.front().choices.front().who == "wg0");
  REQUIRE(seen.front().blocked.size() == 1);
  CHECK(seen.front().blocked.front().find("wg1 at op #") == 0);
  // The last runnable agent: wg1 takes each completion as soon as it can.
  auto [alternating, seen2] = run_with([](interp::step_point const& p) { return p.choices.size() - 1; });
  for (auto const& d : alternating.diagnostics) UNSCOPED_INFO(d.message);
  CHECK(alternating.ok());
  CHECK(seen2.size() == alternating.steps);
  // A pick outside the list is the caller's bug: an exception, not a schedule.
  interp::options bad;
  bad.choose = [](interp::step_point const& p) { return p.choices.size(); };
  CHECK_THROWS_AS(interp::run(k, {}, bad), std::out_of_range);
}
