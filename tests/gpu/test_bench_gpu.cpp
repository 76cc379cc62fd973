// stagecraft bench on a real GPU: the timing loop, the L2 flush, the same-run D2D baseline and
// the correctness check. Skipped (in CTest's summary) without a driver.
#include <catch2/catch.hpp>

#include <stagecraft/bench/bench.hpp>
#include <stagecraft/cuda/runtime.hpp>
#include <stagecraft/registry.hpp>

#include "skip.hpp"

using namespace stagecraft;

TEST_CASE("bench on the GPU: add_one's K sweep is checked, timed to a stable median and set against a D2D copy", "[gpu][bench]") {
  const auto st = cuda::driver_status();
  if (!st.available || !st.target) {
    test::skip(st.available ? st.unsupported : st.reason);
    return;
  }
  bench::options o;
  o.where = bench::backend::gpu;
  o.set = {{"M", 4096}, {"N", 4096}, {"splits", 1}};
  o.sweep = {bench::parse_sweep("K=1,4")};
  o.max_seconds = 0.5;
  const auto rep = bench::run(registry::global().find("add_one"), o);
  REQUIRE(rep.points.size() == 2);
  for (auto const& p : rep.points) {
    INFO("K=" << p.values.at("K") << ": " << p.median_ms << " ms, " << p.gbps << " GB/s, " << 100 * p.of_baseline << "% of D2D, " << p.check);
    CHECK(p.error.empty());
    CHECK(p.check.rfind("correct", 0) == 0);
    CHECK(p.reps >= o.min_reps);
    CHECK(p.min_ms > 0);
    CHECK(p.min_ms <= p.median_ms);
    CHECK(p.bytes == 2.0 * 4096 * 4096 * 4);
    CHECK(p.baseline == "device-to-device copy");
    CHECK(p.baseline_ms > 0);
    CHECK(p.of_baseline > 0.05);  // a pipelined copy is not 20x slower than cuMemcpyDtoD
    CHECK(p.of_baseline < 3);
  }
  CHECK(rep.points[1].median_ms < rep.points[0].median_ms * 1.05);  // K=4 hides latency K=1 cannot
  // Without the flush the same launches read from a warm L2 (16 MiB per tensor fit in 50 MiB).
  auto warm = o;
  warm.flush_l2 = false;
  warm.sweep = {bench::parse_sweep("K=4")};
  const auto w = bench::run(registry::global().find("add_one"), warm);
  REQUIRE(w.points.size() == 1);
  CHECK(w.points[0].median_ms > 0);
}
