// Grid-wide semaphores in the interpreter: a wait acquires what the signals released, across
// clusters too (the serial split-K is ordered, the same kernel without its waits races), a
// wait takes its count (two waiters on one signal: the second deadlocks), a wait on a CTA
// launched later is a deadlock that says so, and a run-time value that is not positive is its
// own diagnostic.
#include <catch2/catch.hpp>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "inputs.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;
using interp::check;
using interp::policy;

namespace {

constexpr std::uint64_t input_seed = 20261203;

std::string messages(interp::result const& r) {
  std::string m;
  for (auto const& d : r.diagnostics) m += d.message + "\n";
  return m;
}

// Warpgroup 1 hands y to warpgroup 0 through a semaphore instead of a barrier: y = x + 1, then
// y *= 2 after the wait. Order: 0 for the right one; with `later` the roles are two CTAs and
// CTA 0 waits for CTA 1 (launched after it). Value: what the wait and the signal count.
// Scope: the signal's and the first wait's (.sys: the same order, at system scope).
template <class Scope = memory_scope_tag<ir::MemoryScope::gpu>>
ir::Kernel handoff(bool two_waiters = false, Scope scope = {}) {
  auto t = shape(64_c, 64_c);
  return lower(kernel<sm_90a>("sem_handoff", grid(1), threads(3_c), gmem<f32>("x", shape(64_c, 64_c)), gmem<f32>("y", shape(64_c, 64_c)),
                              semaphores("ready", shape(1_c)), [&](auto x, auto y, auto ready) {
                                auto yt = y.tile(t, 0_c, 0_c);
                                auto first = seq(store(yt, load(x.tile(t, 0_c, 0_c)) + 1.0f), semaphore_signal(ready(0_c), 1_c, scope));
                                auto second = seq(semaphore_wait(ready(0_c), 1_c, scope), store(yt, load(yt) * 2.0f));
                                auto third = two_waiters ? semaphore_wait(ready(0_c)) : seq();
                                return if_(thread_id() == 0_c, second, if_(thread_id() == 1_c, first, third));
                              }));
}

// CTA s waits for CTA s + 1 (launched after it) to hand it its turn.
ir::Kernel waits_for_later() {
  return lower(kernel<sm_90a>("sem_backwards", grid(2), threads(1_c), gmem<i32>("y", shape(2_c, 64_c)), semaphores("turn", shape(2_c)),
                              [&](auto y, auto turn) {
                                auto s = program_id();
                                return seq(if_(s < 1_c, semaphore_wait(turn(s))), store(y.tile(shape(1_c, 64_c), s, 0_c), 1),
                                           if_(s > 0_c, semaphore_signal(turn(s - 1_c))));
                              }));
}

ir::Kernel value_from_input(std::int64_t v) {
  return lower(kernel<sm_90a>("sem_value", grid(2), threads(1_c), gmem<i32>("y", shape(2_c, 64_c)), semaphores("turn", shape(2_c)),
                              [&](auto y, auto turn) {
                                auto s = program_id();
                                return seq(store(y.tile(shape(1_c, 64_c), s, 0_c), 1), semaphore_signal(turn(s), s * v));
                              }));
}

// The one diagnostic of an eager run of k, required to be of kind c.
interp::diagnostic the_one(ir::Kernel const& k, check c) {
  const auto r = interp::run(k, testing::random_buffers(k, input_seed), {.schedule = policy::eager});
  INFO(messages(r));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == c);
  return r.diagnostics[0];
}

}  // namespace

TEST_CASE("semaphores: a hand-off between warpgroups is ordered by the wait, under eager, lazy and 50 PCT schedules", "[interp][semaphore]") {
  const auto k = handoff();
  const auto in = testing::random_buffers(k, input_seed);
  for (auto p : {policy::eager, policy::lazy}) {
    INFO("policy " << interp::policy_name(p));
    auto r = interp::run(k, in, {.schedule = p});
    INFO(messages(r));
    REQUIRE(r.ok());
    for (std::int64_t i = 0; i < in[0].elements(); ++i) REQUIRE(r.buffers[1].get(i) == (static_cast<float>(in[0].get(i)) + 1.0f) * 2.0f);
  }
  auto ex = interp::explore(k, in, {.schedule = policy::pct, .seed = 3}, 50);
  INFO((ex.failure ? messages(*ex.failure) : std::string()));
  CHECK(ex.schedules == 50);
  CHECK_FALSE(ex.failing_seed.has_value());
}

