// stagecraft bench from the C++ API: sweeps, the IR's work, the modelled machine (its latency
// hiding, its dependence on the machine, that waits never finish before their phase), the
// writers (everything from the model says MODEL), shard records and the calibration fit.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <tuple>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <stagecraft/bench/bench.hpp>
#include <stagecraft/interp/interp.hpp>
#include <stagecraft/registry.hpp>

using namespace stagecraft;

namespace {

std::vector<double> model_times(param_values set, std::string const& machine = "H200") {
  bench::options o;
  o.set = std::move(set);
  o.sweep = {bench::parse_sweep("K=1..6")};
  o.machine = machine;
  const auto rep = bench::run(registry::global().find("add_one"), o);
  std::vector<double> t;
  for (auto const& p : rep.points) {
    REQUIRE(p.error.empty());
    t.push_back(p.median_ms);
  }
  return t;
}

}  // namespace

TEST_CASE("bench: sweeps parse ranges and lists and reject the rest with the text", "[bench]") {
  CHECK(bench::parse_sweep("K=1..6").values == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6});
  CHECK(bench::parse_sweep("N=256,1024").values == std::vector<std::int64_t>{256, 1024});
  CHECK_THROWS_WITH(bench::parse_sweep("K"), Catch::Contains("--sweep 'K': expected k=a..b or k=a,b,c"));
  CHECK_THROWS_WITH(bench::parse_sweep("K=6..1"), Catch::Contains("the range 6..1 is empty"));
  CHECK_THROWS_WITH(bench::parse_sweep("K=1,x"), Catch::Contains("'x' is not an integer"));
  auto const& e = registry::global().find("add_one");
  bench::options o;
  o.sweep = {bench::parse_sweep("Q=1,2")};
  CHECK_THROWS_WITH(bench::points_of(e, o), Catch::Contains("kernel 'add_one' has no parameter 'Q' to sweep (its parameters: M, N, K, splits)"));
  o.sweep = {bench::parse_sweep("K=1..7")};
  CHECK_THROWS_AS(bench::points_of(e, o), usage_error);  // K=7 is not an allowed value
  o.sweep = {bench::parse_sweep("K=1,2"), bench::parse_sweep("splits=1,2,4")};
  auto pts = bench::points_of(e, o);
  REQUIRE(pts.size() == 6);
  CHECK(pts[0].at("K") == 1);
  CHECK(pts[0].at("splits") == 1);
  CHECK(pts[1].at("splits") == 2);  // the first axis varies slowest
  CHECK(pts[3].at("K") == 2);
}

TEST_CASE("bench: bytes and FLOPs come from the IR, with the loops and branches each CTA takes", "[bench]") {
  auto const& e = registry::global().find("add_one");
  for (auto [M, N, splits] : {std::tuple{512, 1024, 2}, std::tuple{256, 2048, 4}}) {
    const auto k = registry::build(e, registry::resolve(e, {{"M", M}, {"N", N}, {"splits", splits}}));
    const auto w = bench::work_of(k, bench::seeded_inputs(k, 1));
    CHECK(w.read_bytes == 4.0 * M * N);   // x once: the prologue's if_ stops at the CTA's range
    CHECK(w.write_bytes == 4.0 * M * N);  // y once
    CHECK(w.flops == 1.0 * M * N);        // one add per element
    CHECK(w.memory_bound());
  }
}

