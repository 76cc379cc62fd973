// The `stagecraft` command line, as a library: a user's program that registers its own kernels
// calls stagecraft::cli::main and gets every subcommand for them (DESIGN.md section 10).
#pragma once
#include "stagecraft/registry.hpp"

namespace stagecraft::cli {

// Exit codes (also in the README):
inline constexpr int exit_ok = 0;
inline constexpr int exit_wrong = 1;      // run: an output differs from the kernel's reference
inline constexpr int exit_protocol = 2;   // run: the interpreter found a protocol error (deadlock, race, ...)
inline constexpr int exit_no_driver = 3;  // run --backend gpu, device: no CUDA driver, no NVRTC or an unsupported device (the reason is printed)
inline constexpr int exit_gpu_error = 4;  // run --backend gpu: the launch failed (a driver error, a watchdog trap, the host deadline)
inline constexpr int exit_usage = 64;     // unknown kernel, bad parameter, bad flag
inline constexpr int exit_environment = 69;  // the machine: no host compiler or assembler, a full disk, a cache or output we may not write
inline constexpr int exit_internal = 70;  // a kernel failed to lower or verify: a bug to report

int main(int argc, char** argv, registry const& kernels = registry::global());

}  // namespace stagecraft::cli
