// The Blackwell exhibits of the bug zoo (zoo_tcgen05.cpp): each buggy kernel is one diagnostic
// of the intended kind, naming the kernel, the op and the fix; each fixed twin runs clean under
// eager, lazy and 20 PCT schedules and computes C = A * B^T within the MMA tolerance.
#include <catch2/catch.hpp>

#include <algorithm>
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

zoo::entry const& entry_of(std::string const& name) { return zoo::find_entry(zoo::tcgen05_all(), name); }

interp::diagnostic the_diagnostic(std::string const& name, policy p, check expected, int op) {
  return zoo::only_diagnostic(entry_of(name), p, expected, op, input_seed);
}

void fixed_twin_is_clean(std::string const& name) {
  auto const& e = entry_of(name);
  const auto k = e.build(zoo::variant::fixed);
  REQUIRE(k.name == name);
  auto in = seeded_inputs(k, input_seed);
  if (e.inputs) e.inputs(in);  // zoo_scales_not_waited: scale codes in range
  auto expected = in;
  e.reference(expected);
  for (auto p : {policy::eager, policy::lazy}) {
    INFO("fixed twin of " << name << ", policy " << interp::policy_name(p));
    interp::options o;
    o.schedule = p;
    const auto r = interp::run(k, in, o);
    INFO((r.ok() ? std::string() : r.diagnostics.front().message));
    REQUIRE(r.ok());
    const auto tol = interp::tolerance_of(k, r, in);
    REQUIRE(tol.has_value());
    CHECK(tol->k == k.params[0].shape[1]);  // D summed the whole K before async_load_tmem read it
    CHECK(testing::outside_bound(k, r, in, expected) == "");
  }
  interp::options o;
  o.schedule = policy::pct;
  const auto x = interp::explore(k, in, o, 20);
  INFO("pct: " << (x.failure ? x.failure->diagnostics.front().message : std::string("clean")));
  CHECK(x.schedules == 20);
  CHECK_FALSE(x.failing_seed.has_value());
}

}  // namespace

TEST_CASE("zoo (tcgen05): every exhibit is named as its kernel, and the checks it promises are covered", "[zoo][tcgen05]") {
  std::vector<check> covered;
  for (auto const& e : zoo::tcgen05_all()) {
    INFO(e.name);
    CHECK(e.build(zoo::variant::buggy).name == e.name);
    CHECK(e.build(zoo::variant::fixed).name == e.name);
    covered.push_back(e.expected);
  }
  for (check c : {check::data_race, check::deadlock, check::tcgen05_pending_at_dealloc, check::tmem_use_after_dealloc, check::tmem_not_freed}) {
    INFO(interp::check_name(c));
    CHECK(std::find(covered.begin(), covered.end(), c) != covered.end());
  }
}

