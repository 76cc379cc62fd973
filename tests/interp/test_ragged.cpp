// Ragged batches: index tables (x.at(i)), windows of rows (x.rows(lo, hi)) and segment tables
// (segment_offsets). gemm_grouped is right on hand-made tables with an empty group, a group of
// one row, groups smaller than a tile and one of several tiles, under eager, lazy and PCT
// schedules; a table the launcher refuses, an index past a table, a window past its array and
// the writes an index table or a window may not take are each a diagnostic naming the values.
#include <catch2/catch.hpp>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "mma_runs.hpp"
#include "ragged_kernels.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {

std::string first_message(interp::result const& r) { return r.ok() ? std::string() : r.diagnostics.front().message; }

// gemm_grouped at (G, T, N, K, R) with the segment table `offsets` (G + 1 values) in place of the
// seeded one, and its reference.
struct grouped {
  param_values vals;
  ir::Kernel kernel;
  std::vector<host_tensor> in, expected;
};
grouped gemm_grouped(std::vector<std::int64_t> const& offsets, std::int64_t N, std::int64_t K, std::int64_t R, std::int64_t S = 2) {
  auto const& e = registry::global().find("gemm_grouped");
  grouped g;
  g.vals = registry::resolve(e, {{"G", static_cast<std::int64_t>(offsets.size()) - 1}, {"T", offsets.back()}, {"N", N}, {"K", K}, {"R", R}, {"S", S}});
  g.kernel = registry::build(e, g.vals);
  g.in = seeded_inputs(g.kernel, 7);
  testing::set_table(g.in[1], offsets);
  g.expected = g.in;
  e.reference(g.expected, g.vals);
  return g;
}

}  // namespace

TEST_CASE("ragged: gemm_grouped is right with empty groups, groups under a tile and groups of several tiles", "[ragged][gemm]") {
  // Groups of 0, 1, 63, 0, 64, 65, 200 and 7 rows: every tail a TMA box reads into the next group.
  const std::vector<std::int64_t> offsets{0, 0, 1, 64, 64, 128, 193, 393, 400};
  for (auto [N, K, R] : {std::tuple{200, 136, 2}, std::tuple{128, 64, 1}, std::tuple{260, 72, 3}}) {
    INFO("N = " << N << ", K = " << K << ", R = " << R);
    auto g = gemm_grouped(offsets, N, K, R);
    testing::run_everywhere(g.kernel, g.in, g.expected, 8);
  }
}

TEST_CASE("ragged: seeded segment tables start at 0, never decrease, end at the rows and have empty segments", "[ragged]") {
  auto const& e = registry::global().find("gemm_grouped");
  const auto k = registry::build(e, registry::resolve(e, {{"G", 16}, {"T", 1000}}));
  int empty = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const auto t = seeded_inputs(k, seed)[1];
    REQUIRE(t.get(0) == 0);
    REQUIRE(t.get(16) == 1000);
    for (std::int64_t g = 0; g < 16; ++g) {
      REQUIRE(t.get(g + 1) >= t.get(g));
      empty += t.get(g + 1) == t.get(g);
    }
    CHECK_NOTHROW(check_segment_tables(k, seeded_inputs(k, seed)));
  }
  CHECK(empty > 0);
}

TEST_CASE("ragged: a segment table that decreases or does not cover the rows is refused before the run", "[ragged]") {
  auto g = gemm_grouped({0, 10, 100, 200}, 128, 64, 1);
  auto bad = g.in;
  bad[1].set(2, 5);  // 0, 10, 5, 200
  CHECK_THROWS_WITH(interp::run(g.kernel, bad, {}), Contains("segment table 'offsets' = [0, 10, 5, 200] decreases at 2") &&
                                                        Contains("kernel 'gemm_grouped'"));
  bad = g.in;
  bad[1].set(3, 150);
  CHECK_THROWS_WITH(interp::run(g.kernel, bad, {}), Contains("ends at 150, not at the 200 rows it covers"));
  bad = g.in;
  bad[1].set(0, 3);
  CHECK_THROWS_WITH(interp::run(g.kernel, bad, {}), Contains("starts at 3, not 0"));
}

namespace {

using testing::copy_segments;

std::vector<host_tensor> with_table(ir::Kernel const& k, std::vector<std::int64_t> const& t) {
  auto in = seeded_inputs(k, 3);
  testing::set_table(in[1], t);
  return in;
}

}  // namespace

TEST_CASE("ragged: a masked tile in a window writes its segment's rows and nothing after them", "[ragged]") {
  const auto k = copy_segments<true>(4);
  const auto in = with_table(k, {0, 30, 30, 94});  // 30 rows, none, 64 rows; rows 94.. stay as they were
  const auto r = interp::run(k, in, {});
  REQUIRE(first_message(r) == "");
  for (std::int64_t i = 0; i < 256 * 64; ++i) {
    INFO("element " << i);
    REQUIRE(r.buffers[2].get(i) == (i < 94 * 64 ? in[0].get(i) : in[2].get(i)));
  }
}

