// Code generation without NVRTC: what the generated CUDA C++ must contain.
#include <catch2/catch.hpp>

#include <algorithm>

#include <stagecraft/nvrtc/codegen.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "../interp/row_state_kernels.hpp"
#include "../interp/tile_ops_kernels.hpp"
#include "../interp/tmem_rows_kernels.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {
std::size_t occurrences(std::string const& s, std::string const& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("every example generates a kernel with its tensor maps and shared memory", "[codegen]") {
  for (auto const* e : registry::global().all()) {
    INFO("kernel " << e->name);
    const auto k = e->build(registry::resolve(*e, {}));
    const auto g = nvrtc::generate(k);
    const auto tmem = std::count_if(k.allocs.begin(), k.allocs.end(), [](ir::Alloc const& a) { return a.kind == ir::AllocKind::tmem; });
    CHECK(g.entry == "stagecraft_" + e->name);
    // Kernels that move registers between warpgroups (setmaxnreg), and kernels with roles of one
    // warp (each thread may take 65536 / threads registers), run one CTA per SM.
    const bool one_cta = g.source.find("sc::setmaxnreg_dec<") != std::string::npos || ir::has_warp_roles(k);
    CHECK_THAT(g.source, Contains("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(ir::block_threads(k)) + (one_cta ? ", 1" : "") +
                                  ") " + g.entry + "("));
    // A kernel with TMEM also asks for the 4-byte slots its tcgen05.allocs write the addresses to.
    CHECK(g.smem_bytes == (tmem ? (ir::smem_bytes(k) + 7) / 8 * 8 + (4 * tmem + 7) / 8 * 8 : ir::smem_bytes(k)));
    CHECK(g.block_threads == ir::block_threads(k));
    // A kernel whose only barrier is a cluster barrier waits with an mbarrier wait (the
    // cluster-scope acquire where ir::cluster_barrier_scope says .cluster).
    const bool barriers = std::any_of(k.allocs.begin(), k.allocs.end(), [](ir::Alloc const& a) {
      return a.kind == ir::AllocKind::barrier || a.kind == ir::AllocKind::cluster_barrier;
    });
    if (barriers)  // softmax_masked has none: generic loads and stores only
      CHECK_THAT(g.source, Contains("sc::mbar_init(") && Contains("sc::mbar_fence_init()") &&
                               (Contains("sc::mbar_wait(") || Contains("sc::mbar_wait_cluster(")));
    for (std::size_t m = 0; m < g.maps.size(); ++m) CHECK_THAT(g.source, Contains("const __grid_constant__ sc::tmap_t tmap" + std::to_string(m)));
    // and each map is prefetched into the descriptor cache once, at the start
    CHECK(occurrences(g.source, "sc::prefetch_tmap(&tmap") == g.maps.size());
  }
}

TEST_CASE("roles of one warp: the role from the warp index, lanes counted within the role, one elect per K-tile, no setmaxnreg", "[codegen][roles]") {
  // gemm_blackwell: threads(warpgroup, warp, warp), 192 threads: the epilogue warps 0-3, the TMA
  // warp 4, the MMA warp 5.
  auto const& e = registry::global().find("gemm_blackwell");
  const auto k = e.build(registry::resolve(e, {}));
  const auto g = nvrtc::generate(k);
  CHECK(g.block_threads == 192);
  CHECK_THAT(g.source, Contains("__launch_bounds__(192, 1)") && Contains("const int role = warp < 4 ? 0 : warp < 5 ? 1 : 2;") &&
                           Contains("const int lane = static_cast<int>(threadIdx.x) - 32 * (warp < 4 ? 0 : warp < 5 ? 4 : 5);") &&
                           Contains("if ((static_cast<long long>(role) == 1LL))") && !Contains("setmaxnreg_dec<"));
  // The MMA warp's K-tile: the MMAs and the stage's commit in one block of the elected lane (its
  // own lane 0: `lane` counts from the warp's first thread, so no `lane < 32` test).
  const auto mma = g.source.find("if (sc::elect_one()) {  // ops #17-#18: one thread issues the MMAs and commits");
  REQUIRE(mma != std::string::npos);
  const auto commit = g.source.find("sc::tc_commit(", mma);
  REQUIRE(commit != std::string::npos);
  const auto first_line = g.source.find('\n', mma);
  const auto block = g.source.substr(first_line, commit - first_line);  // the block's body up to the commit
  CHECK(occurrences(block, "sc::tc_mma_f16(") == 4);
  CHECK(occurrences(block, "elect_one") == 0);
  // A kernel of warpgroups keeps its code: wg and lane from threadIdx.x / 128 and % 128.
  auto const& h = registry::global().find("gemm_hopper");
  CHECK_THAT(nvrtc::generate(h.build(registry::resolve(h, {}))).source,
             Contains("const int wg = static_cast<int>(threadIdx.x) / 128;\n  const int lane = static_cast<int>(threadIdx.x) % 128;") &&
                 !Contains("const int role"));
}

TEST_CASE("iota in a walk of a fragment of its shape is the walk's row and column, not a division of the flat index", "[codegen]") {
  // attention_hopper BK=128 causal: the diagonal block's triangle over (64, 128), key <= row and
  // (consumer 1) key <= row + 64. From the flat index f each element took a 64-bit division and
  // modulo, and ptxas spilled 72 to 284 bytes.
  auto const& e = registry::global().find("attention_hopper");
  const auto g = nvrtc::generate(e.build(registry::resolve(e, {{"S", 1024}, {"causal", 1}, {"BK", 128}})));
  std::size_t masks = 0;
  for (std::size_t at = g.source.find("-1.00000002e+30f"); at != std::string::npos; at = g.source.find("-1.00000002e+30f", at + 1)) {
    const auto begin = g.source.rfind('\n', at) + 1;
    const std::string line = g.source.substr(begin, g.source.find('\n', at) - begin);
    if (line.find("<=") == std::string::npos) continue;  // the initial -1e30 of m
    INFO(line);
    ++masks;
    CHECK_THAT(line, Contains("static_cast<long long>(e.col)") && Contains("static_cast<long long>(64 * mb + e.row)") && !Contains("% 128LL"));
  }
  CHECK(masks == 2);  // one triangle per consumer
}

TEST_CASE("tensor maps are one per parameter, box and swizzle", "[codegen]") {
  auto const& e = registry::global().find("add_one");
  const auto g = nvrtc::generate(e.build(registry::resolve(e, {})));
  REQUIRE(g.maps.size() == 2);
  CHECK(g.maps[0].param == 0);
  CHECK(g.maps[0].box == std::vector<std::int64_t>{128, 64});
  CHECK(g.maps[1].param == 1);
  CHECK(g.maps[0].swizzle == 0);
}

TEST_CASE("a strided TMA load gets a tensor map of its footprint with element strides, and coordinates in footprints", "[codegen]") {
  auto const& e = registry::global().find("downsample_rows");
  const auto g = nvrtc::generate(e.build(registry::resolve(e, {{"R", 4}})));
  REQUIRE(g.maps.size() == 2);
  // x: 32 rows land from a footprint of 128, every 4th; y: the plain 32x64 store.
  CHECK(g.maps[0].param == 0);
  CHECK(g.maps[0].box == std::vector<std::int64_t>{128, 64});
  CHECK(g.maps[0].elem_strides == std::vector<std::int64_t>{4, 1});
  CHECK(g.maps[1].param == 1);
  CHECK(g.maps[1].box == std::vector<std::int64_t>{32, 64});
  CHECK(g.maps[1].elem_strides.empty());
  // The barrier expects the 8 KiB that land, not the 32 KiB traversed; the load's row
  // coordinate counts footprints (128 rows), the store's blocks (32 rows).
  CHECK_THAT(g.source, Contains("sc::mbar_arrive_expect_tx(bar, 8192u);") && !Contains("32768u"));
  CHECK_THAT(g.source, Contains("static_cast<int>(static_cast<long long>(blockIdx.x) * 128)") &&
                           Contains("static_cast<int>(static_cast<long long>(blockIdx.x) * 32)"));
}

TEST_CASE("the CTA pair's kernel is generated with cta_group::2 throughout and a commit multicast to both CTAs", "[codegen][tcgen05]") {
  // A generator that knew only cta_group::1 would put the pair's m256 descriptor in a
  // tcgen05.mma.cta_group::1 and commit to one CTA: PTX that compiles and computes garbage. So
  // every tcgen05 wrapper of the pair kernel names cta_group::2, and none names ::1.
  auto const& e = registry::global().find("gemm_blackwell_2cta");
  const auto k = e.build(registry::resolve(e, {}));
  const auto g = nvrtc::generate(k);
  for (const char* ptx : {"tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;", "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;",
                          "tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;", "tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;",
                          "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;"})
    CHECK_THAT(g.source, Contains(ptx));
  CHECK_THAT(g.source, !Contains("cta_group::1") && !Contains("sc::tc_commit("));
  // The pair is cluster ranks 2p and 2p + 1 of a (2, 1, 1) cluster: the mask's two bits sit at
  // the even CTA's rank. Written out here, so that the [numbers] recomputation is not the only check.
  CHECK(occurrences(g.source, "const unsigned pair_rank = (sc::cluster_ctaid<2u>(0) & ~1u) + 2u * sc::cluster_ctaid<1u>(1) + 2u * sc::cluster_ctaid<1u>(2);") == 2);
  CHECK(occurrences(g.source, "static_cast<unsigned short>(0x3u << pair_rank));") == 2);  // empty[s]'s and done's
  // One m256n256k16 instruction per k16 step of the 64-wide K slice, issued by lane 0.
  CHECK_THAT(g.source, Contains("tcgen05_mma, 4 instruction(s) of cta_group::2 kind::f16 m256n256k16 bf16"));
  CHECK(occurrences(g.source, "sc::tc_mma_f16(") == 4);
  // Both CTAs allocate (warp 0 of each) and free (the epilogue's first warp of each): the same code.
  CHECK(occurrences(g.source, "sc::tmem_alloc(smem_base + ") == 1);
  CHECK(occurrences(g.source, "if (lane < 32) sc::tmem_dealloc(") == 1);
}

TEST_CASE("two pairs sharing A (gemm_blackwell_2cta mc=2): the stage's commit reaches all four CTAs, done only the pair", "[codegen][tcgen05]") {
  // Spelled out for the (2, 2) cluster: ranks 0, 1 are pair 0 and 2, 3 pair 1; A's loads
  // multicast between ranks x and x + 2.
  auto const& e = registry::global().find("gemm_blackwell_2cta");
  const auto g = nvrtc::generate(e.build(registry::resolve(e, {{"mc", 2}})));
  CHECK(occurrences(g.source, "const unsigned pair_rank = (sc::cluster_ctaid<2u>(0) & ~1u) + 0u * sc::cluster_ctaid<2u>(1) + 4u * sc::cluster_ctaid<1u>(2);") == 1);
  CHECK(occurrences(g.source, "static_cast<unsigned short>(0xfu << pair_rank));") == 1);  // empty[s]: both pairs
  CHECK(occurrences(g.source, "const unsigned pair_rank = (sc::cluster_ctaid<2u>(0) & ~1u) + 2u * sc::cluster_ctaid<2u>(1) + 4u * sc::cluster_ctaid<1u>(2);") == 1);
  CHECK(occurrences(g.source, "static_cast<unsigned short>(0x3u << pair_rank));") == 1);  // done: this pair
  CHECK(occurrences(g.source, "mask = static_cast<unsigned short>(0x0005u << rank_base);") == 1);  // A: ranks x and x + 2
  CHECK(occurrences(g.source, "sc::tma_load_multicast_pair(") == 1);  // completing on each destination's pair leader
  CHECK(occurrences(g.source, "sc::tma_load_pair(") == 1);  // B: each CTA its own half
  CHECK_THAT(g.source, Contains("cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;"));
}

TEST_CASE("the pair's loads complete on the even CTA's barrier: .cta_group::2 TMA through mapa, one arrival expecting both halves, no relay",
          "[codegen][tcgen05]") {
  auto const& e = registry::global().find("gemm_blackwell_2cta");
  const auto g = nvrtc::generate(e.build(registry::resolve(e, {})));
  CHECK_THAT(g.source, Contains("asm volatile(\"mapa.shared::cluster.u32 %0, %1, %2;\" : \"=r\"(lbar) : \"r\"(bar), \"r\"(leader));"));
  CHECK_THAT(g.source, Contains("cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"));
  CHECK(occurrences(g.source, "sc::tma_load_pair(") == 2);  // A and B
  // The leader is rank 2p of the (2, 1, 1) cluster; only it arrives, for its 16 KiB and its odd CTA's.
  CHECK(occurrences(g.source, "const unsigned leader = (sc::cluster_ctaid<2u>(0) + 2u * sc::cluster_ctaid<1u>(1) + 2u * sc::cluster_ctaid<1u>(2)) & ~1u;") == 2);
  CHECK(occurrences(g.source, "if ((sc::cluster_ctaid<2u>(0) & 1u) == 0u) sc::mbar_arrive_expect_tx(bar, 32768u);") == 2);
  // No relay of the loads between the CTAs: the one remote arrival is the epilogue's hand-back of
  // an accumulator (acc_empty, a cluster barrier of the pair), once per tile, at .cluster scope
  // (its TMEM reads must reach the other CTA's MMA issuer: ir::cluster_barrier_scope).
  CHECK(occurrences(g.source, "sc::mbar_arrive_remote<true>(") == 1);
  CHECK(occurrences(g.source, "sc::mbar_arrive_remote<false>(") == 0);
}

TEST_CASE("ops the backend cannot express yet are named, not miscompiled", "[codegen]") {
  // Tiled SMEM as an MMA operand: the descriptor of a tiled layout is not built yet. (Generic
  // accesses and TMA copies of tiled SMEM generate: the host test "tiled SMEM moves one TMA box
  // per tile" runs them.)
  auto k = lower(kernel<sm_90a>("tiled", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<bf16>(shape(64_c, 16_c), tiling(8_c, 8_c)),
                                smem<bf16>(shape(64_c, 16_c), tiling(8_c, 8_c)),
                                [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); }));
  REQUIRE_THROWS_AS(nvrtc::generate(k), nvrtc::unsupported);
  REQUIRE_THROWS_WITH(nvrtc::generate(k), Contains("kernel 'tiled', op #") && Contains("(wgmma)") && Contains("SMEM in tiling(8, 8)") &&
                                              Contains("not supported by the NVRTC backend yet"));
  // A TMA copy of part of a tiled slab: one box per tile needs the whole slab.
  auto part = lower(kernel<sm_90a>("tiled_part", grid(1), threads(1_c), gmem<f16>("x", shape(64_c, 128_c)),
                                   smem<f16>(shape(64_c, 128_c), tiling(32_c, 64_c), swizzle(128_c)),
                                   [](auto x, auto s) { return seq(store(s, 1.0f), commit_smem(), copy_smem_to_gmem(slice<0>(s, 0_c, 32_c), x.block(0_c, 0_c)),
                                                                   commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c)); }));
  REQUIRE_THROWS_WITH(nvrtc::generate(part), Contains("kernel 'tiled_part', op #") && Contains("view (32, 128)") && Contains("whole (64, 128) slab"));
}

