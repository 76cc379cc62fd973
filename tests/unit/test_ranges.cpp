// Static ranges of index expressions: what the compiler proves about indices.
#include <catch2/catch.hpp>

#include <stagecraft/stagecraft.hpp>

using namespace stagecraft;

namespace {
template <class T>
constexpr range_t r() {
  return std::remove_cvref_t<T>::range;
}
}  // namespace

TEST_CASE("static integers stay static through arithmetic", "[ranges]") {
  STATIC_REQUIRE(std::is_same_v<decltype(128_c / 2_c), constant<64>>);
  STATIC_REQUIRE(std::is_same_v<decltype(int_c<5> % 3_c), constant<2>>);
  STATIC_REQUIRE(static_int<decltype(hana::llong_c<3>)>);  // Hana's constants are accepted too
  STATIC_REQUIRE(static_int<std::integral_constant<int, 3>>);
  STATIC_REQUIRE(!static_int<int>);
  CHECK(value_of(7_c) == 7);
  CHECK(value_of(9) == 9);
}

TEST_CASE("ranges of loop variables and their arithmetic", "[ranges]") {
  (void)for_(range(8_c), [](auto j) {
    STATIC_REQUIRE(r<decltype(j)>() == interval(0, 8));
    STATIC_REQUIRE(r<decltype(j % 4_c)>() == interval(0, 4));
    STATIC_REQUIRE(r<decltype(j + 1_c)>() == interval(1, 9));
    STATIC_REQUIRE(r<decltype(j * 2_c)>() == interval(0, 15));
    STATIC_REQUIRE(r<decltype(j / 2_c)>() == interval(0, 4));
    STATIC_REQUIRE(r<decltype(7_c - j)>() == interval(0, 8));
    STATIC_REQUIRE(r<decltype(j < 3_c)>() == interval(0, 2));
    STATIC_REQUIRE(!r<decltype(j + 3)>().known);  // a run-time integer: unknown
    STATIC_REQUIRE(r<decltype(runtime_index(j))>() == unknown_range);
    auto s = stage<3>(j);
    STATIC_REQUIRE(r<decltype(s.slot())>() == interval(0, 3));
    STATIC_REQUIRE(r<decltype(s.advance(2_c).step)>() == interval(2, 10));
    return stmt<>{};
  });
  (void)for_(range(2_c, 5_c), [](auto j) {
    STATIC_REQUIRE(r<decltype(j)>() == interval(2, 5));
    return stmt<>{};
  });
  (void)for_(range(10), [](auto j) {  // run-time trip count
    STATIC_REQUIRE(!r<decltype(j)>().known);
    STATIC_REQUIRE(!r<decltype(j % 4)>().known);
    STATIC_REQUIRE(r<decltype(j % 4_c)>() == unknown_range);  // j may be negative as far as types know
    return stmt<>{};
  });
}

TEST_CASE("thread_id ranges over num_threads", "[ranges]") {
  using T = decltype(thread_id());
  STATIC_REQUIRE(r<T>() == range_t{true, 0, 0, 1});
  STATIC_REQUIRE(r<decltype(thread_id() + 1_c)>() == range_t{true, 1, 1, 1});
  STATIC_REQUIRE(r<decltype(thread_id() * 2_c)>() == range_t{true, 0, -1, 2});
  // Indexing a 4-element array with thread_id() is fine for up to 4 warpgroups, with 2*thread_id() for 2.
  STATIC_REQUIRE(detail::check_index<"Barrier", 4, T>().max_threads == 4);
  STATIC_REQUIRE(detail::check_index<"Barrier", 4, decltype(thread_id() * 2_c)>().max_threads == 2);
}

