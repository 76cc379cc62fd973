// wgmma code generation without NVRTC: accumulators as register arrays in the D fragment layout,
// descriptors from ir::wgmma (never written here except as the ISA's known values), and
// wgmma.fence exactly where ordinary code touched the accumulator.
#include <catch2/catch.hpp>

#include <string>

#include <fmt/format.h>

#include <stagecraft/nvrtc/codegen.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "../interp/stmatrix_kernels.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {
std::size_t count(std::string const& text, std::string const& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

// acc += a * b^T over K = 64 (4 k16 steps), twice or once, with or without ordinary code
// scaling the accumulator in between, then the epilogue store.
template <int Reps, bool TouchBetween>
ir::Kernel straight() {
  return lower(kernel<sm_90a>(
      "straight", grid(1), threads(1_c), gmem<f32>("c", shape(64_c, 128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
      smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<f32>(shape(64_c, 128_c)), accumulator<f32>(shape(64_c, 128_c)),
      [](auto c, auto a, auto b, auto cs, auto acc) {
        auto mma = seq(wgmma(acc, a, transpose(b)), wgmma_commit());
        auto epilogue = seq(store(cs, load(acc)), commit_smem(), copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(),
                            wait_smem_to_gmem(0_c));
        if constexpr (Reps == 1) return seq(store(acc, 0.0f), mma, wgmma_wait(0_c), epilogue);
        else if constexpr (TouchBetween)
          return seq(store(acc, 0.0f), mma, wgmma_wait(0_c), store(acc, load(acc) * 2.0f), mma, wgmma_wait(0_c), epilogue);
        else return seq(store(acc, 0.0f), mma, mma, wgmma_wait(0_c), epilogue);
      }));
}
}  // namespace

TEST_CASE("gemm_small: an accumulator array, m64n128k16 instructions with 128-byte swizzle K-major descriptors", "[codegen][wgmma]") {
  auto const& e = registry::global().find("gemm_small");
  const auto k = e.build(registry::resolve(e, {}));
  const auto g = nvrtc::generate(k);
  // (64, 128) f32: one m64 block of 64 registers per thread.
  CHECK_THAT(g.source, Contains("float acc4[64];"));
  CHECK_THAT(g.source, Contains("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1,") && Contains("%63}, %64, %65, p, 1, 1, 0, 0;"));
  CHECK(count(g.source, "wgmma.mma_async.sync.aligned") == 4);  // K = 64: four k16 steps
  CHECK_THAT(g.source, Contains("\"+f\"(acc4[63])") && !Contains("(acc4[64])"));
  // 128-byte swizzle (mode 1 at bit 62), SBO 1024 B (64 at bit 32), LBO 16 B (1 at bit 16): the
  // canonical K-major descriptor of a 128-byte swizzled bf16 tile; K steps 32 bytes apart.
  // Each built once; the k steps add 32 bytes >> 4 = 2 each.
  CHECK(count(g.source, "0x4000004000010000ull") == 2);
  CHECK_THAT(g.source, Contains("const unsigned long long da0 = 0x4000004000010000ull | (a_addr >> 4);"));
  CHECK_THAT(g.source, Contains("const unsigned long long db0 = 0x4000004000010000ull | (b_addr >> 4);"));
  for (int ks = 0; ks < 4; ++ks) {
    CHECK_THAT(g.source, Contains(fmt::format("const unsigned long long da = da0 + {}ull;  // + {} B", 2 * ks, 32 * ks)));
    CHECK_THAT(g.source, Contains(fmt::format("const unsigned long long db = db0 + {}ull;  // + {} B", 2 * ks, 32 * ks)));
  }
  CHECK_THAT(g.source, Contains("sc::wgmma_commit();") && Contains("sc::wgmma_wait<0>();"));
  // The zeroing and the epilogue walk the fragment, not i % 128.
  CHECK(count(g.source, "sc::accumulator_element(lane, i)") == 2);
  CHECK_THAT(g.source, Contains("acc4[mb * 64 + i] = 0.0f;"));
}

TEST_CASE("wgmma.fence: before the first wgmma and after ordinary code touched the accumulator, not between wgmmas", "[codegen][wgmma]") {
  CHECK(count(nvrtc::generate(straight<1, false>()).source, "sc::wgmma_fence();") == 1);
  // two wgmmas back to back: the second is ordered after the first without a fence
  CHECK(count(nvrtc::generate(straight<2, false>()).source, "sc::wgmma_fence();") == 1);
  // ordinary code scaled the accumulator between them: the second needs its own
  CHECK(count(nvrtc::generate(straight<2, true>()).source, "sc::wgmma_fence();") == 2);
}

TEST_CASE("in a K loop the fence stays: the first iteration follows the zeroing", "[codegen][wgmma]") {
  auto const& e = registry::global().find("gemm_small");
  const auto g = nvrtc::generate(e.build(registry::resolve(e, {})));
  CHECK(count(g.source, "sc::wgmma_fence();") == 1);
  const auto loop = g.source.find("for (int v1");  // a K loop of static bounds counts in an int
  REQUIRE(loop != std::string::npos);
  CHECK(g.source.find("sc::wgmma_fence();") > loop);
}

TEST_CASE("transposed operands set the transpose immediates, tf32 has none", "[codegen][wgmma]") {
  // A (64, 64) read as is (K-major), B a (K, N) = (64, 64) buffer (MN-major): tnspA 0, tnspB 1.
  auto mn = lower(kernel<sm_90a>("mn_b", grid(1), threads(1_c), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                                 smem<bf16>(shape(64_c, 64_c), swizzle(128_c)), accumulator<f32>(shape(64_c, 64_c)),
                                 [](auto a, auto b, auto acc) { return seq(store(acc, 0.0f), wgmma(acc, a, b), wgmma_commit(), wgmma_wait(0_c)); }));
  const auto g = nvrtc::generate(mn);
  CHECK_THAT(g.source, Contains("m64n64k16.f32.bf16.bf16") && Contains("p, 1, 1, 0, 1;"));
  auto tf = lower(kernel<sm_90a>("tf32", grid(1), threads(1_c), smem<f32>(shape(64_c, 32_c), swizzle(128_c)),
                                 smem<f32>(shape(64_c, 32_c), swizzle(128_c)), accumulator<f32>(shape(64_c, 64_c)),
                                 [](auto a, auto b, auto acc) { return seq(store(acc, 0.0f), wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); }));
  const auto t = nvrtc::generate(tf);
  CHECK_THAT(t.source, Contains("m64n64k8.f32.tf32.tf32") && Contains("p, 1, 1;"));
  CHECK(count(t.source, "wgmma.mma_async") == 4);
}

TEST_CASE("A from registers: four packed registers per k16 step, read from the accumulator that holds them", "[codegen][wgmma]") {
  // S = Q * K^T, then O += bf16(S) * V with S as A from registers: register j of S's fragment
  // holds A's element i of k step ks in every thread (j = 8 for ks 1, i 0; j = 31 for ks 3, i 7).
  auto k = lower(kernel<sm_90a>("pv", grid(1), threads(1_c), smem<bf16>(shape(64_c, 32_c), swizzle(64_c)),
                                smem<bf16>(shape(64_c, 32_c), swizzle(64_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                                accumulator<f32>(shape(64_c, 64_c)), accumulator<f32>(shape(64_c, 64_c)), [](auto q, auto kk, auto v, auto s, auto o) {
                                  return seq(store(s, 0.0f), store(o, 0.0f), wgmma(s, q, transpose(kk)), wgmma_commit(), wgmma_wait(0_c),
                                             wgmma(o, cast<bf16>(load(s)), v), wgmma_commit(), wgmma_wait(0_c));
                                }));
  const auto g = nvrtc::generate(k);
  CHECK_THAT(g.source, Contains("{%32, %33, %34, %35}, %36, p, 1, 1, 1;"));  // B (K, N) in SMEM: MN-major
  CHECK_THAT(g.source, Contains("(acc3[8])") && Contains("(acc3[31])") && Contains("(acc3[0])"));
  CHECK(count(g.source, "static_cast<unsigned>(") >= 4 * 4 * 2);
  // the first wgmma follows the zeroing; the second reads registers ordinary code just wrote
  CHECK(count(g.source, "sc::wgmma_fence();") == 2);
}

TEST_CASE("warp specialization: a one-warp producer that gives registers to the consumers, and no barrier that protects nothing", "[codegen][wgmma]") {
  auto const& e = registry::global().find("gemm_hopper");
  const auto g = nvrtc::generate(e.build(registry::resolve(e, {})));
  const auto producer = g.source.find("a warpgroup that only moves data");
  REQUIRE(producer != std::string::npos);
  const auto consumers = g.source.find("} else {", producer);
  REQUIRE(consumers != std::string::npos);
  const std::string p = g.source.substr(producer, consumers - producer);
  CHECK_THAT(p, Contains("sc::setmaxnreg_dec<24>();") && Contains("if (lane < 32) {") && Contains("sc::tma_load("));
  CHECK_THAT(p, !Contains("sc::wg_sync"));  // the producer makes no generic accesses
  // TMA loads are issued by one elected lane of a warp-uniform branch; not by lane 0 of 128
  CHECK(count(p, "if (lane < 32 && sc::elect_one()) {") == 2);
  CHECK_THAT(p, !Contains("if (lane == 0)"));
  // the consumers' releases too; TMA stores, whose bulk group is the issuing thread's, stay lane 0's
  CHECK_THAT(g.source.substr(consumers), Contains("if (lane < 32 && sc::elect_one()) {\n") && Contains("if (lane == 0) sc::bulk_commit();"));
  const std::string inc = "sc::setmaxnreg_inc<240>();";  // the consumers' first statement
  const auto first = g.source.find_first_not_of(' ', consumers + std::string("} else {\n").size());
  CHECK(g.source.compare(first, inc.size(), inc) == 0);
  // Only the epilogue's generic stores need the warpgroup barrier: per consumer and column half,
  // after the wait for the previous stores to have read `cs` (before writing it again) and
  // before its TMA stores; and once after the last wait for the stores. The K loop's arrivals
  // follow wgmma_wait and need none, however many tiles a persistent CTA runs.
  CHECK(count(g.source, "sc::wg_sync(wg);") == 9);
  CHECK(count(g.source, "sc::wgmma_wait<1>();") == 2);  // one group in flight in each consumer's K loop
  // The epilogue stores bf16 pairs (registers i, i + 1 are row neighbours) four 8 x 8 matrices
  // per warp instruction: 8 stmatrix per thread and column half, where pair stores took 32.
  CHECK(count(g.source, "sc::stmatrix_x4(") == 4);
  CHECK(count(g.source, "*reinterpret_cast<unsigned*>(&*reinterpret_cast<unsigned short*>(smem + ") == 0);
  CHECK_THAT(g.source, Contains("for (int i = 0; i < 64; i += 8) {") && Contains("acc5[mb * 128 + 64 + i + 2 * q + 1]"));
}

TEST_CASE("an arrival after generic reads of the stage keeps its warpgroup barrier", "[codegen]") {
  // ws_copy's consumers read their stage with ordinary loads: releasing it needs every lane done.
  auto const& e = registry::global().find("ws_copy");
  const auto g = nvrtc::generate(e.build(registry::resolve(e, {})));
  std::size_t arrivals = 0;
  for (auto at = g.source.find(": barrier_arrive on "); at != std::string::npos; at = g.source.find(": barrier_arrive on ", at + 1)) {
    ++arrivals;
    const auto next = g.source.find('\n', g.source.find('\n', at) + 1);
    CHECK_THAT(g.source.substr(at, next - at), Contains("sc::wg_sync(wg);"));
  }
  CHECK(arrivals == 2);
  // and its producer, which only moves data, runs on one warp without any barrier
  CHECK_THAT(g.source, Contains("a warpgroup that only moves data") && Contains("if (lane < 32) {"));
}

TEST_CASE("a store from registers to registers needs no barrier and leaves the stores before it unmet, which a loop meets once before it",
          "[codegen][wgmma]") {
  // attention's order: zero the accumulators, read a per-row scale from GMEM, then a loop whose
  // register-only rescale comes before its wgmma. The GMEM read leaves the warpgroup "dirty".
  // The rescale used to meet at the warpgroup's barrier in every trip (it read the state at the
  // loop's head, dirty from the entry); now one barrier before the loop settles it.
  const auto tile = shape(64_c, 64_c);
  auto k = lower(kernel<sm_90a>("rescale_loop", grid(1), threads(1_c), gmem<f32>("x", shape(64_c)), smem<bf16>(tile, swizzle(128_c)),
                                smem<bf16>(tile, swizzle(128_c)), accumulator<f32>(shape(64_c)), accumulator<f32>(tile),
                                [=](auto x, auto q, auto kk, auto c, auto s) {
                                  return seq(store(s, 0.0f), store(c, load(x.tile(shape(64_c), 0_c))), for_(range(8_c), [&](auto) {
                                               return seq(store(s, load(s) * broadcast<1>(load(c), tile)), wgmma(s, q, transpose(kk)), wgmma_commit(),
                                                          wgmma_wait(0_c));
                                             }));
                                }));
  const auto g = nvrtc::generate(k);
  const auto loop = g.source.find("for (int v0 = ");
  REQUIRE(loop != std::string::npos);
  CHECK(count(g.source.substr(loop), "sc::wg_sync(wg);") == 0);
  CHECK(count(g.source.substr(0, loop), "sc::wg_sync(wg);  // op #") == 1);
  CHECK_THAT(g.source.substr(0, loop), Contains("once before the loop"));
}

TEST_CASE("gemm_hopper's 2x1 cluster: A multicast to both CTAs, stages released to both, CTAs leave together", "[codegen][wgmma]") {
  auto const& e = registry::global().find("gemm_hopper");
  const auto two = nvrtc::generate(e.build(registry::resolve(e, {{"cluster", 2}})));
  CHECK_THAT(two.source, Contains("sc::tma_load_multicast(") && Contains("0x0003u << rank_base"));
  // released to both CTAs at .cta scope: the consumers' arrivals order only wgmma reads (ir/scopes.hpp)
  CHECK_THAT(two.source, !Contains("sc::mbar_wait_cluster(") && Contains("sc::mbar_arrive_remote<false>("));
  CHECK(count(two.source, "sc::cluster_sync();") == 2);  // peers' barriers exist before anyone arrives; nobody leaves early
  const auto one = nvrtc::generate(e.build(registry::resolve(e, {{"cluster", 1}})));
  CHECK_THAT(one.source, !Contains("sc::tma_load_multicast(") && !Contains("sc::cluster_sync();") && !Contains("sc::mbar_arrive_remote("));
}

TEST_CASE("gemm_fp8: k32 instructions of kind .e4m3.e4m3, no transpose immediates, 128-byte K-major descriptors", "[codegen][wgmma][fp8]") {
  auto const& e = registry::global().find("gemm_fp8");
  const auto g = nvrtc::generate(e.build(registry::resolve(e, {})));
  // (64, 256) f32 per consumer: 128 registers per thread.
  CHECK_THAT(g.source, Contains("float acc5[128];"));
  // fp8 kinds have no transpose operands: scale-d, then imm-scale-a and imm-scale-b only.
  CHECK_THAT(g.source, Contains("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {%0, %1,") && Contains("%127}, %128, %129, p, 1, 1;"));
  CHECK_THAT(g.source, !Contains("k16") && !Contains("p, 1, 1, 0, 0"));
  CHECK(count(g.source, "wgmma.mma_async.sync.aligned") % 4 == 0);  // K = 128 per stage: four k32 steps
  // 128 fp8 elements are one 128-byte swizzle row: the same descriptor as bf16's 64, K steps 32 bytes apart.
  CHECK(count(g.source, "0x4000004000010000ull") > 0);
  for (int ks = 0; ks < 4; ++ks) CHECK_THAT(g.source, Contains(fmt::format("const unsigned long long db = db0 + {}ull;  // + {} B", 2 * ks, 32 * ks)));
  CHECK_THAT(g.source, !Contains("db0 + 8ull"));
  // Operands are copied by TMA as bytes; GMEM parameters are the bit patterns.
  CHECK_THAT(g.source, Contains("unsigned char* __restrict__ p_a"));
}

TEST_CASE("f16 accumulators: two elements per 32-bit register, \"+r\" D operands, packed and unpacked through the prelude", "[codegen][wgmma][fp8]") {
  auto const& e = registry::global().find("gemm_fp8");
  const auto g = nvrtc::generate(e.build(registry::resolve(e, {{"acc", 16}})));
  // (64, 256) f16: 128 elements per thread in 64 registers.
  CHECK_THAT(g.source, Contains("unsigned acc5[64];"));
  CHECK_THAT(g.source, Contains("wgmma.mma_async.sync.aligned.m64n256k32.f16.e4m3.e4m3 {%0, %1,") && Contains("%63}, %64, %65, p, 1, 1;"));
  CHECK_THAT(g.source, Contains("\"+r\"(acc5[63])") && !Contains("(acc5[64])") && !Contains("\"+f\"(acc5"));
  // Zeroing writes a register (an element pair) at a time; the epilogue reads element e of the fragment.
  CHECK_THAT(g.source, Contains("acc5[(mb * 128 + i) / 2] = sc::pack_f16("));
  CHECK_THAT(g.source, Contains("sc::acc_f16(acc5, mb * 128 + i + 2 * q)"));
  CHECK_THAT(g.source, Contains("sc::reg_fence(acc5[r])"));
}

TEST_CASE("fp8 inputs pair freely: e4m3 x e5m2 is kind .e4m3.e5m2, fp8 loads and stores convert through the prelude", "[codegen][wgmma][fp8]") {
  const auto k = lower(kernel<sm_90a>(
      "mixed_fp8", grid(1), threads(1_c), gmem<e5m2>("c", shape(64_c, 64_c)), smem<e4m3>(shape(64_c, 64_c), swizzle(64_c)),
      smem<e5m2>(shape(64_c, 64_c), swizzle(64_c)), smem<e5m2>(shape(64_c, 64_c)), accumulator<f32>(shape(64_c, 64_c)),
      [](auto c, auto a, auto b, auto cs, auto acc) {
        return seq(store(acc, 0.0f), wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c), store(cs, cast<e5m2>(load(acc))), commit_smem(),
                   store(a, cast<e4m3>(load(b) * 2.0f)), copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
  const auto g = nvrtc::generate(k);
  CHECK(count(g.source, "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2") == 2);  // K = 64: two k32 steps
  CHECK_THAT(g.source, Contains("sc::f32_to_e5m2(") && Contains("sc::e5m2_to_f32(") && Contains("sc::f32_to_e4m3("));
  CHECK_THAT(g.source, Contains("sc::round_e5m2(") || Contains("sc::f32_to_e5m2(sc::"));
}

TEST_CASE("the epilogue rounds each accumulator pair to bf16 once, in one instruction", "[codegen][wgmma]") {
  // cast<bf16>(load(acc)) stored to a bf16 tile: cvt.rn.bf16x2.f32 per pair (the same bits as
  // two roundings; rounding the rounded value again, as the generic path did, changes nothing
  // and cost two F2F and an IMAD per element). gemm_hopper stores a column half of its
  // accumulator at a time: slice<1>(load(acc), 128 j, 128) reads registers 64 j.. of each block.
  auto const& e = registry::global().find("gemm_hopper");
  const auto g = nvrtc::generate(e.build(registry::resolve(e, {})));
  for (int j = 0; j < 2; ++j) {
    INFO("column half " << j);
    const auto at = g.source.find("store over the fragment of a5 (64, 128): 1 block(s) x 64 elements per thread, eight at a time by stmatrix",
                                  j == 0 ? 0 : g.source.find("store over the fragment of a5 (64, 128)") + 1);
    REQUIRE(at != std::string::npos);
    const auto store = g.source.substr(at, g.source.find("sc::fence_proxy_async();", at) - at);
    CHECK(count(store, fmt::format("sm[q] = sc::f32x2_to_bf16x2(acc5[mb * 128 + {0} + i + 2 * q], acc5[mb * 128 + {0} + i + 2 * q + 1]);", 64 * j)) == 1);
    CHECK(count(store, "sc::round_bf16(") == 0);
    CHECK(count(store, "sc::f32_to_bf16(") == 0);
  }
}

TEST_CASE("a column slice of the D fragment is whole 8-column groups: register i + c0 / 2 holds column c0 + col of register i", "[codegen][wgmma]") {
  // What the walk over slice<1>(load(acc), c0, w) relies on, for every thread and register of an
  // m64n256 fragment and every c0 a multiple of 8 (ir::wgmma::accumulator_element is the layout
  // the interpreter and the device prelude share).
  for (int c0 = 0; c0 < 256; c0 += 8)
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i + c0 / 2 < 128; ++i) {
        const auto e = ir::wgmma::accumulator_element(t, i), s = ir::wgmma::accumulator_element(t, i + c0 / 2);
        REQUIRE(s.row == e.row);
        REQUIRE(s.col == e.col + c0);
      }
  // What the generator refuses: a slice of an f16 accumulator (two elements per register), a
  // slice off the 8-column grid.
  auto slice_store = [](auto acc_dtype, auto start, auto width) {
    return lower(kernel<sm_90a>("sliced", grid(1), threads(1_c), smem<f16>(shape(64_c, 64_c), swizzle(128_c)),
                                smem<f16>(shape(64_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 32_c)),
                                accumulator<decltype(acc_dtype)>(shape(64_c, 64_c)), [=](auto a, auto b, auto out, auto acc) {
                                  return seq(store(acc, 0.0f), wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c),
                                             store(slice<1>(out, 0_c, width), cast<bf16>(slice<1>(load(acc), start, width))));
                                }));
  };
  CHECK_NOTHROW(nvrtc::generate(slice_store(f32{}, 32_c, 32_c)));
  CHECK_THROWS_WITH(nvrtc::generate(slice_store(f16{}, 32_c, 32_c)), Contains("kernel 'sliced', op #") && Contains("accumulator a3 (64, 32) with a load of shape (64, 64)"));
  CHECK_THROWS_WITH(nvrtc::generate(slice_store(f32{}, 4_c, 16_c)), Contains("kernel 'sliced'") && Contains("accumulator a3"));
  CHECK_NOTHROW(nvrtc::generate(slice_store(f32{}, 48_c, 16_c)));
}

TEST_CASE("the generator counts each epilogue store's SMEM wavefronts from the addresses it computes", "[codegen][wgmma][banks]") {
  // A (64, 256) bf16 half of C stored into an unswizzled tile (gemm_hopper's epilogue before
  // tiling): the 8 rows of each 8 x 8 matrix a stmatrix writes lie 512 bytes apart on the same 4
  // banks, 8 ways (the audit's 512 wavefronts per warp where 64 suffice, as its 32-bit pair
  // stores had), 16 instructions per thread, a 16-byte row address each.
  auto half_of_c = [](auto staging) {
    return lower(kernel<sm_90a>("epilogue", grid(1), threads(1_c), gmem<bf16>("c", shape(64, 256)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                                smem<bf16>(shape(256_c, 64_c), swizzle(128_c)), staging, accumulator<f32>(shape(64_c, 256_c)),
                                [](auto c, auto a, auto b, auto out, auto acc) {
                                  return seq(store(acc, 0.0f), wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c),
                                             store(out, cast<bf16>(load(acc))), commit_smem(), copy_smem_to_gmem(out, c.block(0_c, 0_c)),
                                             commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                                }));
  };
  const auto plain = nvrtc::generate(half_of_c(smem<bf16>(shape(64_c, 256_c))));
  REQUIRE(plain.banks.size() == 1);
  CHECK(plain.banks[0].stmatrix);
  CHECK(plain.banks[0].accesses == 16);
  CHECK(plain.banks[0].width == 16);
  CHECK(plain.banks[0].wavefronts == 512);
  CHECK(plain.banks[0].ideal == 64);
  CHECK(plain.banks[0].slabs_aligned);
  // The same half as four 64 x 64 tiles of 128-byte swizzled rows: conflict free.
  const auto tiled = nvrtc::generate(half_of_c(smem<bf16>(shape(64_c, 256_c), tiling(64_c, 64_c), swizzle(128_c))));
  REQUIRE(tiled.banks.size() == 1);
  CHECK(tiled.banks[0].wavefronts == 64);
  CHECK(tiled.banks[0].ideal == 64);
  // gemm_hopper: each consumer stores two (64, 128) column halves into its tiled subtile.
  auto const& e = registry::global().find("gemm_hopper");
  const auto g = nvrtc::generate(e.build(registry::resolve(e, {})));
  REQUIRE(g.banks.size() == 4);
  for (auto const& b : g.banks) {
    CHECK(b.accesses == 8);  // stmatrix.x4: 8 x 4 matrices of 8 x 8 per warp
    CHECK(b.wavefronts == 32);
    CHECK(b.ideal == 32);
  }
  // a 128-byte swizzled (64, 64) bf16 destination: the swizzle spreads the 8 rows over 8 chunks
  auto k = lower(kernel<sm_90a>("swizzled_epilogue", grid(1), threads(1_c), gmem<bf16>("c", shape(64, 64)),
                                smem<bf16>(shape(64_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                                smem<bf16>(shape(64_c, 64_c), swizzle(128_c)), accumulator<f32>(shape(64_c, 64_c)),
                                [](auto c, auto a, auto b, auto out, auto acc) {
                                  return seq(store(acc, 0.0f), wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c),
                                             store(out, cast<bf16>(load(acc))), commit_smem(), copy_smem_to_gmem(out, c.block(0_c, 0_c)),
                                             commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                                }));
  const auto s = nvrtc::generate(k);
  REQUIRE(s.banks.size() == 1);
  CHECK(s.banks[0].wavefronts == s.banks[0].ideal);
  CHECK(s.banks[0].ideal == 16);  // 4 stmatrix per thread, 4 matrices of 128 bytes per warp each
}

TEST_CASE("a fragment store goes by stmatrix only where each row it addresses is 16 aligned bytes, elsewhere by 4-byte pairs", "[codegen][wgmma][stmatrix]") {
  auto by = [](ir::Kernel const& k) {
    const auto g = nvrtc::generate(k);
    return std::pair{count(g.source, "sc::stmatrix_x4("), count(g.source, "= sc::f32x2_to_bf16x2(")};
  };
  // Every layout of the shared test kernels: unswizzled, 32/64/128-byte swizzled, tiled, two m64
  // blocks, a ring indexed by a loop variable (its start a multiple of 8 elements).
  for (auto const& k : testing::stmatrix::kernels()) {
    INFO(k.name);
    CHECK(by(k).first == 1);
  }
  // N = 8: one 8-column group per row half, not the pair of groups an x4 stores.
  CHECK(by(testing::stmatrix::fallback_kernel()) == std::pair<std::size_t, std::size_t>{0, 1});
  // A (64, 16) fragment into a 16-column view of a wider buffer, through a static column slice.
  auto into_slice = [](auto buffer, auto start) {
    return lower(kernel<sm_90a>("stsm_slice", grid(1), threads(1_c), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                                smem<bf16>(shape(16_c, 64_c), swizzle(128_c)), buffer, accumulator<f32>(shape(64_c, 16_c)),
                                [=](auto a, auto b, auto out, auto acc) {
                                  return seq(store(acc, 0.0f), wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c),
                                             store(slice<1>(out, start, 16_c), cast<bf16>(load(acc))));
                                }));
  };
  CHECK(by(into_slice(smem<bf16>(shape(64_c, 32_c)), 16_c)).first == 1);  // rows of 64 bytes, the slice 32 bytes in
  CHECK(by(into_slice(smem<bf16>(shape(64_c, 24_c)), 8_c)).first == 1);   // rows of 48 bytes: still 16-byte units
  CHECK(by(into_slice(smem<bf16>(shape(64_c, 24_c)), 4_c)) == std::pair<std::size_t, std::size_t>{0, 1});  // a start 8 bytes into a unit
  CHECK(by(into_slice(smem<bf16>(shape(64_c, 20_c)), 0_c)) == std::pair<std::size_t, std::size_t>{0, 1});  // rows of 40 bytes: odd rows unaligned
  // Not 16-bit, or not SMEM: f32 pairs into SMEM (straight<>), bf16 pairs into GMEM.
  CHECK(by(straight<1, false>()).first == 0);
  auto const& e = registry::global().find("attention_varlen");
  CHECK(by(e.build(registry::resolve(e, {}))).first == 0);
}

TEST_CASE("a Blackwell epilogue stores its TMEM rows 16 bytes at a time, and its SMEM wavefronts are counted from the addresses",
          "[codegen][tcgen05][banks]") {
  // gemm_blackwell's epilogue: thread t of the warpgroup loads row t of D (128, 256) from TMEM
  // and writes it into the staging tile. Unswizzled, a warp's 32 rows are 512 bytes apart: all
  // on the same banks, 8 ways for 16-byte stores (1024 wavefronts per warp where 128 suffice).
  // As 128 x 64 tiles of 128-byte swizzled rows (gemm_blackwell's cs) they spread: the ideal.
  auto epilogue = [](auto staging) {
    return lower(kernel<sm_100a>("tmem_epilogue", grid(1), threads(1_c), gmem<bf16>("c", shape(128, 256)), staging, barrier(arrivals(1_c), orders_tensor_core),
                                 tmem<f32>(shape(128_c, 256_c)), smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(256_c, 64_c), swizzle(128_c)),
                                 [](auto c, auto cs, auto done, auto d, auto a, auto b) {
                                   return seq(tcgen05_mma(d, a, transpose(b), done, false), barrier_wait(done), store(cs, cast<bf16>(async_load_tmem(d))),
                                              tmem_dealloc(d), commit_smem(), copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(),
                                              wait_smem_to_gmem(0_c));
                                 }));
  };
  const auto plain = nvrtc::generate(epilogue(smem<bf16>(shape(128_c, 256_c))));
  REQUIRE(plain.banks.size() == 1);
  CHECK(std::string(plain.banks[0].source) == "rows loaded from TMEM");
  CHECK(plain.banks[0].accesses == 32);  // 256 bf16 of a row, 8 per store
  CHECK(plain.banks[0].width == 16);
  CHECK(plain.banks[0].wavefronts == 1024);
  CHECK(plain.banks[0].ideal == 128);
  const auto tiled = nvrtc::generate(epilogue(smem<bf16>(shape(128_c, 256_c), tiling(128_c, 64_c), swizzle(128_c))));
  REQUIRE(tiled.banks.size() == 1);
  CHECK(tiled.banks[0].wavefronts == 128);
  CHECK(tiled.banks[0].ideal == 128);
  // 16 bytes per store, each a pair converted by one cvt.rn.bf16x2.f32.
  CHECK_THAT(tiled.source, Contains("*reinterpret_cast<uint4*>(&") && Contains("out[u] = sc::f32x2_to_bf16x2(tr[j], tr[j + 1]);"));
  // Into GMEM (no 16-byte chunk guaranteed by a layout): element by element, no bank count.
  auto direct = lower(kernel<sm_100a>("tmem_to_gmem", grid(1), threads(1_c), gmem<f32>("c", shape(128, 256)), barrier(arrivals(1_c), orders_tensor_core),
                                      tmem<f32>(shape(128_c, 256_c)), smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(256_c, 64_c), swizzle(128_c)),
                                      [](auto c, auto done, auto d, auto a, auto b) {
                                        return seq(tcgen05_mma(d, a, transpose(b), done, false), barrier_wait(done), store(c.tile(shape(128_c, 256_c), 0_c, 0_c), async_load_tmem(d)),
                                                   tmem_dealloc(d));
                                      }));
  CHECK(nvrtc::generate(direct).banks.empty());
}
