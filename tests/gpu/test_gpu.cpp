// Launch tests: real on a machine with a CUDA driver, skipped in CTest's summary without one.
#include <catch2/catch.hpp>

#include <algorithm>

#include <memory>
#include <random>

#include <stagecraft/cuda/runtime.hpp>
#include <stagecraft/interp/interp.hpp>
#include <stagecraft/nvrtc/nvrtc.hpp>
#include <stagecraft/registry.hpp>

#include "skip.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

TEST_CASE("examples run on the GPU and match the reference and the interpreter", "[gpu]") {
  const auto st = cuda::driver_status();
  if (!st.available) {
    test::skip(st.reason);
    return;
  }
  INFO(st.unsupported);
  REQUIRE(st.target);
  const ir::Target target = *st.target;
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> dist(-2, 2);
  for (auto const* e : registry::global().all()) {
    INFO("kernel " << e->name << " on " << st.device);
    const auto vals = registry::resolve(*e, {});
    auto k = e->build(vals);
    if (std::any_of(k.stmts.begin(), k.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::tcgen05_mma; })) continue;  // no tcgen05 code generation yet
    k.target = target;
    std::vector<host_tensor> inputs;
    for (auto const& p : k.params) {
      auto t = host_tensor::zeros(p.dtype, p.shape);
      for (std::int64_t i = 0; i < t.elements(); ++i) t.set(i, dist(rng));
      inputs.push_back(std::move(t));
    }
    if (e->inputs) e->inputs(inputs, vals);  // attention_hopper_bwd: the forward pass's LSE and delta
    // Watchdog on and a host deadline: a hang fails this test in seconds, naming the barrier.
    const auto c = nvrtc::compile(k, target, {.codegen = {.watchdog_ms = 2000}});
    auto r = cuda::launch(c, k, inputs, {.deadline_ms = 20000});
    auto expected = inputs;
    e->reference(expected, vals);
    auto interp_r = interp::run(k, inputs, {.checks = false});
    for (int p : interp::written_params(k)) {
      CHECK(first_difference(r.buffers[p], expected[p]) == -1);  // bit-exact, NaN == NaN
      CHECK(first_difference(r.buffers[p], interp_r.buffers[p]) == -1);
    }
  }
}

TEST_CASE("devices map to the target whose code they run", "[gpu]") {
  CHECK(cuda::target_for(9, 0) == ir::Target::sm_90a);
  CHECK(cuda::target_for(10, 0) == ir::Target::sm_100a);
  // "a" targets are not forward compatible: no other capability runs either.
  for (auto [major, minor] : {std::pair{8, 0}, {8, 9}, {9, 1}, {10, 1}, {10, 3}, {11, 0}, {12, 0}, {12, 1}})
    CHECK_FALSE(cuda::target_for(major, minor));
}

TEST_CASE("no driver is a status, not a failure", "[gpu]") {
  const auto st = cuda::driver_status();
  if (!st.available) CHECK(st.reason.rfind("no CUDA driver available", 0) == 0);
  else CHECK(!st.device.empty());
}

TEST_CASE("the C++ API launches on the user's device memory and stream, like launch() does", "[gpu]") {
  const auto st = cuda::driver_status();
  if (!st.available || !st.target) {
    test::skip(st.available ? st.unsupported : st.reason);
    return;
  }
  auto const& e = registry::global().find("handoff");
  const auto vals = registry::resolve(e, {});
  auto k = e.build(vals);
  k.target = *st.target;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-2, 2);
  std::vector<host_tensor> inputs;
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < t.elements(); ++i) t.set(i, dist(rng));
    inputs.push_back(std::move(t));
  }
  const auto c = nvrtc::compile(k, *st.target, {.codegen = {.watchdog_ms = 2000}});
  std::vector<std::unique_ptr<cuda::device_memory>> mem;
  std::vector<std::uintptr_t> ptrs;
  for (auto const& t : inputs) {
    mem.push_back(std::make_unique<cuda::device_memory>(t.bytes.size()));
    mem.back()->upload(t.bytes);
    ptrs.push_back(mem.back()->address());
  }
  cuda::launch_on_device(c, k, ptrs);
  cuda::synchronize(nullptr, 20000);
  auto expected = inputs;
  e.reference(expected, vals);
  for (int p : interp::written_params(k)) {
    std::vector<std::byte> got(inputs[p].bytes.size());
    mem[p]->download(got);
    CHECK(got == expected[p].bytes);
  }
}

