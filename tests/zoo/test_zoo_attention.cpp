// The attention exhibits of the bug zoo (zoo_attention.cpp): each buggy kernel is one diagnostic
// of the intended kind, naming the kernel, the op and what is unordered; each fixed twin runs
// clean under eager, lazy and 20 PCT schedules and computes its reference (bit for bit, or within
// the MMA tolerance for the one whose output comes from wgmma).
#include <catch2/catch.hpp>

#include <string>

#include "../interp/mma_runs.hpp"
#include "zoo.hpp"
#include "zoo_checks.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;
using interp::check;
using interp::policy;

namespace {

constexpr std::uint64_t input_seed = 20261201;

zoo::entry const& entry_of(std::string const& name) { return zoo::find_entry(zoo::attention_all(), name); }

interp::diagnostic the_diagnostic(std::string const& name, policy p, int op) {
  auto const& e = entry_of(name);
  return zoo::only_diagnostic(e, p, e.expected, op, input_seed);
}

// The first element of a written parameter that differs from the reference ("" when none does).
std::string first_difference(ir::Kernel const& k, interp::result const& r, std::vector<host_tensor> const& expected) {
  for (int p : interp::written_params(k))
    for (std::int64_t i = 0; i < r.buffers[p].elements(); ++i)
      if (r.buffers[p].get(i) != expected[p].get(i))
        return k.params[p].name + "[" + std::to_string(i) + "] = " + std::to_string(r.buffers[p].get(i)) + ", reference " +
               std::to_string(expected[p].get(i));
  return "";
}

void fixed_twin_is_clean(std::string const& name, bool bit_exact) {
  auto const& e = entry_of(name);
  const auto k = e.build(zoo::variant::fixed);
  REQUIRE(k.name == name);
  auto in = seeded_inputs(k, input_seed);
  if (e.inputs) e.inputs(in);
  auto expected = in;
  e.reference(expected);
  for (auto p : {policy::eager, policy::lazy}) {
    INFO("fixed twin of " << name << ", policy " << interp::policy_name(p));
    const auto r = interp::run(k, in, {.schedule = p});
    INFO((r.ok() ? std::string() : r.diagnostics.front().message));
    REQUIRE(r.ok());
    if (bit_exact) CHECK(first_difference(k, r, expected) == "");
    else CHECK(testing::outside_bound(k, r, in, expected) == "");
  }
  const auto x = interp::explore(k, in, {.schedule = policy::pct}, 20);
  INFO("pct: " << (x.failure ? x.failure->diagnostics.front().message : std::string("clean")));
  CHECK(x.schedules == 20);
  CHECK_FALSE(x.failing_seed.has_value());
}

}  // namespace

TEST_CASE("zoo (attention): every exhibit is named as its kernel", "[zoo][attention]") {
  REQUIRE(zoo::attention_all().size() == 6);
  for (auto const& e : zoo::attention_all()) {
    INFO(e.name);
    CHECK(e.build(zoo::variant::buggy).name == e.name);
    CHECK(e.build(zoo::variant::fixed).name == e.name);
  }
}

TEST_CASE("zoo: a rescaling warpgroup that waits for the running max once races with its updates", "[zoo][attention][data_race]") {
  // op #7: warpgroup 0's update of m (s0) for block 1, which warpgroup 1 read for block 1
  // without waiting for it (block 0's wait and m_free order only block 0's accesses).
  const std::string name = "zoo_running_max_race";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, 7);
    CHECK_THAT(d.message, Contains("data race on SMEM s0[0]: warpgroup 0 of CTA (0, 0, 0) (write) is not ordered after the earlier read by warpgroup 1 of CTA (0, 0, 0)"));
  }
  fixed_twin_is_clean(name, true);
}

TEST_CASE("zoo: a V stage released after P*V's commit but before its wgmma_wait is refilled under the tensor core", "[zoo][attention][wgmma][data_race]") {
  // op #6: the producer's refill of V (vs, s1) for step 2. The refill of P (ps, s0) just before
  // it is no race: a register A operand is read when the wgmma issues, so only V is reported.
  const std::string name = "zoo_v_released_before_wait";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, 6);
    CHECK_THAT(d.message, Contains("data race on SMEM s1[0, 0, 0]: a TMA load (write) is not ordered after the earlier read by the wgmma group #1 issued by warpgroup 1 of CTA (0, 0, 0)") &&
                              Contains("wait for that group with wgmma_wait"));
  }
  fixed_twin_is_clean(name, false);
}

TEST_CASE("zoo: reading the other warpgroup's half of a row reduction before the exchange barrier's wait races with its store", "[zoo][attention][data_race]") {
  // op #5: warpgroup 0's sum of exp(x - max), which reads warpgroup 1's partial max (s0[1]).
  const std::string name = "zoo_exchange_before_barrier";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, 5);
    CHECK_THAT(d.message, Contains("data race on SMEM s0[1, 0]: warpgroup 0 of CTA (0, 0, 0) (read) is not ordered after the earlier write by warpgroup 1 of CTA (0, 0, 0)"));
  }
  fixed_twin_is_clean(name, true);
}

TEST_CASE("zoo: a ping-pong warpgroup that skips its turn hand-off on a causally skipped block deadlocks the other", "[zoo][attention][wgmma][deadlock]") {
  // op #27: consumer 1's wait for its second turn (block 1); consumer 0 arrived on turn[1] once,
  // for block 0, and has exited.
  const std::string name = "zoo_pingpong_skipped_turn";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, 27);
    CHECK_THAT(d.message, Contains("warpgroup 1 of CTA (0, 0, 0) at op #27 barrier_wait turn[1]: waits for completion #2 (phase 1); arrivals 0/1"));
  }
  fixed_twin_is_clean(name, false);
}

TEST_CASE("zoo: attention backward's dQ stored by plain TMA stores instead of reduced: the CTAs of a slice overwrite each other",
          "[zoo][attention][wgmma][data_race]") {
  const std::string name = "zoo_dq_plain_store";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = zoo::first_diagnostic(entry_of(name), p, input_seed);
    INFO(d.message);
    CHECK(d.kind == check::data_race);
    // Two CTAs' TMA stores of one dQ row: no barrier orders CTAs outside a cluster.
    CHECK_THAT(d.message, Contains("data race on GMEM dQ[") && Contains("a TMA store (write) is not ordered after the earlier write by another cluster") &&
                              Contains("attention_hopper_bwd.hpp"));
  }
  fixed_twin_is_clean(name, false);
}

TEST_CASE("zoo: attention_blackwell's correction rescaling O in TMEM before the previous P V completed races with the tensor core's write",
          "[zoo][attention][tcgen05][data_race]") {
  const std::string name = "zoo_rescale_before_pv";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = zoo::first_diagnostic(entry_of(name), p, input_seed);
    INFO(d.message);
    CHECK(d.kind == check::data_race);
    // The correction's rescale of O against a P V into it (which of the two the checker meets
    // second depends on the schedule: the read after the MMA's write, or the next MMA after the read).
    CHECK_THAT(d.message, Contains("data race on TMEM O0[0, 0]") && Contains("tcgen05 MMA") && Contains("warpgroup 1 (role 1, warps 4-7)") &&
                              Contains("attention_blackwell.hpp"));
  }
  fixed_twin_is_clean(name, false);
}
