// The interpreter on gemm_small (wgmma, bf16 in, f32 out) at n^3 (default 512), as ratios to a
// plain C++ GEMM measured in the same run: dot products of rows of A and B converted to float
// once, summed in float (the loop a reader would write), and the registry's reference (what
// `stagecraft run` compares with: double sums through host_tensor accessors).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/registry.hpp>

#include "timing.hpp"

using namespace stagecraft;

int main(int argc, char** argv) {
  auto const& e = registry::global().find("gemm_small");
  const auto vals = bench::sized_params(argc, argv, 512, "interp_gemm_bench [n]   (M = N = K = n, at least 128 and a multiple of 8; default 512)",
                                        [&](std::int64_t n) { return registry::resolve(e, {{"M", n}, {"N", n}, {"K", n}}); });
  const std::int64_t n = vals.at("M");
  const ir::Kernel k = e.build(vals);
  std::vector<host_tensor> inputs;
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < t.elements(); ++i) t.set(i, dist(rng));
    inputs.push_back(std::move(t));
  }
  std::printf("gemm_small %lld^3 (bf16 in, f32 out, S=2); seed 2026\n", static_cast<long long>(n));

  std::vector<float> a(static_cast<std::size_t>(n * n)), b(a.size()), c(a.size());
  for (std::int64_t i = 0; i < n * n; ++i) {
    a[static_cast<std::size_t>(i)] = static_cast<float>(inputs[0].get(i));
    b[static_cast<std::size_t>(i)] = static_cast<float>(inputs[1].get(i));
  }
  const double plain = bench::median_seconds(3, [&] {
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        float s = 0;
        for (std::int64_t x = 0; x < n; ++x) s += a[static_cast<std::size_t>(i * n + x)] * b[static_cast<std::size_t>(j * n + x)];
        c[static_cast<std::size_t>(i * n + j)] = s;
      }
  });
  auto ref_buffers = inputs;
  const double ref = bench::median_seconds(3, [&] { e.reference(ref_buffers, vals); });
  bool ok = true;
  auto timed = [&](bool checks) {
    return bench::median_seconds(3, [&] {
      auto r = interp::run(k, inputs, {.schedule = interp::policy::eager, .checks = checks});
      const auto tol = interp::tolerance_of(k, r, inputs);
      ok = ok && r.ok() && tol;
      for (std::int64_t i = 0; ok && i < n * n; ++i)
        ok = std::abs(r.buffers[2].get(i) - ref_buffers[2].get(i)) <= tol->bound(ref_buffers[2].get(i), ir::DType::f32);
    });
  };
  const double fast = timed(false), checked = timed(true);
  std::printf("%-36s %10s %8s\n", "", "seconds", "ratio");
  std::printf("%-36s %10.4f %8.2f\n", "plain C++ GEMM (float)", plain, 1.0);
  std::printf("%-36s %10.4f %8.2f\n", "registry reference (double)", ref, ref / plain);
  std::printf("%-36s %10.4f %8.2f\n", "interpreter, --no-checks", fast, fast / plain);
  std::printf("%-36s %10.4f %8.2f\n", "interpreter, all checks", checked, checked / plain);
  std::printf("results %s the reference within the MMA tolerance\n", ok ? "match" : "DO NOT match");
  return ok ? 0 : 1;
}
