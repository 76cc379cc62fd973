// Protocol checks at their smallest unit. TMA moves 16-byte units, so the smallest count a
// barrier can be off by is 16 bytes; the bug zoo's cases are off by whole tiles, so a check
// with 16 bytes of slack would pass them all (the mutation check found this).
#include <catch2/catch.hpp>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/stagecraft.hpp>

#include "inputs.hpp"
#include "workspace_kernels.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

TEST_CASE("a tx underflow of one 16-byte unit is reported, with its byte count", "[interp][checks]") {
  // A 2x4 f32 block (two 16-byte rows) multicast over a 2-CTA cluster, issued by the leader only:
  // its share lands on the follower's barrier, which expected no bytes: 16 too many.
  const auto k = lower(kernel<sm_90a>("tx_edge", grid(2), threads(1_c), cluster(2_c), gmem<f32>("w", shape(2_c, 4_c)),
                                      smem<f32>(shape(2_c, 4_c)),  // (row, col) in each CTA
                                      barrier(arrivals(1_c)), [](auto w, auto ws, auto bar) {
                                        return seq(if_(cluster_idx(0_c) == 0_c, copy_gmem_to_smem(w.block(0_c, 0_c), ws, bar, collective_axes(0_c)),
                                                       barrier_arrive(bar)),
                                                   barrier_wait(bar));
                                      }));
  INFO("input seed 31");
  auto r = interp::run(k, testing::random_buffers(k, 31), {.schedule = interp::policy::eager});
  REQUIRE_FALSE(r.diagnostics.empty());
  auto const& d = r.diagnostics.front();
  INFO(d.message);
  CHECK(d.kind == interp::check::tx_underflow);
  CHECK(d.cta == 1);
  CHECK_THAT(d.message, Contains("kernel 'tx_edge'") && Contains("phase 0 has all 1 arrivals but 16 more bytes were completed than expected"));
}

namespace {
// k runs clean under eager and lazy with the buffers `outputs` equal to want's, and 50 PCT
// schedules find nothing.
void clean_and_exact(ir::Kernel const& k, std::vector<host_tensor> const& in, std::vector<host_tensor> const& want, std::vector<int> const& outputs) {
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    INFO("kernel " << k.name << ", policy " << interp::policy_name(p));
    auto r = interp::run(k, in, {.schedule = p});
    for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
    REQUIRE(r.ok());
    for (int o : outputs) CHECK(r.buffers[static_cast<std::size_t>(o)].bytes == want[static_cast<std::size_t>(o)].bytes);
  }
  auto ex = interp::explore(k, in, {.schedule = interp::policy::pct, .seed = 5}, 50);
  CHECK_FALSE(ex.failing_seed);
}
}  // namespace

namespace {
// Two CTAs of a cluster exchange partial results through GMEM (the pattern a kernel-owned
// workspace serves, here with an ordinary parameter as the scratch): each writes 2 * its block
// of x, arrives on a cluster barrier, and CTA 0 sums both. The cluster barrier's arrivals
// release and its wait acquires (mbarrier.arrive.release.cluster / try_wait.acquire.cluster in
// generated code), which orders the peer's generic GMEM writes before CTA 0's reads. Early: CTA
// 0 reads before its wait.
template <bool Early>
ir::Kernel exchange_through_gmem() {
  auto t = shape(64_c, 64_c);
  return lower(kernel<sm_90a>("gmem_exchange", grid(2), threads(1_c), cluster(2_c), gmem<f32>("x", shape(128_c, 64_c)), gmem<f32>("scratch", shape(128_c, 64_c)),
                              gmem<f32>("y", t), cluster_barrier(collective_axes(0_c), arrivals(1_c)), [t](auto x, auto scratch, auto y, auto done) {
                                auto me = cluster_idx(0_c);
                                auto sum = if_(me == 0_c, store(y.tile(t, 0_c, 0_c), load(scratch.tile(t, 0_c, 0_c)) + load(scratch.tile(t, 1_c, 0_c))));
                                auto publish = seq(store(scratch.tile(t, me, 0_c), load(x.tile(t, me, 0_c)) * 2.0f), barrier_arrive(done));
                                if constexpr (Early) return seq(publish, sum, barrier_wait(done));
                                else return seq(publish, barrier_wait(done), sum);
                              }));
}
}  // namespace

