// The interpreter on the bundled examples: correct under every policy, no false positives,
// deterministic, and clear about bad input.
#include <catch2/catch.hpp>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "inputs.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {

// Small problem sizes keep hundreds of schedules cheap; the kernels' structure is the same.
param_values small(kernel_entry const& e) {
  param_values v;
  for (auto const& p : e.params) {
    if (p.name == "M") v["M"] = p.min * 2;
    if (p.name == "N") v["N"] = p.name == "N" && e.name == "add_one" ? 512 : std::max<std::int64_t>(p.min * 4, 256);
    if (p.name == "B") v["B"] = 5;
  }
  if (e.name == "double_buffer") v["N"] = 512;
  // Sizes for their TMA pipelines (any M works, but below 128 and 32 rows they take the masked
  // generic path, which the shapes label runs).
  if (e.name == "add_one") v["M"] = 256;
  if (e.name == "transpose") v["M"] = 64;
  // One (batch x head) slice already has two CTAs of three warpgroups, S = 256 keys each.
  if (e.name == "attention_hopper" || e.name == "attention_hopper_bwd") v["B"] = 1;
  // Ragged batches: a few groups of a 256-row pack (a seeded table: some empty, some over a tile).
  if (e.name == "gemm_grouped") v = {{"G", 3}, {"T", 256}, {"N", 128}, {"K", 64}};
  if (e.name == "attention_varlen") v = {{"B", 3}, {"T", 256}};
  return registry::resolve(e, v);
}

void require_matches_reference(kernel_entry const& e, param_values const& vals, ir::Kernel const& k, std::vector<host_tensor> const& inputs,
                               interp::result const& r) {
  auto expected = inputs;
  e.reference(expected, vals);
  const auto tol = interp::tolerance_of(k, r, inputs);  // wgmma outputs: within the MMA bound
  for (int p : interp::written_params(k)) {
    INFO("output " << k.params[p].name);
    if (!tol) {
      REQUIRE(r.buffers[p].bytes == expected[p].bytes);
      continue;
    }
    std::int64_t bad = -1;
    for (std::int64_t i = 0; i < r.buffers[p].elements() && bad < 0; ++i)
      if (!(std::abs(r.buffers[p].get(i) - expected[p].get(i)) <= tol->bound(expected[p].get(i), r.buffers[p].dtype))) bad = i;
    INFO("first element outside the MMA bound: " << bad << (bad >= 0 ? ": " + std::to_string(r.buffers[p].get(bad)) + ", reference " + std::to_string(expected[p].get(bad)) : std::string()));
    REQUIRE(bad < 0);
  }
}

}  // namespace

TEST_CASE("every example is correct under eager, lazy, 200 pct and 100 random schedules, with no diagnostic", "[interp]") {
  const std::uint64_t input_seed = 7;
  INFO("input seed " << input_seed);
  for (auto const* e : registry::global().all()) {
    INFO("kernel " << e->name);
    const auto vals = small(*e);
    const auto k = e->build(vals);
    auto inputs = testing::random_buffers(k, input_seed);
    if (e->inputs) e->inputs(inputs, vals);  // attention_hopper_bwd: the forward pass's LSE and delta
    for (auto p : {interp::policy::eager, interp::policy::lazy}) {
      INFO("policy " << interp::policy_name(p));
      auto r = interp::run(k, inputs, {.schedule = p});
      for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
      REQUIRE(r.ok());
      require_matches_reference(*e, vals, k, inputs, r);
    }
    for (auto p : {interp::policy::pct, interp::policy::random}) {
      INFO("policy " << interp::policy_name(p));
      const int budget = p == interp::policy::pct ? 200 : 100;
      auto ex = interp::explore(k, inputs, {.schedule = p, .seed = 1000}, budget);
      if (ex.failure)
        for (auto const& d : ex.failure->diagnostics) UNSCOPED_INFO("seed " << *ex.failing_seed << ": " << d.message);
      REQUIRE(ex.schedules == budget);
      REQUIRE_FALSE(ex.failing_seed);
    }
  }
}

