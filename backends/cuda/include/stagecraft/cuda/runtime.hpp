// The CUDA driver, loaded at run time with dlopen("libcuda.so.1") + cuGetProcAddress: the
// project never links the driver, so a machine without one builds, tests and reports
// "no CUDA driver available" instead of failing to start.
#pragma once
#include <memory>
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
};

// Loads the driver once and initialises it; never throws.
status driver_status();

struct launch_result {
  std::vector<host_tensor> buffers;  // every GMEM parameter after the kernel
  float milliseconds = 0;            // kernel time, from CUDA events (median over the repeats)
};

// Copies the buffers to the device, encodes the tensor maps (validated first), loads the
// CUBIN, launches with the kernel's grid, cluster and dynamic SMEM, and copies everything back.
// Throws std::runtime_error with the driver's message (and the op context) on failure.
launch_result launch(nvrtc::compiled const& c, ir::Kernel const& k, std::vector<host_tensor> buffers, int repeats = 1);

// Milliseconds of one device-to-device copy of `bytes` (median of `repeats`): the bandwidth
// baseline benchmarks compare TMA pipelines with.
float device_copy_ms(std::size_t bytes, int repeats = 5);

}  // namespace stagecraft::cuda
