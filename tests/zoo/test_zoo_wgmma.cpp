// The tensor-core exhibits of the bug zoo (zoo_wgmma.cpp): each buggy kernel is one diagnostic
// of the intended kind, naming the kernel, the op and the fix; each fixed twin runs clean under
// eager, lazy and 20 PCT schedules and computes C = A * B^T within the MMA tolerance.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
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

// The CLI's seeded inputs (floats in [-2, 2), never all zeros).
std::vector<host_tensor> random_inputs(ir::Kernel const& k, std::uint64_t seed) { return seeded_inputs(k, seed); }

zoo::entry const& entry_of(std::string const& name) { return zoo::find_entry(zoo::mma_all(), name); }

interp::diagnostic the_diagnostic(std::string const& name, policy p, int op) {
  auto const& e = entry_of(name);
  return zoo::only_diagnostic(e, p, e.expected, op, input_seed);
}

void within_tolerance(ir::Kernel const& k, interp::result const& r, std::vector<host_tensor> const& in, std::vector<host_tensor> const& expected) {
  REQUIRE(interp::tolerance_of(k, r, in).has_value());
  CHECK(testing::outside_bound(k, r, in, expected) == "");
}

void fixed_twin_is_clean(std::string const& name) {
  auto const& e = entry_of(name);
  const auto k = e.build(zoo::variant::fixed);
  REQUIRE(k.name == name);
  const auto in = random_inputs(k, input_seed);
  auto expected = in;
  e.reference(expected);
  for (auto p : {policy::eager, policy::lazy}) {
    INFO("fixed twin of " << name << ", policy " << interp::policy_name(p));
    interp::options o;
    o.schedule = p;
    const auto r = interp::run(k, in, o);
    INFO((r.ok() ? std::string() : r.diagnostics.front().message));
    REQUIRE(r.ok());
    within_tolerance(k, r, in, expected);
  }
  interp::options o;
  o.schedule = policy::pct;
  const auto x = interp::explore(k, in, o, 20);
  INFO("pct: " << (x.failure ? x.failure->diagnostics.front().message : std::string("clean")));
  CHECK(x.schedules == 20);
  CHECK_FALSE(x.failing_seed.has_value());
}

}  // namespace

TEST_CASE("zoo (tensor cores): every wgmma check has an exhibit, named as its kernel", "[zoo][wgmma]") {
  std::vector<check> covered;
  for (auto const& e : zoo::mma_all()) {
    INFO(e.name);
    CHECK(e.build(zoo::variant::buggy).name == e.name);
    CHECK(e.build(zoo::variant::fixed).name == e.name);
    covered.push_back(e.expected);
  }
  for (check c : {check::data_race, check::missing_fence, check::wgmma_pending_at_exit}) {
    INFO(interp::check_name(c));
    CHECK(std::find(covered.begin(), covered.end(), c) != covered.end());
  }
}

TEST_CASE("zoo: a stage refilled before the wgmma reading it is waited for races with the tensor core", "[zoo][wgmma][data_race]") {
  // op #13 is the refill's first copy (of A into `as`, s0), which the wgmma still reads.
  const std::string name = "zoo_refill_under_wgmma";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, 13);
    CHECK_THAT(d.message, Contains("data race on SMEM s0[0, 0]") && Contains("a TMA load (write) is not ordered after the earlier read by the wgmma group #1 issued by warpgroup 0 of CTA (0, 0, 0)") &&
                              Contains("wait for that group with wgmma_wait"));
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: reading the accumulator before the covering wgmma_wait races with the tensor core", "[zoo][wgmma][data_race]") {
  // Eager lands the wgmma at issue: the epilogue's read (op #12, store(cs, load(acc))) finds
  // the group's write. Lazy leaves it in flight: the wgmma (op #8) then finds the read.
  const std::string name = "zoo_acc_before_wait";
  auto d = the_diagnostic(name, policy::eager, 12);
  CHECK_THAT(d.message, Contains("data race on the accumulator acc4[0, 0]: warpgroup 0 of CTA (0, 0, 0) (read) is not ordered after the earlier write by the wgmma group #1") &&
                            Contains("wait for that group with wgmma_wait"));
  d = the_diagnostic(name, policy::lazy, 8);
  CHECK_THAT(d.message, Contains("data race on the accumulator acc4[0, 0]: a wgmma (write) is not ordered after the earlier read by warpgroup 0 of CTA (0, 0, 0)"));
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: ordinary stores into a wgmma operand need commit_smem() before the wgmma", "[zoo][wgmma][missing_fence]") {
  const std::string name = "zoo_wgmma_no_fence";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, 11);
    CHECK_THAT(d.message, Contains("wgmma reads SMEM s0[0, 0] as an operand, written by warpgroup 0 of CTA (0, 0, 0) through ordinary stores with no commit_smem()"));
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a CTA that exits with its wgmma group in flight is reported at exit", "[zoo][wgmma][wgmma_pending_at_exit]") {
  const std::string name = "zoo_wgmma_exit_pending";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, 8);  // the group's last wgmma
    CHECK_THAT(d.message, Contains("warpgroup 0 of CTA (1, 0, 0) exits with 1 wgmma group(s) not waited for") && Contains("wgmma_wait(0_c)"));
    CHECK(d.cta == 1);
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a consumer that releases its stage before wgmma_wait lets the producer's refill race the tensor core", "[zoo][wgmma][data_race]") {
  // op #5: the producer's refill of `as` (s0), after the early release.
  const std::string name = "zoo_release_before_wgmma_wait";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, 5);
    CHECK_THAT(d.message, Contains("data race on SMEM s0[0, 0]") && Contains("by the wgmma group #1 issued by warpgroup 1 of CTA (0, 0, 0)") &&
                              Contains("wait for that group with wgmma_wait"));
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: after wgmma_wait(1), releasing the stage just issued lets its refill race the group still reading it", "[zoo][wgmma][data_race]") {
  // op #5: the producer's refill of `as` (s0) for step 2, into the stage step 0's wgmma (group
  // #1) may still read: wgmma_wait(1) after issuing it left that very group in flight. The
  // fixed twin releases the previous step's stage after wgmma_wait(1), the last after
  // wgmma_wait(0), and is clean under every schedule: the interpreter counts wait(1) as
  // "every group but the newest is done", neither more (that would hide this race) nor less.
  const std::string name = "zoo_release_under_wait1";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, 5);
    CHECK_THAT(d.message, Contains("data race on SMEM s0[0") && Contains("by the wgmma group #1 issued by warpgroup 1 of CTA (0, 0, 0)") &&
                              Contains("wait for that group with wgmma_wait"));
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a blockwise fp8 consumer that releases its stage before the promotion reads the stage's scales lets the refill race it",
          "[zoo][wgmma][data_race]") {
  // op #8: the producer's refill of the A scales' stage (s2) for step 2, which the consumer's
  // promotion of step 0 still reads after releasing the stage.
  const std::string name = "zoo_scales_read_after_release";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, 8);
    CHECK_THAT(d.message, Contains("data race on SMEM s2[0, 0, 0]: a TMA load (write) is not ordered after the earlier read by warpgroup 1 of CTA (0, 0, 0)") &&
                              Contains("copy_gmem_to_smem(sa.block"));
  }
  fixed_twin_is_clean(name);
}
