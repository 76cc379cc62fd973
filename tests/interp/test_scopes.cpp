// Barrier scopes (ir/scopes.hpp): which cluster barriers arrive and wait at .cta scope, and the
// interpreter's model of that scope. A .cta arrival carries only completed asynchronous accesses
// to a peer CTA, so a kernel that needs .cluster shows a race when forced to .cta
// (options::all_cta_scopes), and the rule must never pick .cta for such a kernel.
#include <catch2/catch.hpp>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/ir/scopes.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "inputs.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {

ir::Kernel build(std::string const& name, param_values set = {}) {
  auto const& e = registry::global().find(name);
  return e.build(registry::resolve(e, set));
}

// The CTA pair's hand-off before copy_gmem_to_smem(..., pair_leader) (gemm_blackwell_2cta used it):
// each CTA waits for its own A rows and B half, then arrives on a cluster barrier of both CTAs,
// on which the even CTA waits before the pair MMA. The arrival orders only TMA landings.
ir::Kernel pair_relay() {
  return lower(kernel<sm_100a>(
      "pair_relay", grid(2), threads(1_c), cluster(2_c), gmem<bf16>("a", shape(256_c, 64_c)), gmem<bf16>("b", shape(128_c, 64_c)),
      gmem<f32>("c", shape(256_c, 128_c)), smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
      smem<f32>(shape(128_c, 128_c)), barrier(arrivals(2_c)), cluster_barrier(collective_axes(0_c), arrivals(1_c)),
      barrier(arrivals(1_c), orders_tensor_core), tmem<f32>(shape(128_c, 128_c)),
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto pair, auto done, auto d) {
        auto half = cluster_idx(0_c);
        return seq(copy_gmem_to_smem(a.block(program_id(0_c), 0_c), as, loaded), copy_gmem_to_smem(b.block(half, 0_c), bs, loaded),
                   barrier_wait(loaded), barrier_arrive(pair),
                   if_(half == 0_c, seq(barrier_wait(pair), tcgen05_mma_2cta(d, as, transpose(bs), false), tcgen05_commit_arrive_2cta(done))),
                   barrier_wait(done), store(cs, async_load_tmem(d)), tmem_dealloc(d), commit_smem(), copy_smem_to_gmem(cs, c.block(program_id(0_c), 0_c)),
                   commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
}

// The scope of the kernel's only cluster barrier.
ir::barrier_scope scope_of(ir::Kernel const& k) {
  int found = -1;
  for (std::size_t a = 0; a < k.allocs.size(); ++a)
    if (k.allocs[a].kind == ir::AllocKind::cluster_barrier) {
      REQUIRE(found < 0);
      found = static_cast<int>(a);
    }
  REQUIRE(found >= 0);
  return ir::cluster_barrier_scope(k, found);
}

}  // namespace

TEST_CASE("a consumer release that orders only tensor-core reads and TMA landings is .cta, generic GMEM or a bulk-write wait needs .cluster",
          "[interp][scopes]") {
  SECTION("gemm_hopper: the consumers' releases of a multicast stage") {
    const auto s = scope_of(build("gemm_hopper", {{"cluster", 2}}));
    CHECK(s.cta);
    CHECK_THAT(s.why, Contains("only asynchronous accesses"));
  }
  SECTION("a relay of landed TMA halves to the pair's issuer") { CHECK(scope_of(pair_relay()).cta); }
  SECTION("splitk_cluster: partials written with generic stores, read by rank 0") {
    const auto s = scope_of(build("splitk_cluster", {{"tma", 0}}));
    CHECK_FALSE(s.cta);
    CHECK_THAT(s.why, Contains("op #") && Contains("writes GMEM 'partials'"));
  }
  SECTION("splitk_cluster tma=1: partials sent by TMA stores, waited for in full before the arrive") {
    const auto s = scope_of(build("splitk_cluster", {{"tma", 1}}));
    CHECK_FALSE(s.cta);
    // rank 0's generic store of y decides first (rule (a) looks at the whole kernel); the full
    // bulk wait before the arrive would too
    CHECK_THAT(s.why, Contains("writes GMEM 'y'"));
  }
  SECTION("a CTA barrier is always .cta") {
    const auto k = build("pipelined_add");
    for (std::size_t a = 0; a < k.allocs.size(); ++a)
      if (k.allocs[a].kind == ir::AllocKind::barrier) CHECK(ir::cluster_barrier_scope(k, static_cast<int>(a)).cta);
  }
}

TEST_CASE("the interpreter models .cta scope: forced on splitk_cluster it leaves the peers' partials unordered, and names the scope",
          "[interp][scopes]") {
  for (std::int64_t tma : {0, 1}) {
    INFO("tma=" << tma);
    const auto k = build("splitk_cluster", {{"tma", tma}});
    const auto inputs = testing::random_buffers(k, 7);
    for (auto p : {interp::policy::eager, interp::policy::lazy}) {
      CHECK(interp::run(k, inputs, {.schedule = p}).ok());  // the rule's .cluster: ordered
      const auto r = interp::run(k, inputs, {.schedule = p, .all_cta_scopes = true});
      REQUIRE_FALSE(r.ok());
      CHECK(r.diagnostics[0].kind == interp::check::data_race);
      CHECK_THAT(r.diagnostics[0].message, Contains("partials") && Contains("at .cta scope under --cta-scopes"));
    }
  }
}

TEST_CASE("gemm_hopper at .cta scope stays race free under eager, lazy and PCT schedules", "[interp][scopes]") {
  const auto k = build("gemm_hopper", {{"cluster", 2}, {"K", 192}});
  const auto inputs = testing::random_buffers(k, 3);
  for (auto p : {interp::policy::eager, interp::policy::lazy}) CHECK(interp::run(k, inputs, {.schedule = p}).ok());
  auto ex = interp::explore(k, inputs, {.schedule = interp::policy::pct, .seed = 11}, 20);
  CHECK_FALSE(ex.failing_seed);
}

// The persistent pair GEMM hands an accumulator back to the even CTA's MMA issuer: each CTA's
// epilogue reads its rows of D (tcgen05.ld, waited), then arrives on acc_empty in both CTAs. The
// next pair MMA into that stage, issued in the even CTA, overwrites the odd CTA's TMEM: a .cta
// arrival publishes no completed TMEM load to it. The rule picked .cta (it looked at SMEM only)
// and the kernel raced on TMEM at its first reuse of a stage; rule (d) now sees the load before
// the arrival. (pair_relay above reads its TMEM only after its last arrival: still .cta.)
TEST_CASE("a pair MMA's accumulator read before a cluster barrier's arrival needs .cluster: persistent gemm_blackwell_2cta", "[interp][scopes]") {
  const auto k = build("gemm_blackwell_2cta", {{"ctas", 2}, {"M", 1024}});
  const auto s = scope_of(k);
  CHECK_FALSE(s.cta);
  CHECK_THAT(s.why, Contains("reads TMEM 't") && Contains("a .cta release carries no TMEM read to another CTA"));
  const auto inputs = testing::random_buffers(k, 5);
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    INFO(interp::policy_name(p));
    CHECK(interp::run(k, inputs, {.schedule = p}).ok());
    const auto r = interp::run(k, inputs, {.schedule = p, .all_cta_scopes = true});
    REQUIRE_FALSE(r.ok());
    CHECK(r.diagnostics[0].kind == interp::check::data_race);
    CHECK_THAT(r.diagnostics[0].message, Contains("data race on TMEM") && Contains("tcgen05_mma_2cta"));
  }
}
