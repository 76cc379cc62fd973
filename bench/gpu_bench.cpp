// GPU bandwidth of the pipelined kernels (add_one: a TMA load/store ring; ws_copy: the
// warp-specialized pipelined copy; both read and write every byte once) as a fraction of a
// device-to-device copy of the same bytes, measured in the same run, for each depth K = 1..6.
#include <cstdio>
#include <random>
#include <string>

#include <stagecraft/core/tool_main.hpp>
#include <stagecraft/cuda/runtime.hpp>
#include <stagecraft/nvrtc/nvrtc.hpp>
#include <stagecraft/registry.hpp>

using namespace stagecraft;

int STAGECRAFT_TOOL_MAIN(gpu_bench)(int argc, char** argv) {
  const auto st = cuda::driver_status();
  if (!st.available) {
    std::printf("%s\n", st.reason.c_str());
    return 3;
  }
  if (!st.target) {
    std::printf("%s\n", st.unsupported.c_str());
    return 3;
  }
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 8192;
  const ir::Target target = *st.target;
  const std::size_t bytes = static_cast<std::size_t>(n * n * 4);
  const float d2d = cuda::device_copy_ms(bytes);
  const double d2d_gbs = 2.0 * static_cast<double>(bytes) / (d2d * 1e-3) / 1e9;  // read + write
  std::printf("%s (%s), %lld x %lld f32; device-to-device copy: %.3f ms, %.0f GB/s\n", st.device.c_str(), ir::target_name(target),
              static_cast<long long>(n), static_cast<long long>(n), d2d, d2d_gbs);
  std::printf("%-10s %10s %10s %12s\n", "kernel", "ms", "GB/s", "of D2D copy");
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-2, 2);
  for (std::string name : {"add_one", "ws_copy"})
  for (long long K = 1; K <= 6; ++K) {
    auto const& e = registry::global().find(name);
    auto vals = name == "add_one" ? registry::resolve(e, {{"M", n}, {"N", n}, {"K", K}, {"splits", 1}})
                                  : registry::resolve(e, {{"M", n}, {"N", n}, {"K", K}});
    auto k = e.build(vals);
    k.target = target;
    std::vector<host_tensor> in;
    for (auto const& p : k.params) {
      auto t = host_tensor::zeros(p.dtype, p.shape);
      for (auto& v : t.as<float>()) v = dist(rng);
      in.push_back(std::move(t));
    }
    const auto c = nvrtc::compile(k, target);
    const auto r = cuda::launch(c, k, in, {.repeats = 5});
    const double gbs = 2.0 * static_cast<double>(bytes) / (r.milliseconds * 1e-3) / 1e9;
    std::printf("%s K=%lld %7.3f %10.0f %11.0f%%\n", name.c_str(), K, r.milliseconds, gbs, 100.0 * gbs / d2d_gbs);
  }
}