// An overhanging last tile moves its rows and columns, not its box: TMA neither reads nor writes
// the outside of a box that overhangs its array. The work counts what lies inside (it used to
// count whole boxes: 640 rows at M = 513), and so does the model, which replays one cluster with
// the bytes the interpreter's TMA moved: at N = 1000 the one CTA's last column block is 40 wide,
// and the HBM bound is 1000/1024 of N = 1024's (it was the same).
TEST_CASE("bench: an overhanging last tile costs what lies inside its array, in the work and in the model", "[bench][model]") {
  auto const& e = registry::global().find("add_one");
  auto at = [&](std::int64_t M, std::int64_t N, std::int64_t splits) {
    return registry::build(e, registry::resolve(e, {{"M", M}, {"N", N}, {"splits", splits}}));
  };
  for (auto [M, N] : {std::pair<std::int64_t, std::int64_t>{513, 1024}, {2049, 4096}, {200, 1000}}) {
    const auto k = at(M, N, 2);
    const auto w = bench::work_of(k, bench::seeded_inputs(k, 1));
    CHECK(w.read_bytes == 4.0 * static_cast<double>(M * N));
    CHECK(w.write_bytes == 4.0 * static_cast<double>(M * N));
  }
  auto hbm = [&](std::int64_t N) {
    const auto k = at(128, N, 1);  // one CTA: the modelled cluster holds the partial block
    return bench::predict(k, bench::seeded_inputs(k, 1), bench::find_machine("H200")).hbm_bound_ms;
  };
  const double partial = hbm(1000), whole = hbm(1024);
  INFO("HBM bound at N=1000: " << partial << " ms, at N=1024: " << whole << " ms");
  CHECK(partial / whole == Approx(1000.0 / 1024.0).epsilon(0.001));
}

TEST_CASE("bench: the modelled add_one hides latency as K grows and the curve flattens", "[bench][model]") {
  const auto t = model_times({});
  INFO("K=1..6: " << t[0] << " " << t[1] << " " << t[2] << " " << t[3] << " " << t[4] << " " << t[5] << " ms");
  for (std::size_t i = 1; i < t.size(); ++i) CHECK(t[i] <= t[i - 1] * 1.0001);
  // More stages hide the TMA latency: K=6 at least 1.8x faster than K=1...
  CHECK(t[0] / t[5] > 1.8);
  // ... and the gain shrinks: the last step gains less than a quarter of what K=1->3 gained.
  CHECK(t[4] - t[5] < (t[0] - t[2]) / 4);
}

TEST_CASE("bench: the model answers to its machine: bandwidth where bandwidth-bound, latency where latency-bound", "[bench][model]") {
  const param_values big{{"M", 2048}, {"N", 4096}, {"splits", 2}};
  const auto h200 = model_times(big, "H200");
  const auto b200 = model_times(big, "B200");
  CHECK(b200[5] < h200[5]);  // K=6 is HBM-bound on the H200: the B200's 8 TB/s is faster
  // Twice the TMA latency: K=1 (nothing to overlap with) gets much slower, K=6 far less.
  auto ms = bench::load_machines();
  auto slow = *std::find_if(ms.begin(), ms.end(), [](auto const& m) { return m.name == "H200"; });
  slow.tma_latency_ns *= 2;
  const auto k = [&](int K) {
    auto const& e = registry::global().find("add_one");
    auto v = big;
    v["K"] = K;
    const auto kk = registry::build(e, registry::resolve(e, v));
    std::vector<host_tensor> in;
    for (auto const& p : kk.params) in.push_back(host_tensor::zeros(p.dtype, p.shape));
    return std::pair{bench::predict(kk, in, slow).kernel_ms, bench::predict(kk, in, ms[0]).kernel_ms};
  };
  const auto [k1_slow, k1] = k(1);
  const auto [k6_slow, k6] = k(6);
  INFO("K=1: " << k1 << " -> " << k1_slow << " ms; K=6: " << k6 << " -> " << k6_slow << " ms");
  CHECK(k1_slow / k1 > 1.3);
  CHECK(k6_slow / k6 - 1 < (k1_slow / k1 - 1) / 2);
}