TEST_CASE("zoo: a stage freed before the MMA reading it commits lets the refill race the tensor core", "[zoo][tcgen05][data_race]") {
  const std::string name = "zoo_refill_before_commit";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, check::data_race, 6);  // the producer's refill of `as` (s0)
    CHECK_THAT(d.message, Contains("data race on SMEM s0[0, 0]") && Contains("by tcgen05 MMA #1 issued by warpgroup 1 of CTA (0, 0, 0)") &&
                              Contains("tcgen05_commit_arrive"));
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: TMEM read before the commit barrier races with (or finds nothing from) the MMA", "[zoo][tcgen05][data_race]") {
  const std::string name = "zoo_tmem_read_before_commit";
  // Eager lands the MMA at issue: the epilogue's read finds its write unordered.
  auto d = the_diagnostic(name, policy::eager, check::data_race, 26);  // store(cs, async_load_tmem(d))
  CHECK_THAT(d.message, Contains("data race on TMEM t7[0, 0]") && Contains("(read) is not ordered after the earlier write by tcgen05 MMA #1") &&
                            Contains("before reading its TMEM") && !Contains("store_tmem"));
  // Lazy leaves it in flight: TMEM is still undefined when the epilogue reads it.
  d = the_diagnostic(name, policy::lazy, check::poison_read, 26);
  CHECK_THAT(d.message, Contains("TMEM starts undefined"));
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a ring of TMEM accumulators whose MMA takes a stage back unasked races the epilogue's read", "[zoo][tcgen05][data_race]") {
  const std::string name = "zoo_acc_ring_overrun";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, check::data_race, 15);  // tile 2's tcgen05_mma
    // Tile 2's MMA into stage 0 of the ring against the epilogue's read of tile 0 there; stage 1
    // (tile 1, which nothing overran) is not named.
    CHECK_THAT(d.message, Contains("data race on TMEM t7[0, 0, 0]") && Contains("tcgen05 MMA") && Contains("warpgroup 2 of CTA (0, 0, 0)"));
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: an MMA into TMEM that the epilogue still reads is a race on TMEM", "[zoo][tcgen05][data_race]") {
  const std::string name = "zoo_mma_over_tmem_load";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, check::data_race, 15);  // the second tile's tcgen05_mma
    CHECK_THAT(d.message, Contains("data race on TMEM t7[0, 0]: a tcgen05 MMA (write) is not ordered after the earlier read by warpgroup 2 of CTA (0, 0, 0)") &&
                              Contains("the reader must arrive on a barrier the MMA issuer waits for"));
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: an orders_tensor_core barrier expecting more commits than arrive deadlocks, naming the commit", "[zoo][tcgen05][deadlock]") {
  const std::string name = "zoo_commit_count";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, check::deadlock, 23);  // the epilogue's barrier_wait(done)
    CHECK_THAT(d.message, Contains("barrier_wait b5[0]: waits for completion #1 (phase 0); arrivals 1/2") &&
                              Contains("ops that could still arrive: #19 tcgen05_commit_arrive"));
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: freeing TMEM that an MMA nobody waited for may still write is reported", "[zoo][tcgen05][tcgen05_pending_at_dealloc]") {
  const std::string name = "zoo_tmem_dealloc_pending";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, check::tcgen05_pending_at_dealloc, 21);  // the MMA warpgroup's tmem_dealloc
    CHECK_THAT(d.message, Contains("warpgroup 1 of CTA (0, 0, 0) frees TMEM t7 while tcgen05 MMA #1 of warpgroup 1 of CTA (0, 0, 0) into it may "
                                   "still be writing it"));
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: an MMA into TMEM that the epilogue has freed is a use after dealloc", "[zoo][tcgen05][tmem_use_after_dealloc]") {
  const std::string name = "zoo_tmem_use_after_dealloc";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, check::tmem_use_after_dealloc, 8);  // the second tile's tcgen05_mma
    CHECK_THAT(d.message, Contains("warpgroup 0 of CTA (0, 0, 0) issues a tcgen05_mma into TMEM t6 after op #15 (tmem_dealloc) by warpgroup 1 "
                                   "of CTA (0, 0, 0) freed it"));
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a CTA that exits without freeing its TMEM is reported, naming the dealloc that did not run", "[zoo][tcgen05][tmem_not_freed]") {
  const std::string name = "zoo_tmem_not_freed";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, check::tmem_not_freed, 15);  // the tmem_dealloc CTA 1 skips
    CHECK_THAT(d.message, Contains("every warpgroup of CTA 1 has exited, but no tmem_dealloc freed its TMEM t6 (op #15 did not run in it)"));
    CHECK(d.cta == 1);
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a pair's commit that frees a multicast stage only in its own CTAs lets a refill race the other pair's MMA",
          "[zoo][tcgen05][pair][data_race]") {
  const std::string name = "zoo_multicast_refill_before_peer_commit";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, check::data_race, 5);  // a CTA's refill of `as` (s0), multicast into the other pair
    CHECK_THAT(d.message, Contains("data race on SMEM s0") && Contains("this multicast load writes the SMEM of CTA") &&
                              Contains("tcgen05_commit_arrive_2cta(empty[s], collective_axes(...))"));
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: both pairs' commits on a stage barrier that counts one arrival are reported, not a silent early release",
          "[zoo][tcgen05][pair][multicast]") {
  const auto k = zoo::multicast_peer_commit_one_arrival();
  const auto in = seeded_inputs(k, input_seed);
  for (auto p : {policy::eager, policy::lazy}) {
    interp::options o;
    o.schedule = p;
    const auto r = interp::run(k, in, o);
    std::string all;
    for (auto const& d : r.diagnostics) all += d.message + "\n";
    INFO("policy " << interp::policy_name(p) << ":\n" << all);
    REQUIRE_FALSE(r.ok());
    // Two arrivals per use complete the stage's barrier twice: a waiter skips a phase, or a
    // refill's arrival finds no phase left; which one first depends on the schedule.
    const auto kind = r.diagnostics.front().kind;
    CHECK((kind == check::missed_phase || kind == check::over_arrival));
  }
}

