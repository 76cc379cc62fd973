// tcgen05 in the interpreter: gemm_blackwell's numbers (within the documented MMA tolerance,
// under every policy), the tf32 kind, and that operands really are read through the decoded
// descriptors: an MMA whose B is read in the other major order (its transpose bit flipped in the
// IR, hence in the instruction descriptor) gives a wrong answer here, as it would on the GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/ir/tcgen05.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "inputs.hpp"
#include "mma_runs.hpp"
#include "tmem_a_kernels.hpp"
#include "../../examples/gemm_blackwell_mx.hpp"

using namespace stagecraft;
using testing::outside_bound;
using testing::run_everywhere;
using Catch::Matchers::Contains;
using interp::policy;

namespace {



// C (128, 64) = A (128, K) * B^T, B (64, K) as stored, one stage, one thread: `T` bf16 or f32
// (kind::tf32), K-major with a 128-byte swizzle (64 bf16 or 32 f32 per row). Prologue option:
// double A in place with ordinary stores before the MMA, with or without commit_smem().
enum class prologue { none, scale_fenced, scale_unfenced, mma_with_barrier };
template <class T, prologue P = prologue::none>
ir::Kernel one_cta(const char* name) {
  constexpr long long KT = 128 / (T::bits / 8);  // K per swizzled row
  return lower(kernel<sm_100a>(
      name, grid(1), threads(1_c), gmem<T>("a", shape(128_c, int_c<2 * KT>)), gmem<T>("b", shape(64_c, int_c<2 * KT>)),
      gmem<f32>("c", shape(128_c, 64_c)), smem<T>(shape(128_c, int_c<KT>), swizzle(128_c)), smem<T>(shape(64_c, int_c<KT>), swizzle(128_c)),
      smem<f32>(shape(128_c, 64_c)), barrier(arrivals(2_c)), barrier(arrivals(1_c), orders_tensor_core), tmem<f32>(shape(128_c, 64_c)),
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto done, auto d) {
        auto step = for_(range(2_c), [&](auto j) {
          auto fill = seq(copy_gmem_to_smem(a.block(0_c, j), as, loaded), copy_gmem_to_smem(b.block(0_c, j), bs, loaded), barrier_wait(loaded));
          auto mma = seq(tcgen05_mma(d, as, transpose(bs), j > 0_c), tcgen05_commit_arrive(done), barrier_wait(done));
          if constexpr (P == prologue::none) return seq(fill, mma);
          else if constexpr (P == prologue::mma_with_barrier) return seq(fill, tcgen05_mma(d, as, transpose(bs), done, j > 0_c), barrier_wait(done));
          else if constexpr (P == prologue::scale_fenced) return seq(fill, store(as, load(as) + load(as)), commit_smem(), mma);
          else return seq(fill, store(as, load(as) + load(as)), mma);
        });
        return seq(step, store(cs, async_load_tmem(d)), tmem_dealloc(d), commit_smem(), copy_smem_to_gmem(cs, c.block(0_c, 0_c)),
                   commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
}

void gemm_abt(std::vector<host_tensor>& t, double scale_a = 1.0) {  // C = A * B^T, A (M, K), B (N, K)
  const std::int64_t M = t[0].shape[0], K = t[0].shape[1], N = t[1].shape[0];
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (std::int64_t x = 0; x < K; ++x) s += scale_a * t[0].get(i * K + x) * t[1].get(j * K + x);
      t[2].set(i * N + j, s);
    }
}

// One Blackwell GEMM at one size and parameter set: within the MMA tolerance under eager, lazy
// and `pct` PCT schedules, with D summed over the whole K. Returns the kernel for further checks.
struct gemm_size {
  std::int64_t M, N, K, BN, stages;
};
ir::Kernel check_gemm(const char* name, gemm_size z, std::int64_t fp8, std::uint64_t seed, std::int64_t mc = 0) {
  auto const& e = registry::global().find(name);
  INFO(name << " fp8=" << fp8 << " mc=" << mc << " M=" << z.M << " N=" << z.N << " K=" << z.K << " BN=" << z.BN << " stages=" << z.stages);
  param_values p{{"M", z.M}, {"N", z.N}, {"K", z.K}, {"BN", z.BN}, {"stages", z.stages}};
  if (fp8 != 0) p.insert({"fp8", fp8});
  if (mc != 0) p.insert({"mc", mc});
  const auto vals = registry::resolve(e, p);
  const auto k = e.build(vals);
  const auto in = testing::random_buffers(k, seed);
  auto expected = in;
  e.reference(expected, vals);
  run_everywhere(k, in, expected, 50);
  const auto r = interp::run(k, in);
  const auto tol = interp::tolerance_of(k, r, in);
  REQUIRE(tol.has_value());
  CHECK(tol->k == z.K);  // every CTA's D summed the whole K before the epilogue read it (the odd CTA's too)
  // fp8: the bound of the hardware's narrower fp8 accumulation
  CHECK((fp8 != 0 ? ir::dtype_is_fp8(tol->input) : tol->input == ir::DType::bf16));
  return k;
}

}  // namespace

TEST_CASE("gemm_blackwell is within the MMA tolerance at 256^3 and 384x512x192 under eager, lazy and 50 PCT schedules", "[interp][tcgen05]") {
  for (auto z : {gemm_size{256, 256, 256, 256, 3}, gemm_size{384, 512, 192, 256, 2}, gemm_size{128, 384, 320, 128, 3}})
    check_gemm("gemm_blackwell", z, 0, 9);
}

TEST_CASE("gemm_blackwell: N smaller than BN is a usage error naming both, N that BN does not divide runs", "[interp][tcgen05]") {
  auto const& e = registry::global().find("gemm_blackwell");
  CHECK_THROWS_WITH(e.build(registry::resolve(e, {{"N", 200}, {"BN", 256}})), Contains("N=200 must be at least BN=256"));
  const auto k = e.build(registry::resolve(e, {{"N", 320}, {"BN", 256}}));
  CHECK(k.grid[0] == 4);  // one CTA per tile (ctas = 0): 2 x 2 tiles of C, the second column of which overhangs N
}

TEST_CASE("tcgen05 kind::tf32 (f32 operands read as tf32, K = 8 per instruction) is within its tolerance", "[interp][tcgen05]") {
  const auto k = one_cta<f32>("tc_tf32");
  const auto in = testing::random_buffers(k, 5);
  auto expected = in;
  gemm_abt(expected);
  run_everywhere(k, in, expected, 20);
  const auto r = interp::run(k, in);
  REQUIRE(interp::tolerance_of(k, r, in)->input == ir::DType::f32);
}

TEST_CASE("a tcgen05 MMA whose B is read in the other major order gives a wrong answer the tolerance catches", "[interp][tcgen05]") {
  auto k = one_cta<bf16>("tc_flip");
  const auto in = testing::random_buffers(k, 6);
  auto expected = in;
  gemm_abt(expected);
  REQUIRE(outside_bound(k, interp::run(k, in), in, expected) == "");
  // B (64, 64) per stage: square, so read N-major it still verifies, and is B rather than B^T.
  for (auto& s : k.stmts)
    if (s.op == ir::StmtOp::tcgen05_mma) s.transpose &= ~2;
  REQUIRE_NOTHROW(ir::verify(k));
  const auto r = interp::run(k, in);
  REQUIRE(r.ok());
  CHECK(outside_bound(k, r, in, expected) != "");
}

TEST_CASE("tcgen05_mma(d, a, b, bar, accumulate) is the MMA followed by its commit to bar", "[interp][tcgen05]") {
  const auto k = one_cta<bf16, prologue::mma_with_barrier>("tc_mma_bar");
  const auto in = testing::random_buffers(k, 8);
  auto expected = in;
  gemm_abt(expected);
  run_everywhere(k, in, expected, 20);
}

TEST_CASE("a tcgen05_commit_arrive with no MMA before it arrives at once", "[interp][tcgen05]") {
  // Nothing to wait for: the commit is an arrival. Its clock still carries the (empty) MMA stream.
  const auto k = lower(kernel<sm_100a>("tc_commit_only", grid(2), threads(2_c), barrier(arrivals(1_c), orders_tensor_core), [](auto done) {
    return if_(thread_id() == 0_c, tcgen05_commit_arrive(done), barrier_wait(done));
  }));
  for (auto p : {policy::eager, policy::lazy, policy::pct}) {
    const auto r = interp::run(k, {}, {.schedule = p, .trace = true});
    INFO((r.ok() ? std::string() : r.diagnostics.front().message));
    CHECK(r.ok());
    // The commits complete on the tcgen05 engine's lane, one per CTA.
    auto const& lanes = r.timeline.lanes;
    const auto lane = std::find(lanes.begin(), lanes.end(), "tcgen05") - lanes.begin();
    REQUIRE(lane < static_cast<std::ptrdiff_t>(lanes.size()));
    int commits = 0;
    for (auto const& e : r.timeline.events)
      if (e.label.rfind("tcgen05 commit", 0) == 0) {
        CHECK(e.lane == lane);
        ++commits;
      }
    CHECK(commits == 2);
  }
}

TEST_CASE("ordinary stores into a tcgen05 operand need commit_smem() before the MMA", "[interp][tcgen05]") {
  {
    const auto k = one_cta<bf16, prologue::scale_fenced>("tc_fenced");
    const auto in = testing::random_buffers(k, 7);
    auto expected = in;
    gemm_abt(expected, 2.0);
    run_everywhere(k, in, expected, 10);
  }
  const auto k = one_cta<bf16, prologue::scale_unfenced>("tc_unfenced");
  for (auto p : {policy::eager, policy::lazy}) {
    const auto r = interp::run(k, testing::random_buffers(k, 7), {.schedule = p});
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics.front().kind == interp::check::missing_fence);
    CHECK_THAT(r.diagnostics.front().message,
               Contains("tcgen05_mma reads SMEM s0[0, 0] as an operand, written by warpgroup 0 of CTA (0, 0, 0) through ordinary stores with no commit_smem()"));
  }
}

// ---- the CTA pair (cta_group::2) ----------------------------------------------------------------

TEST_CASE("gemm_blackwell_2cta is within the MMA tolerance at 256^3 and 512x384x192 under eager, lazy and 50 PCT schedules", "[interp][tcgen05][pair]") {
  for (auto z : {gemm_size{256, 256, 256, 256, 3}, gemm_size{512, 384, 192, 128, 2}, gemm_size{256, 128, 320, 64, 3}})
    check_gemm("gemm_blackwell_2cta", z, 0, 11);
}

TEST_CASE("gemm_blackwell_2cta's pair MMA is m256 with the whole N, and its plan reads one CTA's half of B", "[interp][tcgen05][pair]") {
  auto const& e = registry::global().find("gemm_blackwell_2cta");
  const auto k = e.build(registry::resolve(e, {}));
  int mmas = 0;
  for (auto const& s : k.stmts)
    if (s.op == ir::StmtOp::tcgen05_mma) {
      ++mmas;
      const auto p = ir::tcgen05::plan_of(k, s);
      CHECK(p.cta_group == 2);
      CHECK(p.m == 256);
      CHECK(p.n == 256);
      CHECK(p.b.rows * p.b.cols == 128 * 64);  // B's (128, 64) stage in each CTA
      CHECK(p.idesc == 0x10400490u);           // bf16 -> f32, K-major A and B, N >> 3 = 32 at 17, M >> 4 = 16 at 24
      CHECK(p.shape_suffix() == "cta_group::2 kind::f16 m256n256k16 bf16");
    }
  CHECK(mmas == 1);
}

namespace {
// One pair, two K slices, one warpgroup per CTA: each CTA loads its A rows and B half, arrives on
// the pair barrier; the even CTA issues the pair MMA and commits to `done` in both CTAs; both read
// their rows of D. The bugs are each a hand-off across the pair done wrong.
enum class pair_bug { none, no_pair_wait, odd_reads_early, odd_issues, odd_exits_early };
template <pair_bug Bug>
ir::Kernel pair_kernel(const char* name) {
  return lower(kernel<sm_100a>(
      name, grid(2), threads(1_c), cluster(2_c), gmem<bf16>("a", shape(256_c, 128_c)), gmem<bf16>("b", shape(128_c, 128_c)),
      gmem<f32>("c", shape(256_c, 128_c)), smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
      smem<f32>(shape(128_c, 128_c)), barrier(arrivals(2_c)), cluster_barrier(collective_axes(0_c), arrivals(1_c)),
      barrier(arrivals(1_c), orders_tensor_core), tmem<f32>(shape(128_c, 128_c)),
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto pair, auto done, auto d) {
        auto half = cluster_idx(0_c);
        auto issuer = [&] {
          if constexpr (Bug == pair_bug::odd_issues) return half == 1_c;
          else return half == 0_c;
        }();
        auto step = for_(range(2_c), [&](auto j) {
          auto mma = seq(tcgen05_mma_2cta(d, as, transpose(bs), j > 0_c), tcgen05_commit_arrive_2cta(done));
          auto handoff = [&] {
            if constexpr (Bug == pair_bug::no_pair_wait) return seq(barrier_arrive(pair), if_(issuer, mma));
            else return seq(barrier_arrive(pair), if_(issuer, seq(barrier_wait(pair), mma)));
          }();
          return seq(if_(j > 0_c, barrier_wait(done)),  // the previous MMA read both CTAs' stages
                     copy_gmem_to_smem(a.block(program_id(0_c), j), as, loaded), copy_gmem_to_smem(b.block(half, j), bs, loaded),
                     barrier_wait(loaded), handoff);
        });
        auto epilogue = seq(store(cs, async_load_tmem(d)), tmem_dealloc(d), commit_smem(), copy_smem_to_gmem(cs, c.block(program_id(0_c), 0_c)),
                            commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
        if constexpr (Bug == pair_bug::odd_reads_early) return seq(step, if_(half == 0_c, barrier_wait(done)), epilogue);
        else if constexpr (Bug == pair_bug::odd_exits_early) return seq(step, if_(half == 0_c, seq(barrier_wait(done), epilogue), tmem_dealloc(d)));
        else return seq(step, barrier_wait(done), epilogue);
      }));
}
}  // namespace

TEST_CASE("a pair MMA reads both CTAs' halves and writes both CTAs' TMEM", "[interp][tcgen05][pair]") {
  const auto k = pair_kernel<pair_bug::none>("pair");
  const auto in = testing::random_buffers(k, 12);
  auto expected = in;
  gemm_abt(expected);
  run_everywhere(k, in, expected, 30);
  // The pair's halves are where the instruction reads them: B's halves swapped between the CTAs
  // (the odd CTA loading the first, the even the second) swaps D's column halves.
  auto swapped = in;
  for (std::int64_t r = 0; r < 128; ++r)
    for (std::int64_t x = 0; x < 128; ++x) swapped[1].set(r * 128 + x, in[1].get(((r + 64) % 128) * 128 + x));
  const auto r = interp::run(k, swapped);
  REQUIRE(r.ok());
  CHECK(outside_bound(k, r, swapped, expected) != "");
  CHECK_THAT(ir::print(k), Contains("tcgen05_mma_2cta") && Contains("tcgen05_commit_arrive_2cta"));
}

TEST_CASE("pair hand-offs done wrong are diagnosed: MMA before the odd CTA's halves landed, TMEM read before the commit", "[interp][tcgen05][pair]") {
  {
    const auto k = pair_kernel<pair_bug::no_pair_wait>("pair_no_wait");
    for (auto p : {policy::eager, policy::lazy}) {
      const auto r = interp::run(k, testing::random_buffers(k, 13), {.schedule = p});
      INFO(interp::policy_name(p));
      REQUIRE(r.diagnostics.size() == 1);
      const auto kind = r.diagnostics.front().kind;
      CHECK((kind == interp::check::data_race || kind == interp::check::poison_read));
      // In the odd CTA's SMEM: the even CTA's own halves it waited for.
      CHECK_THAT(r.diagnostics.front().message, Contains("op #12 (tcgen05_mma_2cta)") && Contains("TMA load completing b3[0] of CTA 1"));
    }
  }
  const auto k = pair_kernel<pair_bug::odd_reads_early>("pair_read_early");
  for (auto p : {policy::eager, policy::lazy}) {
    const auto r = interp::run(k, testing::random_buffers(k, 14), {.schedule = p});
    INFO(interp::policy_name(p));
    REQUIRE(r.diagnostics.size() == 1);
    const auto kind = r.diagnostics.front().kind;
    CHECK((kind == interp::check::data_race || kind == interp::check::poison_read));
    CHECK_THAT(r.diagnostics.front().message, Contains("TMEM") && Contains("tcgen05"));
  }
}

TEST_CASE("a pair MMA issued by the odd CTA is reported, naming the CTA and the fix", "[interp][tcgen05][pair]") {
  const auto k = pair_kernel<pair_bug::odd_issues>("pair_odd_issuer");
  const auto r = interp::run(k, testing::random_buffers(k, 15));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics.front().kind == interp::check::tcgen05_pair_issuer);
  CHECK_THAT(r.diagnostics.front().message, Contains("tcgen05_mma_2cta issued by warpgroup 0 of CTA (1, 0, 0)") &&
                                                Contains("cluster index along axis 0 is 1, odd") && Contains("cluster_idx(0_c) % 2_c == 0_c"));
}