TEST_CASE("bench: in the modelled timeline no wait ends before the phase it waits for", "[bench][model]") {
  for (const char* name : {"add_one", "ws_copy", "handoff", "multicast_scale"}) {
    auto const& e = registry::global().find(name);
    const auto k = registry::build(e, registry::resolve(e, {}));
    std::vector<host_tensor> in;
    for (auto const& p : k.params) in.push_back(host_tensor::zeros(p.dtype, p.shape));
    const auto pr = bench::predict(k, in, bench::find_machine("H200"));
    CHECK(pr.timeline.time_unit == "ns");
    // The HTML page and the Chrome trace carry the unit: a model's timeline never reads as steps.
    CHECK_THAT(interp::to_html(pr.timeline), Catch::Contains("\"unit\":\"ns\""));
    CHECK_THAT(interp::to_chrome_json(pr.timeline), Catch::Contains("\"time_unit\":\"1 us = 1 ns (MODEL)\""));
    CHECK_THAT(pr.timeline.kernel, Catch::Contains("MODEL"));
    std::map<std::pair<int, std::string>, std::uint64_t> phase_at;
    for (auto const& ev : pr.timeline.events)
      if (ev.what == interp::trace_event::kind::phase) phase_at[{ev.cta, ev.label.substr(0, ev.label.find(" (phase"))}] = ev.t0;
    int waits = 0;
    for (auto const& ev : pr.timeline.events) {
      if (ev.what != interp::trace_event::kind::op || ev.label.rfind("barrier_wait ", 0) != 0) continue;
      // "barrier_wait b1[2] for completion #3" waits for "b1[2] completion #3"
      const auto key = std::pair{ev.cta, ev.label.substr(13, ev.label.find(" for ") - 13) + " completion #" + ev.label.substr(ev.label.find('#') + 1)};
      REQUIRE(phase_at.count(key));
      CHECK(ev.t1 >= phase_at[key]);
      ++waits;
    }
    INFO(name);
    CHECK(waits > 0);
    CHECK(pr.kernel_ms > 0);
    CHECK(pr.kernel_ms * 1e6 >= pr.cta_ns);
  }
}

TEST_CASE("bench: every writer says MODEL for the model, and shard records round-trip", "[bench]") {
  bench::options o;
  o.sweep = {bench::parse_sweep("K=1,4")};
  const auto rep = bench::run(registry::global().find("add_one"), o);
  REQUIRE(rep.points.size() == 2);
  CHECK_THAT(bench::table(rep), Catch::Contains("MODEL: every time below is predicted"));
  CHECK_THAT(bench::table(rep), Catch::Contains("MODEL ms"));
  const auto j = nlohmann::json::parse(bench::to_json(rep));
  CHECK(j["modelled"] == true);
  CHECK_THAT(j["kind"].get<std::string>(), Catch::Contains("MODEL"));
  CHECK(j["points"][0].contains("predicted_ms"));
  CHECK_FALSE(j["points"][0].contains("median_ms"));  // a model has no median of anything
  const auto csv = bench::to_csv(rep);
  CHECK_THAT(csv, Catch::Contains("add_one,model,MODEL,4,"));
  const auto svg = bench::to_svg(rep);
  CHECK_THAT(svg, Catch::Contains("MODEL of H200 (predicted, not measured)"));
  CHECK_THAT(svg, Catch::Contains("<polyline"));
  for (auto const& p : rep.points) {
    const auto back = bench::point_from_json(bench::point_json(p));
    CHECK(bench::point_json(back) == bench::point_json(p));
    CHECK(back.values == p.values);
  }
}

TEST_CASE("bench: calibration recovers a machine's latency and launch cost from its timings", "[bench][model]") {
  // "Measurements" from a machine whose TMA latency and launch overhead differ from the H200
  // entry's: the fit must bring the error down from tens of percent to a few.
  auto truth = bench::find_machine("H200");
  truth.tma_latency_ns = 1500;
  truth.launch_us = 7;
  auto const& e = registry::global().find("add_one");
  std::vector<bench::sample> samples;
  for (int K : {1, 2, 4, 6})
    for (int splits : {1, 2}) {
      auto k = registry::build(e, registry::resolve(e, {{"K", K}, {"splits", splits}, {"M", 1024}, {"N", 2048}}));
      ir::Kernel one = k;
      one.grid = {1, 1, 1};
      std::vector<host_tensor> in;
      for (auto const& p : k.params) in.push_back(host_tensor::zeros(p.dtype, p.shape));
      auto r = interp::run(one, in, {.schedule = interp::policy::eager, .checks = false, .trace = true});
      REQUIRE(r.ok());
      const double measured = bench::replay(k, r.timeline, truth).kernel_ms;
      samples.push_back({k, std::move(r.timeline), measured, "K=" + std::to_string(K)});
    }
  const auto f = bench::calibrate(bench::find_machine("H200"), samples);
  double before = 0, after = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) before = std::max(before, std::abs(f.error_before[i])), after = std::max(after, std::abs(f.error_after[i]));
  INFO("worst error before " << before << ", after " << after << "; fitted latency " << f.fitted.tma_latency_ns << " ns, launch " << f.fitted.launch_us << " us");
  CHECK(before > 0.2);
  CHECK(after < 0.05);
  CHECK_THROWS_WITH(bench::calibrate(truth, {samples[0]}), Catch::Contains("at least 2 measured configurations, got 1"));
}

