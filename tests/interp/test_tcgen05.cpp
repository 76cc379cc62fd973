// tcgen05 in the interpreter: gemm_blackwell's numbers (within the documented MMA tolerance,
// under every policy), the tf32 kind, and that operands really are read through the decoded
// descriptors: an MMA whose B is read in the other major order (its transpose bit flipped in the
// IR, hence in the instruction descriptor) gives a wrong answer here, as it would on the GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "inputs.hpp"
#include "mma_runs.hpp"

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

}  // namespace

TEST_CASE("gemm_blackwell is within the MMA tolerance at 256^3 and 384x512x192 under eager, lazy and 50 PCT schedules", "[interp][tcgen05]") {
  auto const& e = registry::global().find("gemm_blackwell");
  struct size {
    std::int64_t M, N, K, BN, stages;
  };
  for (auto [M, N, K, BN, S] : {size{256, 256, 256, 256, 3}, size{384, 512, 192, 256, 2}, size{128, 384, 320, 128, 3}}) {
    INFO("M=" << M << " N=" << N << " K=" << K << " BN=" << BN << " stages=" << S);
    const auto vals = registry::resolve(e, {{"M", M}, {"N", N}, {"K", K}, {"BN", BN}, {"stages", S}});
    const auto k = e.build(vals);
    const auto in = testing::random_buffers(k, 9);
    auto expected = in;
    e.reference(expected, vals);
    run_everywhere(k, in, expected, 50);
    const auto r = interp::run(k, in);
    const auto tol = interp::tolerance_of(k, r, in);
    REQUIRE(tol.has_value());
    CHECK(tol->k == K);  // D summed the whole K before the epilogue read it
    CHECK(tol->input == ir::DType::bf16);
  }
}

TEST_CASE("gemm_blackwell: N that is not a multiple of BN is a usage error naming both", "[interp][tcgen05]") {
  auto const& e = registry::global().find("gemm_blackwell");
  CHECK_THROWS_WITH(e.build(registry::resolve(e, {{"N", 320}, {"BN", 256}})), Contains("N=320 must be a multiple of BN=256"));
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
