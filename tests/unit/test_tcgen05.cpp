// ir::tcgen05: the Blackwell MMA description both backends share, checked against the PTX ISA's
// descriptor tables (values worked out by hand from them) and against itself (an sm_100 SMEM
// descriptor must denote exactly the bytes where TMA and stores put each element).
#include <catch2/catch.hpp>

#include <random>
#include <type_traits>
#include <set>
#include <string>

#include <stagecraft/ir/mx_formats.hpp>
#include <stagecraft/ir/tcgen05.hpp>
#include <stagecraft/stagecraft.hpp>

using namespace stagecraft;
namespace tc = stagecraft::ir::tcgen05;
namespace wg = stagecraft::ir::wgmma;

TEST_CASE("tcgen05 instruction descriptor: fields at the PTX ISA's bit positions", "[tcgen05][unit]") {
  // kind::f16, bf16 x bf16 -> f32, both K-major, M = 128, N = 256:
  // D F32 (1 << 4) | A BF16 (1 << 7) | B BF16 (1 << 10) | N >> 3 = 32 at 17 | M >> 4 = 8 at 24.
  tc::instr_desc d;
  d.d_format = tc::d_format(ir::DType::f32);
  d.a_format = d.b_format = tc::ab_format(tc::Kind::f16, ir::DType::bf16);
  d.m = 128;
  d.n = 256;
  CHECK(tc::encode(d) == 0x08400490u);
  // kind::tf32, B N-major (transpose B, bit 16), M = 128, N = 64: TF32 = 2 for A (7) and B (10).
  tc::instr_desc t;
  t.a_format = t.b_format = tc::ab_format(tc::Kind::tf32, ir::DType::f32);
  t.b_major = wg::Major::mn;
  t.m = 128;
  t.n = 64;
  CHECK(tc::encode(t) == 0x08110910u);
  // f16 inputs are format 0, and A M-major is bit 15.
  tc::instr_desc h = d;
  h.a_format = h.b_format = tc::ab_format(tc::Kind::f16, ir::DType::f16);
  h.a_major = wg::Major::mn;
  CHECK(tc::encode(h) == 0x08408010u);
  CHECK((tc::encode(d) & tc::reserved_bits) == 0);
}

TEST_CASE("tcgen05 instruction descriptor: decode inverts encode for every field", "[tcgen05][unit]") {
  std::mt19937 rng(20261201);
  for (int i = 0; i < 2000; ++i) {
    tc::instr_desc d;
    d.sparsity_selector = static_cast<int>(rng() % 4);
    d.sparse = rng() % 2;
    d.saturate = rng() % 2;
    d.d_format = static_cast<int>(rng() % 4);
    d.a_format = static_cast<int>(rng() % 8);
    d.b_format = static_cast<int>(rng() % 8);
    d.negate_a = rng() % 2;
    d.negate_b = rng() % 2;
    d.a_major = rng() % 2 ? wg::Major::mn : wg::Major::k;
    d.b_major = rng() % 2 ? wg::Major::mn : wg::Major::k;
    d.n = static_cast<int>(rng() % 64) * 8;
    d.m = static_cast<int>(rng() % 32) * 16;
    d.max_shift = static_cast<int>(rng() % 4);
    const auto bits = tc::encode(d);
    CHECK((bits & tc::reserved_bits) == 0);
    const auto e = tc::decode(bits);
    CHECK(e.sparsity_selector == d.sparsity_selector);
    CHECK(e.sparse == d.sparse);
    CHECK(e.saturate == d.saturate);
    CHECK(e.d_format == d.d_format);
    CHECK(e.a_format == d.a_format);
    CHECK(e.b_format == d.b_format);
    CHECK(e.negate_a == d.negate_a);
    CHECK(e.negate_b == d.negate_b);
    CHECK(e.a_major == d.a_major);
    CHECK(e.b_major == d.b_major);
    CHECK(e.n == d.n);
    CHECK(e.m == d.m);
    CHECK(e.max_shift == d.max_shift);
    CHECK(tc::encode(e) == bits);
  }
}

TEST_CASE("tcgen05 format codes: the kinds' tables, and nothing else", "[tcgen05][unit]") {
  ir::DType t{};
  CHECK((tc::ab_type(tc::Kind::f16, 0, t) && t == ir::DType::f16));
  CHECK((tc::ab_type(tc::Kind::f16, 1, t) && t == ir::DType::bf16));
  CHECK((tc::ab_type(tc::Kind::tf32, 2, t) && t == ir::DType::f32));
  CHECK_FALSE(tc::ab_type(tc::Kind::f16, 2, t));
  CHECK_FALSE(tc::ab_type(tc::Kind::tf32, 1, t));
  CHECK(tc::ab_format(tc::Kind::f16, ir::DType::f32) == -1);
  CHECK(tc::d_format(ir::DType::f16) == 0);
  CHECK(tc::d_format(ir::DType::i32) == 2);  // S32, kind::i8's
  CHECK(tc::d_format(ir::DType::bf16) == -1);
}