TEST_CASE("pipelined examples give the reference result for every ring depth", "[interp]") {
  for (auto name : {"add_one", "scale_store", "pipelined_add", "ws_copy", "row_block_sum", "strip_pipelines", "softmax_rows", "layernorm_rows", "transpose", "splitk_cluster", "downsample_rows"}) {
    auto const& e = registry::global().find(name);
    for (auto const& p : e.params) {
      if (p.allowed.empty()) continue;
      for (auto depth : p.allowed) {
        INFO(name << " " << p.name << "=" << depth);
        auto vals = small(e);
        vals[p.name] = depth;
        const auto k = e.build(vals);
        const auto inputs = testing::random_buffers(k, 11);
        // The emit_pipeline examples get the full budget: 100 PCT schedules per depth.
        const std::string n(name);
        const int budget = n == "add_one" || n == "scale_store" ? 20 : 100;
        auto ex = interp::explore(k, inputs, {.schedule = interp::policy::pct, .seed = 5}, budget);
        REQUIRE_FALSE(ex.failing_seed);
        for (auto p : {interp::policy::eager, interp::policy::lazy}) {
          auto r = interp::run(k, inputs, {.schedule = p});
          REQUIRE(r.ok());
          require_matches_reference(e, vals, k, inputs, r);
        }
      }
    }
  }
}

TEST_CASE("runs are deterministic: same seed, same bytes, other seeds, other schedules", "[interp]") {
  auto const& e = registry::global().find("handoff");
  const auto vals = small(e);
  const auto k = e.build(vals);
  const auto inputs = testing::random_buffers(k, 3);
  for (auto p : {interp::policy::random, interp::policy::pct}) {
    INFO("policy " << interp::policy_name(p));
    interp::options o{.schedule = p, .seed = 42, .trace = true};
    auto a = interp::run(k, inputs, o);
    auto b = interp::run(k, inputs, o);
    REQUIRE(a.ok());
    CHECK(interp::to_chrome_json(a.timeline) == interp::to_chrome_json(b.timeline));
    CHECK(interp::to_html(a.timeline) == interp::to_html(b.timeline));
    CHECK(a.buffers[2].bytes == b.buffers[2].bytes);
    CHECK(a.steps == b.steps);
    // Another seed interleaves the producer and the consumer differently.
    int different = 0;
    for (std::uint64_t s = 43; s < 48; ++s) {
      o.seed = s;
      auto c = interp::run(k, inputs, o);
      REQUIRE(c.ok());
      different += interp::to_chrome_json(c.timeline) != interp::to_chrome_json(a.timeline);
    }
    CHECK(different >= 4);
  }
}

TEST_CASE("checks off: same results", "[interp]") {
  auto const& e = registry::global().find("add_one");
  const auto vals = small(e);
  const auto k = e.build(vals);
  const auto inputs = testing::random_buffers(k, 9);
  auto with = interp::run(k, inputs, {.schedule = interp::policy::lazy});
  auto without = interp::run(k, inputs, {.schedule = interp::policy::lazy, .checks = false});
  REQUIRE(with.ok());
  REQUIRE(without.ok());
  CHECK(with.buffers[1].bytes == without.buffers[1].bytes);
}

TEST_CASE("bad input is a clear error, never a crash", "[interp]") {
  auto const& e = registry::global().find("add_one");
  const auto k = e.build(small(e));
  auto inputs = testing::random_buffers(k, 1);
  SECTION("a buffer of the wrong shape") {
    inputs[0].shape = {64, 64};
    REQUIRE_THROWS_WITH(interp::run(k, inputs), Contains("kernel 'add_one': parameter 'x' expects f32[256, 512], got f32[64, 64]"));
  }
  SECTION("a buffer of the wrong dtype") {
    inputs[1] = host_tensor::zeros(ir::DType::f16, k.params[1].shape);
    REQUIRE_THROWS_WITH(interp::run(k, inputs), Contains("parameter 'y' expects f32[256, 512], got f16[256, 512]"));
  }
  SECTION("too few buffers") {
    inputs.pop_back();
    REQUIRE_THROWS_WITH(interp::run(k, inputs), Contains("takes 2 GMEM buffers, got 1"));
  }
  SECTION("an IR that does not verify") {
    auto bad = k;
    bad.grid[0] = 0;
    REQUIRE_THROWS_AS(interp::run(bad, inputs), ir::VerifyError);
  }
}

