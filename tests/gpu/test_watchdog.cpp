// The watchdog on hardware: a kernel whose second barrier phase never completes must end in
// well under a second with an error that says why, instead of hanging the GPU (and the lease).
// Its own CTest entry (a trap leaves the process's context unusable, so nothing may follow it
// in the same process); without a driver it is a skip.
#include <catch2/catch.hpp>

#include <chrono>

#include <stagecraft/cuda/runtime.hpp>
#include <stagecraft/interp/interp.hpp>
#include <stagecraft/nvrtc/nvrtc.hpp>
#include <stagecraft/stagecraft.hpp>

#include "skip.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {
// bar[1] is waited on but nobody arrives on it: a lost arrival.
ir::Kernel stuck() {
  return lower(kernel<sm_90a>("watchdog_stuck", grid(2), threads(1_c),
                              gmem<f32>("y", shape(256, 64)),       // (row, col)
                              barrier(arrivals(1_c), count(2_c)),   // bar[phase]
                              [&](auto y, auto bar) {
                                auto rows = y.tile(shape(128_c, 64_c), program_id(), 0_c);
                                return seq(barrier_arrive(bar[0_c]), barrier_wait(bar[0_c]), barrier_wait(bar[1_c]),
                                           store(rows, load(rows) + 1.0f));
                              }));
}
}  // namespace

TEST_CASE("the interpreter calls the lost arrival a deadlock", "[gpu][watchdog]") {
  const auto k = stuck();
  const auto r = interp::run(k, {host_tensor::zeros(ir::DType::f32, {256, 64})}, {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.diagnostics.front().kind == interp::check::deadlock);
}

TEST_CASE("a barrier wait that never completes traps under the watchdog and names itself", "[gpu][watchdog]") {
  const auto st = cuda::driver_status();
  if (!st.available || !st.target) {
    test::skip(st.available ? st.unsupported : st.reason);
    return;
  }
  auto k = stuck();
  k.target = *st.target;
  const auto c = nvrtc::compile(k, *st.target, {.codegen = {.watchdog_ms = 200}, .disk_cache = false});
  const auto start = std::chrono::steady_clock::now();
  try {
    cuda::launch(c, k, {host_tensor::zeros(ir::DType::f32, {256, 64})}, {.deadline_ms = 5000});
    FAIL("the stuck kernel finished");
  } catch (cuda::timeout const& e) {
    FAIL("the watchdog did not fire before the host deadline: " << e.what());
  } catch (cuda::error const& e) {
    CHECK_THAT(e.what(), Contains("watchdog_stuck") && Contains("watchdog"));
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
}
