// NVRTC, loaded at run time with dlopen like the driver (backends/cuda/src/runtime.cpp): nothing
// links libnvrtc, so a binary built here starts on any machine, and one built on a developer
// box runs on a lent GPU machine whose toolkit sits somewhere else (docs/gpu.md).
#pragma once
#include <nvrtc.h>

#include <string>

namespace stagecraft::nvrtc::detail {

// The entry points stagecraft uses; the types come from the toolkit's nvrtc.h at build time.
struct library {
  std::string path;  // the file that was loaded
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetErrorString) error_string = nullptr;
  decltype(&::nvrtcCreateProgram) create = nullptr;
  decltype(&::nvrtcCompileProgram) compile = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy = nullptr;
  decltype(&::nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) log = nullptr;
  decltype(&::nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&::nvrtcGetPTX) ptx = nullptr;
  decltype(&::nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) cubin = nullptr;
};

// Loads NVRTC once (thread-safe); throws nvrtc::unavailable, saying where it looked, when no
// usable libnvrtc is found.
library const& load();

}  // namespace stagecraft::nvrtc::detail
