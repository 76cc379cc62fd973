// The C++ API on a user's own arrays: the interpreter, the JIT, and a launch on device memory.
#include <cstdio>
#include <vector>

#include <stagecraft/cuda/runtime.hpp>
#include <stagecraft/interp/interp.hpp>
#include <stagecraft/nvrtc/nvrtc.hpp>
#include <stagecraft/registry.hpp>

using namespace stagecraft;

int main() {
  // Any registered kernel (or lower(your_kernel(...)) directly): saxpy at M=256, N=128.
  auto const& entry = registry::global().find("saxpy");
  const ir::Kernel k = entry.build(registry::resolve(entry, {{"M", 256}, {"N", 128}}));

  std::vector<float> x(256 * 128), y(256 * 128);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i % 7), y[i] = 1.0f;
  const host_view arrays[] = {view(std::span(x), {256, 128}), view(std::span(y), {256, 128})};

  // 1. The interpreter, on the arrays themselves: y is updated in place.
  const auto r = interp::run_in_place(k, arrays, {.schedule = interp::policy::pct, .seed = 7});
  std::printf("interpreter: %s, %llu steps, y[1] = %g\n", r.ok() ? "no diagnostic" : r.diagnostics.front().message.c_str(),
              static_cast<unsigned long long>(r.steps), y[1]);
  if (!r.ok() || y[1] != 3.0f * 0.25f + 1.0f) return 1;

  // 2. The JIT: PTX and CUBIN for a target (NVRTC is loaded on first use).
  nvrtc::compiled c;
  try {
    c = nvrtc::compile(k, ir::Target::sm_90a);
  } catch (nvrtc::unavailable const& e) {
    std::printf("no JIT here: %s\n", e.what());
    return 0;
  }
  std::printf("JIT: %zu bytes of PTX, %d registers, %d spill bytes\n", c.ptx.size(), c.registers, c.spill_bytes);

  // 3. On a GPU: the user's device memory and stream (any CUdeviceptr works; here our own).
  const auto st = cuda::driver_status();
  if (!st.available || st.target != ir::Target::sm_90a) {
    std::printf("no launch here: %s\n", st.available ? st.unsupported.c_str() : st.reason.c_str());
    return 0;
  }
  const std::vector<float> y_before = y;
  cuda::device_memory dx(x.size() * sizeof(float)), dy(y.size() * sizeof(float));
  dx.upload(std::as_bytes(std::span(x)));
  dy.upload(std::as_bytes(std::span(y)));
  const std::uintptr_t ptrs[] = {dx.address(), dy.address()};
  cuda::launch_on_device(c, k, ptrs, /*stream=*/nullptr);
  cuda::synchronize();
  dy.download(std::as_writable_bytes(std::span(y)));
  for (std::size_t i = 0; i < y.size(); ++i) {
    const float ax = 3.0f * x[i];
    if (y[i] != ax + y_before[i]) return std::printf("GPU: y[%zu] = %g, want %g\n", i, y[i], ax + y_before[i]), 1;
  }
  std::printf("GPU: all %zu elements of y match\n", y.size());
  return 0;
}