// launch_on_device takes addresses for the caller's parameters only: a workspace is the call's
// own (checked before the driver is asked, so it runs everywhere).
TEST_CASE("the C++ API takes no device address for a workspace", "[gpu][workspace]") {
  auto const& e = registry::global().find("splitk_cluster");
  const auto k = e.build(registry::resolve(e, {}));
  REQUIRE(k.params.size() == 3);
  REQUIRE(k.params[2].workspace);
  CHECK(cuda::caller_params(k) == std::vector<int>{0, 1});
  const std::vector<std::uintptr_t> all_three{16, 32, 48};
  REQUIRE_THROWS_WITH(cuda::launch_on_device(nvrtc::compiled{}, k, all_three),
                      Contains("'splitk_cluster' takes 2 device arrays (one per GMEM parameter that is not a workspace), got 3"));
  // launch() and benchmark() keep a slot per parameter (the workspace's sizes its zero-fill).
  auto buffers = seeded_inputs(k, 1);
  buffers.pop_back();
  REQUIRE_THROWS_WITH(cuda::launch(nvrtc::compiled{}, k, buffers),
                      Contains("'splitk_cluster' takes 3 buffers (one per GMEM parameter, workspaces included), got 2"));
  buffers.push_back(host_tensor::zeros(ir::DType::f32, {4}));
  REQUIRE_THROWS_WITH(cuda::benchmark(nvrtc::compiled{}, k, buffers),
                      Contains("'splitk_cluster': the buffer for parameter 'partials' has 16 bytes, its shape needs 131072"));
}

// On a device: the workspace is allocated, zero-filled and freed by the call, stream-ordered,
// and the split-K sum equals the reference bit for bit.
TEST_CASE("the C++ API launches a kernel with a workspace on the user's memory", "[gpu][workspace]") {
  const auto st = cuda::driver_status();
  if (!st.available || !st.target || *st.target != ir::Target::sm_90a) {
    test::skip(!st.available ? st.reason : st.target ? "splitk_cluster is an sm_90a kernel" : st.unsupported);
    return;
  }
  auto const& e = registry::global().find("splitk_cluster");
  // tma=1: the partials go out by TMA store, published by the full bulk wait and the cluster
  // barrier with no GMEM proxy fence (docs/interpreter.md, "GMEM between proxies and CTAs").
  for (std::int64_t tma : {0, 1}) {
    INFO("tma=" << tma);
    const auto vals = registry::resolve(e, {{"tma", tma}});
    const auto k = e.build(vals);
    const auto inputs = seeded_inputs(k, 5);
    const auto c = nvrtc::compile(k, *st.target, {.codegen = {.watchdog_ms = 2000}});
    std::vector<std::unique_ptr<cuda::device_memory>> mem;
    std::vector<std::uintptr_t> ptrs;
    for (int p : cuda::caller_params(k)) {
      mem.push_back(std::make_unique<cuda::device_memory>(inputs[p].bytes.size()));
      mem.back()->upload(inputs[p].bytes);
      ptrs.push_back(mem.back()->address());
    }
    for (int rep = 0; rep < 2; ++rep) cuda::launch_on_device(c, k, ptrs);  // the second launch finds zeros again
    cuda::synchronize(nullptr, 20000);
    auto expected = inputs;
    e.reference(expected, vals);
    std::vector<std::byte> got(inputs[1].bytes.size());
    mem[1]->download(got);
    CHECK(got == expected[1].bytes);
  }
}
