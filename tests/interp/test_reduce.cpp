// Reducing stores (ops/reduce.hpp, issue 28 item 1): red.global and TMA reduce-add/min/max.
// Reductions from CTAs that nothing orders commute, so every schedule gives the same result
// (integer-valued f32 inputs keep the float sums exact in every order); a plain access of an
// element some unordered access reduces into is a race, and the verifier keeps reductions to
// GMEM and to the dtypes their instructions take.
#include <cstdint>
#include <random>
#include <type_traits>

#include <catch2/catch.hpp>
#include <stagecraft/interp/interp.hpp>
#include <stagecraft/stagecraft.hpp>

#include "reduce_kernels.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {

// y op x[:, 0:64] op x[:, 64:128] op x[:, 128:192], row by row (the probe's 100 rows).
template <class T>
std::vector<T> expected_probe(std::vector<host_tensor> const& in, ir::Reduce op) {
  auto x = in[0].as<T>();
  auto y = in[1].as<T>();
  std::vector<T> out(y.begin(), y.end());
  for (std::int64_t r = 0; r < 100; ++r)
    for (std::int64_t c = 0; c < 64; ++c) {
      T& e = out[static_cast<std::size_t>(r * 64 + c)];
      for (std::int64_t s = 0; s < 3; ++s) {
        const T v = x[static_cast<std::size_t>(r * 192 + s * 64 + c)];
        if (op == ir::Reduce::add) {
          if constexpr (std::is_integral_v<T>) e = static_cast<T>(static_cast<std::uint32_t>(e) + static_cast<std::uint32_t>(v));  // wraps, as the hardware's add
          else e = e + v;
        }
        else e = op == ir::Reduce::min ? std::min(e, v) : std::max(e, v);
      }
    }
  return out;
}

template <class T>
void probe_matches(ir::Kernel const& k, ir::Reduce op) {
  const auto inputs = testing::integer_buffers(k, 28);
  const auto want = expected_probe<T>(inputs, op);
  std::vector<interp::options> runs = {{.schedule = interp::policy::eager}, {.schedule = interp::policy::lazy}};
  for (std::uint64_t seed = 0; seed < 20; ++seed) runs.push_back({.schedule = interp::policy::pct, .seed = seed});
  for (auto const& o : runs) {
    INFO(k.name << " under " << interp::policy_name(o.schedule) << " seed " << o.seed);
    auto r = interp::run(k, inputs, o);
    INFO((r.diagnostics.empty() ? std::string() : r.diagnostics[0].message));
    REQUIRE(r.ok());
    auto y = r.buffers[1].as<T>();
    CHECK(std::vector<T>(y.begin(), y.end()) == want);
  }
}

}  // namespace

TEST_CASE("reducing stores: three unordered CTAs add f32 into y, generic and TMA, the same sum under every schedule", "[interp][reduce]") {
  probe_matches<float>(testing::reduce_probe<f32, ir::Reduce::add, false>("reduce_add_f32"), ir::Reduce::add);
  probe_matches<float>(testing::reduce_probe<f32, ir::Reduce::add, true>("reduce_add_f32_tma"), ir::Reduce::add);
}

TEST_CASE("reducing stores: i32 and u32 add (wrapping), min and max, generic and TMA", "[interp][reduce]") {
  probe_matches<std::int32_t>(testing::reduce_probe<i32, ir::Reduce::add, false>("reduce_add_i32"), ir::Reduce::add);
  probe_matches<std::int32_t>(testing::reduce_probe<i32, ir::Reduce::min, true>("reduce_min_i32_tma"), ir::Reduce::min);
  probe_matches<std::uint32_t>(testing::reduce_probe<u32, ir::Reduce::max, false>("reduce_max_u32"), ir::Reduce::max);
  probe_matches<std::uint32_t>(testing::reduce_probe<u32, ir::Reduce::min, true>("reduce_min_u32_tma"), ir::Reduce::min);
}

TEST_CASE("reducing stores: f32 adds flush subnormals as red.add.f32 does", "[interp][reduce]") {
  const auto k = testing::reduce_probe<f32, ir::Reduce::add, false>("reduce_add_subnormal");
  auto inputs = testing::integer_buffers(k, 5);
  // y[0, 0] = 2^-127 (subnormal), every x block 0 there: the flushed sum is +0, not 2^-127.
  inputs[1].as<float>()[0] = 0x1p-127f;
  for (int s = 0; s < 3; ++s) inputs[0].as<float>()[static_cast<std::size_t>(s * 64)] = 0.0f;
  auto r = interp::run(k, inputs, {});
  REQUIRE(r.ok());
  CHECK(r.buffers[1].as<float>()[0] == 0.0f);
  CHECK(!std::signbit(r.buffers[1].as<float>()[0]));
}