TEST_CASE("tcgen05 SMEM descriptor: wgmma's fields plus the sm_100 version, swizzle codes 2/4/6 at 61-63", "[tcgen05][unit]") {
  // A (128, 64) bf16 K-major operand, 128-byte swizzle, at shared address 0x400:
  // start 0x40 | LBO 1 at 16 | SBO 1024 >> 4 = 64 at 32 | version 1 at 46 | 128 B = 2 at 61.
  const auto l = wg::describe(16, 128, 64, 0, 0, 0, 128, wg::Major::k);
  REQUIRE(l.error == wg::LayoutError::none);
  CHECK(tc::encode_smem(0x400, l) == 0x4000404000010040ull);
  for (int sw : {0, 32, 64, 128}) {
    wg::descriptor d{0x1230, 0x80, 0x400, 0, sw};
    const auto bits = tc::encode_smem(d);
    const int mode = static_cast<int>((bits >> 61) & 7);
    CHECK(mode == (sw == 128 ? 2 : sw == 64 ? 4 : sw == 32 ? 6 : 0));
    const auto back = tc::decode_smem(bits);
    CHECK(back.error == tc::SmemDescError::none);
    CHECK(back.d.start == d.start);
    CHECK(back.d.lbo == d.lbo);
    CHECK(back.d.sbo == d.sbo);
    CHECK(back.d.swizzle == sw);
  }
}

TEST_CASE("tcgen05 SMEM descriptor: malformed bits are named", "[tcgen05][unit]") {
  const wg::descriptor d{0x400, 16, 1024, 0, 128};
  CHECK(tc::decode_smem(wg::encode(d)).error == tc::SmemDescError::version);  // a Hopper descriptor
  CHECK(tc::decode_smem(tc::encode_smem(d) | (1ull << 52)).error == tc::SmemDescError::lbo_absolute);
  CHECK(tc::decode_smem(tc::encode_smem(d) | (1ull << 61)).error == tc::SmemDescError::swizzle_mode);  // 128 B with 32 B atoms
  CHECK(tc::decode_smem(tc::encode_smem(d) | (1ull << 55)).error == tc::SmemDescError::reserved);
  CHECK(std::string(tc::smem_desc_error_text(tc::SmemDescError::version)).find("0b001") != std::string::npos);
}

TEST_CASE("tcgen05 SMEM descriptor: 128 rows of every swizzle denote the stored bytes", "[tcgen05][unit]") {
  // One instruction reads all 128 rows of A: element (m, k) through the descriptor of K step ks
  // must be the stored element (m, 16 ks + k) at the layout's (swizzled) offset.
  for (int sw : {32, 64, 128}) {
    const std::int64_t cols = sw / 2;  // one swizzle atom of bf16 along K
    const auto l = wg::describe(16, 128, cols, 0, 0, 0, sw, wg::Major::k);
    REQUIRE(l.error == wg::LayoutError::none);
    const std::uint32_t base = 2048;
    for (std::int64_t ks = 0; ks < cols / 16; ++ks) {
      const auto d = tc::decode_smem(tc::encode_smem(base + static_cast<std::uint32_t>(l.start(0, ks * 16)), l));
      REQUIRE(d.error == tc::SmemDescError::none);
      for (std::int64_t m = 0; m < 128; ++m)
        for (std::int64_t k = 0; k < 16; ++k) {
          const auto want = ir::swizzle_address(base + static_cast<std::uint32_t>(l.offset(m, ks * 16 + k)), sw);
          REQUIRE(wg::element_address(d.d, wg::Major::k, 16, m, k) == want);
        }
    }
  }
}

TEST_CASE("tcgen05.ld 32x32b: warp w reads lanes 32w..32w+31, register r is column r", "[tcgen05][unit]") {
  // The PTX ISA's 32x32b data-path figure: one lane per thread, consecutive columns per register.
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < 8; ++r) {
      const auto c = tc::ld_32x32b(t, r);
      CHECK(c.lane / 32 == t / 32);  // a warp stays in its sub-partition
      CHECK(c.lane == t);
      CHECK(c.column == r);
      seen.insert({c.lane, c.column});
    }
  CHECK(seen.size() == 128 * 8);
  CHECK(tc::tmem_lane(tc::tmem_address(96, 300)) == 96);
  CHECK(tc::tmem_column(tc::tmem_address(96, 300)) == 300);
  CHECK(tc::tmem_address(1, 2) == 0x10002u);
}

namespace {
template <long long M, bool TransposeB>
ir::Kernel mma_kernel() {
  return lower(kernel<sm_100a>("k", grid(1), threads(1_c), tmem<f32>(shape(int_c<M>, 128_c)), smem<bf16>(shape(int_c<M>, 64_c), swizzle(128_c)),
                               smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), barrier(arrivals(1_c), orders_tensor_core),
                               [](auto d, auto a, auto b, auto done) {
                                 if constexpr (TransposeB) return seq(tcgen05_mma(d, a, transpose(b), done, false), barrier_wait(done), tmem_dealloc(d));
                                 else return seq(tcgen05_mma(d, a, b, done, false), barrier_wait(done), tmem_dealloc(d));
                               }));
}
}  // namespace

TEST_CASE("tcgen05 plan: the instruction descriptor derived from the types", "[tcgen05][unit]") {
  const auto k = mma_kernel<128, true>();
  const auto& s = *std::find_if(k.stmts.begin(), k.stmts.end(), [](auto const& x) { return x.op == ir::StmtOp::tcgen05_mma; });
  const auto p = tc::plan_of(k, s);
  CHECK(p.kind == tc::Kind::f16);
  CHECK(p.m == 128);
  CHECK(p.n == 128);
  CHECK(p.k == 64);
  CHECK(p.k_steps() == 4);
  CHECK(p.a.major == wg::Major::k);
  CHECK(p.b.major == wg::Major::k);
  // bf16 -> f32, K-major, M = 128 (8 at 24), N = 128 (16 at 17)
  CHECK(p.idesc == 0x08200490u);
  CHECK(p.b_start(1) == 32);  // the next 16 bf16 of K: 32 bytes along the swizzled row
  CHECK(p.shape_suffix() == "kind::f16 m128n128k16 bf16");
  CHECK(tc::tmem_columns_of(k)[0] == 0);
}

