// Every bundled kernel builds, lowers, verifies and prints for every declared parameter value;
// its reference computes on seeded random data.
#include <catch2/catch.hpp>

#include <random>

#include <stagecraft/registry.hpp>

#include "variants.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

TEST_CASE("the bundled examples are registered", "[examples]") {
  std::vector<std::string> names;
  for (auto const* e : registry::global().all()) names.push_back(e->name);
  CHECK(names == std::vector<std::string>{"add_one", "attention_blackwell", "attention_hopper", "attention_hopper_bwd", "attention_varlen", "batched_square", "double_buffer", "downsample_rows", "gemm_blackwell", "gemm_blackwell_2cta", "gemm_blackwell_mx", "gemm_blackwell_ts", "gemm_fp8", "gemm_fp8_blockwise", "gemm_grouped", "gemm_hopper", "gemm_small", "gemm_splitk", "handoff", "layernorm_rows", "multicast_scale", "pipelined_add", "row_block_sum", "scale_store", "softmax_masked", "softmax_rows", "splitk_cluster", "splitk_reduce", "splitk_serial", "strip_pipelines", "swizzle_scale", "swizzled_widen", "transpose", "ws_copy"});
}

TEST_CASE("every example lowers and verifies for every type-level parameter value", "[examples]") {
  for (auto const* e : registry::global().all()) {
    INFO("kernel " << e->name);
    for (auto const& vals : testing::every_allowed_value(*e)) {
      ir::Kernel k;
      REQUIRE_NOTHROW(k = e->build(vals));
      CHECK(k.name == e->name);
      CHECK_NOTHROW(ir::verify(k));
      CHECK_THAT(ir::print(k), Contains("kernel " + e->name));
      CHECK(ir::smem_bytes(k) <= ir::max_smem_bytes);
    }
  }
}

TEST_CASE("examples use the ops they are about", "[examples]") {
  auto text = [](std::string const& name) { return ir::print(registry::global().find(name).build(registry::resolve(registry::global().find(name), {}))); };
  CHECK_THAT(text("add_one"), Contains("copy_gmem_to_smem") && Contains("wait_smem_to_gmem 1 read_only") && Contains("grid=(4, 2)"));
  CHECK_THAT(text("handoff"), Contains("arrivals=2") && Contains("if thread_id == 0") && Contains("barrier_arrive"));
  CHECK_THAT(text("batched_square"), Contains("barrier b1: [2, 2]") && Contains("(1x64x64)"));
  CHECK_THAT(text("double_buffer"), Contains("cast<f16>"));
  // The ring's step runs on across a CTA's tiles (v1 * 4 + v2); after wgmma_wait 1 a consumer
  // releases the previous step's stage (+ 3 mod 4), and the tile's last after wgmma_wait 0. The
  // epilogue stores the accumulator's column halves through a tiled, swizzled subtile.
  CHECK_THAT(text("gemm_hopper"), Contains("warpgroups=3") && Contains("accumulator acc5: f32[64, 256]") &&
                                      Contains("wgmma acc5 += s0[((v1 * 4) + v2) % 4].sub[0, 0](64x64) * s1[((v1 * 4) + v2) % 4]^T") &&
                                      Contains("smem s2: bf16[2, 64, 128] tiling=(64, 64) swizzle=128") &&
                                      Contains("store s2[1] <- cast<bf16>(slice<1>(load(acc5), 128, 128))") && Contains("cluster=(2)") &&
                                      Contains("multicast over cluster axes (0)") && Contains("wgmma_wait 1") &&
                                      Contains("barrier_arrive cb4[(((v1 * 4) + v2) + 3) % 4]") && Contains("barrier_arrive cb4[((v1 * 4) + 3) % 4]"));
  CHECK_THAT(text("gemm_fp8"), Contains("param a: gmem e4m3[") && Contains("smem s1: e4m3[3, 256, 128] swizzle=128") &&
                                   Contains("accumulator acc5: f32[64, 256]") && Contains("cast<bf16>(slice<1>(load(acc5), 128, 128))"));
  // Persistent: tile v1's accumulator is stage v1 % 2 of the TMEM ring; the K slices' ring runs
  // on across tiles (step v1 * steps + v2); the epilogue takes it 64 columns (v4) at a time
  // through two SMEM buffers.
  CHECK_THAT(text("gemm_blackwell"), Contains("roles=(warpgroup, warp, warp)") && Contains("tmem t7: f32[2, 128, 256]") &&
                                         Contains("tcgen05_mma t7[v1 % 2] (accumulate if v2 > 0) += s0[((v1 * 4) + v2) % 4] * s1[((v1 * 4) + v2) % 4]^T") &&
                                         Contains("tcgen05_commit_arrive b4[((v1 * 4) + v2) % 4]") && Contains("tcgen05_commit_arrive b5[v1 % 2]") &&
                                         Contains("store s2[((v3 * 4) + v4) % 2] <- cast<bf16>(async_load_tmem(t7[v3 % 2].sub[0, v4 * 64](128x64)))"));
  CHECK_THAT(text("scale_store"), Contains("commit_smem_to_gmem_group") && Contains("wait_smem_to_gmem 2 read_only"));
  CHECK_THAT(text("transpose"), Contains("store s1[v1 % 2] <- permute<1, 0>(load(s0[v1 % 2]))") && Contains("swizzle=128"));
  // The partials live in a kernel-owned workspace, rank 0 reads them after the cluster barrier.
  CHECK_THAT(text("splitk_cluster"), Contains("param partials: workspace f32[512?, 64]") && Contains("cluster=(4)") &&
                                         Contains("barrier_wait cb0[0]") && Contains("cluster_idx.x == 0"));
  CHECK_THAT(text("layernorm_rows"), Contains("rsqrt(") && Contains("broadcast<0>(load(gamma") && Contains("sum<1>("));
}

TEST_CASE("references compute what the examples promise on random data", "[examples]") {
  const std::uint64_t seed = 20261129;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  auto const& e = registry::global().find("add_one");
  auto vals = registry::resolve(e, {{"M", 128}, {"N", 128}, {"splits", 1}});
  auto k = e.build(vals);
  std::vector<host_tensor> t;
  for (auto const& p : k.params) {
    auto h = host_tensor::zeros(p.dtype, p.shape);
    for (auto& v : h.as<float>()) v = dist(rng);
    t.push_back(std::move(h));
  }
  auto x = t[0];
  e.reference(t, vals);
  for (std::int64_t i = 0; i < x.elements(); ++i) REQUIRE(t[1].as<float>()[i] == x.as<float>()[i] + 1.0f);
  CHECK(t[0].bytes == x.bytes);  // inputs untouched
}