TEST_CASE("GMEM written by a peer CTA is ordered by the cluster barrier, read before its wait it is a race", "[interp][checks][cluster]") {
  const auto k = exchange_through_gmem<false>();
  const auto in = testing::random_buffers(k, 41);
  auto want = in;
  for (std::int64_t i = 0; i < 64 * 64; ++i) {
    const float a = static_cast<float>(in[0].get(i)) * 2.0f, b = static_cast<float>(in[0].get(64 * 64 + i)) * 2.0f;
    want[1].set(i, a);
    want[1].set(64 * 64 + i, b);
    want[2].set(i, a + b);
  }
  clean_and_exact(k, in, want, {2, 1});
  // The early read races under every schedule: happens-before, not the order the scheduler picked.
  const auto bad = exchange_through_gmem<true>();
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    auto r = interp::run(bad, in, {.schedule = p});
    REQUIRE_FALSE(r.diagnostics.empty());
    CHECK(r.diagnostics[0].kind == interp::check::data_race);
    CHECK_THAT(r.diagnostics[0].message, Contains("kernel 'gmem_exchange'") && Contains("scratch"));
  }
}

namespace {
// One warpgroup sends 3x through SMEM by TMA store into scratch and reads scratch back with
// generic loads: y = scratch + 1. The PTX ISA's "Async Proxy": a bulk copy's completion carries
// an implicit generic-async proxy fence, so the full wait is all the read needs; the .read wait
// (ReadOnly) only says the SMEM was read, and the load races with the store's GMEM write.
template <bool ReadOnly>
ir::Kernel tma_store_read_back() {
  auto t = shape(64_c, 64_c);
  return lower(kernel<sm_90a>("tma_read_back", grid(1), threads(1_c), gmem<f32>("x", t), gmem<f32>("scratch", t), gmem<f32>("y", t),
                              smem<f32>(t),  // out: (row, col)
                              [t](auto x, auto scratch, auto y, auto out) {
                                auto wait = [] {
                                  if constexpr (ReadOnly) return wait_smem_to_gmem(0_c, read_only);
                                  else return wait_smem_to_gmem(0_c);
                                }();
                                return seq(store(out, load(x.tile(t, 0_c, 0_c)) * 3.0f), commit_smem(), copy_smem_to_gmem(out, scratch.block(0_c, 0_c)),
                                           commit_smem_to_gmem_group(), wait, store(y.tile(t, 0_c, 0_c), load(scratch.tile(t, 0_c, 0_c)) + 1.0f),
                                           wait_smem_to_gmem(0_c));
                              }));
}
}  // namespace

TEST_CASE("a TMA store's GMEM read back with loads needs the full wait and no proxy fence, after the .read wait it races",
          "[interp][checks][proxy]") {
  const auto k = tma_store_read_back<false>();
  const auto in = testing::random_buffers(k, 43);
  auto want = in;
  for (std::int64_t i = 0; i < 64 * 64; ++i) want[2].set(i, static_cast<float>(in[0].get(i)) * 3.0f + 1.0f);
  clean_and_exact(k, in, want, {2});
  const auto bad = tma_store_read_back<true>();
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    INFO("policy " << interp::policy_name(p));
    auto r = interp::run(bad, in, {.schedule = p});
    REQUIRE(r.diagnostics.size() == 1);
    INFO(r.diagnostics[0].message);
    CHECK(r.diagnostics[0].kind == interp::check::data_race);
    CHECK_THAT(r.diagnostics[0].message, Contains("kernel 'tma_read_back'") && Contains("data race on GMEM scratch[0, 0]"));
    // Eager lands the write before the load, which then names the .read wait; lazy lands it after.
    if (p == interp::policy::eager) CHECK_THAT(r.diagnostics[0].message, Contains("without read_only"));
  }
}