TEST_CASE("a deadlocked kernel ends with the report", "[interp]") {
  // One arrival expected twice: the second phase never completes.
  auto k = lower(kernel<sm_90a>("stuck", grid(1), threads(1_c), barrier(arrivals(2_c)),
                                [](auto bar) { return seq(barrier_arrive(bar), barrier_wait(bar)); }));
  auto r = interp::run(k, {});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == interp::check::deadlock);
  CHECK_THAT(r.diagnostics[0].message, Contains("kernel 'stuck'") && Contains("op #2 (barrier_wait)"));
  CHECK_THAT(r.diagnostics[0].message, Contains("barrier_wait b0[0]: waits for completion #1 (phase 0); arrivals 1/2, tx bytes pending 0") &&
                                           Contains("ops that could still arrive: #1 barrier_arrive"));
}

TEST_CASE("a run-time index out of range names the op and the values", "[interp]") {
  auto k = lower(kernel<sm_90a>("oob", grid(1), threads(1_c), barrier(arrivals(1_c), count(4_c)), [](auto bar) {
    return for_(range(6), [&](auto j) { return barrier_arrive(bar[j]); });  // run-time trip count: unknown range
  }));
  auto r = interp::run(k, {});
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == interp::check::index_out_of_range);
  CHECK_THAT(r.diagnostics[0].message, Contains("op #1 (barrier_arrive)") && Contains("indexes b0 with 4 in dimension 0, which has 4 elements"));
}

TEST_CASE("warp-specialized pipelines: manual release and per-consumer setup/teardown", "[interp][pipeline]") {
  // Two consumers each sum their half of every stage into their own accumulator half (setup:
  // zero it, teardown: store it); they release each stage themselves, right after reading it.
  constexpr long long K = 3, C = 2;
  const std::int64_t M = 128, N = 512;
  auto k = lower(kernel<sm_90a>(
      "ws_manual", grid(M / 128), threads(int_c<C + 1>), gmem<f32>("x", shape(M / 64, 64_c, N)), gmem<f32>("y", shape(M, 64_c)),
      smem<f32>(shape(int_c<K>, 2_c, 64_c, 64_c)), smem<f32>(shape(2_c, 64_c, 64_c)), barrier(arrivals(1_c), count(int_c<K>)),
      barrier(arrivals(int_c<C>), count(int_c<K>)), [&](auto x, auto y, auto xs, auto acc, auto ready, auto consumed) {
        auto row = program_id();
        return emit_pipeline_warp_specialized<K, C, true>(
            N / 64, ready, consumed, ins(in(x, xs, [&](auto j) { return x.block(row, 0_c, j); })),
            [&](auto, auto c, auto stage_view, auto release) {
              return seq(store(acc[c], load(acc[c]) + load(stage_view[c])), barrier_arrive(release));
            },
            [&](auto c) { return store(acc[c], 0.0f); },
            [&](auto c) { return store(y.tile(shape(64_c, 64_c), row * 2_c + c, 0_c), load(acc[c])); });
      }));
  auto inputs = testing::random_buffers(k, 17);
  auto expected = inputs[1];
  auto x = inputs[0].as<float>();
  auto ys = expected.as<float>();
  for (std::int64_t r = 0; r < M; ++r)
    for (std::int64_t c = 0; c < 64; ++c) {
      float s = 0.0f;
      for (std::int64_t j = 0; j < N / 64; ++j) s = s + x[r * N + j * 64 + c];
      ys[r * 64 + c] = s;
    }
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    auto r = interp::run(k, inputs, {.schedule = p});
    for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
    REQUIRE(r.ok());
    CHECK(r.buffers[1].bytes == expected.bytes);
  }
  auto ex = interp::explore(k, inputs, {.schedule = interp::policy::pct, .seed = 3}, 100);
  CHECK_FALSE(ex.failing_seed);
}