TEST_CASE("tcgen05 plan: operands the instruction cannot read are verifier errors naming the op", "[tcgen05][unit]") {
  using Catch::Matchers::Contains;
  auto k = mma_kernel<128, true>();
  REQUIRE_NOTHROW(ir::verify(k));
  auto plain = k;
  plain.allocs[1].swizzle = 0;  // A with neither swizzle nor core-matrix tiling
  CHECK_THROWS_WITH(ir::verify(plain), Contains("kernel 'k'") && Contains("(tcgen05_mma): A") && Contains("core matrices"));
  auto f16_d = k;
  f16_d.allocs[0].dtype = ir::DType::f16;
  CHECK_THROWS_WITH(ir::verify(f16_d), Contains("(tcgen05_mma): bf16 inputs accumulate in f32 (kind::f16), but the TMEM allocation is f16"));
  // A in (64, 64) tiles side by side along K cannot be read by one 128-row instruction.
  auto tiled = k;
  const auto mma = std::find_if(k.stmts.begin(), k.stmts.end(), [](auto const& x) { return x.op == ir::StmtOp::tcgen05_mma; });
  for (int operand : {1, 2}) {
    tiled.allocs[static_cast<std::size_t>(operand)].shape = {128, 128};
    tiled.allocs[static_cast<std::size_t>(operand)].tiling = {64, 64};
    tiled.refs[static_cast<std::size_t>(mma->refs[static_cast<std::size_t>(operand)])].shape = {128, 128};
  }
  CHECK_THROWS_WITH(ir::verify(tiled), Contains("unevenly"));
}

TEST_CASE("tcgen05 instruction descriptor of the pair: M = 256 is 16 at bit 24", "[tcgen05][unit][pair]") {
  // cta_group::2, bf16 x bf16 -> f32, K-major, M = 256, N = 256: 0x10 | 0x80 | 0x400 | 32 << 17 | 16 << 24.
  tc::instr_desc d;
  d.a_format = d.b_format = tc::ab_format(tc::Kind::f16, ir::DType::bf16);
  d.m = 256;
  d.n = 256;
  CHECK(tc::encode(d) == 0x10400490u);
  CHECK(tc::decode(0x10400490u).m == 256);
}

namespace {
// The pair's MMA over one stage: D (128, 128) per CTA, A (128, 64), B's half (64, 64).
ir::Kernel pair_mma_kernel() {
  return lower(kernel<sm_100a>("p", grid(2), threads(1_c), cluster(2_c), tmem<f32>(shape(128_c, 128_c)),
                               smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                               barrier(arrivals(1_c), orders_tensor_core), [](auto d, auto a, auto b, auto done) {
                                 return seq(if_(cluster_idx(0_c) == 0_c, tcgen05_mma_2cta(d, a, transpose(b), done, false)), barrier_wait(done), tmem_dealloc(d));
                               }));
}
ir::Stmt& the_mma(ir::Kernel& k) {
  return *std::find_if(k.stmts.begin(), k.stmts.end(), [](auto const& x) { return x.op == ir::StmtOp::tcgen05_mma; });
}
}  // namespace

TEST_CASE("tcgen05 pair plan: M = 256 over the pair, B's half per CTA, and the CTA group is IR (printed, hashed, verified)", "[tcgen05][unit][pair]") {
  using Catch::Matchers::Contains;
  auto k = pair_mma_kernel();
  REQUIRE_NOTHROW(ir::verify(k));
  const auto p = tc::plan_of(k, the_mma(k));
  CHECK(p.cta_group == 2);
  CHECK(p.m == 256);
  CHECK(p.n == 128);
  CHECK(p.b.rows == 64);  // one CTA's half of N
  CHECK(p.idesc == 0x10200490u);  // M >> 4 = 16 at 24, N >> 3 = 16 at 17
  CHECK_THAT(ir::print(k), Contains("tcgen05_mma_2cta"));

  // The CTA group changes the meaning, so it changes the hash and the listing.
  auto single = k;
  the_mma(single).n = 0;
  CHECK(ir::hash(single) != ir::hash(k));
  // ...and a single-CTA MMA over B's half is the shape mismatch it is.
  CHECK_THROWS_WITH(ir::verify(single), Contains("(tcgen05_mma): Expected shapes to match"));

  auto bad_group = k;
  the_mma(bad_group).n = 3;
  CHECK_THROWS_WITH(ir::verify(bad_group), Contains("(tcgen05_mma): n = 3 names no CTA group"));

  auto no_cluster = k;
  no_cluster.cluster = {1, 1, 1};
  no_cluster.cluster_rank = 0;
  CHECK_THROWS_AS(ir::verify(no_cluster), ir::ConfigError);
  CHECK_THROWS_WITH(ir::verify(no_cluster), Contains("kernel 'p'") && Contains("(tcgen05_mma_2cta): a pair MMA (cta_group::2)") &&
                                                Contains("cluster has extent 1 there"));

  // One CTA group per kernel: a cta_group::1 commit after the pair's MMA.
  auto mixed = k;
  ir::Stmt commit{ir::StmtOp::tcgen05_commit_arrive};
  commit.refs = {the_mma(k).refs[3]};
  mixed.stmts.push_back(commit);
  const auto id = static_cast<ir::StmtId>(mixed.stmts.size() - 1);
  mixed.stmts[static_cast<std::size_t>(mixed.body)].body.push_back(id);
  CHECK_THROWS_WITH(ir::verify(mixed), Contains("mixes cta_group::2"));
}

