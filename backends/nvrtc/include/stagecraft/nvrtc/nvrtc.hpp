// JIT with NVRTC: generated CUDA C++ -> PTX and CUBIN for sm_90a / sm_100a. For these real
// targets NVRTC runs ptxas, so invalid PTX fails here, at JIT time, not at launch. libnvrtc is
// loaded with dlopen on first use (src/library.cpp says where it looks), never linked.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "stagecraft/ir/kernel.hpp"
#include "stagecraft/nvrtc/codegen.hpp"

namespace stagecraft::nvrtc {

struct compiled {
  generated code;              // source, entry, tensor maps, launch shape
  ir::Target target;
  std::string ptx;
  std::vector<char> cubin;
  std::string log;             // NVRTC + ptxas (-v) output
  std::uint64_t key = 0;       // cache key
  int registers = -1;          // from ptxas
  int spill_bytes = -1;        // spill stores + spill loads, from ptxas
  enum class source : std::uint8_t { compiled, memory_cache, disk_cache } origin = source::compiled;
};

// Generated code NVRTC rejected: a bug of ours. Names the kernel and target, carries the log and
// the generated lines around the first error.
struct compile_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// No usable libnvrtc on this machine; the message says where stagecraft looked and how to point
// it at one (STAGECRAFT_NVRTC).
struct unavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct options {
  codegen_options codegen;  // e.g. the watchdog; part of the cache key
  bool memory_cache = true;
  bool disk_cache = true;
  std::string cache_dir;  // empty: disk_cache::root()'s rules ($STAGECRAFT_CACHE_DIR, ..., never a directory users share)
};

// "13.0" etc. These and everything below load NVRTC on first use and throw unavailable without it.
std::string nvrtc_version();
// The libnvrtc file that was loaded.
std::string library_path();

// Cache key: canonical IR hash, target, code generation and compile options, NVRTC version.
std::uint64_t cache_key(ir::Kernel const& k, ir::Target target, codegen_options const& g = {});

compiled compile(ir::Kernel const& k, ir::Target target, options const& o = {});

// Compiles already generated code, without caching: what compile() does on a miss. Exposed so
// tests can check how a rejected translation unit is reported.
compiled compile_generated(generated code, ir::Target target);

// Drops the in-memory cache (tests, benchmarks).
void clear_memory_cache();
std::string cache_directory(options const& o = {});

}  // namespace stagecraft::nvrtc