TEST_CASE("emit_pipeline over a 2-D grid of steps", "[interp][pipeline]") {
  // Each CTA walks 2 row strips x N/64 column blocks as one pipeline; maps see (strip, column).
  constexpr long long K = 3;
  const std::int64_t M = 256, N = 256;
  auto k = lower(kernel<sm_90a>(
      "grid2d", grid(M / 128), threads(1_c), gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)), smem<f32>(shape(int_c<K>, 64_c, 64_c)),
      smem<f32>(shape(int_c<K>, 64_c, 64_c)), barrier(arrivals(1_c), count(int_c<K>)), [&](auto x, auto y, auto xs, auto ys, auto full) {
        auto block_at = [&](auto const& a) { return [&, a](auto i, auto j) { return a.block(program_id() * 2_c + i, j); }; };
        return emit_pipeline<K>(steps(2_c, N / 64), full, ins(in(x, xs, block_at(x))), outs(out(y, ys, block_at(y))),
                                [&](auto, auto, auto xv, auto yv) { return store(yv, load(xv) * 3.0f); });
      }));
  auto inputs = testing::random_buffers(k, 23);
  auto expected = inputs[1];
  auto x = inputs[0].as<float>();
  auto ys = expected.as<float>();
  for (std::size_t i = 0; i < x.size(); ++i) ys[i] = x[i] * 3.0f;
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    auto r = interp::run(k, inputs, {.schedule = p});
    for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
    REQUIRE(r.ok());
    CHECK(r.buffers[1].bytes == expected.bytes);
  }
  CHECK_FALSE(interp::explore(k, inputs, {.schedule = interp::policy::pct, .seed = 8}, 100).failing_seed);
}

// ---- shadow granularity: every access is checked at its own width ---------------------------
// Each SMEM allocation and GMEM parameter starts with one shadow cell per row; an access that
// does not cover whole cells (one element, a multicast share of a row) splits them first.

TEST_CASE("single-element SMEM writes are recorded: no poison read of what they wrote", "[interp][shadow]") {
  // Row 0 of buf is filled one element at a time, then read as a whole row.
  auto k = lower(kernel<sm_90a>("fill_by_element", grid(1), threads(1_c), gmem<f32>("y", shape(64_c)), smem<f32>(shape(2_c, 64_c)),
                                [](auto y, auto buf) {
                                  return seq(for_(range(64_c), [&](auto j) { return store(buf[0_c][j], 2.5f); }),
                                             store(y.tile(shape(64_c), 0_c), load(buf[0_c]) + 1.0f));
                                }));
  const auto inputs = testing::random_buffers(k, 31);
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    auto r = interp::run(k, inputs, {.schedule = p});
    for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
    REQUIRE(r.ok());
    for (float v : r.buffers[0].as<float>()) CHECK(v == 3.5f);
  }
  // The element never written still reads as poison, at its own index.
  auto gap = lower(kernel<sm_90a>("fill_with_gap", grid(1), threads(1_c), gmem<f32>("y", shape(64_c)), smem<f32>(shape(2_c, 64_c)),
                                  [](auto y, auto buf) {
                                    return seq(for_(range(63_c), [&](auto j) { return store(buf[1_c][j], 2.5f); }),
                                               store(y.tile(shape(64_c), 0_c), load(buf[1_c])));
                                  }));
  auto r = interp::run(gap, testing::random_buffers(gap, 32));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == interp::check::poison_read);
  CHECK_THAT(r.diagnostics[0].message, Contains("kernel 'fill_with_gap'") && Contains("op #3 (store)") && Contains("reads s0[1, 63] (element 127)"));
}