TEST_CASE("reducing stores: a plain read ordered after every reduction by a cluster barrier is clean, without it a race", "[interp][reduce]") {
  {
    const auto k = testing::reduce_then_read<false>();
    const auto inputs = testing::integer_buffers(k, 3);
    for (auto p : {interp::policy::eager, interp::policy::lazy}) {
      auto r = interp::run(k, inputs, {.schedule = p});
      INFO((r.diagnostics.empty() ? std::string() : r.diagnostics[0].message));
      REQUIRE(r.ok());
      auto x = inputs[0].as<float>();
      auto y = inputs[1].as<float>();
      auto z = r.buffers[2].as<float>();
      for (std::int64_t i = 0; i < 64 * 64; ++i) {
        const std::int64_t row = i / 64, col = i % 64;
        CHECK(z[static_cast<std::size_t>(i)] == y[static_cast<std::size_t>(i)] + x[static_cast<std::size_t>(row * 128 + col)] +
                                                     x[static_cast<std::size_t>(row * 128 + 64 + col)]);
      }
    }
  }
  {
    const auto k = testing::reduce_then_read<true>();
    auto r = interp::run(k, testing::integer_buffers(k, 3), {.schedule = interp::policy::eager});
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics[0].kind == interp::check::data_race);
    CHECK_THAT(r.diagnostics[0].message, Contains("kernel 'reduce_then_read_unordered'") && Contains("data race on GMEM y[") &&
                                             Contains("reduction") && Contains("must be ordered with every reduction into it"));
  }
}

TEST_CASE("reducing stores: a reduction into what another CTA plainly wrote races", "[interp][reduce]") {
  const auto k = testing::write_then_reduce();
  auto r = interp::run(k, testing::integer_buffers(k, 4), {});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == interp::check::data_race);
  CHECK_THAT(r.diagnostics[0].message, Contains("data race on GMEM y[0, 0]: warpgroup 0 of CTA (1, 0, 0) (reduction) is not ordered after the "
                                                "earlier write by another cluster") &&
                                           Contains("combine atomically with each other"));
}

TEST_CASE("reducing stores: the verifier keeps them to GMEM, to known ops and to the dtypes their instructions take", "[interp][reduce][verify]") {
  auto find_store = [](ir::Kernel const& k, bool to_param) {
    for (std::size_t i = 0; i < k.stmts.size(); ++i)
      if (k.stmts[i].op == ir::StmtOp::store && (k.refs[k.stmts[i].refs[0]].base == ir::RefBase::param) == to_param) return i;
    FAIL("no such store");
    return std::size_t{0};
  };
  {
    auto k = testing::reduce_probe<f32, ir::Reduce::add, false>("k");
    const auto s = find_store(k, true);
    ir::verify(k);
    k.stmts[s].n = 4;
    CHECK_THROWS_WITH(ir::verify(k), Contains("names no reduction"));
    k.stmts[s].n = static_cast<std::int64_t>(ir::Reduce::max);
    CHECK_THROWS_WITH(ir::verify(k), Contains("reduces (max) into parameter 'y' of dtype f32, but max takes i32 and u32 only"));
  }
  {
    auto k = testing::reduce_probe<f32, ir::Reduce::add, true>("k");
    k.stmts[find_store(k, false)].n = static_cast<std::int64_t>(ir::Reduce::add);  // the tile's store into SMEM
    CHECK_THROWS_WITH(ir::verify(k), Contains("reductions go to GMEM only"));
  }
  {  // n on an op that takes no reduction
    auto k = testing::reduce_probe<f32, ir::Reduce::add, true>("k");
    for (auto& st : k.stmts)
      if (st.op == ir::StmtOp::commit_smem) st.n = 1;
    CHECK_THROWS_WITH(ir::verify(k), Contains("carries n = 1, which it does not use"));
  }
}

TEST_CASE("reducing stores print as the user wrote them", "[interp][reduce]") {
  const auto text = ir::print(testing::reduce_probe<i32, ir::Reduce::min, true>("k"));
  CHECK_THAT(text, Contains("copy_smem_to_gmem.min s0 -> y.block[v0, 0](64x64)"));
  CHECK_THAT(ir::print(testing::reduce_probe<f32, ir::Reduce::add, false>("k")), Contains("store.add y.block[v0, 0](64x64) masked(0) <- load(x.block[v0, program_id.x](64x64) masked(0))"));
}