TEST_CASE("bench: the machine file's mistakes name the file, the machine and the field", "[bench]") {
  CHECK_THROWS_WITH(bench::find_machine("A100"), Catch::Contains("unknown machine 'A100' (the model knows H200, H100, B200)"));
  CHECK_THROWS_WITH(bench::load_machines("/no/such/machines.json"), Catch::Contains("cannot read the machine file '/no/such/machines.json'"));
  auto ms = bench::load_machines();
  REQUIRE(ms.size() == 3);
  const auto text = bench::machines_json(ms);
  CHECK(bench::find_machine("B200").sms == 148);
  auto j = nlohmann::json::parse(text);
  j["machines"][0].erase("tma_latency_ns");
  const std::string path = "bench_bad_machines.json";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    REQUIRE(f);
    std::fputs(j.dump().c_str(), f);
    std::fclose(f);
  }
  CHECK_THROWS_WITH(bench::load_machines(path), Catch::Contains("bench_bad_machines.json: machine 'H200' has no \"tma_latency_ns\""));
  std::remove(path.c_str());
}

TEST_CASE("bench: an interpreter timeline still counts scheduler steps", "[bench]") {
  // The unit field is new; the interpreter's own timelines must keep reading as steps.
  auto const& e = registry::global().find("add_one");
  const auto k = registry::build(e, registry::resolve(e, {}));
  std::vector<host_tensor> in;
  for (auto const& p : k.params) in.push_back(host_tensor::zeros(p.dtype, p.shape));
  const auto r = interp::run(k, in, {.trace = true});
  CHECK(r.timeline.time_unit == "step");
  CHECK_THAT(interp::to_html(r.timeline), Catch::Contains("\"unit\":\"step\""));
  CHECK_THAT(interp::to_chrome_json(r.timeline), Catch::Contains("\"time_unit\":\"1 us = 1 scheduler step\""));
}

TEST_CASE("bench: a modelled load does not queue behind bandwidth used later in modelled time", "[bench][model]") {
  // ws_copy's producer issues its K prologue loads before the consumers run, but the
  // interpreter's round-robin visits the consumers' first stores (modelled ~1 us later) before
  // the third load. With the bandwidth share as a FIFO in visiting order, that load waited for
  // those stores and landed ~2.4 us in instead of ~1.4 us. Each prologue load must land within
  // the latency plus the prologue's bytes at the CTA's share.
  auto const& e = registry::global().find("ws_copy");
  const auto k = registry::build(e, registry::resolve(e, {{"K", 3}}));
  std::vector<host_tensor> in;
  for (auto const& p : k.params) in.push_back(host_tensor::zeros(p.dtype, p.shape));
  const auto m = bench::find_machine("H200");
  const auto pr = bench::predict(k, in, m);
  const double bound_extra = m.tma_latency_ns + 3 * 32768 / pr.hbm_share_gbps + 2;
  int seen = 0;
  for (auto const& ev : pr.timeline.events) {
    if (ev.what != interp::trace_event::kind::async || pr.timeline.lanes[ev.lane] != "tma load") continue;
    for (int j = 0; j < 3; ++j)
      if (ev.label.find("block (0, " + std::to_string(j) + ")") != std::string::npos) {  // x (M, N): row block 0, column block j
        INFO("load of block " << j << ": issued at " << ev.t0 << " ns, landed at " << ev.t1 << " ns");
        CHECK(static_cast<double>(ev.t1) <= static_cast<double>(ev.t0) + bound_extra);
        ++seen;
      }
  }
  CHECK(seen == 3);
}

