// Launch tests: real on a machine with a CUDA driver, skipped in CTest's summary without one.
#include <catch2/catch.hpp>

#include <random>

#include <stagecraft/cuda/runtime.hpp>
#include <stagecraft/interp/interp.hpp>
#include <stagecraft/nvrtc/nvrtc.hpp>
#include <stagecraft/registry.hpp>

#include "skip.hpp"

using namespace stagecraft;

TEST_CASE("examples run on the GPU and match the reference and the interpreter", "[gpu]") {
  const auto st = cuda::driver_status();
  if (!st.available) {
    test::skip(st.reason);
    return;
  }
  const ir::Target target = st.compute_major >= 10 ? ir::Target::sm_100a : ir::Target::sm_90a;
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> dist(-2, 2);
  for (auto const* e : registry::global().all()) {
    INFO("kernel " << e->name << " on " << st.device);
    const auto vals = registry::resolve(*e, {});
    auto k = e->build(vals);
    k.target = target;
    std::vector<host_tensor> inputs;
    for (auto const& p : k.params) {
      auto t = host_tensor::zeros(p.dtype, p.shape);
      for (std::int64_t i = 0; i < t.elements(); ++i) t.set(i, dist(rng));
      inputs.push_back(std::move(t));
    }
    const auto c = nvrtc::compile(k, target);
    auto r = cuda::launch(c, k, inputs);
    auto expected = inputs;
    e->reference(expected, vals);
    auto interp_r = interp::run(k, inputs, {.checks = false});
    for (int p : interp::written_params(k)) {
      CHECK(r.buffers[p].bytes == expected[p].bytes);
      CHECK(r.buffers[p].bytes == interp_r.buffers[p].bytes);
    }
  }
}

TEST_CASE("no driver is a status, not a failure", "[gpu]") {
  const auto st = cuda::driver_status();
  if (!st.available) CHECK(st.reason.rfind("no CUDA driver available", 0) == 0);
  else CHECK(!st.device.empty());
}