TEST_CASE("a pair commit's collective axes are IR: printed, hashed, and verified against the cluster", "[tcgen05][unit][pair][multicast]") {
  using Catch::Matchers::Contains;
  // Two pairs side by side (cluster (2, 2)); the commit also arrives in the other pair.
  auto k = lower(kernel<sm_100a>("pp", grid(2, 2), threads(1_c), cluster(2_c, 2_c), tmem<f32>(shape(128_c, 128_c)),
                                 smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                                 barrier(arrivals(2_c), orders_tensor_core), [](auto d, auto a, auto b, auto done) {
                                   return seq(if_(cluster_idx(0_c) == 0_c, seq(tcgen05_mma_2cta(d, a, transpose(b), false),
                                                                               tcgen05_commit_arrive_2cta(done, collective_axes(1_c)))),
                                              barrier_wait(done), tmem_dealloc(d));
                                 }));
  REQUIRE_NOTHROW(ir::verify(k));
  auto commit_of = [](ir::Kernel& x) -> ir::Stmt& {
    for (auto& s : x.stmts)
      if (s.op == ir::StmtOp::tcgen05_commit_arrive) return s;
    FAIL("no commit");
    throw;
  };
  CHECK(commit_of(k).axes == std::vector<int>{1});
  CHECK_THAT(ir::print(k), Contains("tcgen05_commit_arrive_2cta b3[0]  also in the pairs along cluster axes (1)"));
  auto own_pair = k;
  commit_of(own_pair).axes.clear();
  CHECK(ir::hash(own_pair) != ir::hash(k));  // a different mask: a different kernel
  REQUIRE_NOTHROW(ir::verify(own_pair));

  auto axis0 = k;
  commit_of(axis0).axes = {0};
  CHECK_THROWS_WITH(ir::verify(axis0), Contains("kernel 'pp'") && Contains("(tcgen05_commit_arrive_2cta): a pair commit arrives in the pairs along "
                                                                          "cluster axes 1 or 2 the cluster has (2 dimensions), but names axis 0"));
  auto axis2 = k;
  commit_of(axis2).axes = {2};
  CHECK_THROWS_WITH(ir::verify(axis2), Contains("but names axis 2"));
  auto twice = k;
  commit_of(twice).axes = {1, 1};
  CHECK_THROWS_WITH(ir::verify(twice), Contains("names a multicast axis twice: (1, 1)"));
  auto single = k;  // a cta_group::1 commit reaches its own CTA only: axes are meaningless there
  commit_of(single).n = 0;
  CHECK_THROWS_WITH(ir::verify(single), Contains("has multicast axes, which only copy_gmem_to_smem and the pair's tcgen05_commit_arrive take"));
}

// ---- kind::f8f6f4 (e4m3 / e5m2) ---------------------------------------------------------------

namespace {
// The K-major M = 128, N = 256 instruction descriptor of kind k with A and B of types a and b,
// D the kind's accumulator.
tc::instr_desc m128n256(tc::Kind k, ir::DType a, ir::DType b) {
  tc::instr_desc d;
  d.d_format = tc::d_format(tc::kind_accumulator(k));
  d.a_format = tc::ab_format(k, a);
  d.b_format = tc::ab_format(k, b);
  d.m = 128;
  d.n = 256;
  return d;
}
}  // namespace

TEST_CASE("tcgen05 kind::f8f6f4 instruction descriptor: E4M3 0 and E5M2 1 for A (bits 7-9) and B (10-12), each its own", "[tcgen05][unit][fp8]") {
  // Values from the PTX ISA's table for .kind::f8f6f4, worked out by hand:
  // e4m3 x e4m3 -> f32, K-major, M = 128, N = 256: D F32 (1 << 4) | A E4M3 (0) | B E4M3 (0) |
  // N >> 3 = 32 at 17 (0x400000) | M >> 4 = 8 at 24 (0x08000000).
  tc::instr_desc d = m128n256(tc::Kind::f8f6f4, ir::DType::e4m3, ir::DType::e4m3);
  CHECK(tc::encode(d) == 0x08400010u);
  // B E5M2: 1 at bit 10.
  d.b_format = tc::ab_format(tc::Kind::f8f6f4, ir::DType::e5m2);
  CHECK(tc::encode(d) == 0x08400410u);
  // A E5M2 (1 at 7), B E4M3, both MN-major (bits 15 and 16), N = 64 (8 at 17).
  tc::instr_desc t;
  t.a_format = tc::ab_format(tc::Kind::f8f6f4, ir::DType::e5m2);
  t.b_format = tc::ab_format(tc::Kind::f8f6f4, ir::DType::e4m3);
  t.a_major = t.b_major = wg::Major::mn;
  t.m = 128;
  t.n = 64;
  CHECK(tc::encode(t) == 0x08118090u);
  const auto back = tc::decode(0x08118090u);
  CHECK(back.a_format == 1);
  CHECK(back.b_format == 0);
}

