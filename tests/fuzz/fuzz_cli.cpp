// Fuzz target: the CLI's argument handling, over the bundled examples.
//
// The input is the argument list, one argument per line (at most 12, each at most 48 bytes).
// Whatever the arguments, stagecraft::cli::main must return an exit code; an exception escaping
// it, a crash or a sanitizer report is a bug. The target runs in a scratch directory and refuses
// arguments with a '/', so output files (--trace, --source, ...) land there and nowhere else.
// Give libFuzzer absolute corpus and artifact paths (run_fuzz.sh does): it writes them later.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "stagecraft/cli.hpp"
#include "stagecraft/registry.hpp"

namespace {

char scratch[] = "/tmp/stagecraft-fuzz-cli-XXXXXX";

bool enter_scratch_directory() {
  static bool done = [] {
    if (!mkdtemp(scratch) || chdir(scratch) != 0) {
      std::perror("fuzz_cli: scratch directory");
      std::abort();
    }
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch, ignored);
    });
    // The CLI reports on stdout; thousands of runs a second must not flood the terminal.
    if (!std::freopen("/dev/null", "w", stdout)) std::abort();
    return true;
  }();
  return done;
}

// The bundled kernels that issue tensor-core MMAs: the interpreter multiplies their matrices
// element by element, seconds per run under the sanitizers (gemm_hopper alone took 4 s, and
// `run --all` 7.4 s, past libFuzzer's slow-unit report). Their parameters are still fuzzed
// (`show`, `ptx`, `--set` checks); interpreting them is what the CTest suites do.
std::set<std::string> const& mma_kernels() {
  static const std::set<std::string> names = [] {
    std::set<std::string> out;
    for (auto const* e : stagecraft::registry::global().all()) {
      const auto k = stagecraft::registry::build(*e, stagecraft::registry::resolve(*e, {}));
      for (auto const& s : k.stmts)
        if (s.op == stagecraft::ir::StmtOp::wgmma || s.op == stagecraft::ir::StmtOp::tcgen05_mma) out.insert(e->name);
    }
    return out;
  }();
  return names;
}

// Would this run interpret an MMA kernel? (`run` is the subcommand that interprets.)
bool interprets_an_mma_kernel(std::vector<std::string> const& args) {
  if (args.size() < 2 || args[1] != "run") return false;
  for (auto const& a : args)
    if (a == "--all" || mma_kernels().count(a)) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  enter_scratch_directory();
  std::vector<std::string> args{"stagecraft"};
  std::string cur;
  for (std::size_t i = 0; i <= size; ++i) {
    if (i == size || data[i] == '\n') {
      args.push_back(cur);
      cur.clear();
      continue;
    }
    const char c = static_cast<char>(data[i]);
    if (c == '/' || c == '\0') return 0;  // paths stay in the scratch directory; argv strings end at NUL
    cur += c;
    if (cur.size() > 48) return 0;
  }
  if (args.size() > 13) return 0;
  // Running the GPU backend or NVRTC is out of scope here (and absent from the fuzz build).
  for (auto const& a : args)
    // The GPU backend and ptx need a driver or NVRTC; the host backend runs a C++ compiler per
    // kernel: all far too slow for a fuzzer's inner loop.
    if (a.find("gpu") != std::string::npos || a.find("host") != std::string::npos || a == "ptx") return 0;
  if (interprets_an_mma_kernel(args)) return 0;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = stagecraft::cli::main(static_cast<int>(args.size()), argv.data());
  if (rc < 0 || rc > 255) {
    std::fprintf(stderr, "fuzz_cli: exit code %d is not a process exit status\n", rc);
    std::abort();
  }
  return 0;
}