TEST_CASE("conditions on thread_id() carry the roles they may hold for, and if_ narrows its branches' warp-only checks by them", "[ranges][roles]") {
  constexpr unsigned all = ~0u;
  STATIC_REQUIRE(r<decltype(thread_id() == 1_c)>().may_true == 0b10u);
  STATIC_REQUIRE(r<decltype(thread_id() == 1_c)>().may_false == (all & ~0b10u));
  STATIC_REQUIRE(r<decltype(1_c == thread_id())>().may_true == 0b10u);
  STATIC_REQUIRE(r<decltype(thread_id() >= 1_c)>().may_true == (all & ~1u));
  STATIC_REQUIRE(r<decltype(thread_id() < 2_c)>().may_true == 0b11u);
  STATIC_REQUIRE(r<decltype(!(thread_id() == 1_c))>().may_true == (all & ~0b10u));
  STATIC_REQUIRE(r<decltype((thread_id() == 1_c) || (thread_id() == 2_c))>().may_true == 0b110u);
  // A role-derived number or arithmetic on a condition: read as nothing (left to the verifier).
  STATIC_REQUIRE(r<decltype(thread_id() * 2_c == 2_c)>().may_true == 0u);
  STATIC_REQUIRE(r<decltype(thread_id() * 2_c == 2_c)>().may_false == 0u);
  (void)for_(range(8_c), [](auto j) {
    STATIC_REQUIRE(r<decltype(j < 3_c)>().may_true == all);  // not on thread_id(): any role
    // Role 1 and j < 3: true only for role 1, false for any role.
    STATIC_REQUIRE(r<decltype((thread_id() == 1_c) && (j < 3_c))>().may_true == 0b10u);
    STATIC_REQUIRE(r<decltype((thread_id() == 1_c) && (j < 3_c))>().may_false == all);
    STATIC_REQUIRE(r<decltype(((thread_id() == 1_c) + j) > 0_c)>().may_true == 0u);
    return stmt<>{};
  });
  // A tile store (warp_op_tile) under if_(thread_id() == 0_c, ...): only role 0 may run it; in the
  // else branch of if_(thread_id() == 1_c, ...) every role but 1.
  (void)kernel<sm_90a>("roles", grid(1), threads(warpgroup, warp, warp), smem<f32>(shape(64_c, 64_c)), [](auto s) {
    auto st = store(s, full<f32>(shape(64_c, 64_c), 1.0f));
    STATIC_REQUIRE(decltype(st)::static_info.warp_ops[warp_op_tile] == all);
    STATIC_REQUIRE(decltype(if_(thread_id() == 0_c, st))::static_info.warp_ops[warp_op_tile] == 1u);
    STATIC_REQUIRE(decltype(if_(thread_id() == 1_c, commit_smem(), st))::static_info.warp_ops[warp_op_tile] == (all & ~0b10u));
    return if_(thread_id() == 0_c, st);
  });
}

TEST_CASE("indexing with a proven range needs no run-time check and keeps the info", "[ranges]") {
  auto k = kernel<sm_90a>("tid", grid(1), threads(2_c), barrier(arrivals(1_c), count(2_c)),
                          [](auto bar) { return barrier_arrive(bar[thread_id()]); });
  auto ir = lower(k);
  CHECK(ir.roles == 2);
}

TEST_CASE("program_id ranges over the grid, which kernel() knows when it is static", "[ranges]") {
  using P = decltype(program_id());
  STATIC_REQUIRE(r<P>() == range_t{true, 0, 0, 0, 1, 0});
  STATIC_REQUIRE(r<decltype(program_id(2_c))>() == range_t{true, 0, 0, 0, 1, 2});
  STATIC_REQUIRE(r<decltype(program_id() * 2_c + 1_c)>() == range_t{true, 1, 0, 0, 2, 0});
  STATIC_REQUIRE(r<decltype(program_id() % 4_c)>() == interval(0, 4));
  // Mixed axes and non-linear uses fall back to the largest grid, as before the grid was known.
  STATIC_REQUIRE(r<decltype(program_id(0_c) + program_id(1_c))>() == interval(0, 2 * max_grid_extent - 1));
  STATIC_REQUIRE(r<decltype(program_id() / 2_c)>() == interval(0, max_grid_extent / 2));
  // A 4-element array takes program_id() for grids of up to 4 CTAs, 2 * program_id() + 1 for 2.
  STATIC_REQUIRE(detail::check_index<"Barrier", 4, P>().max_grid[0] == 4);
  STATIC_REQUIRE(detail::check_index<"Barrier", 4, decltype(program_id() * 2_c + 1_c)>().max_grid[0] == 2);
  STATIC_REQUIRE(detail::check_index<"Barrier", 4, decltype(program_id(1_c))>().max_grid[1] == 4);
  STATIC_REQUIRE(detail::check_index<"Barrier", 4, decltype(program_id(1_c))>().max_grid[0] == 0);  // no bound
  STATIC_REQUIRE(detail::check_index<"Barrier", 4, decltype(program_id() % 4_c)>() == no_info);
}