TEST_CASE("tcgen05 kind::f8f6f4 format codes: 0 e4m3, 1 e5m2, 3 e2m3, 4 e3m2, 5 e2m1", "[tcgen05][unit][fp8]") {
  ir::DType t{};
  CHECK((tc::ab_type(tc::Kind::f8f6f4, 0, t) && t == ir::DType::e4m3));
  CHECK((tc::ab_type(tc::Kind::f8f6f4, 1, t) && t == ir::DType::e5m2));
  CHECK((tc::ab_type(tc::Kind::mxf8f6f4, 3, t) && t == ir::DType::e2m3));
  CHECK((tc::ab_type(tc::Kind::f8f6f4, 4, t) && t == ir::DType::e3m2));
  CHECK(tc::ab_format(tc::Kind::f8f6f4, ir::DType::e2m3) == 3);
  CHECK(tc::ab_format(tc::Kind::mxf8f6f4, ir::DType::e3m2) == 4);
  CHECK(tc::ab_format(tc::Kind::f16, ir::DType::e2m3) == -1);
  CHECK(tc::kind_of(ir::DType::e3m2) == tc::Kind::f8f6f4);
  CHECK((tc::ab_type(tc::Kind::mxf8f6f4, 5, t) && t == ir::DType::e2m1));
  CHECK(tc::ab_format(tc::Kind::f8f6f4, ir::DType::e2m1) == 5);
  CHECK(tc::ab_format(tc::Kind::f8f6f4, ir::DType::e2m1x2) == -1);  // kind::mxf4's dense FP4 is not this kind's
  for (int code : {2, 6, 7}) CHECK_FALSE(tc::ab_type(tc::Kind::f8f6f4, code, t));  // no codes of the kind
  CHECK(tc::ab_format(tc::Kind::f8f6f4, ir::DType::bf16) == -1);
  CHECK(tc::ab_format(tc::Kind::f16, ir::DType::e4m3) == -1);
  CHECK(tc::kind_of(ir::DType::e5m2) == tc::Kind::f8f6f4);
  CHECK(tc::kind_of(ir::DType::bf16) == tc::Kind::f16);
  CHECK(tc::kind_of(ir::DType::f32) == tc::Kind::tf32);
  CHECK(std::string(tc::kind_name(tc::Kind::f8f6f4)) == "kind::f8f6f4");
}

TEST_CASE("tcgen05 SMEM descriptor: 8-bit operands read MN-major denote the stored bytes (kind::f8f6f4 only)", "[tcgen05][unit][fp8]") {
  // B stored (K, N) = (128, 128) e4m3 with a 128-byte swizzle: K-rows of 128 N bytes. Element
  // (n, k) of K step ks (32 K-rows each) is the stored (32 ks + k, n).
  CHECK(wg::describe(8, 128, 128, 0, 0, 0, 128, wg::Major::mn).error == wg::LayoutError::mn_major_type);  // wgmma: K-major only
  for (int sw : {32, 64, 128}) {
    INFO("swizzle " << sw);
    const std::int64_t n = sw;  // one swizzle atom of N per tile row
    const auto l = wg::describe(8, 128, n, 0, 0, 0, sw, wg::Major::mn, true);
    REQUIRE(l.error == wg::LayoutError::none);
    const std::uint32_t base = 4096;
    for (std::int64_t ks = 0; ks < 128 / 32; ++ks) {
      const auto d = tc::decode_smem(tc::encode_smem(base + static_cast<std::uint32_t>(l.start(0, ks * 32)), l));
      REQUIRE(d.error == tc::SmemDescError::none);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t k = 0; k < 32; ++k) {
          const auto want = ir::swizzle_address(base + static_cast<std::uint32_t>(l.offset(ks * 32 + k, j)), sw);
          REQUIRE(wg::element_address(d.d, wg::Major::mn, 8, j, k) == want);
        }
    }
  }
  // Unswizzled, in core matrices of 8 K-rows x 16 N bytes: tiling(8, 16).
  const auto c = wg::describe(8, 64, 32, 2, 8, 16, 0, wg::Major::mn, true);
  REQUIRE(c.error == wg::LayoutError::none);
  for (std::int64_t ks = 0; ks < 2; ++ks) {
    const auto d = tc::decode_smem(tc::encode_smem(static_cast<std::uint32_t>(c.start(0, ks * 32)), c));
    for (std::int64_t j = 0; j < 32; ++j)
      for (std::int64_t k = 0; k < 32; ++k) REQUIRE(wg::element_address(d.d, wg::Major::mn, 8, j, k) == static_cast<std::uint32_t>(c.offset(ks * 32 + k, j)));
  }
}

namespace {
// One stage of C (128, N) = A (128, 128) * B, A `TA` (e4m3, or i8/u8) K-major, B `TB` stored
// (N, 128) read as transpose(b) (K-major) or stored (128, N) (MN-major); D f32, or i32 for 8-bit
// integers. The kernel is named "f8" or "i8".
template <class TB, bool TransposeB, long long N = 128, class TA = e4m3>
ir::Kernel fp8_mma_kernel() {
  constexpr long long BR = TransposeB ? N : 128, BC = TransposeB ? 128 : N;
  constexpr bool integer = ir::dtype_is_int8(TA::code);
  using TD = std::conditional_t<integer, i32, f32>;
  return lower(kernel<sm_100a>(integer ? "i8" : "f8", grid(1), threads(1_c), tmem<TD>(shape(128_c, int_c<N>)), smem<TA>(shape(128_c, 128_c), swizzle(128_c)),
                               smem<TB>(shape(int_c<BR>, int_c<BC>), swizzle(128_c)), barrier(arrivals(1_c), orders_tensor_core),
                               [](auto d, auto a, auto b, auto done) {
                                 if constexpr (TransposeB) return seq(tcgen05_mma(d, a, transpose(b), done, false), barrier_wait(done), tmem_dealloc(d));
                                 else return seq(tcgen05_mma(d, a, b, done, false), barrier_wait(done), tmem_dealloc(d));
                               }));
}
}  // namespace