namespace {

struct modelled {
  ir::Kernel k;
  bench::prediction p;
  double tflops() const { return bench::work_of(k, bench::seeded_inputs(k, 1)).tensor_flops / p.kernel_ms / 1e9; }
};
modelled model_of(std::string const& name, param_values const& values, std::string const& machine, bench::model_options const& o = {}) {
  auto const& e = registry::global().find(name);
  auto k = registry::build(e, registry::resolve(e, values));
  auto p = bench::predict(k, bench::seeded_inputs(k, 1), bench::find_machine(machine), o);
  return {std::move(k), std::move(p)};
}

}  // namespace

// A pair MMA (tcgen05 cta_group::2) is issued by the even CTA of the pair for both: M is twice its
// accumulator's rows and its own B is half of N. The work counted a quarter of the FLOPs
// (gemm_blackwell_2cta at 8192^3 read 275 GFLOP, 278 "TFLOP/s" in bench's table).
TEST_CASE("bench: the work of every GEMM is 2 M N K tensor FLOPs, pair MMAs and TMEM rings included", "[bench]") {
  const std::int64_t M = 1024, N = 1024, K = 512;
  for (auto const& [name, extra] : std::vector<std::pair<std::string, param_values>>{
           {"gemm_hopper", {}}, {"gemm_hopper", {{"cluster", 1}, {"ctas", 3}, {"tickets", 1}}}, {"gemm_fp8", {}}, {"gemm_blackwell", {}},
           {"gemm_blackwell", {{"ctas", 3}}}, {"gemm_blackwell_2cta", {}}}) {
    auto const& e = registry::global().find(name);
    auto v = extra;
    v["M"] = M, v["N"] = N, v["K"] = K;
    const auto k = registry::build(e, registry::resolve(e, v));
    INFO(name << (extra.empty() ? "" : extra.count("tickets") ? " (tickets from a counter, ctas=3)" : " (persistent, ctas=3)"));
    CHECK(bench::work_of(k, bench::seeded_inputs(k, 1)).tensor_flops == Approx(2.0 * M * N * K));
  }
}

// A ticket counter (gemm_hopper tickets=1) hands the tiles out at run time. The model replays one
// CTA for the grid, which alone took every ticket (the whole GEMM on one SM: 16.2 ms where the
// static schedule is 0.19 ms at 4096^3), and the work walk gave the consumers only round 0's
// tile (187 "TFLOP/s" where the same time is 726). Both now take the tickets as CTAs at one
// pace would: each CTA its even share, so the two schedules cost the same.
TEST_CASE("bench: tickets from a counter are shared as CTAs at one pace share them, in the work and in the model", "[bench][model]") {
  const param_values base{{"M", 2048}, {"N", 2048}, {"K", 1024}, {"cluster", 1}, {"ctas", 20}};
  auto with = [&](std::int64_t tickets) {
    auto v = base;
    v["tickets"] = tickets;
    return model_of("gemm_hopper", v, "H200");
  };
  const auto stat = with(0), dyn = with(1);
  CHECK(dyn.p.kernel_ms == Approx(stat.p.kernel_ms).epsilon(0.02));
  CHECK(dyn.tflops() == Approx(stat.tflops()).epsilon(0.02));
  const auto w = bench::work_of(dyn.k, bench::seeded_inputs(dyn.k, 1));
  CHECK(w.tensor_flops == Approx(2.0 * 2048 * 2048 * 1024));
}

