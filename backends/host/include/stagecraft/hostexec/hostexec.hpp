// The host backend: runs the CUDA C++ the code generator hands NVRTC on the CPU.
//
// The generated translation unit is compiled by the host C++ compiler against a host prelude
// (the device prelude's PTX wrappers reimplemented as calls into this runtime, its plain C++
// part compiled as is), loaded with dlopen, and run with every CUDA thread a fiber. CTAs,
// clusters, threads and the async engines (TMA loads and stores, bulk groups) are scheduled
// deterministically from a seed; mbarriers follow PTX (phases, parity waits, tx bytes); TMA
// reads the tensor-map parameters the CUDA runtime would encode and writes SMEM at the
// swizzled physical addresses. See docs/host.md.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "stagecraft/host/tensor.hpp"
#include "stagecraft/ir/kernel.hpp"
#include "stagecraft/nvrtc/codegen.hpp"

namespace stagecraft::hostexec {

struct options {
  // 0: the reference schedule (async work completes at once, threads round-robin, every
  // cluster resident). Any other seed draws a cluster order and how many clusters are resident,
  // then by seed % 3: 1 uniform picks among threads and async events, 2 lazy (events only when
  // no thread can run, in random priority order), 0 random priorities per warpgroup and event.
  std::uint64_t seed = 0;
  std::uint64_t max_steps = std::uint64_t{1} << 32;
  std::string cache_dir;  // empty: as the NVRTC cache ($STAGECRAFT_CACHE_DIR, ...), under host/
  std::string compiler;   // empty: $STAGECRAFT_HOST_CXX, else the compiler stagecraft was built with
  // compile(): the math mode the code is generated in (exact: bit-equal with the interpreter's
  // exact mode; fast: the approx_* primitives on the CPU and contraction allowed).
  ir::math_mode math = ir::math_mode::exact;
};

// A generated translation unit the host compiler rejected (a bug of ours, or a generated
// construct the host prelude lacks): kernel, compiler command and its log.
struct compile_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// How a run ended when it did not finish: the kernel, the thread(s), the barrier and its phase.
enum class failure : std::uint8_t {
  none,
  deadlock,           // every thread waits and nothing is in flight
  protocol,           // an mbarrier, named barrier, bulk group or TMA used against its PTX rules
  pending_at_exit,    // a CTA exits while a TMA store still reads, or a TMA load still writes, its SMEM
  step_limit,
  memory_fault,       // a load or store outside the CTA's SMEM and every GMEM buffer (or past their ends)
};
const char* failure_name(failure f);

struct result {
  std::vector<host_tensor> buffers;  // every GMEM parameter after the run
  failure kind = failure::none;
  std::string message;               // empty when kind == none
  std::uint64_t steps = 0;           // scheduling decisions
  bool ok() const { return kind == failure::none; }
};

// A kernel's generated code, compiled for the host and loaded (cached on disk by the hash of
// the translation unit and the compiler command, and in memory for the process).
struct module;
struct compiled {
  nvrtc::generated code;
  std::shared_ptr<module const> mod;
  std::string translation_unit;  // what the host compiler saw
  bool from_cache = false;
  double compile_seconds = 0;
};

// The host translation unit for generated code: the host prelude, the device prelude's portable
// part, the generated kernel unchanged, and the entry point the runtime calls per thread.
// Throws compile_error when the source does not carry the device prelude it expects.
std::string translation_unit(nvrtc::generated const& g, ir::Kernel const& k);

compiled compile(ir::Kernel const& k, options const& o = {});
compiled compile_generated(nvrtc::generated g, ir::Kernel const& k, options const& o = {});

// Runs a compiled kernel on `buffers` (one per GMEM parameter, shapes and dtypes as declared).
// Throws std::invalid_argument for buffers that do not fit, cuda::tensor_map_error for a tensor
// map the driver would refuse. Everything the kernel does wrong is a result, not an exception.
result run(compiled const& c, ir::Kernel const& k, std::vector<host_tensor> buffers, options const& o = {});
// compile + run.
result run(ir::Kernel const& k, std::vector<host_tensor> buffers, options const& o = {});

}  // namespace stagecraft::hostexec