TEST_CASE("tcgen05 plan: fp8 operands are kind::f8f6f4, K = 32 per instruction, each operand its own format code", "[tcgen05][unit][fp8]") {
  {
    auto k = fp8_mma_kernel<e5m2, true>();
    const auto p = tc::plan_of(k, the_mma(k));
    CHECK(p.kind == tc::Kind::f8f6f4);
    CHECK(p.a_type == ir::DType::e4m3);
    CHECK(p.b_type == ir::DType::e5m2);
    CHECK(p.ik == 32);
    CHECK(p.k_steps() == 4);
    CHECK(p.b_start(1) == 32);  // the next 32 fp8 of K: 32 bytes along the swizzled row
    // e4m3 A (0), e5m2 B (1 at 10), K-major, M = 128 (8 at 24), N = 128 (16 at 17), D F32.
    CHECK(p.idesc == 0x08200410u);
    CHECK(p.shape_suffix() == "kind::f8f6f4 m128n128k32 e4m3.e5m2");
  }
  {
    auto k = fp8_mma_kernel<e4m3, false>();  // B (K, N) read MN-major: bit 16
    const auto p = tc::plan_of(k, the_mma(k));
    CHECK(p.b.major == wg::Major::mn);
    CHECK(p.idesc == 0x08210010u);
    CHECK(p.b_start(1) == 32 * 128);  // the next 32 K-rows of 128 bytes
  }
}

TEST_CASE("tcgen05 plan: an fp8 operand with a non-fp8 one is a verifier error naming both", "[tcgen05][unit][fp8]") {
  using Catch::Matchers::Contains;
  auto k = fp8_mma_kernel<e4m3, true>();
  REQUIRE_NOTHROW(ir::verify(k));
  auto mixed = k;
  // e4m3 A with a bf16 B (128 rows of 64: one 128-byte swizzled row each), IR the front end
  // refuses (failtest tcgen05_fp8_pair).
  mixed.allocs[2].dtype = ir::DType::bf16;
  mixed.allocs[2].shape = {128, 64};
  mixed.refs[static_cast<std::size_t>(the_mma(mixed).refs[2])].shape = {128, 64};
  CHECK_THROWS_WITH(ir::verify(mixed), Contains("kernel 'f8'") &&
                                           Contains("(tcgen05_mma): an fp8 operand pairs only with an fp8 one (e4m3 or e5m2; tcgen05 also e2m3, e3m2 or e2m1), but A is e4m3 and B is bf16"));
}

// ---- kind::i8 (s8 / u8 into s32) ------------------------------------------------------------------

TEST_CASE("tcgen05 kind::i8 instruction descriptor: U8 0 and S8 1 for A (bits 7-9) and B (10-12), D S32 2 (bits 4-5)", "[tcgen05][unit][int8]") {
  // Values from the PTX ISA's table for .kind::i8, worked out by hand: s8 x s8 -> s32, K-major,
  // M = 128, N = 256: D S32 (2 << 4 = 0x20) | A S8 (1 << 7 = 0x80) | B S8 (1 << 10 = 0x400) |
  // N >> 3 = 32 at 17 (0x400000) | M >> 4 = 8 at 24 (0x08000000).
  tc::instr_desc d = m128n256(tc::Kind::i8, ir::DType::i8, ir::DType::i8);
  CHECK(tc::encode(d) == 0x084004A0u);
  // u8 A: format 0, bit 7 clear.
  d.a_format = tc::ab_format(tc::Kind::i8, ir::DType::u8);
  CHECK(tc::encode(d) == 0x08400420u);
  ir::DType a{}, b{};
  REQUIRE(tc::formats_of(tc::Kind::i8, tc::decode(0x08400420u), a, b));
  CHECK(a == ir::DType::u8);
  CHECK(b == ir::DType::i8);
  // The same operand codes with an F32 D (1 at bit 4) are no kind::i8 MMA; S32 is no kind::f16 one.
  CHECK_FALSE(tc::formats_of(tc::Kind::i8, tc::decode(0x08400490u), a, b));
  CHECK_FALSE(tc::formats_of(tc::Kind::f16, tc::decode(0x084004A0u), a, b));
  // Mixed formats: kind::i8 and kind::f8f6f4 only.
  CHECK(tc::kind_mixes(tc::Kind::i8));
  CHECK(tc::kind_mixes(tc::Kind::f8f6f4));
  CHECK_FALSE(tc::kind_mixes(tc::Kind::f16));
  CHECK_FALSE(tc::formats_of(tc::Kind::f16, tc::decode(0x08400090u), a, b));  // f16 A, bf16 B
}

TEST_CASE("tcgen05 kind::i8 format codes: 0 u8, 1 s8, nothing else, and i8 and u8 are kind::i8 into i32", "[tcgen05][unit][int8]") {
  ir::DType t{};
  CHECK((tc::ab_type(tc::Kind::i8, 0, t) && t == ir::DType::u8));
  CHECK((tc::ab_type(tc::Kind::i8, 1, t) && t == ir::DType::i8));
  for (int code : {2, 3, 4, 5, 6, 7}) CHECK_FALSE(tc::ab_type(tc::Kind::i8, code, t));
  CHECK(tc::ab_format(tc::Kind::i8, ir::DType::e4m3) == -1);
  CHECK(tc::ab_format(tc::Kind::f8f6f4, ir::DType::i8) == -1);
  CHECK(tc::kind_of(ir::DType::i8) == tc::Kind::i8);
  CHECK(tc::kind_of(ir::DType::u8) == tc::Kind::i8);
  CHECK(tc::kind_accumulator(tc::Kind::i8) == ir::DType::i32);
  CHECK(tc::kind_accumulator(tc::Kind::f8f6f4) == ir::DType::f32);
  CHECK(std::string(tc::kind_name(tc::Kind::i8)) == "kind::i8");
}

