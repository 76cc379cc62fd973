// The bug zoo under the interpreter: every buggy kernel is reported as exactly one diagnostic of
// the intended kind, naming the kernel, the op and the numbers that explain it; every fixed twin
// runs clean (and computes its reference) under eager, lazy and 20 PCT schedules.
//
// Policies: eager is the default. Where a bug shows only under a particular interleaving the
// test says which policy finds it and why; explore() budgets are small and each comment says
// where in the budget the bug is found today.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "zoo.hpp"
#include "zoo_checks.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;
using interp::check;
using interp::policy;

namespace {

constexpr std::uint64_t input_seed = 20261129;

// Uniform in [-4, 4) for every GMEM parameter, outputs included (so an output the kernel fails
// to write cannot pass for a zero it happened to compute); a segment table is seeded_inputs'
// (a valid table: random segment sizes, empty ones among them).
std::vector<host_tensor> random_inputs(ir::Kernel const& k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<host_tensor> t;
  for (auto const& p : k.params) {
    auto h = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < h.elements(); ++i) h.set(i, dist(rng));
    t.push_back(std::move(h));
  }
  seed_segment_tables(k, t, seed);
  return t;
}

interp::result run_under(ir::Kernel const& k, policy p, std::uint64_t seed = input_seed) {
  INFO("input seed " << seed << ", policy " << interp::policy_name(p));
  interp::options o;
  o.schedule = p;
  return interp::run(k, random_inputs(k, seed), o);
}

std::string all_messages(interp::result const& r) {
  std::string s;
  for (auto const& d : r.diagnostics) s += d.message + "\n";
  return s;
}

// The one diagnostic of `r`, required to be of kind `c` and to name `kernel` and op #`op` (-1:
// a diagnostic about no op in particular).
interp::diagnostic the_diagnostic(interp::result const& r, check c, std::string const& kernel, int op) {
  INFO("diagnostics:\n" << all_messages(r));
  REQUIRE(r.diagnostics.size() == 1);
  auto const& d = r.diagnostics.front();
  REQUIRE(std::string(interp::check_name(d.kind)) == interp::check_name(c));
  CHECK_THAT(d.message, Contains("kernel '" + kernel + "'"));
  CHECK(d.op == op);
  if (op >= 0) CHECK_THAT(d.message, Contains("op #" + std::to_string(op) + " ("));
  return d;
}

void require_mentions(interp::diagnostic const& d, std::vector<std::string> const& parts) {
  INFO("message: " << d.message);
  for (auto const& p : parts) CHECK_THAT(d.message, Contains(p));
}

bool k_op_is(ir::Kernel const& k, int op, ir::StmtOp what) { return op >= 0 && k.stmts[static_cast<std::size_t>(op)].op == what; }

zoo::entry const& entry_of(std::string const& name) { return zoo::find_entry(zoo::all(), name); }

// The fixed twin: no diagnostic under eager, lazy and 20 PCT schedules, and the reference
// result under eager and lazy.
void fixed_twin_is_clean(std::string const& name) {
  auto const& e = entry_of(name);
  const auto k = e.build(zoo::variant::fixed);
  REQUIRE(k.name == name);
  const auto in = random_inputs(k, input_seed);
  INFO("fixed twin of " << name << ", input seed " << input_seed);
  auto expected = in;
  e.reference(expected);
  for (auto p : {policy::eager, policy::lazy}) {
    INFO("policy " << interp::policy_name(p));
    interp::options o;
    o.schedule = p;
    auto r = interp::run(k, in, o);
    INFO("diagnostics:\n" << all_messages(r));
    REQUIRE(r.ok());
    for (int i : interp::written_params(k)) {
      INFO("output '" << k.params[i].name << "'");
      CHECK(r.buffers[i].bytes == expected[i].bytes);
    }
  }
  interp::options o;
  o.schedule = policy::pct;
  auto x = interp::explore(k, in, o, 20);
  INFO("pct: first failing seed " << (x.failing_seed ? std::to_string(*x.failing_seed) : "none") << "\n"
                                  << (x.failure ? all_messages(*x.failure) : ""));
  CHECK(x.schedules == 20);
  CHECK_FALSE(x.failing_seed.has_value());
}

}  // namespace

// ---- the zoo itself ---------------------------------------------------------------------------

TEST_CASE("zoo: every check has an exhibit, named as its kernel", "[zoo]") {
  std::vector<check> covered;
  for (auto const& e : zoo::all()) {
    INFO(e.name);
    CHECK(e.build(zoo::variant::buggy).name == e.name);
    CHECK(e.build(zoo::variant::fixed).name == e.name);
    covered.push_back(e.expected);
  }
  for (check c : {check::deadlock, check::missed_phase, check::tx_underflow, check::over_arrival, check::index_out_of_range,
                  check::data_race, check::missing_fence, check::store_pending_at_exit, check::load_pending_at_exit,
                  check::poison_read}) {
    INFO(interp::check_name(c));
    CHECK(std::find(covered.begin(), covered.end(), c) != covered.end());
  }
}