TEST_CASE("a race on one SMEM element between two warpgroups is found, distinct elements are not a race", "[interp][shadow]") {
  // Both warpgroups write element [0][c]; c = 0 for both (the bug) or c = thread_id() (fine).
  // A 2-arrival barrier then orders both writes before warpgroup 0 reads the row.
  auto make = []<bool Same>() {
    return lower(kernel<sm_90a>(Same ? "element_race" : "element_disjoint", grid(1), threads(2_c), gmem<f32>("y", shape(2_c)),
                                smem<f32>(shape(1_c, 2_c)), barrier(arrivals(2_c)), [&](auto y, auto buf, auto done) {
                                  auto write = [&] {
                                    if constexpr (Same) return store(buf[0_c][0_c], 1.0f);
                                    else return store(buf[0_c][thread_id()], 1.0f);
                                  }();
                                  return seq(write, barrier_arrive(done), barrier_wait(done),
                                             if_(thread_id() == 0_c, store(y.tile(shape(2_c), 0_c), load(buf[0_c]))));
                                }));
  };
  const auto race = make.operator()<true>();
  const auto inputs = testing::random_buffers(race, 33);
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    INFO("policy " << interp::policy_name(p));
    auto r = interp::run(race, inputs, {.schedule = p});
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics[0].kind == interp::check::data_race);
    CHECK_THAT(r.diagnostics[0].message, Contains("kernel 'element_race'") && Contains("op #1 (store)") &&
                                             Contains("data race on SMEM s0[0, 0]") && Contains("is not ordered after the earlier write by warpgroup"));
  }
  const auto fine = make.operator()<false>();
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    auto r = interp::run(fine, inputs, {.schedule = p});
    for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
    REQUIRE(r.ok());
    CHECK(r.buffers[0].as<float>()[0] == 1.0f);
    CHECK(r.buffers[0].as<float>()[1] == 1.0f);
  }
  CHECK_FALSE(interp::explore(fine, inputs, {.schedule = interp::policy::pct, .seed = 4}, 50).failing_seed);
}

TEST_CASE("a rank-1 multicast lands each CTA's share of the row: shadows split to the share", "[interp][shadow]") {
  // w (128 elements) is multicast to both CTAs of a cluster: each loads 64 and receives 128.
  // Each CTA then scales its 128-element strip of x by w.
  auto k = lower(kernel<sm_90a>("multicast_row", grid(4), threads(1_c), cluster(2_c), gmem<f32>("x", shape(512_c)), gmem<f32>("w", shape(128_c)),
                                gmem<f32>("y", shape(512_c)), smem<f32>(shape(128_c)), barrier(arrivals(1_c)),
                                [](auto x, auto w, auto y, auto ws, auto loaded) {
                                  return seq(copy_gmem_to_smem(w.block(0_c), ws, loaded, collective_axes(0_c)), barrier_wait(loaded),
                                             store(y.tile(shape(128_c), program_id()), load(x.tile(shape(128_c), program_id())) * load(ws)));
                                }));
  const auto inputs = testing::random_buffers(k, 34);
  auto expected = inputs[2];
  auto x = inputs[0].as<float>();
  auto w = inputs[1].as<float>();
  auto ys = expected.as<float>();
  for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = x[i] * w[i % 128];
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    INFO("policy " << interp::policy_name(p));
    auto r = interp::run(k, inputs, {.schedule = p});
    for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
    REQUIRE(r.ok());
    CHECK(r.buffers[2].bytes == expected.bytes);
  }
  CHECK_FALSE(interp::explore(k, inputs, {.schedule = interp::policy::pct, .seed = 6}, 50).failing_seed);
}

// ---- proxy fences: generic writes before any async-proxy access of the same bytes ----------