TEST_CASE("tcgen05 plan: 8-bit integer operands are kind::i8 into i32, K = 32 per instruction, A and B each its own code", "[tcgen05][unit][int8]") {
  {
    auto k = fp8_mma_kernel<i8, true, 128, u8>();
    const auto p = tc::plan_of(k, the_mma(k));
    CHECK(p.kind == tc::Kind::i8);
    CHECK(p.a_type == ir::DType::u8);
    CHECK(p.b_type == ir::DType::i8);
    CHECK(p.d == ir::DType::i32);
    CHECK(p.ik == 32);
    CHECK(p.k_steps() == 4);
    // u8 A (0), s8 B (1 at 10), K-major, M = 128 (8 at 24), N = 128 (16 at 17), D S32 (2 at 4).
    CHECK(p.idesc == 0x08200420u);
    CHECK(p.shape_suffix() == "kind::i8 m128n128k32 u8.i8");
  }
  {
    auto k = fp8_mma_kernel<i8, false, 128, i8>();  // B (K, N) read MN-major (bit 16): kind::i8 transposes as f8f6f4 does
    const auto p = tc::plan_of(k, the_mma(k));
    CHECK(p.b.major == wg::Major::mn);
    CHECK(p.idesc == 0x082104A0u);
    CHECK(p.b_start(1) == 32 * 128);
  }
}

TEST_CASE("tcgen05 plan: kind::i8 into an f32 TMEM allocation, or an i8 operand with a non-integer one, is a verifier error naming them",
          "[tcgen05][unit][int8]") {
  using Catch::Matchers::Contains;
  auto k = fp8_mma_kernel<i8, true, 128, i8>();
  REQUIRE_NOTHROW(ir::verify(k));
  auto f32_d = k;  // IR the front end refuses ("i8 inputs accumulate in i32"), built by hand
  f32_d.allocs[0].dtype = ir::DType::f32;
  CHECK_THROWS_WITH(ir::verify(f32_d), Contains("kernel 'i8'") && Contains("(tcgen05_mma): i8 inputs accumulate in i32 (kind::i8), but the TMEM "
                                                                           "allocation is f32"));
  auto mixed = k;  // s8 A with an f16 B of 64 rows of 64 (one 128-byte swizzled row each)
  mixed.allocs[2].dtype = ir::DType::f16;
  mixed.allocs[2].shape = {128, 64};
  mixed.refs[static_cast<std::size_t>(the_mma(mixed).refs[2])].shape = {128, 64};
  CHECK_THROWS_WITH(ir::verify(mixed), Contains("an 8-bit integer operand pairs only with an 8-bit integer one (i8 or u8), but A is i8 and B is f16"));
}

TEST_CASE("tcgen05 block-scaled instruction descriptor (kind::mxf8f6f4): fields at the PTX ISA's bit positions", "[tcgen05][unit][mx]") {
  // E4M3 x E4M3, UE8M0 scales (bit 23), M = 128 (M >> 7 = 1 at bit 27), N = 256 (32 at bit 17):
  // 0x08C00000, plus scale IDs kb at 29-30 (A) and 4-5 (B).
  tc::scaled_desc d;
  d.m = 128;
  d.n = 256;
  CHECK(tc::encode(d) == 0x08C00000u);
  for (int kb = 0; kb < 4; ++kb) {
    d.sfa_id = d.sfb_id = kb;
    CHECK(tc::encode(d) == (0x08C00000u | static_cast<std::uint32_t>(kb) << 29 | static_cast<std::uint32_t>(kb) << 4));
  }
  // Every field round-trips, and none touches the reserved bits.
  tc::scaled_desc e;
  e.sparse = true;
  e.sfa_id = 2, e.sfb_id = 1;
  e.a_format = 1, e.b_format = 0;
  e.negate_a = true;
  e.b_major = wg::Major::mn;
  e.n = 128;
  e.m = 128;
  e.ue8m0 = false;
  const auto bits = tc::encode(e);
  CHECK((bits & tc::scaled_reserved_bits) == 0u);
  const auto back = tc::decode_scaled(bits);
  CHECK(back.sparse);
  CHECK(back.sfa_id == 2);
  CHECK(back.sfb_id == 1);
  CHECK(back.a_format == 1);
  CHECK(back.b_format == 0);
  CHECK(back.negate_a);
  CHECK_FALSE(back.negate_b);
  CHECK(back.b_major == wg::Major::mn);
  CHECK(back.n == 128);
  CHECK(back.m == 128);
  CHECK_FALSE(back.ue8m0);
}