TEST_CASE("an f16 accumulator, once unsupported, generates: packed registers and an .f16 D", "[codegen]") {
  // This kernel was the backend's example of what it could not express (f32 accumulators only).
  auto k = lower(kernel<sm_90a>("mma", grid(1), threads(1_c), smem<f16>(shape(64_c, 64_c), swizzle(128_c)),
                                smem<f16>(shape(64_c, 64_c), swizzle(128_c)), accumulator<f16>(shape(64_c, 64_c)),
                                [](auto a, auto b, auto acc) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); }));
  const auto g = nvrtc::generate(k);
  CHECK_THAT(g.source, Contains("unsigned acc2[16];") && Contains("wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16 {%0,") &&
                           Contains("\"+r\"(acc2[15])") && !Contains("(acc2[16])"));
}

TEST_CASE("swizzled SMEM is addressed through the swizzle function", "[codegen]") {
  auto k = lower(kernel<sm_90a>("swz", grid(1), threads(1_c), gmem<f16>("x", shape(64_c, 64_c)), smem<f16>(shape(64_c, 64_c), swizzle(128_c)),
                                barrier(arrivals(1_c)), [](auto x, auto buf, auto bar) {
                                  return seq(copy_gmem_to_smem(x.block(0_c, 0_c), buf, bar), barrier_wait(bar),
                                             store(buf, load(buf) * 2.0f), commit_smem(), copy_smem_to_gmem(buf, x.block(0_c, 0_c)),
                                             commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                                }));
  const auto g = nvrtc::generate(k);
  CHECK_THAT(g.source, Contains("sc::swz<128>("));
  REQUIRE(g.maps.size() == 1);
  CHECK(g.maps[0].swizzle == 128);
}

TEST_CASE("commit_smem fences GMEM too where TMA touches a parameter that ordinary stores write", "[codegen]") {
  // t is written with ordinary stores and read back by TMA: the SMEM-only fence would not order them.
  auto k = lower(kernel<sm_90a>("workspace", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 64_c)), gmem<f32>("t", shape(64_c, 64_c)),
                                smem<f32>(shape(64_c, 64_c)), barrier(arrivals(1_c)), [](auto x, auto t, auto buf, auto bar) {
                                  return seq(store(t.tile(shape(64_c, 64_c), 0_c, 0_c), load(x.tile(shape(64_c, 64_c), 0_c, 0_c)) + 1.0f),
                                             commit_smem(), copy_gmem_to_smem(t.block(0_c, 0_c), buf, bar), barrier_wait(bar),
                                             store(x.tile(shape(64_c, 64_c), 0_c, 0_c), load(buf)));
                                }));
  const auto g = nvrtc::generate(k);
  CHECK_THAT(g.source, Contains("sc::fence_proxy_async_all();  // op #2"));
  CHECK_THAT(g.source, Contains("asm volatile(\"fence.proxy.async;\""));
  // add_one writes GMEM only through TMA: the SMEM fence.
  auto const& e = registry::global().find("add_one");
  const auto plain = nvrtc::generate(e.build(registry::resolve(e, {})));
  CHECK_THAT(plain.source, Contains("sc::fence_proxy_async();"));
  CHECK_THAT(plain.source, !Contains("sc::fence_proxy_async_all();"));
}

