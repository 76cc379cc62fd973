// Interpreter speed and memory on the pipelined add_one at 4096 x 4096 f32, as ratios to the
// kernel's plain C++ reference measured in the same run.
//   targets: interpreter / reference <= 2x with checks off, <= 10x with every check on;
//            peak resident memory of the whole process <= 1 GiB.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <random>
#include <string>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/registry.hpp>

#include "timing.hpp"

using namespace stagecraft;


int main(int argc, char** argv) {
  auto const& e = registry::global().find("add_one");
  const auto vals = bench::sized_params(argc, argv, 4096, "interp_bench [n [no-checks]]   (an n x n add_one, n a multiple of 128; default 4096)",
                                        [&](std::int64_t n) { return registry::resolve(e, {{"M", n}, {"N", n}, {"K", 4}, {"splits", 2}}); });
  const std::int64_t n = vals.at("M");
  const ir::Kernel k = e.build(vals);
  std::vector<host_tensor> inputs;
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (auto& v : t.as<float>()) v = dist(rng);
    inputs.push_back(std::move(t));
  }
  std::printf("add_one %lld x %lld f32, K=4, grid (%lld, 2); seed 2026\n", static_cast<long long>(n), static_cast<long long>(n),
              static_cast<long long>(n / 128));

  auto ref_buffers = inputs;
  const double ref = bench::median_seconds(5, [&] { e.reference(ref_buffers, vals); });

  // The floor for any executor that moves data in the kernel's order: the same 128x64 blocks
  // copied to a 4-stage buffer, incremented and copied back, in plain C++. The reference
  // streams linearly; the kernel's blocked order alone costs this much more on this machine.
  auto blocked_buffers = inputs;
  std::vector<float> stage(4 * 128 * 64);
  const double blocked = bench::median_seconds(5, [&] {
    auto x = blocked_buffers[0].as<float>();
    auto y = blocked_buffers[1].as<float>();
    const std::int64_t per_cta = n / 64 / 2;
    for (std::int64_t i = 0; i < n / 128; ++i)
      for (std::int64_t c = 0; c < 2; ++c)
        for (std::int64_t j = 0; j < per_cta; ++j) {
          float* s = stage.data() + (j % 4) * 128 * 64;
          const std::int64_t col = (c * per_cta + j) * 64;
          for (int r = 0; r < 128; ++r) std::memcpy(s + r * 64, &x[(i * 128 + r) * n + col], 256);
          for (int k = 0; k < 128 * 64; ++k) s[k] += 1.0f;
          for (int r = 0; r < 128; ++r) std::memcpy(&y[(i * 128 + r) * n + col], s + r * 64, 256);
        }
  });

  // Each run gets its own copy of the inputs, made outside the timed region (the reference
  // also works in place on buffers it is handed).
  bool ok = true;
  auto timed_run = [&](bool checks) {
    std::vector<double> t;
    for (int i = 0; i < 3; ++i) {
      auto buffers = inputs;
      const auto a = std::chrono::steady_clock::now();
      auto r = interp::run(k, std::move(buffers), {.schedule = interp::policy::eager, .checks = checks});
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
      ok = ok && r.ok() && r.buffers[1].bytes == ref_buffers[1].bytes;
    }
    std::sort(t.begin(), t.end());
    return t[1];
  };
  const double fast = timed_run(false);
  const bool only_fast = argc > 2 && std::string(argv[2]) == "no-checks";  // for profiling
  const double checked = only_fast ? 0.0 : timed_run(true);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double peak_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;

  std::printf("%-34s %10s %8s %8s\n", "", "seconds", "ratio", "target");
  std::printf("%-34s %10.4f %8.2f %8s\n", "plain C++ reference", ref, 1.0, "");
  std::printf("%-34s %10.4f %8.2f %8s\n", "  (same blocks, plain C++ loop)", blocked, blocked / ref, "");
  std::printf("%-34s %10.4f %8.2f %8s\n", "interpreter, --no-checks", fast, fast / ref, "<= 2");
  std::printf("%-34s %10.4f %8.2f %8s\n", "interpreter, all checks", checked, checked / ref, "<= 10");
  std::printf("%-34s %10.0f %8s %8s\n", "peak resident memory (MiB)", peak_mib, "", "<= 1024");
  std::printf("results %s the reference\n", ok ? "match" : "DO NOT match");
  return ok ? 0 : 1;
}
