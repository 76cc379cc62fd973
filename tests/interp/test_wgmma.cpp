// wgmma in the interpreter: the numbers (gemm_small and small GEMMs over every operand layout
// the descriptors describe, within the documented MMA tolerance, under every policy), and that
// the operands really are read through the descriptors: a kernel whose wgmma reads an operand
// in the wrong major order (its descriptor mode flipped in the IR) gives a wrong answer here,
// as it would on the GPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/ir/fp8.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "inputs.hpp"
#include "mma_runs.hpp"
#include "smem_view_kernels.hpp"

using namespace stagecraft;
using testing::outside_bound;
using testing::run_everywhere;
using interp::policy;

namespace {


// C = A * B^T for A (M, K), B (N, K) as stored, in double.
void gemm_abt(std::vector<host_tensor>& t, double scale_a = 1.0) {
  const std::int64_t M = t[0].shape[0], K = t[0].shape[1], N = t[1].shape[0];
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (std::int64_t x = 0; x < K; ++x) s += scale_a * t[0].get(i * K + x) * t[1].get(j * K + x);
      t[2].set(i * N + j, s);
    }
}

// One CTA, C (64, 64) = A (64, K) * B^T, A and B K-major in (64, 32) tiles with a 64-byte
// swizzle, four K steps through one stage. Each step also waits for more groups than were
// committed (a no-op) before the wait that matters.
ir::Kernel swizzle64() {
  return lower(kernel<sm_90a>(
      "wg_swizzle64", grid(1), threads(1_c), gmem<bf16>("a", shape(64_c, 128_c)), gmem<bf16>("b", shape(64_c, 128_c)),
      gmem<f32>("c", shape(64_c, 64_c)), smem<bf16>(shape(64_c, 32_c), swizzle(64_c)), smem<bf16>(shape(64_c, 32_c), swizzle(64_c)),
      smem<f32>(shape(64_c, 64_c)), barrier(arrivals(2_c)), accumulator<f32>(shape(64_c, 64_c)),
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto acc) {
        auto load_step = [&](auto j) { return seq(copy_gmem_to_smem(a.block(0_c, j), as, loaded), copy_gmem_to_smem(b.block(0_c, j), bs, loaded)); };
        return seq(wgmma_wait(2_c), store(acc, 0.0f), load_step(0_c),
                   for_(range(4_c),
                        [&](auto j) {
                          return seq(barrier_wait(loaded), wgmma(acc, as, transpose(bs)), wgmma_commit(), wgmma_wait(5_c), wgmma_wait(0_c),
                                     if_(j + 1_c < 4_c, load_step(j + 1_c)));
                        }),
                   store(cs, load(acc)), commit_smem(), copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(),
                   wait_smem_to_gmem(0_c));
      }));
}

// C (64, 64) = A (64, 64) * B (64, 64) with B stored (K, N): an MN-major B (128-byte swizzle),
// and A K-major in (64, 16) tiles with a 32-byte swizzle, four K steps of 16.
ir::Kernel mn_major_b() {
  return lower(kernel<sm_90a>(
      "wg_mn_major_b", grid(1), threads(1_c), gmem<bf16>("a", shape(64_c, 64_c)), gmem<bf16>("b", shape(64_c, 64_c)),
      gmem<f32>("c", shape(64_c, 64_c)), smem<bf16>(shape(64_c, 16_c), swizzle(32_c)), smem<bf16>(shape(16_c, 64_c), swizzle(128_c)),
      smem<f32>(shape(64_c, 64_c)), barrier(arrivals(2_c)), accumulator<f32>(shape(64_c, 64_c)),
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto acc) {
        auto load_step = [&](auto j) { return seq(copy_gmem_to_smem(a.block(0_c, j), as, loaded), copy_gmem_to_smem(b.block(j, 0_c), bs, loaded)); };
        return seq(store(acc, 0.0f), load_step(0_c),
                   for_(range(4_c),
                        [&](auto j) {
                          return seq(barrier_wait(loaded), wgmma(acc, as, bs), wgmma_commit(), wgmma_wait(0_c), if_(j + 1_c < 4_c, load_step(j + 1_c)));
                        }),
                   store(cs, load(acc)), commit_smem(), copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(),
                   wait_smem_to_gmem(0_c));
      }));
}