TEST_CASE("the odd CTA exiting (freeing its TMEM) before the pair's MMAs are known complete is reported", "[interp][tcgen05][pair]") {
  const auto k = pair_kernel<pair_bug::odd_exits_early>("pair_exit_early");
  for (auto p : {policy::eager, policy::lazy}) {
    const auto r = interp::run(k, testing::random_buffers(k, 16), {.schedule = p});
    INFO(interp::policy_name(p));
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics.front().kind == interp::check::tcgen05_pending_at_dealloc);
    CHECK_THAT(r.diagnostics.front().message, Contains("CTA 1") && Contains("exited"));
  }
}

namespace {
// The pair's loads without a relay (copy_gmem_to_smem(..., pair_leader): .cta_group::2): both
// CTAs load their A rows and B half, every byte completing on `loaded` of the even CTA, whose copy
// alone arrives (expecting both CTAs' bytes); the even CTA waits there and issues the pair MMA.
// Bugs: the odd CTA skips its B copy (the leader expects bytes that never come), or issues it
// without pair_leader (its bytes complete on its own `loaded`, which expected none).
enum class leader_bug { none, odd_skips_copy, odd_own_barrier };
template <leader_bug Bug>
ir::Kernel leader_kernel(const char* name) {
  return lower(kernel<sm_100a>(
      name, grid(2), threads(1_c), cluster(2_c), gmem<bf16>("a", shape(256_c, 128_c)), gmem<bf16>("b", shape(128_c, 128_c)),
      gmem<f32>("c", shape(256_c, 128_c)), smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
      smem<f32>(shape(128_c, 128_c)), barrier(arrivals(2_c)), barrier(arrivals(1_c), orders_tensor_core), tmem<f32>(shape(128_c, 128_c)),
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto done, auto d) {
        auto half = cluster_idx(0_c);
        auto step = for_(range(2_c), [&](auto j) {
          auto load_b = [&] {
            if constexpr (Bug == leader_bug::odd_skips_copy) return if_(half == 0_c, copy_gmem_to_smem(b.block(half, j), bs, loaded, pair_leader));
            else if constexpr (Bug == leader_bug::odd_own_barrier)
              return if_(half == 0_c, copy_gmem_to_smem(b.block(half, j), bs, loaded, pair_leader), copy_gmem_to_smem(b.block(half, j), bs, loaded));
            else return copy_gmem_to_smem(b.block(half, j), bs, loaded, pair_leader);
          }();
          return seq(if_(j > 0_c, barrier_wait(done)),  // the previous MMA read both CTAs' stages
                     copy_gmem_to_smem(a.block(program_id(0_c), j), as, loaded, pair_leader), load_b,
                     if_(half == 0_c, seq(barrier_wait(loaded), tcgen05_mma_2cta(d, as, transpose(bs), j > 0_c), tcgen05_commit_arrive_2cta(done))));
        });
        return seq(step, barrier_wait(done), store(cs, async_load_tmem(d)), tmem_dealloc(d), commit_smem(),
                   copy_smem_to_gmem(cs, c.block(program_id(0_c), 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
}
}  // namespace

TEST_CASE("pair_leader loads complete both CTAs' halves on the even CTA's barrier: no relay, the same product", "[interp][tcgen05][pair]") {
  const auto k = leader_kernel<leader_bug::none>("pair_leader");
  CHECK_THAT(ir::print(k), Contains("pair_leader") && !Contains("cluster_barrier"));
  const auto in = testing::random_buffers(k, 31);
  auto expected = in;
  gemm_abt(expected);
  run_everywhere(k, in, expected, 30);
}

TEST_CASE("a pair_leader load the odd CTA skips, or sends to its own barrier, leaves the leader's phase incomplete", "[interp][tcgen05][pair]") {
  {
    const auto k = leader_kernel<leader_bug::odd_skips_copy>("pair_leader_skip");
    const auto r = interp::run(k, testing::random_buffers(k, 32));
    REQUIRE_FALSE(r.ok());
    CHECK(r.diagnostics.front().kind == interp::check::deadlock);
    // The even CTA expected 2 x (16 KiB of A + 8 KiB of B): the odd CTA's B half never comes.
    CHECK_THAT(r.diagnostics.front().message, Contains("warpgroup 0 of CTA (0, 0, 0) at op #") && Contains("barrier_wait b3[0]") &&
                                                  Contains("arrivals 2/2, tx bytes pending 8192"));
  }
  // Its B half lands on the odd CTA's own b3, which nobody waits on: the leader misses it alike.
  const auto k = leader_kernel<leader_bug::odd_own_barrier>("pair_leader_own");
  const auto r = interp::run(k, testing::random_buffers(k, 33));
  REQUIRE_FALSE(r.ok());
  CHECK(r.diagnostics.front().kind == interp::check::deadlock);
  CHECK_THAT(r.diagnostics.front().message, Contains("warpgroup 0 of CTA (0, 0, 0) at op #") && Contains("arrivals 2/2, tx bytes pending 8192"));
}

// ---- kind::f8f6f4 (e4m3 / e5m2) -------------------------------------------------------------------

TEST_CASE("gemm_blackwell with fp8 (kind::f8f6f4, e4m3 x e4m3 and e4m3 x e5m2) is within the MMA tolerance at 256^3 and two non-square sizes under "
          "eager, lazy and 50 PCT schedules",
          "[interp][tcgen05][fp8]") {
  for (std::int64_t fp8 : {1, 2})
    for (auto z : {gemm_size{256, 256, 256, 256, 3}, gemm_size{384, 512, 384, 256, 2}, gemm_size{128, 384, 640, 128, 3}}) {
      const auto k = check_gemm("gemm_blackwell", z, fp8, 13);
      REQUIRE(k.params[0].dtype == ir::DType::e4m3);
      REQUIRE(k.params[1].dtype == (fp8 == 1 ? ir::DType::e4m3 : ir::DType::e5m2));
    }
}

TEST_CASE("gemm_blackwell: fp8 with K under one stage or not in 16-byte rows is a usage error naming both", "[interp][tcgen05][fp8]") {
  auto const& e = registry::global().find("gemm_blackwell");
  CHECK_THROWS_WITH(e.build(registry::resolve(e, {{"K", 64}, {"fp8", 1}})), Contains("K=64 must be a multiple of 16 and at least 128 with fp8=1"));
  CHECK_THROWS_WITH(e.build(registry::resolve(e, {{"K", 200}, {"fp8", 1}})), Contains("K=200 must be a multiple of 16 and at least 128 with fp8=1"));
  CHECK_NOTHROW(e.build(registry::resolve(e, {{"K", 192}, {"fp8", 1}})));  // one and a half stages: the second overhangs K
}

namespace {
// C (128, 64) = A (128, 256) * B over two 128-wide K slices, one thread: A e4m3 K-major, B `TB`
// stored (64, 256) and read as transpose(b) (K-major), or stored (256, 64) and read MN-major
// (C = A * B). 128-byte swizzled A; B's rows are 128 bytes (K-major) or 64 (MN-major, swizzle 64).
template <class TB, bool KMajorB>
ir::Kernel fp8_cta(const char* name) {
  constexpr long long BR = KMajorB ? 64 : 256, BC = KMajorB ? 256 : 64, SR = KMajorB ? 64 : 128, SC = KMajorB ? 128 : 64;
  return lower(kernel<sm_100a>(
      name, grid(1), threads(1_c), gmem<e4m3>("a", shape(128_c, 256_c)), gmem<TB>("b", shape(int_c<BR>, int_c<BC>)), gmem<f32>("c", shape(128_c, 64_c)),
      smem<e4m3>(shape(128_c, 128_c), swizzle(128_c)), smem<TB>(shape(int_c<SR>, int_c<SC>), swizzle(int_c<SC>)), smem<f32>(shape(128_c, 64_c)),
      barrier(arrivals(2_c)), barrier(arrivals(1_c), orders_tensor_core), tmem<f32>(shape(128_c, 64_c)),
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto done, auto d) {
        auto step = for_(range(2_c), [&](auto j) {
          auto b_slice = [&] {
            if constexpr (KMajorB) return b.block(0_c, j);
            else return b.block(j, 0_c);
          }();
          auto fill = seq(copy_gmem_to_smem(a.block(0_c, j), as, loaded), copy_gmem_to_smem(b_slice, bs, loaded), barrier_wait(loaded));
          if constexpr (KMajorB) return seq(fill, tcgen05_mma(d, as, transpose(bs), done, j > 0_c), barrier_wait(done));
          else return seq(fill, tcgen05_mma(d, as, bs, done, j > 0_c), barrier_wait(done));
        });
        return seq(step, store(cs, async_load_tmem(d)), tmem_dealloc(d), commit_smem(), copy_smem_to_gmem(cs, c.block(0_c, 0_c)),
                   commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
}

// C = A * op(B): B^T when B is stored (N, K), B itself when stored (K, N).
void fp8_reference(std::vector<host_tensor>& t, bool k_major_b) {
  for (std::int64_t i = 0; i < 128; ++i)
    for (std::int64_t j = 0; j < 64; ++j) {
      double s = 0;
      for (std::int64_t x = 0; x < 256; ++x) s += t[0].get(i * 256 + x) * t[1].get(k_major_b ? j * 256 + x : x * 64 + j);
      t[2].set(i * 64 + j, s);
    }
}
}  // namespace

TEST_CASE("tcgen05 kind::f8f6f4 reads A and B each in its own format, K-major and MN-major, within the fp8 tolerance", "[interp][tcgen05][fp8]") {
  const auto k_mixed = fp8_cta<e5m2, true>("f8_mixed");
  const auto k_mn = fp8_cta<e5m2, false>("f8_mn");
  const auto k_same = fp8_cta<e4m3, false>("f8_e4m3_mn");
  for (auto const* k : {&k_mixed, &k_mn, &k_same}) {
    INFO(k->name);
    const bool k_major_b = k == &k_mixed;
    auto in = testing::random_buffers(*k, 21);
    // Bytes whose values differ between the formats (0x44: 3 in e4m3, 4 in e5m2; 0x38: 1 vs 0.5),
    // so reading either operand in the other's format is a wrong answer.
    for (std::int64_t i = 0; i < in[0].elements(); ++i) in[0].as<std::uint8_t>()[i] = static_cast<std::uint8_t>((0x30 + i % 23) | (i % 7 == 0 ? 0x80 : 0));
    for (std::int64_t i = 0; i < in[1].elements(); ++i) in[1].as<std::uint8_t>()[i] = static_cast<std::uint8_t>((0x30 + i % 17) | (i % 5 == 0 ? 0x80 : 0));
    auto expected = in;
    fp8_reference(expected, k_major_b);
    run_everywhere(*k, in, expected, 20);
    const auto r = interp::run(*k, in);
    CHECK(interp::tolerance_of(*k, r, in)->input == k->params[1].dtype);
  }
}

TEST_CASE("a tcgen05 kind::f8f6f4 MMA whose instruction descriptor names the wrong format gives a wrong answer the tolerance catches", "[interp][tcgen05][fp8]") {
  // B holds e5m2 bytes; the same kernel with B typed e4m3 issues B format 0 instead of 1, and the
  // engine, which decodes the operands by the descriptor's codes, reads the bytes as e4m3.
  auto k = fp8_cta<e5m2, true>("f8_wrong_format");
  auto in = testing::random_buffers(k, 22);
  auto expected = in;
  fp8_reference(expected, true);
  REQUIRE(outside_bound(k, interp::run(k, in), in, expected) == "");
  const auto mma = std::find_if(k.stmts.begin(), k.stmts.end(), [](auto const& s) { return s.op == ir::StmtOp::tcgen05_mma; });
  const auto before = ir::tcgen05::plan_of(k, *mma).idesc;
  k.params[1].dtype = ir::DType::e4m3;
  k.allocs[static_cast<std::size_t>(k.refs[static_cast<std::size_t>(mma->refs[2])].id)].dtype = ir::DType::e4m3;
  REQUIRE_NOTHROW(ir::verify(k));
  CHECK(ir::tcgen05::plan_of(k, *mma).idesc == (before & ~(7u << 10)));  // only B's format code changed: E5M2 1 -> E4M3 0
  auto retyped = in;
  retyped[1].dtype = ir::DType::e4m3;  // the same bytes
  const auto r = interp::run(k, retyped);
  REQUIRE(r.ok());
  CHECK(outside_bound(k, r, retyped, expected) != "");
}

TEST_CASE("gemm_blackwell_2cta with fp8 (cta_group::2 kind::f8f6f4) is within the MMA tolerance at 256^3 and 512x384x256 under eager, lazy and 50 PCT "
          "schedules",
          "[interp][tcgen05][pair][fp8]") {
  for (std::int64_t fp8 : {1, 2})
    for (auto z : {gemm_size{256, 256, 256, 256, 3}, gemm_size{512, 384, 256, 128, 2}}) {
      const auto k = check_gemm("gemm_blackwell_2cta", z, fp8, 17);
      const auto BN = z.BN;
      for (auto const& s : k.stmts)
        if (s.op == ir::StmtOp::tcgen05_mma) {
          const auto p = ir::tcgen05::plan_of(k, s);
          CHECK(p.shape_suffix() == "cta_group::2 kind::f8f6f4 m256n" + std::to_string(BN) + "k32 e4m3." + (fp8 == 1 ? "e4m3" : "e5m2"));
        }
    }
}

// mc = 2: two pairs per cluster (2, 2) along N share A; each CTA loads 64 of its 128 A rows and
// multicasts them, and each pair's commit frees the stage in all four CTAs.
TEST_CASE("gemm_blackwell_2cta mc=2 (two pairs multicasting A) is within the MMA tolerance at 256x512x256 and 512x256x192 under eager, lazy and 50 "
          "PCT schedules",
          "[interp][tcgen05][pair][multicast]") {
  for (auto z : {gemm_size{256, 512, 256, 256, 3}, gemm_size{512, 256, 192, 128, 2}, gemm_size{256, 256, 320, 64, 3}}) {
    const auto k = check_gemm("gemm_blackwell_2cta", z, 0, 19, 2);
    CHECK(k.cluster[0] == 2);
    CHECK(k.cluster[1] == 2);
    int multicast_loads = 0, peer_commits = 0;
    for (auto const& s : k.stmts) {
      if (s.op == ir::StmtOp::copy_gmem_to_smem && s.axes == std::vector<int>{1}) ++multicast_loads;
      if (s.op == ir::StmtOp::tcgen05_commit_arrive && s.n == 2 && s.axes == std::vector<int>{1}) ++peer_commits;
    }
    CHECK(multicast_loads == 1);  // A; B is each pair's own
    CHECK(peer_commits == 1);     // empty[s]; done stays the pair's
  }
}

TEST_CASE("gemm_blackwell_2cta mc=2 with fp8 is within the MMA tolerance at 256x512x256 under eager, lazy and 50 PCT schedules",
          "[interp][tcgen05][pair][multicast][fp8]") {
  for (std::int64_t fp8 : {1, 2}) check_gemm("gemm_blackwell_2cta", gemm_size{256, 512, 256, 256, 3}, fp8, 23, 2);
}

TEST_CASE("gemm_blackwell_2cta mc=2: N of one pair tile still launches whole clusters (the second pair's tile lies past N)", "[interp][tcgen05][pair][multicast]") {
  auto const& e = registry::global().find("gemm_blackwell_2cta");
  const auto k = e.build(registry::resolve(e, {{"N", 256}, {"BN", 256}, {"mc", 2}}));
  CHECK(k.grid[1] == 2);
  CHECK_THROWS_WITH(e.build(registry::resolve(e, {{"N", 128}, {"BN", 256}})), Contains("N=128 must be at least BN=256"));
}

// A from TMEM (gemm_blackwell_ts: C = relu(A) * B^T, A stored into TMEM by store_tmem and read by
// the [a_tmem] MMA form): the MMA decodes A from the TMEM bytes, lane i row i, two bf16 to a
// column, so a wrong packing or column step would be a wrong answer here.
TEST_CASE("gemm_blackwell_ts (A from TMEM) is within the MMA tolerance at 256^3 and two non-square sizes under eager, lazy and 50 PCT schedules",
          "[interp][tcgen05][tmem_a]") {
  for (auto z : {gemm_size{256, 256, 256, 256, 3}, gemm_size{384, 512, 192, 256, 2}, gemm_size{128, 384, 320, 128, 3}}) {
    const auto k = check_gemm("gemm_blackwell_ts", z, 0, 23);
    // The MMA's plan reads A from TMEM: 4 k16 instructions per 64-wide slice, 8 columns apart.
    auto const& mma = *std::find_if(k.stmts.begin(), k.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::tcgen05_mma; });
    const auto p = ir::tcgen05::plan_of(k, mma);
    CHECK(p.a_tmem);
    CHECK(p.k_steps() == 4);
    CHECK(p.a_column(3) == 24);
    CHECK(ir::tcgen05::decode(p.idesc).a_major == ir::tcgen05::Major::k);
  }
}

TEST_CASE("gemm_blackwell_ts: the ReLU is applied (the reference without it is outside the bound)", "[interp][tcgen05][tmem_a]") {
  auto const& e = registry::global().find("gemm_blackwell_ts");
  const auto vals = registry::resolve(e, {{"M", 128}, {"N", 256}, {"K", 128}});
  const auto k = e.build(vals);
  const auto in = testing::random_buffers(k, 29);
  auto plain = in;
  registry::global().find("gemm_blackwell").reference(plain, vals);  // C = A * B^T, no ReLU
  const auto r = interp::run(k, in);
  REQUIRE(r.ok());
  CHECK(outside_bound(k, r, in, plain) != "");
  auto relu = in;
  e.reference(relu, vals);
  CHECK(outside_bound(k, r, in, relu) == "");
}

TEST_CASE("A from TMEM: a transposed or fp8 A in TMEM is refused by the verifier, naming the kernel and op", "[interp][tcgen05][tmem_a]") {
  auto const& e = registry::global().find("gemm_blackwell_ts");
  auto k = e.build(registry::resolve(e, {}));
  auto it = std::find_if(k.stmts.begin(), k.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::tcgen05_mma; });
  REQUIRE(it != k.stmts.end());
  it->transpose |= 1;  // A read M-major: the [a_tmem] form has no such mode
  REQUIRE_THROWS_WITH(ir::verify(k), Contains("kernel 'gemm_blackwell_ts': op #") && Contains("(tcgen05_mma): A from TMEM is a whole TMEM allocation (lanes, K), read K-major"));
}


TEST_CASE("A from TMEM with bf16 (kind::f16) and f32 (kind::tf32) in one warpgroup is within the MMA tolerance under every schedule", "[interp][tcgen05][tmem_a]") {
  for (auto const& k : {testing::ts_one_cta<bf16>("ts_bf16"), testing::ts_one_cta<f32>("ts_tf32")}) {
    INFO("kernel " << k.name);
    const auto in = testing::random_buffers(k, 31);
    auto expected = in;
    gemm_abt(expected, 2.0);
    run_everywhere(k, in, expected, 20);
    auto const& mma = *std::find_if(k.stmts.begin(), k.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::tcgen05_mma; });
    const auto p = ir::tcgen05::plan_of(k, mma);
    CHECK(p.kind == (k.name == "ts_tf32" ? ir::tcgen05::Kind::tf32 : ir::tcgen05::Kind::f16));
    CHECK(p.k_steps() == 4);
    CHECK(p.a_column(1) == 8);  // 16 bf16 or 8 f32: 32 bytes of each row per instruction
  }
}

// ---- kind::i8 (s8 / u8 into s32) ------------------------------------------------------------------

TEST_CASE("gemm_blackwell and gemm_blackwell_2cta on s8 x s8 and u8 x s8 (kind::i8 into an s32 TMEM accumulator) are exact under eager, lazy and "
          "20 PCT schedules",
          "[interp][tcgen05][int8]") {
  for (std::int64_t int8 : {1, 2})
    for (auto [name, z] : {std::pair{"gemm_blackwell", gemm_size{256, 256, 256, 256, 4}}, std::pair{"gemm_blackwell", gemm_size{197, 264, 272, 128, 4}},
                           std::pair{"gemm_blackwell_2cta", gemm_size{384, 264, 272, 128, 3}}}) {
      const bool pair = std::string(name) == "gemm_blackwell_2cta";
      INFO(name << " int8=" << int8 << " M=" << z.M << " N=" << z.N << " K=" << z.K << " BN=" << z.BN);
      const auto x = testing::run_registered(name, {{"M", z.M}, {"N", z.N}, {"K", z.K}, {"BN", z.BN}, {"stages", z.stages}, {"int8", int8}}, 31, 20);
      REQUIRE(x.in[0].dtype == (int8 == 2 ? ir::DType::u8 : ir::DType::i8));
      REQUIRE(x.in[2].dtype == ir::DType::i32);
      CHECK_FALSE(x.tol.has_value());  // s32 outputs: exact
      if (int8 == 2) CHECK(std::ranges::count_if(x.in[0].as<std::uint8_t>(), [](std::uint8_t b) { return b > 127; }) > 1000);
      for (std::int64_t i = 0; i < x.result.buffers[2].elements(); ++i) REQUIRE(x.result.buffers[2].get(i) == x.expected[2].get(i));
      for (auto const& s : x.kernel.stmts)
        if (s.op == ir::StmtOp::tcgen05_mma)
          CHECK(ir::tcgen05::plan_of(x.kernel, s).shape_suffix() ==
                fmt::format("{}kind::i8 m{}n{}k32 {}.i8", pair ? "cta_group::2 " : "", pair ? 256 : 128, z.BN, int8 == 2 ? "u8" : "i8"));
    }
}

TEST_CASE("a kind::i8 MMA whose instruction descriptor names u8 for s8 bytes reads them unsigned: a wrong answer", "[interp][tcgen05][int8]") {
  auto const& e = registry::global().find("gemm_blackwell");
  const auto vals = registry::resolve(e, {{"M", 128}, {"N", 128}, {"K", 128}, {"BN", 128}, {"int8", 1}});
  auto k = e.build(vals);
  const auto in = testing::random_buffers(k, 32);  // integers in [-100, 100]: about half of A's bytes are over 127 unsigned
  auto expected = in;
  e.reference(expected, vals);
  const auto good = interp::run(k, in);
  REQUIRE(good.ok());
  for (std::int64_t i = 0; i < good.buffers[2].elements(); ++i) REQUIRE(good.buffers[2].get(i) == expected[2].get(i));
  // A's SMEM ring retyped u8: the verifier still takes it (u8 x s8 is kind::i8), and the only
  // change is A's format code, S8 1 -> U8 0 at bit 7.
  const auto mma = std::find_if(k.stmts.begin(), k.stmts.end(), [](auto const& s) { return s.op == ir::StmtOp::tcgen05_mma; });
  const auto before = ir::tcgen05::plan_of(k, *mma).idesc;
  k.params[0].dtype = ir::DType::u8;
  k.allocs[static_cast<std::size_t>(k.refs[static_cast<std::size_t>(mma->refs[1])].id)].dtype = ir::DType::u8;
  REQUIRE_NOTHROW(ir::verify(k));
  CHECK(ir::tcgen05::plan_of(k, *mma).idesc == (before & ~(1u << 7)));
  auto retyped = in;
  retyped[0].dtype = ir::DType::u8;  // the same bytes
  const auto r = interp::run(k, retyped);
  REQUIRE(r.ok());
  std::int64_t differ = 0;
  for (std::int64_t i = 0; i < r.buffers[2].elements(); ++i) differ += r.buffers[2].get(i) != expected[2].get(i);
  CHECK(differ > r.buffers[2].elements() / 2);
}

TEST_CASE("gemm_blackwell: int8 with fp8, with K under one stage, or at a ring depth or width not offered is a usage error naming the values", "[interp][tcgen05][int8]") {
  auto const& e = registry::global().find("gemm_blackwell");
  CHECK_THROWS_WITH(e.build(registry::resolve(e, {{"K", 64}, {"int8", 1}})), Contains("K=64 must be a multiple of 16 and at least 128 with int8=1"));
  CHECK_THROWS_WITH(e.build(registry::resolve(e, {{"fp8", 1}, {"int8", 2}})), Contains("fp8=1 and int8=2 both name the input types"));
  CHECK_THROWS_WITH(e.build(registry::resolve(e, {{"clc", 1}, {"int8", 1}})), Contains("clc=1 is offered for bf16 (fp8=0, int8=0)"));
  CHECK_THROWS_WITH(e.build(registry::resolve(e, {{"stages", 3}, {"int8", 1}})), Contains("int8=1 is offered with stages=4 and BN=128 or 256, got stages=3 BN=256"));
  CHECK_THROWS_WITH(e.build(registry::resolve(e, {{"BN", 64}, {"int8", 2}})), Contains("int8=2 is offered with stages=4 and BN=128 or 256, got stages=4 BN=64"));
  auto const& pair = registry::global().find("gemm_blackwell_2cta");
  CHECK_THROWS_WITH(pair.build(registry::resolve(pair, {{"mc", 2}, {"int8", 1}})),
                    Contains("gemm_blackwell_2cta: int8=1 is offered with stages=3, BN=128 or 256 and mc=1, got stages=3 BN=256 mc=2"));
  CHECK_THROWS_WITH(pair.build(registry::resolve(pair, {{"K", 200}, {"int8", 1}})), Contains("gemm_blackwell_2cta: K=200 must be a multiple of 16"));
}

// Block scaling (gemm_blackwell_mx, kind::mxf8f6f4.block_scale): the MMA reads each scale from
// the TMEM byte tcgen05_copy_scales put it in, so every product carries its own row's and
// column's scale; the registry's inputs hook keeps the codes in 2^-3 .. 2^3.
namespace {
struct mx_case {
  std::int64_t M, N, K, fmt, ctas;
};
std::pair<ir::Kernel, std::vector<host_tensor>> mx_kernel(mx_case z, std::uint64_t seed) {
  auto const& e = registry::global().find("gemm_blackwell_mx");
  const auto vals = registry::resolve(e, {{"M", z.M}, {"N", z.N}, {"K", z.K}, {"fmt", z.fmt}, {"ctas", z.ctas}});
  auto k = e.build(vals);
  auto in = testing::random_buffers(k, seed);
  e.inputs(in, vals);
  return {std::move(k), std::move(in)};
}
// The case against its double reference everywhere (eager, lazy, 50 PCT schedules; the host
// backend runs the shapes entries), then the tolerance of an eager run and the plan of its MMA statement.
struct mx_checked {
  ir::Kernel k;
  std::vector<host_tensor> in;
  interp::mma_tolerance tol;
  ir::tcgen05::plan p;
};
mx_checked mx_check_everywhere(mx_case z, std::uint64_t seed) {
  auto [k, in] = mx_kernel(z, seed);
  auto const& e = registry::global().find("gemm_blackwell_mx");
  auto expected = in;
  e.reference(expected, registry::resolve(e, {{"M", z.M}, {"N", z.N}, {"K", z.K}, {"fmt", z.fmt}, {"ctas", z.ctas}}));
  run_everywhere(k, in, expected, 50);
  const auto r = interp::run(k, in);
  const auto tol = interp::tolerance_of(k, r, in);
  REQUIRE(tol.has_value());
  auto const& mma = *std::find_if(k.stmts.begin(), k.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::tcgen05_mma; });
  auto p = ir::tcgen05::plan_of(k, mma);
  return {std::move(k), std::move(in), *tol, std::move(p)};
}
// A 128 x 128 x 256 case run eagerly and within the bound of its reference; each `wrong(inputs)`
// plants a misreading in a copy of the inputs, whose reference must be outside the bound.
template <class... Wrong>
void mx_wrong_references_fail(std::int64_t fmt, std::uint64_t seed, Wrong... wrong) {
  const mx_case z{128, 128, 256, fmt, 0};
  const auto made = mx_kernel(z, seed);  // named members, not a structured binding: clang 14 captures none in a lambda
  auto const& k = made.first;
  auto const& in = made.second;
  auto const& e = registry::global().find("gemm_blackwell_mx");
  const auto vals = registry::resolve(e, {{"M", 128}, {"N", 128}, {"K", 256}, {"fmt", fmt}});
  const auto r = interp::run(k, in);
  REQUIRE(r.ok());
  auto right = in;
  e.reference(right, vals);
  CHECK(testing::outside_bound(k, r, in, right) == "");
  auto check = [&](auto const& f) {
    auto misread = in;
    f(misread);
    e.reference(misread, vals);
    CHECK(testing::outside_bound(k, r, in, misread) != "");
  };
  (check(wrong), ...);
}
}  // namespace

TEST_CASE("gemm_blackwell_mx (MXFP8) is within the MMA tolerance under eager, lazy and 50 PCT schedules, e4m3 and e5m2 B, persistent or not, "
          "whole and partial tiles",
          "[interp][tcgen05][mx]") {
  // 333 x 136 x 144: partial tiles in M, N and K (TMA's zero fill beside the padded scale blocks).
  for (auto z : {mx_case{256, 256, 256, 1, 0}, mx_case{333, 136, 144, 2, 2}}) {
    INFO("M=" << z.M << " N=" << z.N << " K=" << z.K << " fmt=" << z.fmt << " ctas=" << z.ctas);
    const auto [k, in, tol, p] = mx_check_everywhere(z, 31);
    CHECK(tol.k == (z.K + 127) / 128 * 128);  // whole 128-deep slices: the tail's zero fill adds nothing
    CHECK(tol.block_scale > 1);  // the scale codes widen the bound: up to 2^3 * 2^3 per product
    CHECK(p.kind == ir::tcgen05::Kind::mxf8f6f4);
    CHECK(p.k_steps() == 4);
    CHECK(ir::tcgen05::decode_scaled(p.idesc_at(3)).sfa_id == 3);
  }
}

TEST_CASE("gemm_blackwell_mx MXFP4 and NVFP4 (packed e2m1, kind::mxf4 and kind::mxf4nvf4) are within the MMA tolerance under eager, lazy and 50 PCT "
          "schedules, whole and partial tiles",
          "[interp][tcgen05][mx][fp4]") {
  // 333 x 136 x 288: partial tiles in M, N and K (K = 288 values: one whole 256-value slice and a
  // 32-value tail in TMA's zero fill).
  for (auto z : {mx_case{256, 256, 512, 3, 0}, mx_case{256, 128, 256, 4, 0}, mx_case{333, 136, 288, 3, 2}, mx_case{333, 136, 288, 4, 2}}) {
    INFO("M=" << z.M << " N=" << z.N << " K=" << z.K << " fmt=" << z.fmt << " ctas=" << z.ctas);
    const auto [k, in, tol, p] = mx_check_everywhere(z, 47);
    CHECK(k.params[0].dtype == ir::DType::e2m1x2);
    CHECK(k.params[0].shape.back() == z.K / 2);  // two values a byte
    CHECK(k.params[2].dtype == (z.fmt == 4 ? ir::DType::ue4m3 : ir::DType::u8));
    CHECK(tol.k == (z.K + 255) / 256 * 256);  // products: whole 256-value slices
    CHECK(tol.max_input == 6.0);              // e2m1's largest, decoded from the nibbles, not the byte
    CHECK(p.kind == (z.fmt == 4 ? ir::tcgen05::Kind::mxf4nvf4 : ir::tcgen05::Kind::mxf4));
    CHECK(p.k_steps() == 4);  // 4 x k64 over a 128-byte slice
    CHECK(p.scale_vec == (z.fmt == 4 ? 4 : 2));
    CHECK(p.shape_suffix() == (z.fmt == 4 ? "kind::mxf4nvf4 m128n128k64 e2m1x2" : "kind::mxf4 m128n128k64 e2m1x2"));
    // Instruction 3: MXFP4's second cell (4 columns on), bytes 2-3; NVFP4's fourth cell, byte 0.
    CHECK(p.scale_column(3) == (z.fmt == 4 ? 12 : 4));
    CHECK(ir::tcgen05::decode_scaled(p.idesc_at(3)).sfa_id == (z.fmt == 4 ? 0 : 2));
    CHECK(ir::tcgen05::decode_scaled(p.idesc).ue8m0 == (z.fmt == 3));
    // E2M1 (1) in bits 7-9 and 10-12, K-major A and B, N >> 3 at 17, UE8M0 at 23 (MXFP4 only), M >> 7 at 27.
    const std::uint32_t n_bits = static_cast<std::uint32_t>(p.n >> 3) << 17;
    CHECK(p.idesc == ((z.fmt == 3 ? 0x08800480u : 0x08000480u) | n_bits));
  }
}

TEST_CASE("gemm_blackwell_mx FP4: a wrong nibble order, scale cell or scale format is a wrong answer on the CPU", "[interp][tcgen05][mx][fp4]") {
  for (std::int64_t fmt : {3, 4}) {
    INFO("fmt=" << fmt);
    mx_wrong_references_fail(
        fmt, 53,
        [](std::vector<host_tensor>& t) {  // A's nibbles the other way round (element 2i in bits 4-7)
          for (std::int64_t i = 0; i < t[0].elements(); ++i) {
            const auto b = static_cast<unsigned>(t[0].get(i));
            t[0].set(i, static_cast<double>((b >> 4) | (b & 0xfu) << 4));
          }
        },
        [](std::vector<host_tensor>& t) {  // scale blocks 0 and 1 of K (bytes 0 and 1 of row 0..31's cells) trading places
          for (std::int64_t r32 = 0; r32 < 32; ++r32) {
            const double x = t[2].get(r32 * 16);
            t[2].set(r32 * 16, t[2].get(r32 * 16 + 1));
            t[2].set(r32 * 16 + 1, x);
          }
        });
  }
}

// The unit-packed formats of kind::mxf8f6f4 (fmt 5: e2m3 x e2m3, fmt 6: e3m2 A x e2m3 B, fmt 7:
// e4m3 A x e2m1 B): packed in GMEM, expanded by TMA into SMEM's 16-byte units of 16 elements,
// decoded by the MMA from the units its descriptors address.
TEST_CASE("gemm_blackwell_mx MXFP6 (e2m3, e3m2) and MXFP8 x MXFP4 (e4m3 x e2m1: kind::mxf8f6f4) are within the MMA tolerance under eager, lazy "
          "and 50 PCT schedules, whole and partial tiles",
          "[interp][tcgen05][mx][fp6]") {
  struct expect {
    ir::DType a, b;
    std::uint32_t a_code, b_code;
    double largest;  // the operands' largest magnitude, decoded from the codes
    const char* suffix;
  };
  auto want = [](std::int64_t fmt) {
    return fmt == 5   ? expect{ir::DType::e2m3, ir::DType::e2m3, 3, 3, 7.5, "kind::mxf8f6f4 m128n128k32 e2m3.e2m3"}
           : fmt == 6 ? expect{ir::DType::e3m2, ir::DType::e2m3, 4, 3, 28.0, "kind::mxf8f6f4 m128n128k32 e3m2.e2m3"}
                      : expect{ir::DType::e4m3, ir::DType::e2m1, 0, 5, 6.0, "kind::mxf8f6f4 m128n128k32 e4m3.e2m1"};
  };
  // 333 x 136 x 384: partial tiles in M and N, three 128-value K slices (K % 128 == 0 for packed GMEM).
  for (auto z : {mx_case{256, 256, 256, 5, 0}, mx_case{256, 128, 256, 6, 0}, mx_case{256, 128, 256, 7, 0}, mx_case{333, 136, 384, 5, 2},
                 mx_case{333, 136, 384, 6, 2}, mx_case{333, 136, 384, 7, 2}}) {
    INFO("M=" << z.M << " N=" << z.N << " K=" << z.K << " fmt=" << z.fmt << " ctas=" << z.ctas);
    const auto w = want(z.fmt);
    const auto [k, in, tol, p] = mx_check_everywhere(z, 59);
    CHECK(k.params[0].dtype == w.a);
    CHECK(k.params[1].dtype == w.b);
    CHECK(k.params[1].shape.back() == z.K);                                                           // values, not bytes
    CHECK(in[1].bytes.size() == static_cast<std::size_t>(z.N * z.K * ir::unit_bits(w.b) / 8));       // packed: 6 or 4 bits each
    CHECK(tol.max_input == w.largest);
    CHECK(p.kind == ir::tcgen05::Kind::mxf8f6f4);
    CHECK(p.k_steps() == 4);  // 4 x k32 over a 128-byte slice, as MXFP8
    CHECK(p.shape_suffix() == w.suffix);
    // A type in bits 7-9 (E4M3 0, E2M3 3, E3M2 4), B type in 10-12 (E2M1 5), UE8M0 at 23, M >> 7 at 27.
    const std::uint32_t n_bits = static_cast<std::uint32_t>(p.n >> 3) << 17;
    CHECK(p.idesc == (0x08800000u | w.a_code << 7 | w.b_code << 10 | n_bits));
  }
}

TEST_CASE("gemm_blackwell_mx FP6 and kind::mxf8f6f4's FP4: elements read from the wrong place in the packing are a wrong answer on the CPU",
          "[interp][tcgen05][mx][fp6]") {
  for (std::int64_t fmt : {5, 6, 7}) {
    INFO("fmt=" << fmt);
    auto permuted = [](std::int64_t flip) {  // B's element i read from i ^ flip
      return [flip](std::vector<host_tensor>& t) {
        const auto b = t[1];
        for (std::int64_t i = 0; i < b.elements(); ++i) t[1].set(i, b.get(i ^ flip));
      };
    };
    mx_wrong_references_fail(fmt, 61, permuted(1), permuted(15));  // neighbours swapped; a 16-element SMEM unit reversed
  }
}

TEST_CASE("gemm_blackwell_mx FP6 or unit-packed FP4 with K not a multiple of 128 is a usage error naming K, and FP6 B read N-major is refused",
          "[interp][tcgen05][mx][fp6]") {
  auto const& e = registry::global().find("gemm_blackwell_mx");
  CHECK_THROWS_WITH(e.build(registry::resolve(e, {{"K", 144}, {"fmt", 5}})),
                    Contains("gemm_blackwell_mx: fmt=5 reads FP6 packed in GMEM through TMA's 16U6_ALIGN16B, so K (144) must be a multiple of 128"));
  CHECK_THROWS_WITH(e.build(registry::resolve(e, {{"K", 272}, {"fmt", 7}})),
                    Contains("gemm_blackwell_mx: fmt=7 reads FP4 packed in GMEM through TMA's 16U4_ALIGN16B, so K (272) must be a multiple of 128"));
  // Hand-built IR: B of the MMA read N-major (transpose bit cleared) is refused by the plan.
  auto [k, in] = mx_kernel({128, 128, 256, 5, 0}, 3);
  auto it = std::find_if(k.stmts.begin(), k.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::tcgen05_mma; });
  REQUIRE(it != k.stmts.end());
  auto n_major = k;
  n_major.stmts[static_cast<std::size_t>(it - k.stmts.begin())].transpose = 0;
  CHECK_THROWS_WITH(ir::verify(n_major), Contains("FP6 and FP4 operands of kind::f8f6f4 are read K-major only: A stored (M, K) as it is, B stored (N, K) as transpose(b), but A is e2m3 "
                                                  "and B e2m3 N-major"));
  // TMA's 16U6_ALIGN16B rule, for hand-built IR: the innermost extent a multiple of 128 elements
  // (the tensor map's own checks: test_tensor_map).
  auto short_rows = k;
  short_rows.params[0].shape.back() = 192;
  CHECK_THROWS_WITH(ir::verify(short_rows), Contains("TMA reads e2m3 parameter 'a' of shape (128, 192) packed (16U6_ALIGN16B), which needs its innermost "
                                                     "extent a multiple of 128 elements, not 192"));
}

TEST_CASE("gemm_blackwell_mx: the scales are read where the 128 x 4 block layout puts them (a reference reading another row group's is outside the bound)",
          "[interp][tcgen05][mx]") {
  const mx_case z{128, 128, 128, 1, 0};
  auto [k, in] = mx_kernel(z, 37);
  auto const& e = registry::global().find("gemm_blackwell_mx");
  const auto vals = registry::resolve(e, {{"M", 128}, {"N", 128}, {"K", 128}});
  const auto r = interp::run(k, in);
  REQUIRE(r.ok());
  auto right = in;
  e.reference(right, vals);
  CHECK(testing::outside_bound(k, r, in, right) == "");
  // Rows 32 apart share a 16-byte row of the block (bytes 4q .. 4q + 3 for rows 32q + r): swap
  // row groups 0 and 1 of A's scales, or the K blocks 0 and 1, and the answer must change.
  for (bool swap_rows : {true, false}) {
    auto wrong = in;
    for (std::int64_t r32 = 0; r32 < 32; ++r32)
      for (std::int64_t x = 0; x < 4; ++x) {
        const std::int64_t p = r32 * 16 + (swap_rows ? x : 4 * x), q = r32 * 16 + (swap_rows ? 4 + x : 4 * x + 1);
        const double t = wrong[2].get(p);
        wrong[2].set(p, wrong[2].get(q));
        wrong[2].set(q, t);
      }
    e.reference(wrong, vals);
    INFO((swap_rows ? "row groups 0 and 1 swapped" : "K blocks 0 and 1 swapped"));
    CHECK(testing::outside_bound(k, r, in, wrong) != "");
  }
}

TEST_CASE("gemm_blackwell_mx with one set of scale columns: the next K slice's tcgen05_copy_scales races the MMAs still reading them",
          "[interp][tcgen05][mx]") {
  const auto k = lower(examples::mx::gemm_blackwell_mx<e4m3, e4m3, u8, true>(compiled_in(128), compiled_in(1), 128, 256, compiled_in(1), 8, "mx_one_scale_buffer"));
  auto const& e = registry::global().find("gemm_blackwell_mx");
  auto in = testing::random_buffers(k, 41);
  e.inputs(in, registry::resolve(e, {{"M", 128}, {"N", 128}, {"K", 256}}));
  for (auto p : {policy::eager, policy::lazy}) {
    interp::options o;
    o.schedule = p;
    const auto r = interp::run(k, in, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.diagnostics.front().kind == interp::check::data_race);
    // The copy into t10 (sfa_t) of the second slice against what the first slice's tcgen05 ops
    // did there: the copy's write (the ISA orders a copy after nothing of its stream but what
    // its issuer waited for) or the MMA's read, whichever the shadow holds.
    CHECK_THAT(r.diagnostics.front().message, Contains("kernel 'mx_one_scale_buffer'") && Contains("(tcgen05_copy_scales): data race on TMEM t10[0, 0]") &&
                                                  Contains("a tcgen05 copy (write) is not ordered after the earlier"));
  }
}

TEST_CASE("block-scaled tcgen05_mma in hand-built IR: scales that are not u8, or bf16 operands, are verifier errors naming the op", "[interp][tcgen05][mx]") {
  auto [k, in] = mx_kernel({128, 128, 128, 1, 0}, 43);
  REQUIRE_NOTHROW(ir::verify(k));
  auto mma = std::find_if(k.stmts.begin(), k.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::tcgen05_mma; });
  REQUIRE(mma->flag);
  auto wide = k;
  wide.allocs[static_cast<std::size_t>(k.refs[static_cast<std::size_t>(mma->refs[3])].id)].dtype = ir::DType::i8;
  // The copy into it comes first in the tree (the MMA would say "the scales of A are ue8m0 codes, a u8 TMEM allocation").
  CHECK_THROWS_WITH(ir::verify(wide), Contains("kernel 'gemm_blackwell_mx': op #") &&
                                          Contains("(tcgen05_copy_scales): copies into a u8 TMEM allocation (or one stage of a ring) of at least 16 "
                                                   "bytes per lane (4 columns), but the destination is i8 (128, 32)"));
  // The unscaled bf16 GEMM's MMA with the flag and two scale operands: kind::f16 has no block scaling.
  auto const& e = registry::global().find("gemm_blackwell");
  auto bf = e.build(registry::resolve(e, {{"BN", 128}}));
  auto it = std::find_if(bf.stmts.begin(), bf.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::tcgen05_mma; });
  it->flag = true;
  it->refs.insert(it->refs.begin() + 3, {it->refs[0], it->refs[0]});
  CHECK_THROWS_WITH(ir::verify(bf), Contains("(tcgen05_mma): block scaling is modelled for e4m3, e5m2, e2m3, e3m2 and e2m1 operands with ue8m0 (u8) scales (kind::mxf8f6f4"));
}
