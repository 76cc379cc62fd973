// Fuzz target: the CLI's argument handling, over the bundled examples.
//
// The input is the argument list, one argument per line (at most 12, each at most 48 bytes).
// Whatever the arguments, stagecraft::cli::main must return an exit code; an exception escaping
// it, a crash or a sanitizer report is a bug. The target runs in a scratch directory and refuses
// arguments with a '/', so output files (--trace, --source, ...) land there and nowhere else.
// Give libFuzzer absolute corpus and artifact paths (run_fuzz.sh does): it writes them later.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "stagecraft/bench/bench.hpp"
#include "stagecraft/cli.hpp"
#include "stagecraft/host/tensor.hpp"
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

// The value of option `name` in args (`--name v` or `--name=v`), each occurrence.
std::vector<std::string> values_of(std::vector<std::string> const& args, std::string const& name) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name && i + 1 < args.size()) out.push_back(args[i + 1]);
    else if (args[i].rfind(name + "=", 0) == 0) out.push_back(args[i].substr(name.size() + 1));
  }
  return out;
}

// Bytes of the GMEM parameters `stagecraft run|bench KERNEL --set ... --sweep ...` would hold at
// its largest point: the interpreter and the cost model's run visit every element of them (the
// host-memory check stops only the gigantic ones). The points are the bench library's own
// (parse_sweep, points_of); more than 16 of them count as too many. 0 when the kernel or the
// values do not resolve: the CLI then fails fast with a usage error, which is worth fuzzing.
double run_bytes(std::vector<std::string> const& args) {
  using stagecraft::registry;
  namespace bench = stagecraft::bench;
  try {
    stagecraft::kernel_entry const* e = nullptr;
    for (auto const* x : registry::global().all())
      if (std::find(args.begin(), args.end(), x->name) != args.end()) e = x;
    if (!e) return 0;
    bench::options o;
    // --set and --sweep take several values each, or are spelt --set=k=v
    for (std::size_t i = 0; i < args.size(); ++i)
      for (std::string opt : {"--set", "--sweep"}) {
        std::vector<std::string> values;
        if (args[i].rfind(opt + "=", 0) == 0) values.push_back(args[i].substr(opt.size() + 1));
        for (std::size_t j = i + 1; args[i] == opt && j < args.size() && !args[j].empty() && args[j][0] != '-'; ++j) values.push_back(args[j]);
        for (auto const& v : values)
          if (opt == "--sweep") o.sweep.push_back(bench::parse_sweep(v));
          else o.set.insert_or_assign(registry::parse_assignment(v).first, registry::parse_assignment(v).second);
      }
    std::size_t count = 1;
    for (auto const& ax : o.sweep) count *= std::max<std::size_t>(ax.values.size(), 1);
    if (count > 16) return HUGE_VAL;
    const auto points = bench::points_of(*e, o);
    double most = 0;
    for (auto const& p : points) {
      double bytes = 0;
      for (auto const& t : registry::build(*e, p).params) bytes += static_cast<double>(stagecraft::host_tensor::byte_count(t.dtype, t.shape));
      most = std::max(most, bytes);
    }
    return most;
  } catch (...) {
    return 0;
  }
}

// Would this input make the CLI do more work than one fuzzer iteration may take (libFuzzer
// reports a unit over 10 s as slow, and CI fails on it)? `run` interprets and `bench` runs the
// cost model, which interprets too:
//   - an MMA kernel (or `run --all`, also spelt `--all=9x`: it timed out here): seconds per run
//     under the sanitizers;
//   - `--explore N`: N runs (`run add_one --explore 1000` takes minutes here); up to 3 pass;
//   - `--sweep` ranges (up to 4096 points per axis), lists of more than 4 points, more than 16 points;
//   - `run` or `bench` of a kernel whose parameters take more than 16 MB at the sizes given
//     (interpreted element by element), and numbers of more than 5 digits other than seeds (the host-memory
//     check stops the gigantic ones in microseconds, and `show` still fuzzes those values).
// Their error paths (a value that does not parse, an empty range) stay fuzzed where they are fast.
bool too_much_work(std::vector<std::string> const& args) {
  // The subcommand is the first argument that names one (CLI11 takes options before it too).
  const auto sub = std::find_if(args.begin() + 1, args.end(), [](auto const& a) { return a == "run" || a == "bench"; });
  if (sub == args.end()) return false;
  for (auto const& a : args)
    if (a == "--all" || a.rfind("--all=", 0) == 0 || mma_kernels().count(a)) return true;  // CLI11 takes --all=<anything>
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  for (auto const& v : values_of(args, "--explore"))
    if (std::any_of(v.begin(), v.end(), digit) && !(v.size() == 1 && v[0] <= '3')) return true;
  // `--set` and `--sweep` take several values each (`--sweep K=1,2 M=1..9`): look at every argument.
  for (std::size_t i = 2; i < args.size(); ++i) {
    auto const& a = args[i];
    if (a.find("..") != std::string::npos || std::count(a.begin(), a.end(), ',') > 3) return true;  // a sweep's range or long list
    const bool seed = args[i - 1] == "--seed" || args[i - 1] == "--input-seed" || a.rfind("--seed=", 0) == 0 || a.rfind("--input-seed=", 0) == 0;
    std::size_t run = 0;
    for (char c : a) {
      run = digit(c) ? run + 1 : 0;
      if (run > 5 && !seed) return true;  // seeds cost nothing, whatever their size
    }
  }
  // `run add_one --set M=99999` took 33 s here, softmax_rows at M=99999 20 s, `bench add_one --set
  // M=99999` 47 s; at 16 MB of parameters a run takes about a second. (after the checks above:
  // a sweep left here has a few points, each built once).
  return run_bytes(args) > 16.0 * (1 << 20);
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
  if (too_much_work(args)) return 0;
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