TEST_CASE("a TMA store over GMEM written with ordinary stores needs commit_smem in between", "[interp][fence]") {
  // y's block is cleared with ordinary stores after the fence that covers buf, then the TMA
  // store writes the same block: the clear may land after the copy.
  auto make = []<bool Bug>() {
    return lower(kernel<sm_90a>("clear_then_tma_store", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 64_c)), gmem<f32>("y", shape(64_c, 64_c)),
                                smem<f32>(shape(64_c, 64_c)), barrier(arrivals(1_c)), [](auto x, auto y, auto buf, auto loaded) {
                                  auto clear = [&] {
                                    if constexpr (Bug) return store(y.tile(shape(64_c, 64_c), 0_c, 0_c), 0.0f);
                                    else return seq(store(y.tile(shape(64_c, 64_c), 0_c, 0_c), 0.0f), commit_smem());
                                  }();
                                  return seq(copy_gmem_to_smem(x.block(0_c, 0_c), buf, loaded), barrier_wait(loaded),
                                             store(buf, load(buf) + 1.0f), commit_smem(), clear, copy_smem_to_gmem(buf, y.block(0_c, 0_c)),
                                             commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                                }));
  };
  const auto bad = make.operator()<true>();
  const auto inputs = testing::random_buffers(bad, 35);
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    INFO("policy " << interp::policy_name(p));
    auto r = interp::run(bad, inputs, {.schedule = p});
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics[0].kind == interp::check::missing_fence);
    CHECK_THAT(r.diagnostics[0].message, Contains("kernel 'clear_then_tma_store', op #6 (copy_smem_to_gmem)") &&
                                             Contains("the TMA engine writes GMEM y[0, 0], written by warpgroup 0 of CTA (0, 0, 0)") &&
                                             Contains("may land after the copy's bytes"));
  }
  const auto good = make.operator()<false>();
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    auto r = interp::run(good, inputs, {.schedule = p});
    for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
    REQUIRE(r.ok());
    auto expected = inputs[1];
    auto x = inputs[0].as<float>();
    auto ys = expected.as<float>();
    for (std::size_t i = 0; i < x.size(); ++i) ys[i] = x[i] + 1.0f;
    CHECK(r.buffers[1].bytes == expected.bytes);
  }
  CHECK_FALSE(interp::explore(good, inputs, {.schedule = interp::policy::pct, .seed = 9}, 50).failing_seed);
}

TEST_CASE("a strided TMA load lands every stride-th row of its footprint, the same load without strides lands other rows", "[interp]") {
  auto const& e = registry::global().find("downsample_rows");
  for (std::int64_t R : {2, 4, 8}) {
    INFO("R = " << R);
    const auto vals = registry::resolve(e, {{"M", 512}, {"N", 128}, {"R", R}});
    auto k = e.build(vals);
    const auto inputs = testing::random_buffers(k, 23);
    auto r = interp::run(k, inputs, {.schedule = interp::policy::lazy});
    REQUIRE(r.ok());
    require_matches_reference(e, vals, k, inputs, r);
    // Strides dropped from the IR: block (i, j) is then rows [32 i, 32 i + 32), dense.
    int strided = 0;
    for (auto& ref : k.refs)
      if (!ref.stride.empty()) {
        ref.stride.clear();
        ++strided;
      }
    CHECK(strided == 2);  // the prologue's load and the refill's
    auto dense = interp::run(k, inputs, {.schedule = interp::policy::lazy});
    REQUIRE(dense.ok());
    auto expected = inputs;
    e.reference(expected, vals);
    CHECK(dense.buffers[1].bytes != expected[1].bytes);
  }
}

TEST_CASE("a strided block past the array's footprints is reported with its strides", "[interp]") {
  auto const& e = registry::global().find("downsample_rows");
  auto k = e.build(registry::resolve(e, {{"M", 512}, {"N", 128}, {"R", 2}}));
  // One CTA too many: CTA 8 of 9 addresses footprint 8 of the 512 / 64 = 8 there are.
  k.grid[0] += 1;
  const auto inputs = testing::random_buffers(k, 5);
  auto r = interp::run(k, inputs, {.schedule = interp::policy::eager});
  REQUIRE_FALSE(r.ok());
  bool found = false;
  for (auto const& d : r.diagnostics)
    found = found || (d.message.find("GMEM block out of range") != std::string::npos && d.message.find("blocks of (32, 64) strided (2, 1) cover only [0, 8)") != std::string::npos);
  CHECK(found);
}
