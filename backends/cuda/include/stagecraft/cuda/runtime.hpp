// The CUDA driver, loaded at run time with dlopen("libcuda.so.1") + cuGetProcAddress: the
// project never links the driver, so a machine without one builds, tests and reports
// "no CUDA driver available" instead of failing to start.
#pragma once
#include <memory>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "stagecraft/host/tensor.hpp"
#include "stagecraft/ir/kernel.hpp"

namespace stagecraft::nvrtc {
struct compiled;
}

namespace stagecraft::cuda {

struct status {
  bool available = false;
  std::string reason;        // why not, in plain English ("no CUDA driver available: ...")
  std::string device;        // name of device 0
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
  std::optional<ir::Target> target;  // what stagecraft generates for device 0; empty: unsupported
  std::string unsupported;           // why device 0 cannot run stagecraft's code (when !target)
};

// The target whose code runs on a device of this compute capability. The "a" targets are not
// forward compatible: sm_90a code runs on 9.0 only, sm_100a on 10.0 only.
std::optional<ir::Target> target_for(int compute_major, int compute_minor);

// Loads the driver once and initialises it; never throws.
status driver_status();

// Why code cannot run on device 0 (no driver, a device stagecraft generates nothing for, no
// NVRTC), or nullopt when it can: what `run --backend gpu` and `bench` report before exit 3.
std::optional<std::string> unusable(status const& st);

// A driver call failed (the message has the driver's words and the op); the launch did not
// give a result.
struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The kernel did not finish before the host's deadline: it hangs, or the deadline is too short.
// The device context is unusable afterwards, so the process should report and exit.
struct timeout : error {
  using error::error;
};

struct launch_options {
  int repeats = 1;              // timed launches; the median is reported
  std::uint32_t deadline_ms = 10000;  // per launch; 0: wait for ever
};

struct launch_result {
  std::vector<host_tensor> buffers;  // every GMEM parameter after the kernel
  float milliseconds = 0;            // kernel time, from CUDA events (median over the repeats)
};

// Copies the buffers to the device, encodes the tensor maps (validated first), loads the
// CUBIN, launches with the kernel's grid, cluster and dynamic SMEM, and copies everything back.
// A workspace parameter's device array is zero-filled (cuMemsetD8) instead of uploaded, before
// every repeat, and not copied back: its slot in `buffers` only gives the size and comes back as given.
// Throws cuda::error (cuda::timeout past the deadline).
launch_result launch(nvrtc::compiled const& c, ir::Kernel const& k, std::vector<host_tensor> buffers, launch_options const& o = {});

// The C++ API on the user's own device memory: one device address per GMEM parameter, in
// declaration order, each holding that parameter's whole array (dense, row-major; a CUdeviceptr
// or a pointer from cudaMalloc/PyTorch/CuPy, as an integer). The tensor maps are encoded from the
// kernel's parameters, the kernel is enqueued on `stream` (a CUstream; null: the default stream)
// and the call returns: synchronise the stream yourself (or with synchronize below). The loaded
// module is kept for the process. Throws cuda::error. Workspace parameters take no address: the
// call allocates each on `stream` (cuMemAllocAsync), zero-fills it (cuMemsetD8Async) and frees it
// after the launch (cuMemFreeAsync), all stream-ordered.
void launch_on_device(nvrtc::compiled const& c, ir::Kernel const& k, std::span<const std::uintptr_t> device_ptrs, void* stream = nullptr);

// The parameters launch_on_device takes an address for, by index: all but the workspaces.
std::vector<int> caller_params(ir::Kernel const& k);

// Waits for the work on `stream` with a deadline (cuda::timeout past it).
void synchronize(void* stream = nullptr, std::uint32_t deadline_ms = 10000);

// Device memory, freed with the object (for the API's users and its tests).
class device_memory {
 public:
  explicit device_memory(std::size_t bytes);
  ~device_memory();
  device_memory(device_memory const&) = delete;
  device_memory& operator=(device_memory const&) = delete;
  std::uintptr_t address() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void upload(std::span<const std::byte> from);  // exactly bytes() bytes
  void download(std::span<std::byte> to) const;

 private:
  std::uintptr_t ptr_ = 0;
  std::size_t bytes_ = 0;
};

// Benchmark timing (stagecraft bench): warm-up launches, then timed launches (CUDA events around
// each launch alone) until the median is stable: at least min_reps, then until the 95% interval
// of the median is within target_spread of it, or max_reps, or max_seconds. With flush_l2, a
// buffer of twice the L2's size is overwritten before every timed launch, so each one reads its
// inputs from HBM as a cold kernel would.
struct timing_options {
  int warmup = 3;
  int min_reps = 10, max_reps = 500;
  double max_seconds = 2.0;
  double target_spread = 0.02;
  bool flush_l2 = true;
  std::uint32_t deadline_ms = 10000;
};
struct timing {
  std::vector<float> ms;             // every timed launch, in order
  std::vector<host_tensor> buffers;  // the GMEM parameters after the first launch (for a correctness check)
  std::size_t l2_bytes = 0;          // the device's L2 (what a flush overwrites twice)
};
timing benchmark(nvrtc::compiled const& c, ir::Kernel const& k, std::vector<host_tensor> buffers, timing_options const& o = {});
// The same for a device-to-device copy of `bytes` (cuMemcpyDtoD): the memory-bound baseline.
timing benchmark_copy(std::size_t bytes, timing_options const& o = {});

// Milliseconds of one device-to-device copy of `bytes` (median of `repeats`): the bandwidth
// baseline benchmarks compare TMA pipelines with.
float device_copy_ms(std::size_t bytes, int repeats = 5);

}  // namespace stagecraft::cuda