// ---- deadlock ---------------------------------------------------------------------------------

TEST_CASE("zoo: a named-barrier ping-pong without the first \"empty\" arrival deadlocks, naming both barriers", "[zoo][deadlock]") {
  const std::string name = "zoo_named_no_initial_arrive";
  auto r = run_under(zoo::named_no_initial_arrive(), policy::eager);
  REQUIRE(r.diagnostics.size() == 1);
  auto const& d = r.diagnostics.front();
  CHECK(d.kind == check::deadlock);
  // Each warpgroup waits on the barrier the other one would arrive at after its own wait.
  require_mentions(d, {"kernel '" + name + "'",
                       "warpgroup 0 of CTA (0, 0, 0) at op #", "named_barrier_sync: waits at named barrier 1 (bar 10) for phase 0 to complete: "
                       "128/256 threads arrived (warpgroup 0 of CTA (0, 0, 0) at op #",
                       "warpgroup 1 of CTA (0, 0, 0) at op #", "waits at named barrier 0 (bar 9) for phase 0 to complete: 128/256 threads arrived "
                       "(warpgroup 1 of CTA (0, 0, 0) at op #"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: two single warps on a named barrier counting a warpgroup's 128 threads deadlock, naming the warps", "[zoo][deadlock][roles]") {
  const std::string name = "zoo_warp_named_count";
  auto r = run_under(zoo::warp_named_count(), policy::eager);
  REQUIRE(r.diagnostics.size() == 1);
  auto const& d = r.diagnostics.front();
  CHECK(d.kind == check::deadlock);
  // Each warp arrives with 32: 64 of the 128 the phase counts.
  require_mentions(d, {"kernel '" + name + "'", "warp 5 (role 2) of CTA (0, 0, 0) at op #7 named_barrier_sync: waits at named barrier 0 (bar 9) for "
                       "phase 0 to complete: 64/128 threads arrived (warp 5 (role 2) of CTA (0, 0, 0) at op #7 named_barrier_sync, warp 4 (role "
                       "1) of CTA (0, 0, 0) at op #4 named_barrier_arrive)"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: release inside the producer's branch deadlocks on a 2-arrival barrier", "[zoo][deadlock]") {
  const std::string name = "zoo_release_in_branch";
  auto r = run_under(zoo::release_in_branch(), policy::eager);
  auto d = the_diagnostic(r, check::deadlock, name, 15);
  require_mentions(d, {"warpgroup 0 of CTA (0, 0, 0) at op #15 barrier_wait b2[0]: waits for completion #1 (phase 0); arrivals 1/2, "
                       "tx bytes pending 0; ops that could still arrive: #12 barrier_arrive",
                       "warpgroup 1 of CTA (0, 0, 0) at op #6 barrier_wait b1[0]: waits for completion #2 (phase 1); arrivals 0/1"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a prologue one stage short deadlocks on the stage never loaded", "[zoo][deadlock]") {
  const std::string name = "zoo_short_prologue";
  auto r = run_under(zoo::short_prologue(), policy::eager);
  auto d = the_diagnostic(r, check::deadlock, name, 6);
  require_mentions(d, {"warpgroup 0 of CTA (0, 0, 0) at op #6 barrier_wait b1[2]: waits for completion #1 (phase 0); arrivals 0/1, "
                       "tx bytes pending 0; ops that could still arrive: #3 copy_gmem_to_smem, #14 copy_gmem_to_smem"});
  fixed_twin_is_clean(name);
}

// Line `line` of zoo.cpp, as the user reads it in their editor.
std::string zoo_source_line(int line) {
  std::ifstream f(STAGECRAFT_ZOO_SOURCE);
  REQUIRE(f);
  std::string text;
  for (int i = 0; i < line && std::getline(f, text); ++i) {}
  return text;
}

// The line number a message gives for zoo.cpp after `prefix` ("...zoo.cpp:212<suffix>").
int zoo_line_after(std::string const& message, std::string const& prefix, std::string const& suffix) {
  std::smatch m;
  const std::regex re(prefix + "[^\\n]*zoo\\.cpp:([0-9]+)" + suffix);
  INFO("message: " << message << "\nlooking for: " << prefix << "...zoo.cpp:N" << suffix);
  REQUIRE(std::regex_search(message, m, re));
  return std::stoi(m[1].str());
}

TEST_CASE("zoo: waiting once per arrival instead of once per phase deadlocks", "[zoo][deadlock]") {
  // The kernel names its declarations: the report says ready and consumed, and points at lines.
  const std::string name = "zoo_double_wait";
  auto r = run_under(zoo::double_wait(), policy::eager);
  auto d = the_diagnostic(r, check::deadlock, name, 4);
  require_mentions(d, {"warpgroup 0 of CTA (0, 0, 0) at op #4 barrier_wait consumed[0]: waits for completion #1 (phase 0); arrivals 0/1",
                       "warpgroup 1 of CTA (0, 0, 0) at op #13 barrier_wait ready[0]: waits for completion #2 (phase 1); arrivals 0/2"});
  // The consumer's line is the user's mistake: the second wait on ready[s].
  const int consumer = zoo_line_after(d.message, "warpgroup 1 of CTA \\(0, 0, 0\\) at op #13 barrier_wait ready\\[0\\]", "");
  CHECK_THAT(zoo_source_line(consumer), Contains("seq(barrier_wait(ready[s]), barrier_wait(ready[s]))"));
  // The message ends with the first blocked op, where it was written and as it was written (the
  // stage index as an expression of the loop variable: the line above gives its value).
  const int producer = zoo_line_after(d.message, "\\n  at ", ": barrier_wait\\(consumed\\[v0 % 2\\]\\)$");
  CHECK_THAT(zoo_source_line(producer), Contains("barrier_wait(consumed[s])"));
  fixed_twin_is_clean(name);
}

// ---- missed phase -----------------------------------------------------------------------------

TEST_CASE("zoo: one barrier for a whole ring completes twice before the first wait", "[zoo][missed_phase]") {
  // Eager lands each prologue load before the next one arrives, so both complete a phase of
  // their own and the first wait finds two completions. (Lazy keeps the first load in flight and
  // reports the second load's arrival as an over-arrival instead: the same mistake, seen earlier.)
  const std::string name = "zoo_one_ring_barrier";
  auto r = run_under(zoo::one_ring_barrier(), policy::eager);
  auto d = the_diagnostic(r, check::missed_phase, name, 6);
  require_mentions(d, {"warpgroup 0 of CTA (0, 0, 0) waits for completion #1 of b1[0] (phase 0)", "already completed 2 phases",
                       "aliases with #3"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: one release barrier for two stages lets the consumer get two releases ahead", "[zoo][missed_phase]") {
  // Needs an interleaving: under eager and lazy the round-robin producer always reaches its
  // wait between two releases. PCT finds it with its first schedule (seed 0); budget 20.
  const std::string name = "zoo_single_release";
  const auto k = zoo::single_release();
  INFO("input seed " << input_seed);
  interp::options o;
  o.schedule = policy::pct;
  auto x = interp::explore(k, random_inputs(k, input_seed), o, 20);
  REQUIRE(x.failing_seed.has_value());
  INFO("pct seed " << *x.failing_seed << " after " << x.schedules << " schedules");
  auto d = the_diagnostic(*x.failure, check::missed_phase, name, 4);
  require_mentions(d, {"warpgroup 0 of CTA", "of b4[0] (phase", "but the barrier has already completed", "aliases with #"});
  fixed_twin_is_clean(name);
}

// ---- over-arrival -----------------------------------------------------------------------------

TEST_CASE("zoo: two TMA loads on an arrivals(1) barrier over-arrive", "[zoo][over_arrival]") {
  // Needs the first load still in flight when the second arrives, which is what hardware does
  // (TMA latency dwarfs the issue gap) and what lazy does: eager completes the x block before
  // the z copy arrives, so each copy completes a phase of its own and the waiter then finds two
  // completions (a missed phase, checked below).
  const std::string name = "zoo_shared_barrier";
  auto r = run_under(zoo::shared_barrier(), policy::lazy);
  auto d = the_diagnostic(r, check::over_arrival, name, 5);
  require_mentions(d, {"over-arrival on b2[0]: phase 0 already has all 1 expected arrivals",
                       "this arrival by warpgroup 0 of CTA (0, 0, 0) has no phase to go to"});

  auto eager = run_under(zoo::shared_barrier(), policy::eager);
  auto e = the_diagnostic(eager, check::missed_phase, name, 8);
  require_mentions(e, {"waits for completion #1 of b2[0] (phase 0)", "already completed 2 phases"});
  fixed_twin_is_clean(name);
}

// ---- tx underflow -----------------------------------------------------------------------------

TEST_CASE("zoo: a multicast issued by the cluster leader only underflows the follower's tx count", "[zoo][tx_underflow]") {
  // Eager lands the leader's half on the follower's barrier before the follower arrives. (When
  // the follower arrives first, its phase completes with no bytes and it reads w before any
  // lands: lazy reports that as a poison read.)
  const std::string name = "zoo_leader_only_multicast";
  auto r = run_under(zoo::leader_only_multicast(), policy::eager);
  auto d = the_diagnostic(r, check::tx_underflow, name, 3);
  CHECK(d.cta == 1);
  require_mentions(d, {"(barrier_arrive)", "tx underflow on b1[0]: phase 0 has all 1 arrivals but 16384 more bytes were completed"});
  fixed_twin_is_clean(name);
}

// ---- index out of range -----------------------------------------------------------------------

TEST_CASE("zoo: a barrier ring indexed by the step number runs off its end", "[zoo][index_out_of_range]") {
  const std::string name = "zoo_ring_indexed_by_step";
  auto r = run_under(zoo::ring_indexed_by_step(), policy::eager);
  auto d = the_diagnostic(r, check::index_out_of_range, name, 6);
  require_mentions(d, {"(barrier_wait)", "warpgroup 0 of CTA (0, 0, 0) indexes b1 with 2 in dimension 0, which has 2 elements (shape (2))"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: an unguarded prefetch reads a GMEM block past the end", "[zoo][index_out_of_range]") {
  const std::string name = "zoo_prefetch_past_end";
  auto r = run_under(zoo::prefetch_past_end(), policy::eager);
  auto d = the_diagnostic(r, check::index_out_of_range, name, 6);
  require_mentions(d, {"(copy_gmem_to_smem)", "GMEM block out of range", "addresses block 4 of 'x' in dimension 0",
                       "cover only [0, 4) there"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: an SMEM output ring indexed by the step number runs off its end", "[zoo][index_out_of_range]") {
  const std::string name = "zoo_out_ring_indexed_by_step";
  auto r = run_under(zoo::out_ring_indexed_by_step(), policy::eager);
  auto d = the_diagnostic(r, check::index_out_of_range, name, 6);
  require_mentions(d, {"(store)", "SMEM index out of range", "indexes s1 with 2 in dimension 0, which has 2 elements"});
  fixed_twin_is_clean(name);
}

// ---- data race --------------------------------------------------------------------------------

TEST_CASE("zoo: refilling a stage its TMA store may still read is a race", "[zoo][data_race]") {
  const std::string name = "zoo_refill_while_storing";
  auto r = run_under(zoo::refill_while_storing(), policy::eager);
  auto d = the_diagnostic(r, check::data_race, name, 12);
  require_mentions(d, {"(copy_gmem_to_smem)", "data race on SMEM s0[0, 0, 0]: a TMA load (write)",
                       "earlier read by a TMA store reading SMEM issued by warpgroup 0 of CTA (0, 0, 0) (bulk group #1)"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: two CTAs storing the same GMEM block race", "[zoo][data_race]") {
  const std::string name = "zoo_same_block_two_ctas";
  auto r = run_under(zoo::same_block_two_ctas(), policy::eager);
  auto d = the_diagnostic(r, check::data_race, name, 8);
  CHECK(d.cta == 1);
  require_mentions(d, {"(copy_smem_to_gmem)", "data race on GMEM y[0, 0]: a TMA store (write)", "earlier write by another cluster"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: slices packed in one array, with tail blocks bounded by the array, overlap the next slice's rows", "[zoo][data_race][shapes]") {
  const std::string name = "zoo_blocks_cross_slices";
  auto r = run_under(zoo::blocks_cross_slices(), policy::eager);
  auto d = the_diagnostic(r, check::data_race, name, 8);
  CHECK(d.cta == 1);
  require_mentions(d, {"(copy_smem_to_gmem)", "data race on GMEM y[64, 0]: a TMA store (write)", "earlier write by another cluster"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a ragged batch's output window that ends at its last tile, not its segment, writes the next segment's rows", "[zoo][data_race][shapes]") {
  const std::string name = "zoo_window_past_segment";
  auto r = run_under(zoo::window_past_segment(), policy::eager);
  auto d = the_diagnostic(r, check::data_race, name, 1);
  CHECK(d.cta == 3);  // its segment starts at row 269, inside segment 2's last tile
  require_mentions(d, {"(store)", "data race on GMEM y[269, 0]: warpgroup 0 of CTA (3, 0, 0) (write)", "earlier write by another cluster"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: reading a stage before waiting on its barrier races with the TMA load", "[zoo][data_race]") {
  // Eager has landed the load by then: a race with it. (Lazy has not: the read finds SMEM
  // nothing has written yet and reports a poison read.)
  const std::string name = "zoo_read_before_wait";
  auto r = run_under(zoo::read_before_wait(), policy::eager);
  auto d = the_diagnostic(r, check::data_race, name, 7);
  require_mentions(d, {"(store)", "data race on SMEM s0[0, 0, 0]: warpgroup 0 of CTA (0, 0, 0) (read)",
                       "earlier write by the TMA load completing b1[0] of CTA 0 (completion #1)"});
  fixed_twin_is_clean(name);
}

// The user's bug from issue 10: the split-K leader reads the peer CTA's partial from the
// kernel-owned workspace before the cluster barrier's wait. Under eager and lazy alike: the
// race is happens-before, not the order the scheduler happened to pick.
TEST_CASE("zoo: reading the peer's split-K partial before the cluster barrier's wait races", "[zoo][data_race]") {
  const std::string name = "zoo_splitk_early_read";
  for (auto p : {policy::eager, policy::lazy}) {
    INFO("policy " << interp::policy_name(p));
    auto r = run_under(zoo::splitk_early_read(), p);
    auto d = the_diagnostic(r, check::data_race, name, 5);
    // partials[128, 0]: the first element of rank 1's partial (M = 128 rows per rank).
    require_mentions(d, {"(store)", "data race on GMEM partials[128, 0]: warpgroup 0 of CTA (0, 0, 0) (read)",
                         "is not ordered after the earlier write by warpgroup 0 of CTA (1, 0, 0)"});
  }
  fixed_twin_is_clean(name);
}

// Issue 10's open question, settled (docs/interpreter.md, "Proxy fences"): a TMA store into the
// workspace read by a peer's generic loads needs no proxy fence, only the full bulk-group wait
// before the release. With .read alone the store's GMEM write is ordered before nothing: rank
// 0's read of the peer's partial races with it, under eager (where the write lands at once)
// as under lazy, and the fixed twin (the full wait, no fence) is clean.
TEST_CASE("zoo: a TMA store read by a peer after only a .read wait races, the full wait needs no fence", "[zoo][data_race]") {
  const std::string name = "zoo_tma_store_then_generic_read";
  const auto k = zoo::tma_store_then_generic_read();
  // Eager: the peer's write landed before rank 0's read (op #12), unordered with it; the message
  // names the .read wait as the cause.
  auto d = the_diagnostic(run_under(k, policy::eager), check::data_race, name, 12);
  require_mentions(d, {"data race on GMEM partials[128, 0]: warpgroup 0 of CTA (0, 0, 0) (read) is not ordered after the earlier write by "
                       "a TMA store writing GMEM issued by warpgroup 0 of CTA (1, 0, 0) (bulk group #1)",
                       "ordered after that store's SMEM read only", "wait_smem_to_gmem(n) without read_only", "no proxy fence is needed"});
  // Lazy: the writes land after rank 0 has read (the .read wait let it on); the first to land,
  // its own (op #6), overwrites what it read, unordered.
  d = the_diagnostic(run_under(k, policy::lazy), check::data_race, name, 6);
  CHECK(k_op_is(k, d.op, ir::StmtOp::copy_smem_to_gmem));
  require_mentions(d, {"data race on GMEM partials[0, 0]: a TMA store (write) is not ordered after the earlier read by warpgroup 0 of CTA (0, 0, 0)"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: rewriting a single output stage under its TMA store races", "[zoo][data_race]") {
  const std::string name = "zoo_output_reuse_no_wait";
  auto r = run_under(zoo::output_reuse_no_wait(), policy::eager);
  auto d = the_diagnostic(r, check::data_race, name, 5);
  require_mentions(d, {"(store)", "data race on SMEM s1[0, 0, 0]: warpgroup 0 of CTA (0, 0, 0) (write)",
                       "earlier read by a TMA store reading SMEM issued by warpgroup 0 of CTA (0, 0, 0) (bulk group #1)"});
  fixed_twin_is_clean(name);
}

// Under lazy the store's SMEM read completes after the next step's rewrite: a race, not a
// missing fence (the rewrite is not ordered before the store at all).
TEST_CASE("zoo: rewriting a single output stage under its TMA store races, also under lazy", "[zoo][data_race]") {
  const std::string name = "zoo_output_reuse_no_wait";
  auto r = run_under(zoo::output_reuse_no_wait(), policy::lazy);
  auto d = the_diagnostic(r, check::data_race, name, 7);
  require_mentions(d, {"data race on SMEM s1[0, 0, 0]", "a TMA store (read)", "earlier write by warpgroup 0 of CTA (0, 0, 0)"});
}

TEST_CASE("zoo: a refill ordered after one of two readers races with the other", "[zoo][data_race]") {
  const std::string name = "zoo_one_consumer_releases";
  auto r = run_under(zoo::one_consumer_releases(), policy::eager);
  auto d = the_diagnostic(r, check::data_race, name, 5);
  require_mentions(d, {"(copy_gmem_to_smem)", "data race on SMEM s0[", "a TMA load (write)",
                       "earlier read by warpgroup 2 of CTA (0, 0, 0)"});
  fixed_twin_is_clean(name);
}

// Lazy lets consumer 1 read each stage before consumer 2: the two unordered reads form a read
// set, and the refill (ordered after consumer 1 only) races with consumer 2's read.
TEST_CASE("zoo: a refill ordered after one of two readers races, also under lazy", "[zoo][data_race]") {
  const std::string name = "zoo_one_consumer_releases";
  auto r = run_under(zoo::one_consumer_releases(), policy::lazy);
  auto d = the_diagnostic(r, check::data_race, name, 5);
  require_mentions(d, {"a TMA load (write)", "earlier read by warpgroup 2 of CTA (0, 0, 0)"});
}

// ---- missing fence ----------------------------------------------------------------------------

TEST_CASE("zoo: a TMA store of generic writes without commit_smem misses the proxy fence", "[zoo][missing_fence]") {
  const std::string name = "zoo_no_proxy_fence";
  auto r = run_under(zoo::no_proxy_fence(), policy::eager);
  auto d = the_diagnostic(r, check::missing_fence, name, 8);
  require_mentions(d, {"(copy_smem_to_gmem)", "the TMA engine reads SMEM s0[0, 0, 0], written by warpgroup 0 of CTA (0, 0, 0)",
                       "no commit_smem() (fence.proxy.async)"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a TMA load of GMEM written with ordinary stores misses the proxy fence", "[zoo][missing_fence]") {
  const std::string name = "zoo_workspace_no_fence";
  const auto k = zoo::workspace_no_fence();
  for (auto p : {policy::eager, policy::lazy}) {
    auto r = run_under(k, p);
    auto d = the_diagnostic(r, check::missing_fence, name, 4);
    CHECK(k_op_is(k, d.op, ir::StmtOp::copy_gmem_to_smem));
    require_mentions(d, {"the TMA engine reads GMEM t[0, 0], written by warpgroup 0 of CTA (0, 0, 0) through ordinary stores",
                         "no commit_smem() (fence.proxy.async)", "the copy may read stale data"});
  }
  fixed_twin_is_clean(name);
}

// The reverse crossing between CTAs: the peer's ordinary stores into its partial, published by
// the cluster barrier, read by rank 0's TMA load. The barrier orders generic accesses only; the
// writer's commit_smem() (fence.proxy.async, unqualified in this kernel) is what the fixed twin adds.
TEST_CASE("zoo: a peer's generic partial TMA-loaded after the cluster barrier misses the proxy fence", "[zoo][missing_fence]") {
  const std::string name = "zoo_generic_store_then_tma_read";
  const auto k = zoo::generic_store_then_tma_read();
  for (auto p : {policy::eager, policy::lazy}) {
    INFO("policy " << interp::policy_name(p));
    auto r = run_under(k, p);
    auto d = the_diagnostic(r, check::missing_fence, name, 7);
    CHECK(k_op_is(k, d.op, ir::StmtOp::copy_gmem_to_smem));
    require_mentions(d, {"the TMA engine reads GMEM partials[128, 0], written by warpgroup 0 of CTA (1, 0, 0) through ordinary stores",
                         "no commit_smem() (fence.proxy.async)", "the copy may read stale data"});
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a TMA refill over ordinary stores into the stage misses the proxy fence", "[zoo][missing_fence]") {
  // The first refill (step 2 into stage 0) lands on bytes step 0 wrote in place.
  const std::string name = "zoo_refill_over_generic_store";
  const auto k = zoo::refill_over_generic_store();
  for (auto p : {policy::eager, policy::lazy}) {
    auto r = run_under(k, p);
    auto d = the_diagnostic(r, check::missing_fence, name, 10);
    CHECK(k_op_is(k, d.op, ir::StmtOp::copy_gmem_to_smem));
    require_mentions(d, {"the TMA engine writes SMEM s0[0, 0, 0], written by warpgroup 0 of CTA (0, 0, 0) through ordinary stores",
                         "the ordinary store may land after the copy's bytes and overwrite them"});
  }
  fixed_twin_is_clean(name);
}

// ---- store pending at exit --------------------------------------------------------------------

TEST_CASE("zoo: a kernel ending without the final wait_smem_to_gmem leaves stores pending", "[zoo][store_pending_at_exit]") {
  // The diagnostic names the last TMA store the warpgroup issued (op #9) and the warpgroup.
  const std::string name = "zoo_no_final_wait";
  auto r = run_under(zoo::no_final_wait(), policy::eager);
  auto d = the_diagnostic(r, check::store_pending_at_exit, name, 9);
  CHECK(d.cta == 0);
  CHECK(d.warpgroup == 0);
  require_mentions(d, {"warpgroup 0 of CTA (0, 0, 0) exits with 2 bulk group(s) of TMA stores not waited for", "wait_smem_to_gmem(0_c"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: store-pending-at-exit names the store left pending", "[zoo][store_pending_at_exit]") {
  auto r = run_under(zoo::no_final_wait(), policy::eager);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK_THAT(r.diagnostics.front().message, Contains("op #"));
  CHECK(r.diagnostics.front().op >= 0);
}

TEST_CASE("zoo: a TMA store never committed to a bulk group is pending at exit (lazy)", "[zoo][store_pending_at_exit]") {
  // Lazy keeps the store in flight until the warpgroup exits.
  const std::string name = "zoo_store_never_committed";
  auto r = run_under(zoo::store_never_committed(), policy::lazy);
  auto d = the_diagnostic(r, check::store_pending_at_exit, name, 5);
  require_mentions(d, {"warpgroup 0 of CTA (0, 0, 0) exits with TMA stores that were never committed (commit_smem_to_gmem_group)"});
  fixed_twin_is_clean(name);
}

// Eager has completed the store before the exit: what matters is that it was never committed
// (its wait_smem_to_gmem(0_c) waited for nothing).
TEST_CASE("zoo: a TMA store never committed to a bulk group is pending at exit (eager)", "[zoo][store_pending_at_exit]") {
  const std::string name = "zoo_store_never_committed";
  auto r = run_under(zoo::store_never_committed(), policy::eager);
  auto d = the_diagnostic(r, check::store_pending_at_exit, name, 5);
  require_mentions(d, {"never committed"});
}

// ---- pipelines ----------------------------------------------------------------------------------

TEST_CASE("zoo: a consumer releasing its stage before reading it races with the refill", "[zoo][data_race][pipeline]") {
  const std::string name = "zoo_early_release";
  auto r = run_under(zoo::early_release(), policy::eager);
  auto d = the_diagnostic(r, check::data_race, name, r.diagnostics.empty() ? -1 : r.diagnostics.front().op);
  require_mentions(d, {"data race on SMEM s0[", "a TMA load (write)"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a stage refilled right after its step while the next step still reads it", "[zoo][data_race][pipeline]") {
  // emit_pipeline with delay_release<0> where the body needs the previous stage: fixed by delay_release<1>.
  const std::string name = "zoo_refill_released_too_early";
  auto r = run_under(zoo::refill_released_too_early(), policy::eager);
  auto d = the_diagnostic(r, check::data_race, name, r.diagnostics.empty() ? -1 : r.diagnostics.front().op);
  require_mentions(d, {"data race on SMEM s0["});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a producer that loads a step no consumer takes leaves it in flight at exit (lazy)", "[zoo][load_pending_at_exit][pipeline]") {
  // Under lazy the extra load is still in flight when every warpgroup has exited; eager lands it at once.
  const std::string name = "zoo_producer_no_drain";
  auto r = run_under(zoo::producer_no_drain(), policy::lazy);
  auto d = the_diagnostic(r, check::load_pending_at_exit, name, r.diagnostics.empty() ? -1 : r.diagnostics.front().op);
  CHECK(k_op_is(zoo::producer_no_drain(), d.op, ir::StmtOp::copy_gmem_to_smem));
  require_mentions(d, {"is still in flight: nobody waits for it", "(copy_gmem_to_smem)"});
  fixed_twin_is_clean(name);
}

// ---- poison read ------------------------------------------------------------------------------

TEST_CASE("zoo: an accumulator never zeroed is read before it is written", "[zoo][poison_read]") {
  const std::string name = "zoo_unzeroed_accumulator";
  auto r = run_under(zoo::unzeroed_accumulator(), policy::eager);
  auto d = the_diagnostic(r, check::poison_read, name, 7);
  require_mentions(d, {"(store)", "warpgroup 0 of CTA (0, 0, 0) reads s1[0, 0] (element 0), which nothing has written"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a partial last block computed for too few rows stores never-written SMEM into the array", "[zoo][poison_read][shapes]") {
  const std::string name = "zoo_tail_rows_unwritten";
  auto r = run_under(zoo::tail_rows_unwritten(), policy::eager);
  auto d = the_diagnostic(r, check::poison_read, name, 7);
  CHECK(d.cta == 1);
  require_mentions(d, {"(copy_smem_to_gmem)", "a TMA store reads s1[32, 0] (element 2048), which nothing has written"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a TMA store of a stage nothing wrote reads poison", "[zoo][poison_read]") {
  const std::string name = "zoo_stored_wrong_stage";
  auto r = run_under(zoo::stored_wrong_stage(), policy::eager);
  auto d = the_diagnostic(r, check::poison_read, name, 8);
  require_mentions(d, {"(copy_smem_to_gmem)", "a TMA store reads s1[0, 0, 0] (element 0), which nothing has written"});
  fixed_twin_is_clean(name);
}

// Reducing stores (ops/reduce.hpp). CTAs without a cluster run one after another in the
// interpreter, each its own cluster, so nothing orders one CTA's accesses to y with the other's:
// only reductions, which commute, may meet there.
TEST_CASE("zoo: split-K partials added with a plain load and store race, and reduce_add does not", "[zoo][data_race][reduce]") {
  const std::string name = "zoo_plain_store_accumulate";
  const auto k = zoo::plain_store_accumulate();
  // CTA 1's load of y (op #5's value) meets CTA 0's plain store: a lost update on hardware.
  auto d = the_diagnostic(run_under(k, policy::eager), check::data_race, name, 5);
  require_mentions(d, {"data race on GMEM y[0, 0]: warpgroup 0 of CTA (1, 0, 0) (read) is not ordered after the earlier write by another cluster"});
  CHECK_THAT(d.message, !Contains("reduction"));  // two plain accesses: no word about reductions
  fixed_twin_is_clean(name);
}

// The first op of kind `what` in k (-1: none).
int first_op(ir::Kernel const& k, ir::StmtOp what) {
  for (std::size_t i = 0; i < k.stmts.size(); ++i)
    if (k.stmts[i].op == what) return static_cast<int>(i);
  return -1;
}

TEST_CASE("zoo: a serial split-K whose slices signal their own turn deadlocks, naming the semaphore, its count and the wait's",
          "[zoo][deadlock][semaphore]") {
  const std::string name = "zoo_semaphore_never_signalled";
  const auto k = zoo::semaphore_never_signalled();
  auto d = the_diagnostic(run_under(k, policy::eager), check::deadlock, name, first_op(k, ir::StmtOp::semaphore_wait));
  require_mentions(d, {"warpgroup 0 of CTA (1, 0, 0)", "semaphore_wait: waits for semaphore 'turn'[1] to hold 1, but it holds 0",
                       "ops that signal or change 'turn': #"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a serial split-K whose slices never wait races on y across the CTAs, the wait orders them", "[zoo][data_race][semaphore]") {
  const std::string name = "zoo_serial_without_wait";
  const auto k = zoo::serial_without_wait();
  // Slice 1 (the second cluster) reads y, which slice 0 wrote with nothing ordering the two.
  auto d = the_diagnostic(run_under(k, policy::eager), check::data_race, name, first_op(k, ir::StmtOp::store));
  require_mentions(d, {"data race on GMEM y[0, 0]: warpgroup 0 of CTA (1, 0, 0) (read) is not ordered after the earlier write by another cluster"});
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: a consumer that reads its fetch_add ticket before the slot's full barrier reads an unwritten slot, the wait orders it",
          "[zoo][poison_read][atomic]") {
  const std::string name = "zoo_ticket_read_before_wait";
  const auto k = zoo::ticket_read_before_wait();
  // Eager and lazy both run the consumer's first test of its ticket (op #10, the if_ on
  // fetched(slots[0])) before the producer's first atomic: SMEM nothing wrote. Read later, it
  // would race the atomic's write (interp_tests "[atomic]" finds that one under PCT).
  for (auto p : {policy::eager, policy::lazy}) {
    auto d = the_diagnostic(run_under(k, p), check::poison_read, name, 10);
    require_mentions(d, {"warpgroup 1 of CTA (0, 0, 0) reads slots[0, 0] (element 0), which nothing has written"});
  }
  fixed_twin_is_clean(name);
}

TEST_CASE("zoo: reading y after a TMA reduce-add races with the other CTA's reduce", "[zoo][data_race][reduce]") {
  const std::string name = "zoo_read_after_reduce";
  const auto k = zoo::read_after_reduce();
  // CTA 0 runs first: its read of y is ordered after its own reduce (the full wait). CTA 1's
  // reduce (op #6) then lands on an element CTA 0 read, unordered.
  auto d = the_diagnostic(run_under(k, policy::eager), check::data_race, name, 6);
  require_mentions(d, {"data race on GMEM y[0, 0]: a TMA reduce (reduction) is not ordered after the earlier read by another cluster",
                       "combine atomically with each other", "read the result after the kernel"});
  fixed_twin_is_clean(name);
}
