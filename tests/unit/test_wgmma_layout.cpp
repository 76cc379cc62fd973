// ir::wgmma: the operand description both backends share, checked against the PTX ISA and
// against itself (a descriptor must denote exactly the bytes where TMA and stores put each
// element).
#include <catch2/catch.hpp>

#include <set>

#include <stagecraft/ir/wgmma.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

using namespace stagecraft;
namespace wg = stagecraft::ir::wgmma;

TEST_CASE("wgmma D fragment: entries of the PTX ISA's m64nNk16 accumulator figure", "[wgmma][unit]") {
  struct entry {
    int thread, reg, row, col;
  };
  // Read off the figure: warp w holds rows 16w..16w+15; within a warp, lane = 4 * group + t
  // holds rows group and group + 8, column pairs 2t, 2t+1 of every 8-column block.
  const entry table[] = {
      {0, 0, 0, 0},   {0, 1, 0, 1},   {0, 2, 8, 0},    {0, 3, 8, 1},    {0, 4, 0, 8},  {0, 5, 0, 9},
      {0, 6, 8, 8},   {1, 0, 0, 2},   {3, 1, 0, 7},    {4, 0, 1, 0},    {31, 3, 15, 7}, {32, 0, 16, 0},
      {64, 2, 40, 0}, {127, 127, 63, 255}, {96, 4, 48, 8}, {37, 9, 17, 19},
  };
  for (auto const& e : table) {
    INFO("thread " << e.thread << ", d" << e.reg);
    const auto c = wg::accumulator_element(e.thread, e.reg);
    CHECK(c.row == e.row);
    CHECK(c.col == e.col);
  }
}

TEST_CASE("wgmma D fragment: 128 threads x N/2 registers cover the 64 x N tile once", "[wgmma][unit]") {
  for (int n : {8, 64, 128, 256}) {
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < n / 2; ++i) {
        const auto c = wg::accumulator_element(t, i);
        REQUIRE(c.row >= 0);
        REQUIRE(c.row < 64);
        REQUIRE(c.col >= 0);
        REQUIRE(c.col < n);
        seen.insert({c.row, c.col});
      }
    CHECK(seen.size() == static_cast<std::size_t>(64 * n));
  }
}

TEST_CASE("wgmma A fragment: entries of the PTX ISA's m64nNk16 register-A figure", "[wgmma][unit]") {
  struct entry {
    int thread, elem, row, col;
  };
  const entry table[] = {
      {0, 0, 0, 0}, {0, 1, 0, 1}, {0, 2, 8, 0},  {0, 3, 8, 1},  {0, 4, 0, 8},   {0, 5, 0, 9},   {0, 6, 8, 8},
      {0, 7, 8, 9}, {5, 0, 1, 2}, {5, 7, 9, 11}, {64, 0, 32, 0}, {127, 7, 63, 15}, {34, 4, 16, 12},
  };
  for (auto const& e : table) {
    INFO("thread " << e.thread << ", element " << e.elem);
    const auto c = wg::a_element(e.thread, e.elem);
    CHECK(c.row == e.row);
    CHECK(c.col == e.col);
  }
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 8; ++i) seen.insert({wg::a_element(t, i).row, wg::a_element(t, i).col});
  CHECK(seen.size() == 64u * 16u);
}

TEST_CASE("wgmma descriptor: bit positions and round trip", "[wgmma][unit]") {
  const wg::descriptor d{0x1400, 16, 1024, 0, 128};
  const std::uint64_t bits = wg::encode(d);
  CHECK(bits == ((0x1400ull >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62)));
  const auto back = wg::decode(bits);
  CHECK(back.start == d.start);
  CHECK(back.lbo == d.lbo);
  CHECK(back.sbo == d.sbo);
  CHECK(back.swizzle == 128);
  CHECK(wg::decode(wg::encode(wg::descriptor{0x200, 128, 256, 0, 64})).swizzle == 64);
  CHECK((wg::encode(wg::descriptor{0x200, 128, 256, 0, 32}) >> 62) == 3);
  CHECK((wg::encode(wg::descriptor{0x200, 128, 256, 0, 0}) >> 62) == 0);
}