// A from TMEM: a store_tmem over columns an MMA still reads, and an MMA reading A from TMEM
// before the store into it is ordered before the issue; printed so the op numbers are visible.
TEST_CASE("zoo: store_tmem into A's TMEM columns while the MMA reading them may run is a race on TMEM", "[zoo][tcgen05][data_race][tmem_a]") {
  const std::string name = "zoo_tmem_a_store_race";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = zoo::first_diagnostic(entry_of(name), p, input_seed);
    INFO(interp::policy_name(p) << ": " << d.message);
    CHECK(d.kind == check::data_race);
    CHECK_THAT(d.message, Contains("data race on TMEM t8[0, 0]"));
    // Eager: the MMA read `at` at issue, the store comes after it unordered. Lazy: the MMA still
    // in flight reads `at` after the store wrote it, unordered.
    if (p == policy::eager)
      CHECK_THAT(d.message, Contains("(write) is not ordered after the earlier read by tcgen05 MMA #1") &&
                                Contains("wait on the barrier a tcgen05_commit_arrive after that MMA arrives on before storing into it") &&
                                Contains("store_tmem(t8, load(s0[v"));
    else
      CHECK_THAT(d.message, Contains("a tcgen05 MMA reading A (read) is not ordered after the earlier write by warpgroup 2") &&
                                Contains("the storing warpgroup must arrive on a barrier the MMA issuer waits for"));
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: an MMA reading A from TMEM without waiting for the store_tmem finds it unwritten or racing", "[zoo][tcgen05][data_race][tmem_a]") {
  const std::string name = "zoo_tmem_a_mma_before_store";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = zoo::first_diagnostic(entry_of(name), p, input_seed);
    INFO(interp::policy_name(p) << ": " << d.message);
    CHECK_THAT(d.message, Contains("t8[0, 0]"));
    // Eager runs the issuer first: the MMA finds `at` unwritten. Lazy: the store lands first, unordered.
    if (p == policy::eager)
      CHECK((d.kind == check::poison_read && Contains("A in TMEM starts undefined").match(d.message)));
    else
      CHECK((d.kind == check::data_race && Contains("the storing warpgroup must arrive on a barrier the MMA issuer waits for").match(d.message)));
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: block-scaled MMA reading scales whose tcgen05_copy_scales nobody waited for races the copy", "[zoo][tcgen05][data_race][mx]") {
  const std::string name = "zoo_scales_not_waited";
  for (auto p : {policy::eager, policy::lazy}) {
    const auto d = the_diagnostic(name, p, check::data_race, 16);  // the tcgen05_mma
    CHECK_THAT(d.message, Contains("data race on TMEM t9[0, 0]: a block-scaled tcgen05 MMA reading the scales of A (read) is not ordered after the "
                                   "earlier write by the tcgen05 scale copy (tcgen05_copy_scales), tcgen05 op #1 issued by warp 5 (role 2)"));
  }
  fixed_twin_is_clean(name);
}