TEST_CASE("ragged: an index past its table, a window past its array, a plain tile past its window", "[ragged]") {
  SECTION("x.at(i) past the table") {
    const auto k = copy_segments<true>(3);  // grid(3) reads t.at(3)
    const auto r = interp::run(k, with_table(k, {0, 30, 60}), {});
    CHECK_THAT(first_message(r), Contains("index table out of range") && Contains("reads t.at(3), but 't' has 3 elements"));
  }
  SECTION("a window past the array") {
    const auto k = copy_segments<true>(4);
    const auto r = interp::run(k, with_table(k, {0, 30, 60, 300}), {});
    CHECK_THAT(first_message(r), Contains("GMEM window out of range") && Contains("takes rows [60, 300) of 'x', which has 256 rows"));
  }
  SECTION("a plain generic tile longer than its window") {
    const auto k = copy_segments<false>(4);
    const auto r = interp::run(k, with_table(k, {0, 64, 94, 158}), {});  // the second window has 30 rows
    CHECK_THAT(first_message(r), Contains("GMEM block out of range") && Contains("in the window of rows [64, 94) of (256, 64)"));
  }
  SECTION("a masked tile of an empty segment") {
    const auto k = copy_segments<true>(4);
    auto in = with_table(k, {0, 30, 30, 94});
    in[1].set(1, 94), in[1].set(2, 94);  // 0, 94, 94, 94: segment 2 is empty, and its CTA's guard holds
    CHECK(first_message(interp::run(k, in, {})) == "");
  }
  SECTION("the same tiles where every window holds them: no diagnostic") {
    const auto k = copy_segments<false>(4);
    CHECK(first_message(interp::run(k, with_table(k, {0, 64, 128, 192}), {})) == "");
  }
}

TEST_CASE("ragged: an index table the kernel writes, and a TMA store through a window, are verify errors", "[ragged][verify]") {
  auto t = shape(64_c, 64_c);
  CHECK_THROWS_WITH(lower(kernel<sm_90a>("writes_table", grid(2), threads(1_c), gmem<f32>("x", shape(128_c, 64_c)), gmem<i32>("t", shape(64_c)),
                                         [&](auto x, auto table) {
                                           return seq(store(x.rows(table.at(0_c), table.at(1_c)).tile(t, masked(), 0_c, 0_c), 1.0f),
                                                      store(table.tile(shape(64_c), 0_c), 0));
                                         })),
                    Contains("writes 't', which x.at(i) reads as an index table"));
  CHECK_THROWS_WITH(lower(kernel<sm_90a>("tma_store_window", grid(2), threads(1_c), gmem<f32>("x", shape(128_c, 64_c)), gmem<i32>("t", shape(3_c)),
                                         smem<f32>(t), [&](auto x, auto table, auto xs) {
                                           auto g = program_id(0_c);
                                           return seq(store(xs, 1.0f), commit_smem(), copy_smem_to_gmem(xs, x.rows(table.at(g), table.at(g + 1_c)).block(0_c, 0_c)),
                                                      commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                                         })),
                    Contains("stores a TMA box through a window of 'x'") && Contains("masked generic store"));
}

TEST_CASE("ragged: tile math with run-time lengths (index expressions as scalar tiles) matches the reference", "[ragged]") {
  const auto k = testing::segment_scale();
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    INFO("input seed " << seed);
    const auto in = seeded_inputs(k, seed);
    auto expected = in;
    testing::segment_scale_reference(expected);
    for (auto p : {interp::policy::eager, interp::policy::lazy}) {
      const auto r = interp::run(k, in, {.schedule = p});
      REQUIRE(first_message(r) == "");
      CHECK(first_difference(r.buffers[2], expected[2]) == -1);
    }
  }
}

TEST_CASE("ragged: attention_varlen is right on empty sequences, a 1-row one and ones under and over a block", "[ragged][attention]") {
  auto const& e = registry::global().find("attention_varlen");
  const std::vector<std::int64_t> cu{0, 0, 1, 64, 64, 130, 300};  // lengths 0, 1, 63, 0, 66, 170
  for (std::int64_t causal : {0, 1}) {
    INFO("causal = " << causal);
    const auto vals = registry::resolve(e, {{"B", 6}, {"T", 300}, {"causal", causal}});
    const auto k = registry::build(e, vals);
    auto in = seeded_inputs(k, 11);
    testing::set_table(in[4], cu);
    auto expected = in;
    e.reference(expected, vals);
    testing::run_everywhere(k, in, expected, 4);
  }
}