TEST_CASE("tcgen05.cp 32x128b.warpx4 puts each scale of the 128 x 4 block layout where the block-scaled MMA reads it", "[tcgen05][unit][mx]") {
  // The block: byte (i % 32) * 16 + (i / 32) * 4 + kb is the scale of row i for K block kb. The
  // copy: SMEM row r's byte b to lanes r + 32q, column b / 4, byte b % 4. The MMA: row i's scale
  // at lane i, column i / 32, byte kb (its ID). All 512 must meet.
  for (int i = 0; i < 128; ++i)
    for (int kb = 0; kb < 4; ++kb) {
      const std::uint32_t at = tc::cp_32x128b_offset(tc::cp_sbo, i % 32, (i / 32) * 4 + kb);
      CHECK(at == static_cast<std::uint32_t>((i % 32) * 16 + (i / 32) * 4 + kb));
      const int r = static_cast<int>(at / 16), b = static_cast<int>(at % 16);  // the contiguous block's row and byte
      const auto s = tc::scale_at(i, kb);
      CHECK(s.lane % 32 == r);  // the copy's lanes r + 32q include i
      CHECK(s.column == b / 4);
      CHECK(s.byte == b % 4);
    }
  // Its descriptor: no swizzle, LBO 0, SBO 128 (8 rows of 16 bytes), the sm_100 version bit.
  const auto d = tc::decode_smem(tc::encode_cp_smem(0x400));
  CHECK(d.error == tc::SmemDescError::none);
  CHECK(d.d.start == 0x400);
  CHECK(d.d.sbo == 128);
  CHECK(d.d.lbo == 0);
  CHECK(d.d.swizzle == 0);
}

TEST_CASE("tcgen05 block-scaled FP4 (kind::mxf4, kind::mxf4nvf4): formats, scales per instruction, and which cell and byte each instruction reads",
          "[tcgen05][unit][mx][fp4]") {
  // E2M1 is format 1 under both FP4 kinds (CUTLASS's MXF4Format), and only e2m1x2 reads as it.
  for (auto kind : {tc::Kind::mxf4, tc::Kind::mxf4nvf4}) {
    CHECK(tc::ab_format(kind, ir::DType::e2m1x2) == 1);
    CHECK(tc::ab_format(kind, ir::DType::e4m3) == -1);
    ir::DType t{};
    CHECK(tc::ab_type(kind, 1, t));
    CHECK(t == ir::DType::e2m1x2);
    CHECK_FALSE(tc::ab_type(kind, 0, t));
    CHECK(tc::kind_scaled(kind));
    CHECK_FALSE(tc::kind_mixes(kind));
  }
  CHECK(std::string(tc::kind_name(tc::Kind::mxf4nvf4)) == "kind::mxf4nvf4");
  CHECK(tc::values_per_element(ir::DType::e2m1x2) == 2);
  CHECK(tc::values_per_element(ir::DType::e4m3) == 1);
  // Scales per instruction and K per scale: MXFP8 1 x 32 (k32), MXFP4 2 x 32 and NVFP4 4 x 16 (k64).
  CHECK(tc::scale_vec_of(tc::Kind::mxf8f6f4) * tc::scale_block_of(tc::Kind::mxf8f6f4) == 32);
  CHECK(tc::scale_vec_of(tc::Kind::mxf4) * tc::scale_block_of(tc::Kind::mxf4) == 64);
  CHECK(tc::scale_vec_of(tc::Kind::mxf4nvf4) * tc::scale_block_of(tc::Kind::mxf4nvf4) == 64);
  // Instruction ks: cell group ks * v / 4 (4 columns each), first byte (ks * v) % 4.
  const int expect_group[3][8] = {{0, 0, 0, 0, 1, 1, 1, 1}, {0, 0, 1, 1, 2, 2, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7}};
  const int expect_id[3][8] = {{0, 1, 2, 3, 0, 1, 2, 3}, {0, 2, 0, 2, 0, 2, 0, 2}, {0, 0, 0, 0, 0, 0, 0, 0}};
  const int vecs[3] = {1, 2, 4};
  for (int v = 0; v < 3; ++v)
    for (int ks = 0; ks < 8; ++ks) {
      CHECK(tc::scale_group(ks, vecs[v]) == expect_group[v][ks]);
      CHECK(tc::scale_id(ks, vecs[v]) == expect_id[v][ks]);
      CHECK(tc::scale_id_ok(tc::scale_id(ks, vecs[v]), vecs[v]));
    }
  CHECK_FALSE(tc::scale_id_ok(1, 2));
  CHECK_FALSE(tc::scale_id_ok(2, 4));
  // Scale b of row i: lane i, column i / 32 of the instruction's group, byte ID + b.
  const auto s = tc::scale_at(77, 2, 1);
  CHECK(s.lane == 77);
  CHECK(s.column == 2);
  CHECK(s.byte == 3);
  // A plan's per-instruction descriptor and scale column: MXFP4's IDs 0, 2 and NVFP4's 0.
  tc::plan p;
  p.scaled = true;
  p.idesc = 0x08800480u;
  p.scale_vec = 2;
  CHECK(p.idesc_at(1) == (0x08800480u | 2u << 29 | 2u << 4));
  CHECK(p.scale_column(2) == 4);
  p.scale_vec = 4;
  CHECK(p.idesc_at(3) == 0x08800480u);
  CHECK(p.scale_column(3) == 12);
}

TEST_CASE("e2m1x2 operands read as two e2m1 values, element 2i from bits 0-3", "[tcgen05][unit][mx][fp4]") {
  for (unsigned byte = 0; byte < 256; ++byte) {
    const auto b = static_cast<std::byte>(byte);
    float v[2] = {};
    tc::operand_values(ir::DType::e2m1x2, &b, 0, v);
    CHECK(v[0] == ir::mx::decode(ir::mx::e2m1, byte & 0xfu));
    CHECK(v[1] == ir::mx::decode(ir::mx::e2m1, byte >> 4));
  }
  const auto one = static_cast<std::byte>(0x38);  // e4m3 1.0
  float x = 0;
  tc::operand_values(ir::DType::e4m3, &one, 0, &x);
  CHECK(x == 1.0f);
}