namespace {
// Every element every instruction of a (rows x cols) operand reads: the descriptor the plan
// would issue, decoded, must point at swizzle(base + offset) -- where TMA and stores put it.
void check_denotes_storage(wg::operand_layout const& l, std::uint32_t base, std::int64_t instr_mn) {
  REQUIRE(l.error == wg::LayoutError::none);
  const int ik = wg::instr_k(l.bits);
  for (std::int64_t mn0 = 0; mn0 < l.mn_extent(); mn0 += instr_mn)
    for (std::int64_t k0 = 0; k0 < l.k_extent(); k0 += ik) {
      const auto d = wg::decode(wg::encode(static_cast<std::uint32_t>(base + l.start(mn0, k0)), l));
      for (std::int64_t mn = 0; mn < instr_mn; ++mn)
        for (std::int64_t k = 0; k < ik; ++k) {
          const std::int64_t r = l.major == wg::Major::k ? mn0 + mn : k0 + k;
          const std::int64_t c = l.major == wg::Major::k ? k0 + k : mn0 + mn;
          const auto want = ir::swizzle_address(static_cast<unsigned>(base + l.offset(r, c)), l.swizzle);
          const auto got = wg::element_address(d, l.major, l.bits, mn, k);
          if (got != want) {
            FAIL_CHECK("layout rows=" << l.rows << " cols=" << l.cols << " swizzle=" << l.swizzle << " major=" << int(l.major)
                                      << " element (" << mn0 + mn << ", " << k0 + k << "): descriptor reads " << got << ", data at " << want);
            return;
          }
        }
    }
}
}  // namespace

TEST_CASE("wgmma descriptors denote the bytes TMA and stores write, for every describable layout", "[wgmma][unit]") {
  const std::uint32_t base = 0x2000;  // 1024-aligned, as swizzled allocations are
  using wg::describe;
  using wg::Major;
  SECTION("K-major, swizzled rows of the swizzle width") {
    check_denotes_storage(describe(16, 64, 64, 0, 0, 0, 128, Major::k), base, 64);   // A (64, 64) bf16
    check_denotes_storage(describe(16, 256, 64, 0, 0, 0, 128, Major::k), base, 256); // B (256, 64): N = 256 in one instruction
    check_denotes_storage(describe(16, 128, 32, 0, 0, 0, 64, Major::k), base, 64);
    check_denotes_storage(describe(16, 64, 16, 0, 0, 0, 32, Major::k), base, 64);
    check_denotes_storage(describe(32, 64, 32, 0, 0, 0, 128, Major::k), base, 64);   // tf32
    check_denotes_storage(describe(8, 64, 128, 0, 0, 0, 128, Major::k), base, 64);   // fp8: 128 elements per 128-byte row
    check_denotes_storage(describe(8, 256, 32, 0, 0, 0, 32, Major::k), base, 256);
  }
  SECTION("K-major, tiled along K in swizzle atoms") {
    check_denotes_storage(describe(16, 128, 256, 2, 128, 64, 128, Major::k), base, 64);
    check_denotes_storage(describe(16, 64, 128, 2, 8, 64, 128, Major::k), base, 64);  // one 8-row group per tile
  }
  SECTION("K-major, core matrices without swizzle") {
    check_denotes_storage(describe(16, 64, 32, 2, 8, 8, 0, Major::k), base, 64);
    check_denotes_storage(describe(32, 64, 16, 2, 8, 4, 0, Major::k), base, 64);
  }
  SECTION("MN-major, swizzled") {
    check_denotes_storage(describe(16, 64, 64, 0, 0, 0, 128, Major::mn), base, 64);    // stored (K, MN)
    check_denotes_storage(describe(16, 64, 256, 2, 64, 64, 128, Major::mn), base, 256);
    check_denotes_storage(describe(16, 32, 128, 2, 32, 32, 64, Major::mn), base, 128);
  }
  SECTION("MN-major, core matrices") { check_denotes_storage(describe(16, 32, 64, 2, 8, 8, 0, Major::mn), base, 64); }
}

TEST_CASE("wgmma layouts it cannot describe, with the reason", "[wgmma][unit]") {
  using wg::describe;
  using wg::LayoutError;
  using wg::Major;
  CHECK(describe(16, 64, 64, 0, 0, 0, 0, Major::k).error == LayoutError::unswizzled_plain);
  CHECK(describe(32, 32, 64, 0, 0, 0, 128, Major::mn).error == LayoutError::mn_major_type);
  CHECK(describe(8, 32, 128, 0, 0, 0, 128, Major::mn).error == LayoutError::mn_major_type);    // fp8 is K-major only
  CHECK(describe(16, 64, 128, 0, 0, 0, 128, Major::k).error == LayoutError::bad_tiling);        // rows of 256 B
  CHECK(describe(16, 128, 64, 2, 16, 64, 128, Major::k).error == LayoutError::bad_tiling);      // 16-row tiles: groups not uniform
  CHECK(describe(16, 4, 64, 0, 0, 0, 128, Major::k).error == LayoutError::rows_not_groups);
  CHECK(describe(16, 64, 128, 2, 8, 64, 128, Major::mn).error == LayoutError::k_split);         // 8 K rows per tile, k16 needs 16
  CHECK(describe(16, 64, 64, 2, 16, 8, 0, Major::k).error == LayoutError::bad_tiling);          // core matrices are 8 rows
}