// Unswizzled operands tiled in 8 x 16-byte core matrices; A from registers (2a, computed from
// SMEM) in one variant; in another, A overwritten by an ordinary store before the wait (a race).
enum class cm { smem_a, register_a, store_under_wgmma, no_commit };
template <cm Mode>
ir::Kernel core_matrices() {
  constexpr bool ARegs = Mode == cm::register_a;
  return lower(kernel<sm_90a>(
      ARegs ? "wg_core_matrices_regs" : Mode == cm::no_commit ? "wg_no_commit" : "wg_core_matrices", grid(1), threads(1_c), gmem<bf16>("a", shape(64_c, 64_c)),
      gmem<bf16>("b", shape(64_c, 64_c)), gmem<f32>("c", shape(64_c, 64_c)), smem<bf16>(shape(64_c, 64_c), tiling(8_c, 8_c)),
      smem<bf16>(shape(64_c, 64_c), tiling(8_c, 8_c)), smem<f32>(shape(64_c, 64_c)), barrier(arrivals(2_c)),
      accumulator<f32>(shape(64_c, 64_c)),
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto acc) {
        auto mma = [&] {
          if constexpr (ARegs) return wgmma(acc, load(as) + load(as), transpose(bs));
          else return wgmma(acc, as, transpose(bs));
        }();
        auto wait = [&] {
          if constexpr (Mode == cm::store_under_wgmma) return seq(store(as, load(bs)), wgmma_wait(0_c));
          else return wgmma_wait(0_c);
        }();
        auto issue = [&] {
          if constexpr (Mode == cm::no_commit) return mma;  // MISTAKE: the wgmma's group is never closed (no wgmma_commit())
          else return seq(mma, wgmma_commit());
        }();
        return seq(store(acc, 0.0f), copy_gmem_to_smem(a.block(0_c, 0_c), as, loaded), copy_gmem_to_smem(b.block(0_c, 0_c), bs, loaded),
                   barrier_wait(loaded), issue, wait, store(cs, load(acc)), commit_smem(),
                   copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
}

ir::StmtId the_wgmma(ir::Kernel const& k) {
  for (std::size_t s = 0; s < k.stmts.size(); ++s)
    if (k.stmts[s].op == ir::StmtOp::wgmma) return static_cast<ir::StmtId>(s);
  FAIL("no wgmma in " << k.name);
  return ir::none;
}


}  // namespace

TEST_CASE("gemm_small is within the MMA tolerance at 256^3, 512^3 and 128x384x192 under eager, lazy and 50 PCT schedules", "[interp][wgmma]") {
  auto const& e = registry::global().find("gemm_small");
  for (auto [M, N, K] : {std::array<std::int64_t, 3>{256, 256, 256}, {512, 512, 512}, {128, 384, 192}}) {
    INFO("M=" << M << " N=" << N << " K=" << K);
    const auto vals = registry::resolve(e, {{"M", M}, {"N", N}, {"K", K}});
    const auto k = e.build(vals);
    const auto in = testing::random_buffers(k, 8);
    auto expected = in;
    e.reference(expected, vals);
    run_everywhere(k, in, expected, 50);
    const auto r = interp::run(k, in);
    const auto tol = interp::tolerance_of(k, r, in);
    REQUIRE(tol.has_value());
    CHECK(tol->k == K);  // the accumulator summed the whole K before the epilogue read it
    CHECK(tol->input == ir::DType::bf16);
  }
}

TEST_CASE("gemm_fp8 is within the MMA tolerance at 256^3, 512^3 and 256x512x384 under eager, lazy and 50 PCT schedules", "[interp][wgmma][fp8]") {
  for (auto [M, N, K, acc, scaled] : {std::array<std::int64_t, 5>{256, 256, 256, 32, 0}, {512, 512, 512, 32, 0}, {256, 512, 384, 32, 0}, {256, 256, 256, 16, 0},
                                      {256, 256, 256, 32, 1}}) {
    INFO("M=" << M << " N=" << N << " K=" << K << " acc=" << acc << " scaled=" << scaled);
    const auto x = testing::run_registered("gemm_fp8", {{"M", M}, {"N", N}, {"K", K}, {"acc", acc}, {"scaled", scaled}}, 9, 50);
    REQUIRE(x.tol.has_value());
    REQUIRE(x.in[0].dtype == ir::DType::e4m3);
    CHECK(x.tol->k == K);
    CHECK(x.tol->input == ir::DType::e4m3);
    CHECK(x.tol->accumulator == (acc == 16 ? ir::DType::f16 : ir::DType::f32));
    CHECK(x.tol->scale_factors == 2 * scaled);  // sa and sb multiply every product
    if (acc == 32) testing::within_one_bf16_ulp(x.result.buffers[2], x.expected[2]);
  }
}

TEST_CASE("gemm_fp8_blockwise is within the scaled MMA tolerance under eager, lazy and 50 PCT schedules, and a wrong scale is caught",
          "[interp][wgmma][fp8][blockwise]") {
  for (auto [M, N, K] : {std::array<std::int64_t, 3>{256, 256, 384}, {197, 136, 400}}) {
    INFO("M=" << M << " N=" << N << " K=" << K);
    const auto x = testing::run_registered("gemm_fp8_blockwise", {{"M", M}, {"N", N}, {"K", K}}, 9, 50);
    REQUIRE(x.tol.has_value());
    // The promotions add each 128-wide part's K into the result's (a partial last slice counts
    // as its whole zero-filled 128), and Sa and Sb multiply every product.
    CHECK(x.tol->k == (K + 127) / 128 * 128);
    CHECK(x.tol->scale_factors == 2);
    testing::within_one_bf16_ulp(x.result.buffers[4], x.expected[4]);
    // A kernel that read its A scales one row off (or Sb transposed) computes what these
    // references hold: outside the bound.
    auto row_off = x.in, transposed = x.in;
    const std::int64_t Mp = x.in[2].shape[1], KB = x.in[3].shape[1], NB = x.in[3].shape[0];
    for (std::int64_t kb = 0; kb < KB; ++kb)
      for (std::int64_t m = 0; m < Mp; ++m) row_off[2].set(kb * Mp + m, x.in[2].get(kb * Mp + (m + 1) % Mp));
    for (std::int64_t nb = 0; nb < NB; ++nb)
      for (std::int64_t kb = 0; kb < KB; ++kb) transposed[3].set(nb * KB + kb, x.in[3].get((kb % NB) * KB + nb % KB));
    for (auto* wrong : {&row_off, &transposed}) {
      registry::global().find("gemm_fp8_blockwise").reference(*wrong, x.vals);
      CHECK(testing::outside_bound(x.kernel, x.result, x.in, *wrong) != "");
    }
  }
}

TEST_CASE("gemm_small on s8 x s8 and u8 x s8 is exact under eager, lazy and 20 PCT schedules, u8 bytes over 127 read unsigned", "[interp][wgmma][int8]") {
  for (std::int64_t int8 : {1, 2}) {
    INFO("int8=" << int8);
    const auto x = testing::run_registered("gemm_small", {{"M", 128}, {"N", 128}, {"K", 256}, {"int8", int8}}, 5, 20);
    REQUIRE(x.in[0].dtype == (int8 == 2 ? ir::DType::u8 : ir::DType::i8));
    CHECK_FALSE(x.tol.has_value());  // s32 outputs: exact
    // The random integers in [-100, 100] wrap into u8 as 156..255: half of A reads above 127.
    if (int8 == 2) CHECK(std::ranges::count_if(x.in[0].as<std::uint8_t>(), [](std::uint8_t b) { return b > 127; }) > 1000);
    for (std::int64_t i = 0; i < x.result.buffers[2].elements(); ++i) REQUIRE(x.result.buffers[2].get(i) == x.expected[2].get(i));
  }
  auto t = host_tensor::zeros(ir::DType::u8, {3});
  t.set(0, 255), t.set(1, 256), t.set(2, -1);
  CHECK((t.get(0) == 255 && t.get(1) == 0 && t.get(2) == 255));  // wraps modulo 256, read back unsigned
}

// One m64n64k32 instruction on hand-placed fp8 bytes: which pattern goes with which operand, and
// e4m3 against e5m2, checked against products computed here from the formats.
TEST_CASE("wgmma decodes e4m3 and e5m2 operands by their own format, A and B each", "[interp][wgmma][fp8]") {
  const auto k = lower(kernel<sm_90a>(
      "wg_mixed_fp8", grid(1), threads(1_c), gmem<e4m3>("a", shape(64_c, 32_c)), gmem<e5m2>("b", shape(64_c, 32_c)), gmem<f32>("c", shape(64_c, 64_c)),
      smem<e4m3>(shape(64_c, 32_c), swizzle(32_c)), smem<e5m2>(shape(64_c, 32_c), swizzle(32_c)), smem<f32>(shape(64_c, 64_c)),
      barrier(arrivals(2_c)), accumulator<f32>(shape(64_c, 64_c)),
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto acc) {
        return seq(store(acc, 0.0f), copy_gmem_to_smem(a.block(0_c, 0_c), as, loaded), copy_gmem_to_smem(b.block(0_c, 0_c), bs, loaded),
                   barrier_wait(loaded), wgmma(acc, as, transpose(bs)), wgmma_commit(), wgmma_wait(0_c), store(cs, load(acc)), commit_smem(),
                   copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
  auto in = testing::random_buffers(k, 12);
  // Patterns whose value differs between the formats (0x40: 2 in e4m3, 2 in e5m2; 0x44: 3 vs 4).
  for (std::int64_t i = 0; i < 64 * 32; ++i) {
    in[0].as<std::uint8_t>()[i] = static_cast<std::uint8_t>(0x30 + i % 23);
    in[1].as<std::uint8_t>()[i] = static_cast<std::uint8_t>(0x30 + i % 17);
  }
  auto expected = in;
  for (std::int64_t i = 0; i < 64; ++i)
    for (std::int64_t j = 0; j < 64; ++j) {
      double s = 0;
      for (std::int64_t x = 0; x < 32; ++x)
        s += static_cast<double>(ir::e4m3_to_f32(in[0].as<std::uint8_t>()[i * 32 + x])) * ir::e5m2_to_f32(in[1].as<std::uint8_t>()[j * 32 + x]);
      expected[2].set(i * 64 + j, s);
    }
  const auto r = interp::run(k, in);
  REQUIRE(r.ok());
  // 32 products of short mantissas: exact in f32, so the sum is exact.
  CHECK(r.buffers[2].bytes == expected[2].bytes);
  run_everywhere(k, in, expected, 10);
}

TEST_CASE("gemm_hopper is within the MMA tolerance under eager, lazy and PCT schedules, one CTA per tile and persistent", "[interp][wgmma]") {
  // The consumers keep one wgmma group in flight (wgmma_wait(1), then release the previous
  // stage); persistent CTAs carry the ring's stage and phase from tile to tile. The persistent
  // sizes leave the tiles uneven across CTAs: 4 cluster tiles over 3 clusters (2, 1, 1), and 6
  // tiles over 4 CTAs (2, 2, 1, 1), so a CTA that runs one tile fewer than its neighbours, or
  // a phase that goes wrong at the second tile, shows.
  auto const& e = registry::global().find("gemm_hopper");
  struct config {
    param_values set;
    std::int64_t ctas;  // of the grid it must build
    int pct;
  };
  for (auto const& [set, ctas, pct] : {config{{}, 4, 50},
                                       config{{{"M", 256}, {"N", 1024}, {"K", 192}, {"stages", 2}, {"cluster", 2}, {"ctas", 6}}, 6, 50},
                                       config{{{"M", 384}, {"N", 512}, {"K", 128}, {"stages", 3}, {"cluster", 1}, {"ctas", 4}}, 4, 20}}) {
    const auto vals = registry::resolve(e, set);
    INFO("M=" << vals.at("M") << " N=" << vals.at("N") << " K=" << vals.at("K") << " stages=" << vals.at("stages") << " cluster=" << vals.at("cluster")
              << " ctas=" << vals.at("ctas"));
    const auto k = e.build(vals);
    CHECK(k.grid[0] * k.grid[1] * k.grid[2] == ctas);
    const auto in = testing::random_buffers(k, 11);
    auto expected = in;
    e.reference(expected, vals);
    run_everywhere(k, in, expected, pct);
  }
}

TEST_CASE("wgmma reads every operand layout its descriptors describe", "[interp][wgmma]") {
  SECTION("K-major, 64-byte swizzle, four K steps; waits for more groups than committed are no-ops") {
    const auto k = swizzle64();
    const auto in = testing::random_buffers(k, 3);
    auto expected = in;
    gemm_abt(expected);
    run_everywhere(k, in, expected, 20);
  }
  SECTION("MN-major B (128-byte swizzle), A with a 32-byte swizzle") {
    const auto k = mn_major_b();
    const auto in = testing::random_buffers(k, 4);
    auto expected = in;
    for (std::int64_t i = 0; i < 64; ++i)  // C = A * B, B stored (K, N)
      for (std::int64_t j = 0; j < 64; ++j) {
        double s = 0;
        for (std::int64_t x = 0; x < 64; ++x) s += in[0].get(i * 64 + x) * in[1].get(x * 64 + j);
        expected[2].set(i * 64 + j, s);
      }
    run_everywhere(k, in, expected, 20);
  }
  SECTION("unswizzled core-matrix tiling") {
    const auto k = core_matrices<cm::smem_a>();
    const auto in = testing::random_buffers(k, 5);
    auto expected = in;
    gemm_abt(expected);
    run_everywhere(k, in, expected, 20);
  }
  SECTION("A from registers") {
    const auto k = core_matrices<cm::register_a>();
    const auto in = testing::random_buffers(k, 6);
    auto expected = in;
    gemm_abt(expected, 2.0);
    run_everywhere(k, in, expected, 20);
  }
}

// The mutation check of the descriptor path: the same kernel with one operand's descriptor
// mode flipped (K-major <-> MN-major, bit 0 of Stmt::transpose for A, bit 1 for B) still
// verifies (64 x 64 tiles fit both ways) but reads the transposed operand, and the comparison
// must catch it. gemm_small's A is flipped in its own IR; the core-matrix kernel's B too.
TEST_CASE("a wgmma whose operand is read in the wrong major order gives a wrong answer the tolerance check catches", "[interp][wgmma]") {
  auto const& e = registry::global().find("gemm_small");
  const auto vals = registry::resolve(e, {{"M", 128}, {"N", 128}, {"K", 128}});
  auto k = e.build(vals);
  const auto in = testing::random_buffers(k, 9);
  auto expected = in;
  e.reference(expected, vals);
  {
    const auto r = interp::run(k, in);
    REQUIRE(r.ok());
    REQUIRE(outside_bound(k, r, in, expected) == "");  // the unmutated kernel passes
  }
  k.stmts[static_cast<std::size_t>(the_wgmma(k))].transpose ^= 1;
  REQUIRE_NOTHROW(ir::verify(k));
  {
    const auto r = interp::run(k, in);
    REQUIRE(r.ok());
    CHECK(outside_bound(k, r, in, expected) != "");
  }
  auto cm = core_matrices<cm::smem_a>();
  const auto cin = testing::random_buffers(cm, 10);
  auto cexp = cin;
  gemm_abt(cexp);
  cm.stmts[static_cast<std::size_t>(the_wgmma(cm))].transpose ^= 2;
  const auto r = interp::run(cm, cin);
  REQUIRE(r.ok());
  CHECK(outside_bound(cm, r, cin, cexp) != "");
}

TEST_CASE("an ordinary store into A while the wgmma reading it is in flight is a data race", "[interp][wgmma]") {
  const auto k = core_matrices<cm::store_under_wgmma>();
  for (auto p : {policy::eager, policy::lazy}) {
    INFO("policy " << interp::policy_name(p));
    const auto r = interp::run(k, testing::random_buffers(k, 12), {.schedule = p});
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics[0].kind == interp::check::data_race);
    // Eager has landed the wgmma, whose read the store then meets; lazy lands it after the
    // store, and the wgmma meets the store's write.
    CHECK_THAT(r.diagnostics[0].message, Catch::Matchers::Contains("data race on SMEM s0["));
    CHECK_THAT(r.diagnostics[0].message,
               Catch::Matchers::Contains(p == policy::eager ? "warpgroup 0 of CTA (0, 0, 0) (write) is not ordered after the earlier read by the wgmma group #1 issued by warpgroup 0 of CTA (0, 0, 0)"
                                                            : "a wgmma (read) is not ordered after the earlier write by warpgroup 0 of CTA (0, 0, 0)"));
  }
}

TEST_CASE("a wgmma never committed: the diagnostic says so and names it, not only that a wgmma_wait is missing", "[interp][wgmma]") {
  // Issue 27 item 5: wgmma, wgmma_wait(0_c) without wgmma_commit() was told to wait with
  // wgmma_wait, which it does; the wait covers nothing because the group was never committed.
  const auto k = core_matrices<cm::no_commit>();
  const auto op = the_wgmma(k);
  for (auto p : {policy::eager, policy::lazy}) {
    INFO("policy " << interp::policy_name(p));
    const auto r = interp::run(k, testing::random_buffers(k, 27), {.schedule = p});
    REQUIRE(!r.diagnostics.empty());
    INFO(r.diagnostics[0].message);
    CHECK_THAT(r.diagnostics[0].message, Catch::Matchers::Contains(fmt::format("op #{} (wgmma", op)) &&
                                             Catch::Matchers::Contains("was never committed") &&
                                             Catch::Matchers::Contains("put wgmma_commit() after the wgmma, before the wgmma_wait") ||
                                             Catch::Matchers::Contains("put wgmma_commit() after the wgmma, then wgmma_wait(0_c)"));
  }
  // Its twin with the commit is correct (no diagnostic).
  const auto ok = core_matrices<cm::smem_a>();
  CHECK(interp::run(ok, testing::random_buffers(ok, 27)).diagnostics.empty());
}

TEST_CASE("wgmma reads B from two sub-views of one swizzled array, the K-row halves, each filled by its own TMA load", "[interp][wgmma][smem_views]") {
  const auto k = testing::tile_ops::smem_view_wgmma_kernel();
  const auto in = testing::random_buffers(k, 21);
  auto expected = in;
  testing::tile_ops::smem_view_wgmma_reference(expected);
  run_everywhere(k, in, expected, 50);
  // The halves are what the descriptors read: the same kernel with both wgmmas on the first half
  // computes A * [B0; B0], which the bound must reject.
  auto wrong = k;
  ir::RefId first_b = ir::none;
  for (auto& s : wrong.stmts)
    if (s.op == ir::StmtOp::wgmma) {
      if (first_b == ir::none) first_b = s.refs[2];
      else s.refs[2] = first_b;
    }
  const auto r = interp::run(wrong, in);
  REQUIRE(r.ok());
  CHECK(testing::outside_bound(wrong, r, in, expected) != "");
}

TEST_CASE("the MMA tolerance is the documented bound: an output just outside it is caught, just inside it is not", "[interp][wgmma][tolerance]") {
  // Every MMA test compares through mma_tolerance::bound, so a bound grown tenfold would pass all
  // of them. Here the bound is recomputed from its documented formula (interp.hpp,
  // docs/interpreter.md), not read from the code under test, and a real run's output is moved to
  // just outside and just inside it.
  auto const& e = registry::global().find("gemm_small");
  const param_values vals = registry::resolve(e, {{"M", 128}, {"N", 256}, {"K", 192}});
  const auto k = e.build(vals);
  const auto in = testing::random_buffers(k, 20261202);
  const auto r = interp::run(k, in, {.schedule = policy::eager});
  REQUIRE(r.ok());
  auto want = in;
  e.reference(want, vals);
  REQUIRE(outside_bound(k, r, in, want) == "");
  const auto tol = interp::tolerance_of(k, r, in);
  REQUIRE(tol);
  CHECK(tol->k == 192);
  CHECK(tol->input == ir::DType::bf16);
  CHECK(tol->accumulator == ir::DType::f32);
  const auto outs = interp::written_params(k);
  REQUIRE(outs.size() == 1);
  const int out = outs[0];
  double max_input = 0;
  for (std::size_t p = 0; p < in.size(); ++p)
    if (static_cast<int>(p) != out)
      for (std::int64_t i = 0; i < in[p].elements(); ++i) max_input = std::max(max_input, std::abs(in[p].get(i)));
  CHECK(tol->max_input == max_input);
  REQUIRE(max_input > 0.5);  // seeded random inputs, not zeros: the bound is not its ulp term alone
  // bf16 inputs, f32 accumulation: K * 2^-23 relative per sum of K products of at most max^2,
  // plus one f32 ulp of the reference.
  auto documented = [&](double ref) { return 192.0 * std::ldexp(1.0, -23) * (192.0 * max_input * max_input) + std::ldexp(std::abs(ref), -23); };
  const auto n = r.buffers[out].elements();
  for (std::int64_t i : {std::int64_t{0}, n / 3, n - 1}) {
    const double ref = want[out].get(i);
    INFO("output element " << i << ", reference " << ref << ", documented bound " << documented(ref));
    CHECK(tol->bound(ref, ir::DType::f32) == Approx(documented(ref)).epsilon(1e-12));
    for (double sign : {1.0, -1.0}) {
      auto planted = r;
      planted.buffers[out].set(i, ref + sign * 1.05 * documented(ref));
      CHECK_THAT(outside_bound(k, planted, in, want), Catch::Matchers::StartsWith(k.params[out].name + "[" + std::to_string(i) + "]"));
      planted.buffers[out].set(i, ref + sign * 0.95 * documented(ref));
      CHECK(outside_bound(k, planted, in, want) == "");
    }
  }
  // The other terms, at the documented numbers: fp8 inputs add 2^-13 per k32 instruction; an f16
  // accumulator 2^-10 per k16 instruction and bounds an f16 output by its own ulp.
  const interp::mma_tolerance fp8{.k = 4096, .input = ir::DType::e4m3, .accumulator = ir::DType::f32, .max_input = 2.0};
  CHECK(fp8.bound(3.0, ir::DType::f32) == Approx((4096 * std::ldexp(1.0, -23) + 128 * std::ldexp(1.0, -13)) * 4096 * 4 + 3 * std::ldexp(1.0, -23)).epsilon(1e-12));
  const interp::mma_tolerance f16acc{.k = 256, .input = ir::DType::f16, .accumulator = ir::DType::f16, .max_input = 1.0};
  CHECK(f16acc.bound(-8.0, ir::DType::f16) == Approx((256 * std::ldexp(1.0, -23) + 16 * std::ldexp(1.0, -10)) * 256 + 8 * std::ldexp(1.0, -10)).epsilon(1e-12));
}
