// JIT latency per example, measured in one run: a cold NVRTC compile (median of several fresh
// compiles), an in-memory cache hit, a disk cache hit, and the share of our own code generation
// in the cold time. Targets on a 2-core machine: cold <= 150 ms, memory hit <= 50 us, disk hit
// <= 5 ms, codegen <= 5 % of cold.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include <stagecraft/nvrtc/nvrtc.hpp>
#include <stagecraft/registry.hpp>

#include "timing.hpp"

using namespace stagecraft;


int main() {
  const auto dir = (std::filesystem::temp_directory_path() / ("stagecraft-jit-bench-" + std::to_string(::getpid()))).string();
  std::printf("NVRTC %s, target sm_90a, cache in %s\n", nvrtc::nvrtc_version().c_str(), dir.c_str());
  std::printf("%-16s %10s %12s %12s %10s\n", "kernel", "cold ms", "memory us", "disk ms", "codegen %");
  for (auto const* e : registry::global().all()) {
    const auto k = e->build(registry::resolve(*e, {}));
    if (std::any_of(k.stmts.begin(), k.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::tcgen05_mma; })) continue;  // sm_100a only; this bench times sm_90a
    const double cold = bench::median_seconds(5, [&] { (void)nvrtc::compile(k, ir::Target::sm_90a, {.memory_cache = false, .disk_cache = false}); });
    const double gen = bench::median_seconds(20, [&] { (void)nvrtc::generate(k); });
    nvrtc::clear_memory_cache();
    (void)nvrtc::compile(k, ir::Target::sm_90a, {.cache_dir = dir});  // fills both caches
    const double memory = bench::median_seconds(200, [&] { (void)nvrtc::compile(k, ir::Target::sm_90a, {.cache_dir = dir}); });
    const double disk = bench::median_seconds(20, [&] {
      nvrtc::clear_memory_cache();
      (void)nvrtc::compile(k, ir::Target::sm_90a, {.cache_dir = dir});
    });
    std::printf("%-16s %10.1f %12.1f %12.2f %10.2f\n", e->name.c_str(), cold * 1e3, memory * 1e6, disk * 1e3, 100.0 * gen / cold);
  }
  std::printf("%-16s %10s %12s %12s %10s\n", "target", "<= 150", "<= 50", "<= 5", "<= 5");
  std::filesystem::remove_all(dir);
}