// .sys scope (a counter the host or another GPU may also touch): the interpreter models one GPU,
// where it orders as .gpu does; the printed IR names it.
TEST_CASE("semaphores: memory_scope::sys hands off as .gpu does, and the IR says so", "[interp][semaphore]") {
  const auto k = handoff(false, memory_scope::sys);
  CHECK_THAT(ir::print(k), Contains("semaphore_signal ready.block[0](1)  memory_scope::sys") && Contains("semaphore_wait ready.block[0](1)  memory_scope::sys"));
  CHECK_THAT(ir::print(handoff()), Contains("semaphore_signal ready.block[0](1)") && !Contains("memory_scope"));
  const auto in = testing::random_buffers(k, input_seed);
  // The op as a diagnostic names it (the user's call).
  const auto twice = handoff(true, memory_scope::sys);
  const auto d = interp::run(twice, testing::random_buffers(twice, input_seed), {.schedule = policy::eager});
  REQUIRE_FALSE(d.ok());
  CHECK_THAT(messages(d), Contains("semaphore_wait(ready(0), 1, memory_scope::sys)"));
  for (auto p : {policy::eager, policy::lazy, policy::pct}) {
    const auto r = interp::run(k, in, {.schedule = p, .seed = 3});
    INFO(messages(r));
    REQUIRE(r.ok());
    for (std::int64_t i = 0; i < in[0].elements(); ++i) REQUIRE(r.buffers[1].get(i) == (static_cast<float>(in[0].get(i)) + 1.0f) * 2.0f);
  }
}

TEST_CASE("semaphores: a wait takes its count, so a second waiter on one signal deadlocks, and the report names the semaphore",
          "[interp][semaphore]") {
  const auto d = the_one(handoff(true), check::deadlock);
  CHECK_THAT(d.message, Contains("semaphore_wait: waits for semaphore 'ready'[0] to hold 1, but it holds 0") &&
                            Contains("ops that signal or change 'ready': #"));
}

TEST_CASE("semaphores: a CTA that waits for one launched after it deadlocks, and the report says why", "[interp][semaphore]") {
  const auto d = the_one(waits_for_later(), check::deadlock);
  CHECK_THAT(d.message, Contains("waits for semaphore 'turn'[0] to hold 1, but it holds 0") &&
                            Contains("a signal from a CTA launched later never comes while this one waits"));
}

TEST_CASE("semaphores: a run-time value that is not positive is reported with the value", "[interp][semaphore]") {
  const auto d = the_one(value_from_input(3), check::semaphore_value);  // CTA 0 signals 0 * 3
  CHECK(std::string(interp::check_name(d.kind)) == "semaphore-value");
  CHECK_THAT(d.message, Contains("signals 'turn' with the value 0, but a semaphore's value must be 1 to 2^31 - 1"));
}

TEST_CASE("semaphores: splitk_serial's slices are ordered across clusters (S = 4: slice 3 after slice 1 through slice 2), and "
          "the same kernel's y is a race without the waits",
          "[interp][semaphore]") {
  auto const& e = registry::global().find("splitk_serial");
  const auto k = registry::build(e, registry::resolve(e, {{"M", 100}, {"K", 300}}));
  auto in = testing::random_buffers(k, input_seed);
  auto expected = in;
  e.reference(expected, registry::resolve(e, {{"M", 100}, {"K", 300}}));
  for (auto p : {policy::eager, policy::lazy, policy::random}) {
    INFO("policy " << interp::policy_name(p));
    auto r = interp::run(k, in, {.schedule = p, .seed = 7});
    INFO(messages(r));
    REQUIRE(r.ok());
    for (std::int64_t i = 0; i < expected[1].elements(); ++i) REQUIRE(r.buffers[1].get(i) == expected[1].get(i));  // bit for bit: slice order
  }
  // The waits removed from the IR (each if_ holding one becomes an empty seq): slice 1's add meets slice 0's.
  auto racy = k;
  for (auto& s : racy.stmts)
    if (s.op == ir::StmtOp::semaphore_wait) {
      s.op = ir::StmtOp::seq;
      s.refs.clear();
      s.e0 = ir::none;
    }
  const auto r = interp::run(racy, in, {.schedule = policy::eager});
  REQUIRE(r.diagnostics.size() == 1);
  INFO(r.diagnostics[0].message);
  CHECK(r.diagnostics[0].kind == check::data_race);
  CHECK_THAT(r.diagnostics[0].message, Contains("data race on GMEM y[0, 0]") && Contains("another cluster"));
}