// ---- issue 11: crashes and silent miscompiles ------------------------------------------------

TEST_CASE("a store to one fully indexed SMEM element generates a one-element store", "[codegen]") {
  // A rank-0 view used to crash the generator (shape.back() of an empty shape).
  auto k = lower(kernel<sm_90a>("one_element", grid(1), threads(1_c), gmem<f32>("x", shape(8_c, 32_c)), gmem<f32>("y", shape(8_c, 32_c)),
                                smem<f32>(shape(8_c, 32_c)), barrier(arrivals(1_c)), [](auto x, auto y, auto buf, auto bar) {
                                  return seq(copy_gmem_to_smem(x.block(0_c, 0_c), buf, bar), barrier_wait(bar),
                                             store(buf[3_c][5_c], load(buf[1_c][2_c]) * 2.0f + load(buf[3_c][5_c])), commit_smem(),
                                             copy_smem_to_gmem(buf, y.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                                }));
  const auto g = nvrtc::generate(k);
  CHECK_THAT(g.source, Contains("for (int i0 = lane * 1; i0 < 1; i0 += 128) {  // op #3: store, 1 element(s) per thread"));
  // Element (3, 5) of a (8, 32) f32 array: byte 3 * 128 + 5 * 4.
  CHECK_THAT(g.source, Contains("((0LL * 8 + 3LL) * 32 + 5LL) * 4"));
}

TEST_CASE("u32 tiles multiply in unsigned 32-bit arithmetic, not in signed 64 bits", "[codegen]") {
  auto k = lower(kernel<sm_90a>("u32_mul", grid(1), threads(1_c), gmem<u32>("x", shape(256_c)), gmem<u32>("y", shape(256_c)),
                                [](auto x, auto y) {
                                  auto t = [&](auto p) { return p.tile(shape(256_c), 0_c); };
                                  return store(t(y), load(t(x)) * load(t(x)));
                                }));
  const auto g = nvrtc::generate(k);
  CHECK_THAT(g.source, Contains("(static_cast<unsigned>(static_cast<long long>("));
  CHECK_THAT(g.source, !Contains("static_cast<long long>(reinterpret_cast<const unsigned*>(&raw0)[u]) * static_cast<long long>("));
}

TEST_CASE("GMEM parameters of rank 6 generate plain loads and stores", "[codegen]") {
  auto k = lower(kernel<sm_90a>("rank6", grid(2), threads(1_c), gmem<f32>("x", shape(4, 2, 2, 2, 4, 32)), gmem<f32>("y", shape(4, 2, 2, 2, 4, 32)),
                                [](auto x, auto y) {
                                  auto t = [&](auto p) { return p.tile(shape(2_c, 2_c, 2_c, 2_c, 4_c, 32_c), program_id(), 0, 0, 0, 0, 0); };
                                  return store(t(y), load(t(x)) * 3.0f);
                                }));
  const auto g = nvrtc::generate(k);
  CHECK(g.maps.empty());
  CHECK_THAT(g.source, Contains("p_y[") && Contains("p_x["));
}

namespace {
// A kernel called `name` with parameters `a` and `b` that copies, waits and stores.
ir::Kernel named(std::string const& name, std::string const& a, std::string const& b) {
  return lower(kernel<sm_90a>(name, grid(1), threads(1_c), gmem<f32>(a, shape(64_c, 32_c)), gmem<f32>(b, shape(64_c, 32_c)),
                              smem<f32>(shape(64_c, 32_c)), barrier(arrivals(1_c)), [](auto x, auto y, auto buf, auto bar) {
                                return seq(copy_gmem_to_smem(x.block(0_c, 0_c), buf, bar), barrier_wait(bar), store(buf, load(buf) + 1.0f),
                                           commit_smem(), copy_smem_to_gmem(buf, y.block(0_c, 0_c)), commit_smem_to_gmem_group(),
                                           wait_smem_to_gmem(0_c));
                              }));
}
}  // namespace

// Names the generated code or CUDA declares at global scope or inside the kernel.
const std::vector<std::string> clashing_names = {"sc", "smem", "smem_base", "wg", "lane", "parity", "tmap0", "p_x", "expf", "min", "threadIdx", "main", "int"};

TEST_CASE("a kernel may be called anything that is a C identifier: its symbol is prefixed", "[codegen]") {
  for (auto const& name : clashing_names) {
    INFO("kernel " << name);
    const auto g = nvrtc::generate(named(name, "sc", "smem"));
    CHECK(g.entry == "stagecraft_" + name);
    CHECK_THAT(g.source, Contains("void __launch_bounds__(128) stagecraft_" + name + "(const __grid_constant__ sc::tmap_t tmap0"));
    CHECK_THAT(g.source, Contains("float* __restrict__ p_sc, float* __restrict__ p_smem)"));
  }
}

TEST_CASE("hand-built TMA views that start inside a swizzle pattern are refused, not miscompiled", "[codegen]") {
  // The front end accepts stage 0 of 4-row stages of a 128-byte swizzled array (it starts on the
  // allocation's 1024-byte boundary) and rejects any other; IR built by hand must not slip past.
  auto k = lower(kernel<sm_90a>("mid_pattern", grid(1), threads(1_c), gmem<f16>("x", shape(64_c, 64_c)),
                                smem<f16>(shape(2_c, 4_c, 64_c), swizzle(128_c)), barrier(arrivals(1_c)), [](auto x, auto buf, auto bar) {
                                  return seq(copy_gmem_to_smem(x.block(program_id(), program_id()), buf[0_c], bar), barrier_wait(bar));
                                }));
  CHECK_NOTHROW(nvrtc::generate(k));
  auto const& copy = k.stmts[k.stmts[0].body[0]];
  REQUIRE(copy.op == ir::StmtOp::copy_gmem_to_smem);
  k.exprs.push_back({ir::ExprOp::constant, 1});
  k.refs[copy.refs[1]].index[0] = static_cast<ir::ExprId>(k.exprs.size() - 1);  // stage 1: 512 bytes in
  REQUIRE_THROWS_WITH(nvrtc::generate(k), Contains("op #1 (copy_gmem_to_smem)") && Contains("known to start only on 512-byte boundaries") &&
                                              Contains("TMA needs 1024-byte aligned SMEM addresses with a 128-byte swizzle"));
}

TEST_CASE("tile math calls the prelude's copy of stagecraft/ir/math.hpp, never CUDA's expf", "[codegen][tile_ops]") {
  const auto g = nvrtc::generate(testing::tile_ops::math_kernel());
  // The prelude defines them (from the macro the interpreter instantiates) ...
  for (const char* def : {"float math_exp(float x)", "float math_exp2(float x)", "float math_log(float x)", "float math_rsqrt(float x)",
                          "float math_tanh(float x)", "float math_abs(float x)"})
    CHECK_THAT(g.source, Contains(def));
  // ... and the kernel body calls them.
  const auto body = g.source.substr(g.source.find("// ---- end of prelude ----"));
  for (const char* call : {"sc::math_exp(", "sc::math_exp2(", "sc::math_log(", "sc::math_rsqrt(", "sc::math_tanh(", "sc::math_abs("})
    CHECK_THAT(body, Contains(call));
  for (const char* cuda : {"expf(", "exp2f(", "logf(", "rsqrtf(", "tanhf("}) CHECK_THAT(body, !Contains(cuda));
}

TEST_CASE("reductions fold in the owning thread with no exchange", "[codegen][tile_ops]") {
  const auto g = nvrtc::generate(testing::tile_ops::reduce_kernel());
  const auto body = g.source.substr(g.source.find("// ---- end of prelude ----"));
  CHECK_THAT(body, Contains("for (long long rk0 = 0; rk0 < 32LL; ++rk0)"));  // a row of 32
  CHECK_THAT(body, Contains("for (long long rk0 = 0; rk0 < 64LL; ++rk0)"));  // a column of 64
  CHECK_THAT(body, !Contains("__shfl") && !Contains("bar.sync 1"));
}

TEST_CASE("a row reduction of a wgmma accumulator is a fold of the thread's registers and two quad shuffles, a row broadcast moves nothing",
          "[codegen][tile_ops][row_state]") {
  // S - rowmax(S) on a wgmma accumulator, the softmax step (refused before row reductions of
  // accumulators were generated: "reads accumulator a0 at other elements than its own").
  const auto acc = lower(kernel<sm_90a>("acc_rowmax", grid(1), threads(1_c), gmem<f32>("y", shape(64_c, 64_c)), accumulator<f32>(shape(64_c, 64_c)),
                                        [](auto y, auto a) {
                                          auto s = load(a);
                                          return seq(store(a, 0.0f), store(y.tile(shape(64_c, 64_c), 0_c, 0_c), s - broadcast<1>(max<1>(s), s)));
                                        }));
  const auto body = [](nvrtc::generated const& g) { return g.source.substr(g.source.find("// ---- end of prelude ----")); };
  const auto b = body(nvrtc::generate(acc));
  CHECK_THAT(b, Contains("__shfl_xor_sync(0xffffffffu, r0, 1)") && Contains("__shfl_xor_sync(0xffffffffu, r0, 2)"));
  CHECK_THAT(b, !Contains("rk0") && !Contains("bar.sync"));  // no index-order fold, no SMEM exchange
  // 64 columns: 16 registers of the row per thread (4j + 2h + b), the last one j = 7, b = 1;
  // the row max is folded once per row of the thread (h), before the walk of its columns, which
  // reads it from the per-row register (hoist_rows), not once per element.
  CHECK_THAT(b, Contains("acc0[(mb) * 32 + (29 + 2 * (h))]") && Contains("for (int h = 0; h < 2; ++h) row0_[h] = "));
  CHECK_THAT(b, Contains("- row0_[i / 2 % 2]") && !Contains("2 * (i / 2 % 2))]"));

  // The online-softmax state: row vectors are 2 registers per m64 block, read at the walk's row.
  const auto g = nvrtc::generate(testing::row_state::online_softmax_kernel());
  const auto src = body(g);
  CHECK_THAT(src, Contains("float acc2[2];") && Contains("float acc4[2];") && Contains("float acc0[32];"));
  // m_new (acc3) broadcast along O's rows is read once per row into row registers, which the
  // walk of O's columns reads.
  CHECK_THAT(src, Contains("acc4[(mb) * 2 + (h)]") && Contains("acc3[(mb) * 2 + (h)]") && Contains("row0_[i / 2 % 2]"));
  CHECK_THAT(src, !Contains("acc3[(mb) * 2 + (i / 2 % 2)]"));
  CHECK_THAT(src, Contains("if (sc::accumulator_element(lane, 0).col == 0)"));  // one lane of a quad stores a row
  CHECK_THAT(src, !Contains("bar.sync") && !Contains("rk0"));

  // P = exp2(S - m) as wgmma's register A: m is read at A's row, no data moves for it either.
  const auto att = body(nvrtc::generate(testing::row_state::attention_block_kernel()));
  CHECK_THAT(att, Contains("__shfl_xor_sync(0xffffffffu, r0, 2)") && Contains("acc7[(0) * 2 + (1)]") && Contains("{%32, %33, %34, %35}"));
}

TEST_CASE("reads of an accumulator that need other layouts than the D fragment's rows are refused by name", "[codegen][tile_ops][row_state]") {
  auto s = shape(64_c, 64_c);
  // A column reduction crosses all 128 threads (not generated); so does a column broadcast.
  const auto col = lower(kernel<sm_90a>("acc_colsum", grid(1), threads(1_c), gmem<f32>("y", shape(64_c)), accumulator<f32>(s),
                                        [](auto y, auto a) { return seq(store(a, 0.0f), store(y.tile(shape(64_c), 0_c), sum<0>(load(a)))); }));
  REQUIRE_THROWS_WITH(nvrtc::generate(col), Contains("kernel 'acc_colsum'") && Contains("(sum) reads accumulator a0 at other elements than its own") &&
                                                Contains("not along the rows of the D fragment"));
  const auto colb = lower(kernel<sm_90a>("acc_colbcast", grid(1), threads(1_c), gmem<f32>("y", s), accumulator<f32>(s), accumulator<f32>(shape(64_c)),
                                         [s](auto y, auto a, auto r) {
                                           return seq(store(a, 0.0f), store(r, 1.0f), store(y.tile(s, 0_c, 0_c), load(a) + broadcast<0>(load(r), s)));
                                         }));
  REQUIRE_THROWS_WITH(nvrtc::generate(colb), Contains("kernel 'acc_colbcast'") && Contains("(broadcast) reads accumulator a1 at other elements than its own"));
  // A row vector read where no fragment row is being walked (a plain (64, 64) SMEM store is
  // not: it has no accumulator of that shape to walk) is a named refusal too.
  const auto lone = lower(kernel<sm_90a>("acc_rowvec_f16", grid(1), threads(1_c), accumulator<f16>(shape(64_c)),
                                         [](auto r) { return store(r, 0.0f); }));
  REQUIRE_THROWS_WITH(nvrtc::generate(lone), Contains("kernel 'acc_rowvec_f16'") && Contains("f32 row vectors"));
}

namespace {
std::string kernel_body(ir::Kernel const& k) {
  const auto g = nvrtc::generate(k);
  return g.source.substr(g.source.find("// ---- end of prelude ----"));
}
}  // namespace

TEST_CASE("layouts: the transpose example is the one layout conversion, in the conflict-free order, element-wise examples have none",
          "[codegen][tile_ops]") {
  auto body = [](const char* name) {
    auto const& e = registry::global().find(name);
    return kernel_body(e.build(registry::resolve(e, {})));
  };
  // One store, written in the transpose32 order and marked as the conversion it is.
  const auto t = body("transpose");
  CHECK(occurrences(t, "layout conversion") == 1);
  CHECK(occurrences(t, "sc::transpose32_element(lane, u)") == 1);
  // The tiles of softmax_rows and layernorm_rows are all row-major over the warpgroup: each
  // thread computes the elements it stores, reading operands where they are; nothing is converted.
  for (const char* name : {"softmax_rows", "layernorm_rows"}) {
    INFO(name);
    const auto b = body(name);
    CHECK(occurrences(b, "layout conversion") == 0);
    CHECK_THAT(b, !Contains("__shfl") && !Contains("transpose32"));
  }
}

TEST_CASE("views read their operand at the element they name, only a swizzled 32 x 32 SMEM transpose takes the transpose32 order",
          "[codegen][tile_ops]") {
  const auto b = kernel_body(testing::tile_ops::view_kernel());
  // GMEM operands: the generic row-major order, the view as index arithmetic of the operand read.
  CHECK_THAT(b, !Contains("transpose32") && !Contains("layout conversion"));
  // transpose of (64, 32): result axis 1 (64 long) walks the operand's rows, 32 elements apart.
  CHECK_THAT(b, Contains("% 64LL) * 32LL"));
  // A transpose between plain (unswizzled) SMEM tiles keeps the generic order: its banks are
  // not the ones the order was counted for.
  auto make = [](auto... sw) {
    return lower(kernel<sm_90a>("plain_transpose", grid(1), threads(1_c), gmem<f32>("x", shape(32_c, 32_c)), smem<f32>(shape(32_c, 32_c), sw...),
                                smem<f32>(shape(32_c, 32_c), sw...), barrier(arrivals(1_c)), [](auto x, auto a, auto o, auto full) {
                                  return seq(copy_gmem_to_smem(x.block(0_c, 0_c), a, full), barrier_wait(full), store(o, transpose(load(a))));
                                }));
  };
  CHECK_THAT(kernel_body(make()), !Contains("transpose32"));
  CHECK_THAT(kernel_body(make(swizzle(128_c))), Contains("sc::transpose32_element(lane, u)"));
}

TEST_CASE("cluster barriers arrive and wait at the scope ir::cluster_barrier_scope picks, and the source says why", "[codegen][scopes]") {
  auto source = [](std::string const& name, param_values set, nvrtc::codegen_options o = {}) {
    auto const& e = registry::global().find(name);
    return nvrtc::generate(e.build(registry::resolve(e, set)), o).source;
  };
  SECTION("gemm_hopper: the consumers' releases of a multicast stage are .release.cta, the producer's waits .acquire.cta") {
    for (unsigned watchdog : {0u, 2000u}) {
      const auto s = source("gemm_hopper", {{"cluster", 2}}, {.watchdog_ms = watchdog});
      CHECK(occurrences(s, "sc::mbar_arrive_remote<false>(") > 0);
      CHECK(occurrences(s, "sc::mbar_arrive_remote<true>(") == 0);
      CHECK(occurrences(s, "sc::mbar_wait_cluster(") == 0);
      CHECK(occurrences(s, "sc::mbar_wait_watchdog<true>(") == 0);
      CHECK_THAT(s, Contains(".cta scope, as its arrivals order only asynchronous accesses"));
    }
  }
  SECTION("splitk_cluster: partials published with generic stores need .release.cluster and .acquire.cluster") {
    const auto s = source("splitk_cluster", {});
    CHECK(occurrences(s, "sc::mbar_arrive_remote<true>(") > 0);
    CHECK(occurrences(s, "sc::mbar_arrive_remote<false>(") == 0);
    CHECK(occurrences(s, "sc::mbar_wait_cluster(") > 0);
    CHECK_THAT(s, Contains("summed: .cluster scope, as op #") && Contains("GMEM 'partials'"));
  }
}

// Issue 27, rough edge 1: a Blackwell epilogue that reads TMEM into registers and stores it
// straight to GMEM (no SMEM staging, no TMA store), as a user wrote it. The interpreter runs it;
// the code generator must generate it too, or say which op and line it refuses.
namespace {
ir::Kernel tmem_to_gmem_epilogue() {
  return lower(kernel<sm_100a>(
      "tmem_to_gmem", grid(1), threads(2_c),
      gmem<bf16>("a", shape(128_c, 64_c)), gmem<bf16>("b", shape(64_c, 64_c)), gmem<f32>("c", shape(128_c, 64_c)),
      smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
      barrier(arrivals(2_c)), barrier(arrivals(1_c), orders_tensor_core), tmem<f32>(shape(128_c, 64_c)),
      [](auto a, auto b, auto c, auto as, auto bs, auto full, auto done, auto d) {
        auto mma = seq(copy_gmem_to_smem(a.block(0_c, 0_c), as, full), copy_gmem_to_smem(b.block(0_c, 0_c), bs, full), barrier_wait(full),
                       tcgen05_mma(d, as, transpose(bs), false), tcgen05_commit_arrive(done));
        auto epilogue = seq(barrier_wait(done), store(c.tile(shape(128_c, 64_c), 0_c, 0_c), async_load_tmem(d)), tmem_dealloc(d));
        return if_(thread_id() == 0_c, mma, epilogue);
      }));
}
}  // namespace

TEST_CASE("a Blackwell epilogue that stores TMEM straight to GMEM is generated", "[codegen][tcgen05]") {
  const auto k = tmem_to_gmem_epilogue();
  nvrtc::generated g;
  REQUIRE_NOTHROW(g = nvrtc::generate(k));
  CHECK(g.source.find("tcgen05.ld") != std::string::npos);
}

TEST_CASE("a masked tile's loads and stores are predicated element by element on the array's extents", "[codegen][masked]") {
  auto const& e = registry::global().find("softmax_masked");
  const auto k = e.build(registry::resolve(e, {{"M", 37}, {"N", 100}}));
  const auto src = nvrtc::generate(k).source;
  // The load: the row's and the column's coordinate below the extents, -inf outside (the fill).
  CHECK_THAT(src, Contains("< 100LL) && (") && Contains("< 37LL)) ? static_cast<float>(p_x[") && Contains(": __int_as_float(0xff800000))"));
  // The store: under the same predicate, one element at a time.
  CHECK_THAT(src, Contains("< 37LL)) p_y["));
  // An exact tile has no predicate.
  auto const& rows = registry::global().find("softmax_rows");
  CHECK_THAT(nvrtc::generate(rows.build(registry::resolve(rows, {}))).source, !Contains("LL) ? static_cast<float>(p_"));
  // Nor has a masked tile that divides its array ((16, 256) tiles of a (32, 256) array): it is
  // wholly inside or wholly outside, and the latter is the interpreter's index-out-of-range.
  const auto whole = nvrtc::generate(e.build(registry::resolve(e, {{"M", 32}, {"N", 256}}))).source;
  CHECK_THAT(whole, !Contains("LL) ? static_cast<float>(p_x[") && !Contains("LL)) p_y[") && Contains("p_x[") && Contains("p_y["));
}

// The text of op #`op`'s code up to the next op's (the line holding "op #<op>" and what follows).
static std::string op_text(std::string const& source, int op) {
  const auto at = source.find("op #" + std::to_string(op) + ":");
  REQUIRE(at != std::string::npos);
  const auto begin = source.rfind('\n', at) + 1;
  const auto next = source.find("op #" + std::to_string(op + 1), at);
  return source.substr(begin, (next == std::string::npos ? source.size() : source.rfind('\n', next)) - begin);
}

TEST_CASE("stores that touch only their own lane's row-vector element or TMEM row meet at no barrier between them", "[codegen][tcgen05]") {
  // op #1 and #2 are lane-private: thread `lane` writes m[lane], then reads m[lane] for l[lane].
  // op #3 reads every lane's m (a row of the broadcast along rows), op #5 follows a store of a
  // (128, 128) tile spread over the lanes otherwise: both meet first. op #6 reads a (128, 128)
  // SMEM tile, whose row `lane` other lanes wrote: it meets too.
  const auto tile = shape(128_c, 128_c);
  auto k = lower(kernel<sm_90a>("own_rows", grid(1), threads(1_c), smem<f32>("m", shape(128_c)), smem<f32>("l", shape(128_c)), smem<f32>("t", tile),
                                [=](auto m, auto l, auto t) {
                                  return seq(store(m, 1.0f), store(l, load(m) * 2.0f), store(l, sum<1>(broadcast<0>(load(m), tile))),
                                             store(t, 3.0f), store(m, 4.0f), store(l, sum<1>(load(t))));
                                }));
  const auto g = nvrtc::generate(k);
  const std::string meet = "sc::wg_sync(wg);";
  CHECK_THAT(op_text(g.source, 1), !Contains(meet));
  CHECK_THAT(op_text(g.source, 2), !Contains(meet));
  CHECK_THAT(op_text(g.source, 3), Contains(meet + "  // op #3"));
  CHECK_THAT(op_text(g.source, 4), Contains(meet + "  // op #4"));
  CHECK_THAT(op_text(g.source, 5), Contains(meet + "  // op #5"));
  CHECK_THAT(op_text(g.source, 6), Contains(meet + "  // op #6"));
}

TEST_CASE("attention_blackwell's softmax meets at its warpgroup's barrier once per key block, before its arrival", "[codegen][tcgen05]") {
  // m', alpha, S := exp2(...), l, P and m are each thread's own row (TMEM lane, row-vector
  // element): no barrier between them; p_full's arrival still waits for all 128 threads' stores.
  auto const& e = registry::global().find("attention_blackwell");
  for (const std::int64_t tiles : {1, 2}) {
    INFO("tiles=" << tiles);
    const auto g = nvrtc::generate(e.build(registry::resolve(e, {{"tiles", tiles}})));
    const auto first = g.source.find(": row statement into m_new (128)");
    REQUIRE(first != std::string::npos);
    const auto arrive = g.source.find(": barrier_arrive on ", first);
    REQUIRE(arrive != std::string::npos);
    const std::string block = g.source.substr(first, arrive - first);
    CHECK(occurrences(block, "sc::wg_sync(wg);") == 0);
    // S is read twice per block: for the row max, then once for l and P together, whose
    // exponential is computed once per element (two per pair of columns), and P is the one write.
    CHECK_THAT(block, Contains("2 row statements in one pass over the row"));
    CHECK(occurrences(block, "sc::tmem_ld_32x32b_x32(") == 2);
    CHECK(occurrences(block, "sc::tmem_st_32x32b_x") == 1);
    CHECK(occurrences(block, "exp2(") == 3);  // alpha's, and E's at columns 2u and 2u + 1
    CHECK_THAT(g.source.substr(arrive, g.source.find("sc::mbar_arrive(", arrive) - arrive), Contains("sc::wg_sync(wg);"));
  }
}

TEST_CASE("consecutive row statements over the same TMEM tiles run as one pass over the row, and a run stops at what an earlier statement wrote",
          "[codegen][tcgen05]") {
  const auto g = nvrtc::generate(testing::tmem_rows::kernel());
  // #2 and #3 each alone (#3 reads the a #2 writes), #4 alone from #3 (it reads the t #3 writes)
  CHECK_THAT(g.source, Contains("op #2: row statement into a (128)") && Contains("op #3: store_tmem into t (128, 64)"));
  CHECK_THAT(g.source, Contains("ops #4-#6: 3 row statements in one pass over the row"));
  const auto pass = g.source.find("ops #4-#6");
  const std::string text = g.source.substr(pass, g.source.find("op #7", pass) - pass);
  CHECK(occurrences(text, "sc::tmem_ld_32x32b_x32(") == 1);  // t, once per 32 columns, for all three
  CHECK(occurrences(text, "sc::tmem_st_32x32b_x32(") == 1);  // u
  CHECK(occurrences(text, "exp2(") == 2);                    // exp2(t), once per element of the pair
  // the row vectors after the pass, in statement order (#6's a reads the a #2 wrote)
  CHECK(text.find("// op #4\n") < text.find("// op #6\n"));
  CHECK_THAT(text, !Contains("sc::fma2(") && !Contains("sc::add2("));  // exact math: one element at a time
}

TEST_CASE("in fast math a row pass computes its f32 arithmetic on column pairs: FFMA2, FADD2, FMUL2, and a row sum in two halves",
          "[codegen][tcgen05][fastmath]") {
  const auto g = nvrtc::generate(testing::tmem_rows::kernel(), {.math = ir::math_mode::fast});
  const auto pass = g.source.find("ops #4-#6");
  REQUIRE(pass != std::string::npos);
  const std::string text = g.source.substr(pass, g.source.find("op #7", pass) - pass);
  // t - 1/4 and + 1 (add2), e * 2 - t and 1 - t / 2 (fma2, the product either operand), (...) / 2 (mul2)
  CHECK(occurrences(text, "sc::add2(") == 2 + 1);  // and b's sum, the even and odd columns' halves
  CHECK(occurrences(text, "sc::fma2(") == 2);
  CHECK(occurrences(text, "sc::mul2(") == 1);
  CHECK_THAT(text, Contains("(rowred") && Contains("_0 + rowred"));
  // attention_blackwell's E = exp2(S c - m'): one FFMA2 per pair of columns, l's sum by FADD2
  auto const& e = registry::global().find("attention_blackwell");
  const auto a = nvrtc::generate(e.build(registry::resolve(e, {{"tiles", 1}})), {.math = ir::math_mode::fast});
  const auto at = a.source.find("2 row statements in one pass over the row");
  REQUIRE(at != std::string::npos);
  const std::string softmax = a.source.substr(at, a.source.find(": barrier_arrive on ", at) - at);
  CHECK(occurrences(softmax, "sc::fma2(") == 1);
  CHECK(occurrences(softmax, "sc::add2(") == 1);
}