// The model replays one cluster for the grid. A causal attention's CTAs differ in work (the first
// query tile takes one key block, the last S / 128), and CTA 0 alone put the causal kernel at a
// tenth of the non-causal one's time: 2947 "TFLOP/s" on an H200 (attention_hopper, S = 4096, B =
// 64), three times the machine's peak. The first and the last cluster now stand for the grid.
TEST_CASE("bench: a causal attention's model counts its CTAs' mean work, not the first CTA's", "[bench][model]") {
  for (auto const& [name, machine] : {std::pair<std::string, std::string>{"attention_hopper", "H200"}, {"attention_blackwell", "B200"}}) {
    INFO(name << " on " << machine);
    // Several waves of CTAs (one wave ends with its slowest CTA, which is as slow causal or not).
    const auto plain = model_of(name, {{"S", 4096}, {"B", 32}, {"D", 64}, {"causal", 0}}, machine);
    const auto causal = model_of(name, {{"S", 4096}, {"B", 32}, {"D", 64}, {"causal", 1}}, machine);
    REQUIRE(causal.p.waves >= 2);
    // Half the key blocks (a little more: the diagonal's): about half the time, and the same rate.
    CHECK(causal.p.kernel_ms > 0.4 * plain.p.kernel_ms);
    CHECK(causal.p.kernel_ms < 0.75 * plain.p.kernel_ms);
    CHECK(causal.tflops() < 1.3 * plain.tflops());
  }
}

// The tensor cores are the SM's, not each warpgroup's: gemm_hopper's two consumer warpgroups take
// turns on them (they each ran at the SM's full rate: twice the peak was reachable). And A and B
// tiles re-read by every CTA of their row or column come from L2: the GEMM was 'HBM bandwidth'
// bound at 409 TFLOP/s on an H200 with HBM charged 1.6 GB for 100 MB of arrays.
TEST_CASE("bench: a modelled GEMM shares the SM's tensor cores and reads its re-read tiles from L2", "[bench][model]") {
  // (gemm_blackwell's 1-SM 128 x 256 tile without multicast asks L2 for 48 KB per 512 clocks of
  // MMA, 27 TB/s over 148 SMs: L2-bound on the model's 16 TB/s, as the 2-SM and multicast
  // variants exist to avoid.)
  for (auto const& [name, values, machine, peak_per_clk, at_least] : std::vector<std::tuple<std::string, param_values, std::string, double, double>>{
           {"gemm_hopper", {{"M", 4096}, {"N", 4096}, {"K", 4096}, {"ctas", 132}}, "H200", 4096, 0.6},
           {"gemm_fp8", {{"M", 4096}, {"N", 4096}, {"K", 4096}, {"stages", 4}}, "H200", 8192, 0.6},
           {"gemm_blackwell", {{"M", 4096}, {"N", 4096}, {"K", 4096}, {"ctas", 148}}, "B200", 8192, 0.4}}) {
    const auto m = bench::find_machine(machine);
    const auto r = model_of(name, values, machine);
    const double peak = peak_per_clk * m.clock_ghz * m.sms / 1e3;  // TFLOP/s
    INFO(name << " on " << machine << ": " << r.tflops() << " TFLOP/s of a " << peak << " peak, limited by " << r.p.limited_by << ", HBM serves "
              << r.p.hbm_fraction * 100 << "% of the bytes");
    CHECK(r.tflops() <= peak * 1.0001);
    CHECK(r.tflops() > at_least * peak);
    CHECK(r.p.hbm_fraction < 0.2);
    CHECK(r.p.limited_by.find("HBM") == std::string::npos);
  }
}