TEST_CASE("wgmma plan of gemm_small: instructions and where each reads", "[wgmma][unit]") {
  auto const& e = registry::global().find("gemm_small");
  const ir::Kernel k = e.build(registry::resolve(e, {}));
  int found = 0;
  for (auto const& s : k.stmts) {
    if (s.op != ir::StmtOp::wgmma) continue;
    ++found;
    const auto p = wg::plan_of(k, s);
    CHECK(p.shape_suffix() == "m64n128k16.f32.bf16.bf16");
    CHECK(p.m_blocks() == 1);
    CHECK(p.k_steps() == 4);
    CHECK(p.a.major == wg::Major::k);
    CHECK(p.b.major == wg::Major::k);
    CHECK(p.a_start(0, 1) == 32);   // k16 steps move 32 bytes along the 128-byte swizzled row
    CHECK(p.b_start(3) == 96);
    CHECK(p.b.sbo == 1024);
  }
  CHECK(found == 1);
}

TEST_CASE("the verifier rejects a wgmma whose operand layout cannot be described", "[wgmma][verify]") {
  auto const& e = registry::global().find("gemm_small");
  ir::Kernel k = e.build(registry::resolve(e, {}));
  for (auto& a : k.allocs)
    if (a.kind == ir::AllocKind::smem && a.shape.size() == 3 && a.shape[1] == 64) a.swizzle = 0;  // A without its swizzle
  REQUIRE_THROWS_WITH(ir::verify(k), Catch::Matchers::Contains("op #12 (wgmma): A (bf16 [64, 64], swizzle 0 B): an unswizzled MMA operand"));
}

TEST_CASE("wgmma plan of gemm_fp8: k32 instructions of kind .e4m3.e4m3, f16 D, e4m3 against e5m2", "[wgmma][unit][fp8]") {
  auto const& e = registry::global().find("gemm_fp8");
  for (std::int64_t acc : {32, 16}) {
    ir::Kernel k = e.build(registry::resolve(e, {{"acc", acc}}));
    int found = 0;
    for (auto const& s : k.stmts) {
      if (s.op != ir::StmtOp::wgmma) continue;
      ++found;
      const auto p = wg::plan_of(k, s);
      CHECK(p.shape_suffix() == (acc == 32 ? "m64n256k32.f32.e4m3.e4m3" : "m64n256k32.f16.e4m3.e4m3"));
      CHECK(p.ik == 32);
      CHECK(p.k_steps() == 4);      // K = 128 per stage
      CHECK(p.b_start(3) == 96);    // k32 steps move 32 bytes along the 128-byte swizzled row
      CHECK(p.b.sbo == 1024);
    }
    CHECK(found >= 1);
    // B's allocation read as e5m2 instead: the mixed kind.
    for (auto& a : k.allocs)
      if (a.kind == ir::AllocKind::smem && a.shape.size() == 3 && a.shape[1] == 256) a.dtype = ir::DType::e5m2;
    for (auto const& s : k.stmts)
      if (s.op == ir::StmtOp::wgmma) CHECK_THAT(wg::plan_of(k, s).shape_suffix(), Catch::Matchers::EndsWith(".e4m3.e5m2"));
  }
}

// plan_of is the verifier's wgmma rule (called directly: the edits below also break other rules,
// such as the TMA copies' dtypes, that the verifier would report first).
TEST_CASE("the verifier's wgmma plan rejects fp8 paired with a 16-bit type and fp8 into a bf16 accumulator", "[wgmma][verify][fp8]") {
  auto const& e = registry::global().find("gemm_fp8");
  auto plan_all = [](ir::Kernel const& k) {
    for (auto const& s : k.stmts)
      if (s.op == ir::StmtOp::wgmma) (void)wg::plan_of(k, s);
  };
  SECTION("B as bf16") {
    ir::Kernel k = e.build(registry::resolve(e, {}));
    for (auto& a : k.allocs)
      if (a.kind == ir::AllocKind::smem && a.shape.size() == 3 && a.shape[1] == 256) a.dtype = ir::DType::bf16;
    REQUIRE_THROWS_WITH(plan_all(k), Catch::Matchers::Contains("(wgmma): an fp8 operand pairs only with an fp8 one (e4m3 or e5m2), but A is e4m3 and B is bf16"));
  }
  SECTION("a bf16 accumulator") {
    ir::Kernel k = e.build(registry::resolve(e, {}));
    for (auto& a : k.allocs)
      if (a.kind == ir::AllocKind::accumulator) a.dtype = ir::DType::bf16;
    REQUIRE_THROWS_WITH(plan_all(k), Catch::Matchers::Contains("(wgmma): e4m3 inputs accumulate in f32 or f16, but the accumulator is bf16"));
  }
}