namespace {
// The other crossing between CTAs: each writes 2x its block of x into scratch with ordinary
// stores and arrives; CTA 0 waits and TMA-loads the peer's block. The generic-to-async fence may
// stand anywhere on the causality path from the stores to the copy: after the writer's stores
// (Where::writer), or in the issuer after its acquire (Where::reader); a fence the issuer runs
// before its wait (Where::too_early) has not seen the peer's stores and orders nothing.
enum class Where { writer, reader, too_early };
template <Where F>
ir::Kernel peer_stores_then_tma() {
  auto t = shape(64_c, 64_c);
  return lower(kernel<sm_90a>("peer_tma", grid(2), threads(1_c), cluster(2_c), gmem<f32>("x", shape(128_c, 64_c)),
                              gmem<f32>("scratch", shape(128_c, 64_c)), gmem<f32>("y", t), smem<f32>(t), barrier(arrivals(1_c)),
                              cluster_barrier(collective_axes(0_c), arrivals(1_c)), [t](auto x, auto scratch, auto y, auto buf, auto loaded, auto done) {
                                auto me = cluster_idx(0_c);
                                auto write = store(scratch.tile(t, me, 0_c), load(x.tile(t, me, 0_c)) * 2.0f);
                                auto take = seq(copy_gmem_to_smem(scratch.block(1_c, 0_c), buf, loaded), barrier_wait(loaded), store(y.tile(t, 0_c, 0_c), load(buf)));
                                if constexpr (F == Where::writer)
                                  return seq(write, commit_smem(), barrier_arrive(done), barrier_wait(done), if_(me == 0_c, take));
                                else if constexpr (F == Where::reader)
                                  return seq(write, barrier_arrive(done), barrier_wait(done), if_(me == 0_c, seq(commit_smem(), take)));
                                else
                                  return seq(write, barrier_arrive(done), commit_smem(), barrier_wait(done), if_(me == 0_c, take));
                              }));
}
}  // namespace

TEST_CASE("generic GMEM stores a peer TMA-loads: fenced by the writer or by the issuer after its acquire, not before it", "[interp][checks][proxy]") {
  const auto in = testing::random_buffers(peer_stores_then_tma<Where::writer>(), 47);
  auto want = in;
  for (std::int64_t i = 0; i < 64 * 64; ++i) want[2].set(i, static_cast<float>(in[0].get(64 * 64 + i)) * 2.0f);
  for (auto const& k : {peer_stores_then_tma<Where::writer>(), peer_stores_then_tma<Where::reader>()}) clean_and_exact(k, in, want, {2});
  const auto bad = peer_stores_then_tma<Where::too_early>();
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    INFO("policy " << interp::policy_name(p));
    auto r = interp::run(bad, in, {.schedule = p});
    REQUIRE(r.diagnostics.size() == 1);
    INFO(r.diagnostics[0].message);
    CHECK(r.diagnostics[0].kind == interp::check::missing_fence);
    CHECK_THAT(r.diagnostics[0].message, Contains("kernel 'peer_tma'") && Contains("the TMA engine reads GMEM scratch[64, 0], written by warpgroup 0 of CTA (1, 0, 0)"));
  }
}

// A workspace is zero at launch whatever the caller's slot holds (the slot here is random), is
// no output (written_params leaves it out though the kernel writes it), and its slot comes
// back as it was given; a TMA load of it reads the zeros too.
TEST_CASE("a workspace starts as zeros, is not an output, and its slot comes back as given", "[interp][workspace]") {
  for (bool tma : {false, true}) {
    const auto k = tma ? testing::workspace_probe<true>() : testing::workspace_probe<false>();
    INFO("kernel " << k.name);
    REQUIRE(k.params[2].workspace);
    CHECK_THAT(ir::print(k), Contains("param w: workspace f32[64, 64]") && Contains("param x: gmem f32[64, 64]"));
    CHECK(interp::written_params(k) == std::vector<int>{1});
    const auto in = testing::random_buffers(k, 43);
    REQUIRE(in[2].get(0) != 0.0);
    for (auto p : {interp::policy::eager, interp::policy::lazy}) {
      auto r = interp::run(k, in, {.schedule = p});
      for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
      REQUIRE(r.ok());
      CHECK(r.buffers[1].bytes == in[0].bytes);  // y = 0 + x
      CHECK(r.buffers[2].bytes == in[2].bytes);
    }
  }
}