// Instruction issue: attention's softmax is an exp per score. Exact math (a 50-instruction software
// exp) and a measured loop with more SASS must both be slower than the fast SFU path; before the
// issue term, the three were the same 0.0804 ms.
TEST_CASE("bench: the model sees instruction issue: exact math and a longer measured loop are slower", "[bench][model]") {
  const param_values v{{"D", 128}, {"S", 4096}, {"B", 64}};
  const auto fast = model_of("attention_hopper", v, "H200", {.math = ir::math_mode::fast});
  const auto exact = model_of("attention_hopper", v, "H200", {.math = ir::math_mode::exact});
  const auto lean = model_of("attention_hopper", v, "H200", {.profile = {.kloop = 414, .mufu = 34, .source = "the gate's fast loop"}});
  const auto heavy = model_of("attention_hopper", v, "H200", {.profile = {.kloop = 1980, .mufu = 0, .source = "the gate's exact loop"}});
  INFO("fast " << fast.p.kernel_ms << " ms, exact " << exact.p.kernel_ms << " ms; measured loops: 414 SASS " << lean.p.kernel_ms << " ms, 1980 SASS "
               << heavy.p.kernel_ms << " ms");
  CHECK(exact.p.kernel_ms > 1.3 * fast.p.kernel_ms);
  CHECK(heavy.p.kernel_ms > 1.3 * lean.p.kernel_ms);
  CHECK(exact.p.issue_busy > fast.p.issue_busy);
  // A GEMM's loop is tensor-core work: its 55 SASS per K-tile next to 1,024 clocks of MMA do not move it.
  const param_values g{{"M", 4096}, {"N", 4096}, {"K", 4096}, {"ctas", 132}};
  const auto gemm = model_of("gemm_hopper", g, "H200");
  const auto gemm_measured = model_of("gemm_hopper", g, "H200", {.profile = {.kloop = 55}});
  CHECK(gemm_measured.p.kernel_ms == Approx(gemm.p.kernel_ms).epsilon(0.02));
  // Its epilogue is: at K = 512 (8 K-tiles a tile), storing C into SMEM at 8x the conflict-free
  // wavefronts (the unswizzled epilogue the gate once measured) costs a tenth or more.
  const param_values short_k{{"M", 4096}, {"N", 4096}, {"K", 512}, {"ctas", 132}};
  const auto clean = model_of("gemm_hopper", short_k, "H200", {.profile = {.kloop = 55}});
  const auto conflicted = model_of("gemm_hopper", short_k, "H200", {.profile = {.kloop = 55, .smem_conflict = 8}});
  INFO("K=512: " << clean.p.kernel_ms << " ms conflict-free, " << conflicted.p.kernel_ms << " ms at 8x the wavefronts");
  CHECK(conflicted.p.kernel_ms > 1.1 * clean.p.kernel_ms);
}

TEST_CASE("bench: an issue profile's mistakes name the file and the field", "[bench]") {
  const auto dir = std::filesystem::temp_directory_path() / "stagecraft_issue_profile_test";
  std::filesystem::create_directories(dir);
  auto write = [&](std::string const& name, std::string const& text) {
    const auto p = (dir / name).string();
    std::ofstream(p) << text;
    return p;
  };
  CHECK_THROWS_WITH(bench::load_issue_profile((dir / "none.json").string()), Catch::Contains("cannot read the issue profile"));
  CHECK_THROWS_WITH(bench::load_issue_profile(write("a.json", "{")), Catch::Contains("is not JSON"));
  CHECK_THROWS_WITH(bench::load_issue_profile(write("b.json", R"({"mufu": 3})")), Catch::Contains("has no \"kloop\""));
  CHECK_THROWS_WITH(bench::load_issue_profile(write("c.json", R"({"kloop": "55"})")), Catch::Contains("\"kloop\" must be a number"));
  CHECK_THROWS_WITH(bench::load_issue_profile(write("d.json", R"({"kloop": 40, "mufu": 41})")), Catch::Contains("\"mufu\" (41) is more than \"kloop\" (40)"));
  CHECK_THROWS_WITH(bench::load_issue_profile(write("f.json", R"({"kloop": 40, "smem_conflict": 0.5})")),
                    Catch::Contains("\"smem_conflict\" is wavefronts over the conflict-free count, at least 1, got 0.5"));
  const auto ok = bench::load_issue_profile(write("e.json", R"({"kloop": 414, "mufu": 34, "source": "perf_static.py attention_hopper"})"));
  CHECK(ok.kloop == 414);
  CHECK(ok.mufu == 34);
  CHECK(ok.source == "perf_static.py attention_hopper");
  std::filesystem::remove_all(dir);
}
