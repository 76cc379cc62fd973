#include "stagecraft/ir/protocol_error.hpp"
#include "stagecraft/cli.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <new>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <range/v3/algorithm/max_element.hpp>
#include <range/v3/view/transform.hpp>

#include "stagecraft/hostexec/hostexec.hpp"
#include "internal.hpp"
#include "narrate.hpp"
#include "step.hpp"
#include "verdict.hpp"
#include "bench.hpp"
#include "shard.hpp"
#include "stagecraft/bench/bench.hpp"
#include "stagecraft/bench/model.hpp"
#include "stagecraft/ir/recompute.hpp"
#include "stagecraft/ir/scopes.hpp"
#include "stagecraft/interp/interp.hpp"
#include "stagecraft/lessons.hpp"
#include "stagecraft/nvrtc/codegen.hpp"
#include "stagecraft/nvrtc/environment.hpp"
#ifdef STAGECRAFT_HAVE_NVRTC
#include "stagecraft/nvrtc/nvrtc.hpp"
#endif
#ifdef STAGECRAFT_HAVE_CUDA_RUNTIME
#include "stagecraft/cuda/runtime.hpp"
#endif

namespace stagecraft::cli {


namespace {

// --set NAME=VALUE, and --dynamic NAME as "NAME?" = 1 (registry.hpp): resolve() checks both.
// A value may be one of the parameter's names (--set fmt=nvfp4).
param_values parse_sets(kernel_entry const& e, std::vector<std::string> const& sets, std::vector<std::string> const& dynamic = {}) {
  param_values v;
  for (auto const& d : dynamic)
    if (!v.emplace(d + "?", 1).second) throw usage_error(fmt::format("--dynamic {} is given twice", d));
  for (auto const& s : sets) {
    auto [name, value] = registry::parse_assignment(s, e);
    // Keeping the last of two would run a size the user may not have meant, without a word.
    if (auto [it, fresh] = v.emplace(name, value); !fresh)
      throw usage_error(fmt::format("--set {} is given twice ({}={}, then {}={}): give each parameter once", name, name, it->second, name, value));
  }
  return v;
}

// Seeds are 64-bit: CLI11 would wrap "-1" and clamp 2^64 to the maximum without a word, and a
// wrapped seed replays a different schedule than the one the user wrote down.
std::uint64_t parse_seed(const char* flag, std::string const& text) {
  std::uint64_t v = 0;
  auto const* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), last, v);
  if (text.empty() || ec != std::errc{} || ptr != last)
    throw usage_error(fmt::format("{} '{}': expected an integer from 0 to {}", flag, text, std::numeric_limits<std::uint64_t>::max()));
  return v;
}

using detail::output_file;

// Two output flags naming one file would leave only the last writer's bytes in it.
void check_distinct_outputs(std::vector<std::pair<const char*, std::optional<std::string> const*>> const& outputs) {
  namespace fs = std::filesystem;
  // absolute() first: weakly_canonical leaves a relative path to a file not yet made relative.
  auto canonical = [](std::string const& p) {
    std::error_code ec;
    auto abs = fs::absolute(p, ec);
    if (ec) return fs::path(p);
    auto c = fs::weakly_canonical(abs, ec);
    return ec ? abs.lexically_normal() : c;
  };
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      if (!*outputs[i].second || !*outputs[j].second) continue;
      auto const &a = **outputs[i].second, &b = **outputs[j].second;
      if (a.empty() || b.empty()) continue;
      if (canonical(a) == canonical(b))
        throw usage_error(fmt::format("{} and {} both write '{}': give each its own file", outputs[i].first, outputs[j].first, a));
    }
}

std::string describe_params(kernel_entry const& e) {
  auto one = [](param_spec const& p) {
    std::string range = p.allowed.empty() ? fmt::format("{}..{}", p.min, p.max) : fmt::format("{{{}}}", fmt::join(p.allowed, ","));
    if (p.multiple_of > 1) range += fmt::format(", multiple of {}", p.multiple_of);
    std::vector<std::string> names;
    for (auto const& [n, v] : p.names) names.push_back(fmt::format("{}={}", n, v));
    if (!names.empty()) range += fmt::format("; names {}", fmt::join(names, ", "));
    return fmt::format("{}={} ({}; {})", p.name, p.default_value, p.help, range);
  };
  return fmt::format("{}", fmt::join(e.params | ranges::views::transform(one), "\n      "));
}

void list(registry const& kernels) {
  auto const entries = kernels.all();
  std::size_t width = 0;
  for (auto const* e : entries) width = std::max(width, e->name.size());
  for (auto const* e : entries) {
    fmt::print("{:<{}}  {}\n", e->name, width, e->summary);
    if (!e->params.empty()) fmt::print("      {}\n", describe_params(*e));
  }
}

void show(kernel_entry const& e, param_values const& overrides) {
  const auto values = registry::resolve(e, overrides);
  const ir::Kernel k = registry::build(e, values);
  const std::string set = detail::describe_values(values);
  fmt::print("# {} ({})\n# hash {:016x}\n{}\n", e.name, set, ir::hash(k), ir::print(k));
}

struct run_flags {
  std::string backend = "interp";
  std::string policy = "eager";
  std::uint64_t seed = 0;
  std::uint64_t input_seed = 1;
  int explore = 0;
  int pct_depth = 3;
  bool no_checks = false;
  bool cta_scopes = false;            // --cta-scopes: the what-if of every cluster barrier at .cta scope
  std::optional<std::string> trace_file, timeline_file;
  std::uint32_t watchdog_ms = 2000;   // --backend gpu: bounded barrier waits (0: off)
  std::uint32_t deadline_ms = 10000;  // --backend gpu: host-side deadline per launch (0: none)
  std::optional<double> time_budget;  // --explore: seconds for all the schedules of the command
  std::string math;                   // --math exact|fast; empty: fast on the GPU, exact on the CPU backends
};

// --math: exact (bit-equal across backends) or fast (the SFU's approximations; docs/codegen.md).
ir::math_mode parse_math(std::string const& text, ir::math_mode otherwise) {
  if (text.empty()) return otherwise;
  if (auto m = ir::parse_math_mode(text)) return *m;
  throw usage_error(fmt::format("unknown --math '{}' (exact or fast)", text));
}

std::string byte_size(double bytes) {
  const char* unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} bytes", bytes) : fmt::format("{:.1f} {}", bytes, unit[u]);
}

// What this process may allocate: the machine's memory, or less under a ulimit.
double host_memory_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  double limit = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : HUGE_VAL;
  for (int r : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit l{};
    if (getrlimit(r, &l) == 0 && l.rlim_cur != RLIM_INFINITY) limit = std::min(limit, static_cast<double>(l.rlim_cur));
  }
  return limit;
}

// A run holds every GMEM parameter three times (the inputs, the backend's buffers, the
// reference's), plus the interpreter's shadows. Sizes within their specs can still ask for
// terabytes: say so with the numbers instead of dying in the allocator.
void check_host_memory(kernel_entry const& e, param_values const& values, ir::Kernel const& k) {
  constexpr int copies = 3;
  double total = 0;
  std::vector<std::string> parts;
  for (auto const& p : k.params) {
    std::int64_t bytes = 0;
    try {
      bytes = host_tensor::byte_count(p.dtype, p.shape);
    } catch (std::invalid_argument const&) {
      throw usage_error(fmt::format("kernel '{}': parameter '{}' of shape ({}) has more bytes than an int64_t can count", e.name,
                                    p.name, fmt::join(p.shape, ", ")));
    }
    total += static_cast<double>(bytes);
    parts.push_back(fmt::format("{} {}", p.name, byte_size(static_cast<double>(bytes))));
  }
  const double limit = host_memory_limit();
  if (total * copies > limit) {
    const std::string set = detail::describe_values(values);
    throw usage_error(fmt::format("kernel '{}' ({}) needs at least {} of host memory: its tensors take {} ({}), held {} times "
                                  "(inputs, results, reference), and this machine allows {}: choose smaller sizes",
                                  e.name, set, byte_size(total * copies), byte_size(total), fmt::join(parts, ", "),
                                  copies, byte_size(limit)));
  }
}

interp::policy parse_policy(std::string const& p) {
  if (p == "eager") return interp::policy::eager;
  if (p == "lazy") return interp::policy::lazy;
  if (p == "random") return interp::policy::random;
  if (p == "pct") return interp::policy::pct;
  throw usage_error(fmt::format("unknown policy '{}' (eager, lazy, random, pct)", p));
}

// `run --backend gpu`: JIT, launch, and check against the reference and the interpreter.
int run_on_gpu(kernel_entry const& e, param_values const& values, ir::Kernel const& k, run_flags const& f) {
#ifdef STAGECRAFT_HAVE_CUDA_RUNTIME
  const auto st = cuda::driver_status();
  if (auto why = cuda::unusable(st)) {
    fmt::print("{}: {}\n", e.name, *why);
    return exit_no_driver;
  }
  const ir::Target target = *st.target;
  ir::Kernel kk = k;
  kk.target = target;
  const auto inputs = entry_inputs(e, values, kk, f.input_seed);
  const auto math = parse_math(f.math, ir::math_mode::fast);
  const auto c = nvrtc::compile(kk, target, {.codegen = {.watchdog_ms = f.watchdog_ms, .math = math}});
  cuda::launch_result r;
  try {
    r = cuda::launch(c, kk, inputs, {.deadline_ms = f.deadline_ms});
  } catch (cuda::error const& err) {
    fmt::print("{} on {} ({}): {}\nverdict: GPU error\n", e.name, st.device, ir::target_name(target), err.what());
    return exit_gpu_error;
  }
  fmt::print("{} on {} ({}, watchdog {}, math {}): {:.3f} ms\n", e.name, st.device, ir::target_name(target),
             f.watchdog_ms ? fmt::format("{} ms", f.watchdog_ms) : std::string("off"), ir::math_mode_name(math), r.milliseconds);
  auto expected = inputs;
  e.reference(expected, values);
  auto interp_result = interp::run(kk, inputs, {.schedule = interp::policy::eager, .checks = false, .math = math});
  const auto tol = interp::tolerance_of(kk, interp_result, inputs);
  if (int rc = compare_with_reference(kk, r.buffers, expected, "the reference", 0, tol); rc != exit_ok) return rc;
  // Both fast runs are within the bound of the exact reference, so of each other within twice it.
  return compare_with_reference(kk, r.buffers, interp_result.buffers, "the interpreter", 0,
                                tol && math == ir::math_mode::fast ? std::optional(interp::between_fast_runs(*tol)) : tol);
#else
  (void)values;
  (void)k;
  (void)f;
  fmt::print("{}: no CUDA driver available: this build has no CUDA toolkit (configure found none)\n", e.name);
  return exit_no_driver;
#endif
}

// `stagecraft device`: what a GPU run would use, or why it cannot run here.
int device_report() {
#ifdef STAGECRAFT_HAVE_CUDA_RUNTIME
  const auto st = cuda::driver_status();
  std::string nvrtc_line;
  try {
    nvrtc_line = fmt::format("NVRTC {} ({})", nvrtc::nvrtc_version(), nvrtc::library_path());
  } catch (nvrtc::unavailable const& e) {
    nvrtc_line = e.what();
  }
  fmt::print("{}\n", nvrtc_line);
  if (!st.available) {
    fmt::print("{}\n", st.reason);
    return exit_no_driver;
  }
  fmt::print("device 0: {}, compute capability {}.{}, {} SMs\n", st.device, st.compute_major, st.compute_minor, st.multiprocessors);
  if (auto why = cuda::unusable(st)) {
    fmt::print("{}\n", *why);
    return exit_no_driver;
  }
  fmt::print("target: {}\n", ir::target_name(*st.target));
  return exit_ok;
#else
  fmt::print("no CUDA driver available: this build has no CUDA toolkit (configure found none)\n");
  return exit_no_driver;
#endif
}

// `run --backend host`: the CUDA C++ the code generator emits, compiled for the CPU and run with
// every CUDA thread a fiber, under host schedule --seed (with --explore N, seeds seed..seed+N-1);
// each schedule is checked against the reference and the interpreter.
int run_on_host(kernel_entry const& e, param_values const& values, ir::Kernel const& k, run_flags const& f, detail::explore_clock const& clock) {
  const auto inputs = entry_inputs(e, values, k, f.input_seed);
  const auto math = parse_math(f.math, ir::math_mode::exact);
  hostexec::compiled c;
  try {
    c = hostexec::compile(k, {.math = math});
  } catch (hostexec::compile_error const& x) {
    std::cerr << "stagecraft: " << x.what() << "\n";
    return exit_internal;
  }
  const int n = std::max(1, f.explore);
  const std::string set = detail::describe_values(values);
  fmt::print("{} ({}): inputs seeded random (--input-seed {}), host backend ({}, math {}), schedule seed(s) {}..{}\n", e.name, set,
             f.input_seed, c.from_cache ? "cached object" : fmt::format("compiled in {:.2f} s", c.compile_seconds), ir::math_mode_name(math), f.seed,
             f.seed + static_cast<std::uint64_t>(n) - 1);
  auto expected = inputs;
  e.reference(expected, values);
  const auto by_interp = interp::run(k, inputs, {.schedule = interp::policy::eager, .checks = false, .math = math});
  const auto tol = interp::tolerance_of(k, by_interp, inputs);
  const auto tol_interp = tol && math == ir::math_mode::fast ? std::optional(interp::between_fast_runs(*tol)) : tol;
  // No progress line: every schedule prints its verdict line, and a line rewritten on stderr
  // would garble them on the terminal.
  int i = 0;
  for (; i < n && clock.may_run(i); ++i) {
    const std::uint64_t seed = f.seed + static_cast<std::uint64_t>(i);
    const auto r = hostexec::run(c, k, inputs, {.seed = seed});
    if (!r.ok()) {
      fmt::print("{}\nverdict: protocol error (host {} with --seed {} after {} steps)\n", r.message, hostexec::failure_name(r.kind), seed, r.steps);
      return exit_protocol;
    }
    if (int rc = compare_with_reference(k, r.buffers, expected, "the reference", r.steps, tol); rc != exit_ok) {
      fmt::print("(host schedule --seed {})\n", seed);
      return rc;
    }
    if (int rc = compare_with_reference(k, r.buffers, by_interp.buffers, "the interpreter", r.steps, tol_interp); rc != exit_ok) {
      fmt::print("(host schedule --seed {})\n", seed);
      return rc;
    }
  }
  if (i < n)
    fmt::print("verdict: correct on the {} host schedule(s) that ran (seeds {}..{}), only {} of the {} asked: the --time-budget of {:g} s ran out\n",
               i, f.seed, f.seed + static_cast<std::uint64_t>(i) - 1, i, n, clock.budget().value_or(0));
  return exit_ok;
}

// interp::explore with the --time-budget and the progress line: seeds base.seed, base.seed + 1,
// ... until the first diagnostic, n schedules or the end of the budget.
interp::exploration explore(std::string const& name, ir::Kernel const& k, std::vector<host_tensor> const& inputs, interp::options const& base,
                            int n, detail::explore_clock& clock) {
  interp::exploration ex;
  for (int i = 0; i < n && clock.may_run(i); ++i) {
    interp::options o = base;
    o.seed = base.seed + static_cast<std::uint64_t>(i);
    auto r = interp::run(k, inputs, o);
    clock.ran(name, ++ex.schedules, n);
    if (!r.ok()) {
      ex.failing_seed = o.seed;
      ex.failure = std::move(r);
      break;
    }
  }
  clock.clear();
  return ex;
}

int run_kernel(kernel_entry const& e, param_values const& overrides, run_flags const& f, detail::explore_clock& clock) {
  const auto values = registry::resolve(e, overrides);
  std::optional<ir::Kernel> built;
  try {
    built.emplace(registry::build(e, values));
  } catch (ir::ProtocolError const& err) {  // the user's protocol mistake, found before any run: a verdict like the interpreter's
    const std::string set = detail::describe_values(values);
    fmt::print("{} ({}): not run\n{}\nverdict: protocol error ({}, found by the verifier before the run)\n", e.name, set, err.what(),
               err.check);
    return exit_protocol;
  }
  const ir::Kernel& k = *built;
  check_host_memory(e, values, k);
  if (f.cta_scopes && f.backend != "interp")
    throw usage_error(fmt::format("--cta-scopes is a what-if of the interpreter's memory model; --backend {} runs the generated scopes", f.backend));
  if (f.backend == "gpu") return run_on_gpu(e, values, k, f);
  if (f.backend == "host") return run_on_host(e, values, k, f, clock);
  if (f.backend != "interp") throw usage_error(fmt::format("unknown backend '{}' (interp, host or gpu)", f.backend));
  interp::options o;
  o.schedule = parse_policy(f.policy);
  o.seed = f.seed;
  o.pct_depth = f.pct_depth;
  o.checks = !f.no_checks;
  o.all_cta_scopes = f.cta_scopes;
  if (f.cta_scopes && f.no_checks) throw usage_error("--cta-scopes shows the races a weak scope leaves; it needs the checks (drop --no-checks)");
  o.trace = f.trace_file || f.timeline_file;
  o.math = parse_math(f.math, ir::math_mode::exact);
  if (f.explore > 0 && (o.schedule == interp::policy::eager || o.schedule == interp::policy::lazy)) o.schedule = interp::policy::pct;
  if (o.pct_depth < 1) throw usage_error("--pct-depth must be at least 1");
  if (f.explore > 0 && o.seed > std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(f.explore - 1))
    throw usage_error(fmt::format("--seed {} --explore {}: the seeds would run past {}; start at {} at most", o.seed, f.explore,
                                  std::numeric_limits<std::uint64_t>::max(),
                                  std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(f.explore - 1)));
  std::optional<output_file> trace_out, timeline_out;
  if (f.trace_file) trace_out.emplace("--trace", *f.trace_file);
  if (f.timeline_file) timeline_out.emplace("--timeline", *f.timeline_file);
  const auto inputs = entry_inputs(e, values, k, f.input_seed);
  const std::string set = detail::describe_values(values);
  fmt::print("{} ({}): inputs seeded random (--input-seed {}), policy {}{}{}{}{}\n", e.name, set, f.input_seed,
             interp::policy_name(o.schedule), o.schedule == interp::policy::random || o.schedule == interp::policy::pct ? fmt::format(" --seed {}", o.seed) : "",
             o.checks ? "" : ", checks off", o.math == ir::math_mode::fast ? ", math fast" : "",
             o.all_cta_scopes ? ", every cluster barrier at .cta scope (what-if)" : "");
  // What the run cannot show: a reduction the generated code folds again for every element.
  for (auto const& rr : ir::recomputed_reductions(k)) fmt::print("note: {}\n", rr.message);

  interp::result r;
  std::string caveat;  // what a "correct" verdict does not cover
  if (f.explore > 0) {
    auto ex = explore(e.name, k, inputs, o, f.explore, clock);
    if (ex.failing_seed) {
      fmt::print("explored {} schedule(s): seed {} fails (replay: --policy {} --seed {})\n", ex.schedules, *ex.failing_seed,
                 interp::policy_name(o.schedule), *ex.failing_seed);
      r = std::move(*ex.failure);
    } else {
      if (ex.schedules < f.explore)
        fmt::print("explored {} of {} schedule(s) (seeds {}..{}): no diagnostic in those; the --time-budget of {:g} s ran out before the "
                   "other {}\n",
                   ex.schedules, f.explore, o.seed, o.seed + ex.schedules - 1, clock.budget().value_or(0), f.explore - ex.schedules);
      else
        fmt::print("explored {} schedule(s) (seeds {}..{}): no diagnostic\n", ex.schedules, o.seed, o.seed + ex.schedules - 1);
      caveat = clock.caveat(ex.schedules, f.explore);
      o.seed = o.seed + ex.schedules - 1;
      r = interp::run(k, inputs, o);  // the last schedule again, for the result check and the trace
    }
  } else {
    r = interp::run(k, inputs, o);
  }
  if (trace_out) trace_out->write(interp::to_chrome_json(r.timeline));
  if (timeline_out) timeline_out->write(interp::to_html(r.timeline));
  if (!r.ok()) {
    for (auto const& d : r.diagnostics) fmt::print("{}\n", d.message);
    fmt::print("verdict: protocol error ({} after {} steps)\n", interp::check_name(r.diagnostics.front().kind), r.steps);
    return exit_protocol;
  }
  auto expected = inputs;
  e.reference(expected, values);
  return compare_with_reference(k, r.buffers, expected, "the reference", r.steps, interp::tolerance_of(k, r, inputs), caveat);
}

struct ptx_flags {
  std::string arch;  // empty: the target the kernel was written for
  std::optional<std::string> out, cubin, source;
  std::uint32_t watchdog_ms = 0;
  std::string math = "fast";
};

// `stagecraft ptx`: generate CUDA C++, JIT it with NVRTC (ptxas validates it) and write the
// results. Without NVRTC only --source can be honoured.
int ptx_kernel(kernel_entry const& e, param_values const& overrides, ptx_flags const& f) {
  if (!f.arch.empty() && f.arch != "sm_90a" && f.arch != "sm_100a")
    throw usage_error(fmt::format("unknown --arch '{}' (sm_90a or sm_100a)", f.arch));
  const auto values = registry::resolve(e, overrides);
  ir::Kernel k = registry::build(e, values);
  // By default the kernel's own target (kernel<sm_100a>(...)); --arch compiles the same IR for the
  // other generation, and ops that need one are rejected by verify.
  const ir::Target written = k.target;
  const ir::Target target = f.arch.empty() ? written : f.arch == "sm_100a" ? ir::Target::sm_100a : ir::Target::sm_90a;
  const std::string arch = target == ir::Target::sm_100a ? "sm_100a" : "sm_90a";
  k.target = target;
  try {
    ir::verify(k);
  } catch (ir::ConfigError const& err) {  // it verified for its own target: the op is the target's
    throw usage_error(fmt::format("{} (--arch {}; the kernel is written for {}: leave --arch out to compile it for that)", err.what(), arch,
                                  written == ir::Target::sm_100a ? "sm_100a" : "sm_90a"));
  }
  check_distinct_outputs({{"--output", &f.out}, {"--cubin", &f.cubin}, {"--source", &f.source}});
#ifndef STAGECRAFT_HAVE_NVRTC
  if (f.out || f.cubin || !f.source)
    throw usage_error("this build has no NVRTC (no CUDA toolkit found at configure time): only --source FILE can be written");
#endif
  std::optional<output_file> out, cubin, source;
  if (f.out) out.emplace("--output", *f.out);
  if (f.cubin) cubin.emplace("--cubin", *f.cubin);
  if (f.source) source.emplace("--source", *f.source);
  const nvrtc::codegen_options gopt{.watchdog_ms = f.watchdog_ms, .math = parse_math(f.math, ir::math_mode::fast)};
  const auto gen = nvrtc::generate(k, gopt);
  if (source) source->write(gen.source);
  for (auto const& rr : ir::recomputed_reductions(k)) std::fprintf(stderr, "note: %s\n", rr.message.c_str());
  // The epilogue stores' bank conflicts (nvrtc::store_banks), for the reader and the speed gate.
  for (auto const& b : gen.banks)
    std::fprintf(stderr, "%s: op #%d stores %s into %s: %lld x %d-byte %s per thread, %lld SMEM wavefronts per warp (ideal %lld)%s\n",
                 e.name.c_str(), b.op, b.source, b.target.c_str(), static_cast<long long>(b.accesses), b.width,
                 b.stmatrix ? "stmatrix.x4 rows" : "stores", static_cast<long long>(b.wavefronts),
                 static_cast<long long>(b.ideal), b.slabs_aligned ? "" : " (its other slabs may differ: not on 128-byte multiples)");
#ifdef STAGECRAFT_HAVE_NVRTC
  nvrtc::compiled c;
  try {
    c = nvrtc::compile(k, target, {.codegen = gopt});
  } catch (nvrtc::unavailable const& e) {
    std::fprintf(stderr, "stagecraft: %s\n", e.what());
    return exit_no_driver;
  }
  if (cubin) cubin->write(std::string(c.cubin.begin(), c.cubin.end()));
  if (out) out->write(c.ptx);
  else if (!source && !cubin) fmt::print("{}", c.ptx);
  std::fprintf(stderr, "%s on %s: %zu bytes of PTX, %zu bytes of CUBIN, %d registers, %d spill bytes, %lld bytes of SMEM, %zu tensor maps (%s, math %s)\n",
               e.name.c_str(), arch.c_str(), c.ptx.size(), c.cubin.size(), c.registers, c.spill_bytes,
               static_cast<long long>(c.code.smem_bytes), c.code.maps.size(),
               c.origin == nvrtc::compiled::source::compiled ? "compiled" : "from cache", ir::math_mode_name(gopt.math));
  return exit_ok;
#else
  return exit_ok;
#endif
}

// ---- `stagecraft lesson` ------------------------------------------------------------------------

void list_lessons() {
  for (auto const* l : lesson_registry::global().all()) {
    fmt::print("{:02} {:<22} {}\n", l->number, l->slug, l->title);
    for (auto const& t : l->twins) fmt::print("     --buggy={:<18} {} ({})\n", t.name, t.mistake, t.expect);
  }
  for (auto const& [n, title] : lesson_registry::coming()) fmt::print("{:02} (coming) {}\n", n, title);
  fmt::print("run one: stagecraft lesson NN [--buggy[=NAME]] [--barrier bN] [--step] (docs/lessons/NN.md has the text)\n");
}

struct lesson_flags {
  std::optional<std::string> buggy;  // set: a twin ("" = the first)
  std::string barrier;               // narrate only this barrier's events
  std::optional<std::string> timeline_file;
  std::size_t lines = 80;            // narration lines shown (0: all)
  bool step = false;                 // the learner drives the schedule from stdin (step.hpp)
  std::optional<std::string> cubin_dir;  // a lesson with variants: write each one's CUBIN there
};

// The end of a session in which the learner drove the schedule. A twin's mistake shows only
// under some schedules: a clean run is an answer too (that timing would have been fine on a GPU
// as well), so the exit is 0 either way; only the correct kernel reporting anything is ours.
int stepped_verdict(lesson_entry const& l, lesson_twin const* twin, ir::Kernel const& k, std::vector<host_tensor> const& inputs,
                    interp::result const& r) {
  if (!r.ok()) {
    auto const& d = r.diagnostics.front();
    fmt::print("\nYour schedule caused it. The interpreter says:\n  {}\n", d.message);
    if (!twin) {
      fmt::print("lesson {:02}: the correct kernel reported a diagnostic: a bug in stagecraft, please report it\n", l.number);
      return 1;
    }
    fmt::print("\nOn a GPU: {}.\nFix: {}.\n", twin->hardware, twin->fix);
    if (interp::check_name(d.kind) != twin->expect)
      fmt::print("(the lesson names {} for this twin: your schedule found another face of the same mistake)\n", twin->expect);
    return exit_ok;
  }
  if (twin) {
    fmt::print("\nYour schedule ran clean: under this timing the mistake does no harm, and on a GPU it would not either. "
               "The lesson's {} needs another order: run it again and choose differently.\n",
               twin->expect);
    return exit_ok;
  }
  auto expected = inputs;
  l.reference(expected);
  return compare_with_reference(k, r.buffers, expected, "the reference", r.steps, interp::tolerance_of(k, r, inputs)) == exit_ok ? exit_ok : 1;
}

// What a lesson's kernel and each of its variants cost (lesson 13), from three tools that need
// no GPU: the cost model (its predicted time, and how much of it the MMA warpgroup spends
// waiting), the cluster barriers' scope rule (ir::cluster_barrier_scope: a .release.cluster
// arrival is a fence of the whole cluster, every time it runs) and the code generator's count of
// SMEM wavefronts in the epilogue's fragment stores. Each variant is checked correct first.
// cubin_dir: also write each way's CUBIN there (<way>.cubin, NVRTC), for bench/lesson_sass.sh.
int print_variant_costs(lesson_entry const& l, std::optional<std::string> const& cubin_dir) {
  struct row {
    std::string name, change, verdict, limited_by;
    double ms = 0, wait = 0;
    int stages = 0, cluster_scope = 0, cta_scope = 0;
    std::int64_t wavefronts = 0, ideal = 0;
  };
  const auto machine = bench::find_machine("H200");
  auto measure = [&](std::string name, std::string change, ir::Kernel const& k) {
    row r{.name = std::move(name), .change = std::move(change)};
    const auto inputs = random_inputs(k, 1);
    const auto run = interp::run(k, inputs);
    auto expected = inputs;
    l.reference(expected);
    std::int64_t checked = 0;
    const auto bad = run.ok() ? first_mismatch(k, run.buffers, expected, "the reference", checked, interp::tolerance_of(k, run, inputs))
                              : run.diagnostics.front().message;
    r.verdict = bad.empty() ? "correct" : bad;
    const auto p = bench::predict(k, inputs, machine);
    r.ms = p.kernel_ms;
    r.limited_by = p.limited_by;
    for (auto const& w : p.warpgroups)  // the MMA warpgroup: the last of CTA 0
      if (w.cta == 0 && w.wg == k.roles - 1) r.wait = w.waiting_ns / std::max(w.busy_ns + w.waiting_ns, 1e-9);
    for (std::size_t a = 0; a < k.allocs.size(); ++a) {
      if (k.allocs[a].kind == ir::AllocKind::cluster_barrier) ++(ir::cluster_barrier_scope(k, static_cast<int>(a)).cta ? r.cta_scope : r.cluster_scope);
      if (k.allocs[a].kind == ir::AllocKind::barrier || k.allocs[a].kind == ir::AllocKind::cluster_barrier)
        r.stages = std::max<int>(r.stages, static_cast<int>(k.allocs[a].shape.empty() ? 1 : k.allocs[a].shape[0]));
    }
    for (auto const& b : nvrtc::generate(k).banks) r.wavefronts += b.wavefronts, r.ideal += b.ideal;
    if (cubin_dir) {
#ifdef STAGECRAFT_HAVE_NVRTC
      const auto c = nvrtc::compile(k, k.target);
      output_file("--cubin-dir", *cubin_dir + "/" + r.name + ".cubin").write(std::string(c.cubin.begin(), c.cubin.end()));
#else
      throw usage_error("lesson --cubin-dir: this build has no NVRTC (no CUDA toolkit found at configure time)");
#endif
    }
    return r;
  };
  std::vector<row> rows{measure(l.slug, "the lesson's kernel", l.build())};
  for (auto const& v : l.variants) rows.push_back(measure(v.name, v.change, v.build()));
  fmt::print("\nThe same kernel written {} ways (MODEL: the cost model of the {}, not a measurement):\n", rows.size(), machine.name);
  fmt::print("  {:<18} {:>7} {:>12} {:>12} {:>22} {:>20}  {}\n", "way", "stages", "time (ms)", "MMA wg waits", "cluster barrier scope",
             "epilogue wavefronts", "limited by");
  int rc = exit_ok;
  for (auto const& r : rows) {
    const auto scope = r.cluster_scope + r.cta_scope == 0 ? std::string("-")
                       : r.cluster_scope                 ? fmt::format(".release.cluster x{}", r.cluster_scope)
                                                         : fmt::format(".release.cta x{}", r.cta_scope);
    const auto waves = r.ideal ? fmt::format("{} (ideal {})", r.wavefronts, r.ideal) : std::string("-");
    fmt::print("  {:<18} {:>7} {:>12.5f} {:>11.0f}% {:>22} {:>20}  {}\n", r.name, r.stages, r.ms, 100 * r.wait, scope, waves, r.limited_by);
    if (r.verdict != "correct") {
      fmt::print("  {}: not correct ({}): a bug in stagecraft, please report it\n", r.name, r.verdict);
      rc = 1;
    }
  }
  for (std::size_t i = 1; i < rows.size(); ++i) fmt::print("  {}: {}\n", rows[i].name, rows[i].change);
  fmt::print("Every way above computes the same C (checked against the reference). The model prices neither fences nor "
             "bank conflicts: docs/lessons/{:02}.md says what they cost (bench/lesson_sass.sh counts the SASS).\n",
             l.number);
  return rc;
}

// Runs one lesson with narration: the schedule as it happened, then the verdict, or for a buggy
// twin the diagnostic, what a GPU would do and the fix. Exit 0 when the lesson behaves as its
// text says (the twin gets its diagnostic), 1 when it does not (a bug of ours).
int run_lesson(lesson_entry const& l, lesson_flags const& f) {
  lesson_twin const* twin = nullptr;
  if (f.buggy) {
    if (l.twins.empty()) throw usage_error(fmt::format("lesson {:02} has no buggy twin", l.number));
    for (auto const& t : l.twins)
      if (f.buggy->empty() || t.name == *f.buggy) {
        twin = &t;
        break;
      }
    if (!twin) {
      std::vector<std::string> names;
      for (auto const& t : l.twins) names.push_back(t.name);
      throw usage_error(fmt::format("lesson {:02} has no twin '{}' (its twins: {})", l.number, *f.buggy, fmt::join(names, ", ")));
    }
  }
  if (f.cubin_dir && (l.variants.empty() || twin || f.step))
    throw usage_error(fmt::format("lesson {:02} --cubin-dir: only a lesson with variants writes CUBINs{}", l.number,
                                  l.variants.empty() ? " (lesson 13 has them)" : ", and not with --buggy or --step"));
  const std::string base = twin ? fmt::format("lesson{:02}_{}", l.number, twin->name) : fmt::format("lesson{:02}", l.number);
  output_file timeline("--timeline", f.timeline_file.value_or(base + ".html"));
  const ir::Kernel k = twin ? twin->build() : l.build();
  fmt::print("Lesson {:02}: {}\n{}\n\n", l.number, l.title, l.summary);
  if (twin) fmt::print("Buggy twin '{}': {}\n\n", twin->name, twin->mistake);

  const auto inputs = random_inputs(k, 1);
  interp::options o{.schedule = twin ? parse_policy(twin->policy) : interp::policy::eager, .trace = true};
  interp::result r;
  if (f.step) {
    auto mine = run_stepping(k, inputs, o, std::cin);
    if (!mine) return exit_ok;
    r = std::move(*mine);
    timeline.write(interp::to_html(r.timeline));
    fmt::print("\ntimeline of your schedule: {}\n", f.timeline_file.value_or(base + ".html"));
    return stepped_verdict(l, twin, k, inputs, r);
  }
  if (twin && o.schedule == interp::policy::pct) {  // a twin that needs a preemption: the first schedule that has it
    auto ex = interp::explore(k, inputs, o, 50);
    r = ex.failure ? std::move(*ex.failure) : interp::run(k, inputs, o);
    if (ex.failing_seed) fmt::print("(schedule: pct --seed {}, the first of 50 that shows the mistake)\n", *ex.failing_seed);
  } else {
    r = interp::run(k, inputs, o);
    fmt::print("(schedule: {})\n", interp::policy_name(o.schedule));
  }
  const auto story = narrate(r.timeline, f.barrier);
  const std::size_t shown = f.lines == 0 ? story.size() : std::min(story.size(), f.lines);
  // For a twin, the end of the story is where the mistake shows: keep its last lines.
  const std::size_t first = twin ? story.size() - shown : 0;
  if (first > 0) fmt::print("... {} earlier events (--lines 0 shows all)\n", first);
  for (std::size_t i = first; i < first + shown; ++i) fmt::print("  {}\n", story[i]);
  if (!twin && shown < story.size()) fmt::print("... {} more events (--lines 0 shows all)\n", story.size() - shown);
  timeline.write(interp::to_html(r.timeline));
  fmt::print("\ntimeline: {}\n", f.timeline_file.value_or(base + ".html"));

  if (!twin) {
    if (!r.ok()) {
      fmt::print("{}\nlesson {:02}: the correct kernel reported a diagnostic: a bug in stagecraft, please report it\n", r.diagnostics.front().message, l.number);
      return 1;
    }
    auto expected = inputs;
    l.reference(expected);
    const int rc = compare_with_reference(k, r.buffers, expected, "the reference", r.steps, interp::tolerance_of(k, r, inputs)) == exit_ok ? exit_ok : 1;
    if (l.variants.empty() || rc != exit_ok) return rc;
    return print_variant_costs(l, f.cubin_dir);
  }
  if (r.ok()) {
    fmt::print("lesson {:02}: twin '{}' ran clean, but its lesson promises {}: a bug in stagecraft, please report it\n", l.number, twin->name, twin->expect);
    return 1;
  }
  auto const& d = r.diagnostics.front();
  fmt::print("\nThe interpreter says:\n  {}\n\nOn a GPU: {}.\nFix: {}.\n", d.message, twin->hardware, twin->fix);
  if (interp::check_name(d.kind) != twin->expect) {
    fmt::print("lesson {:02}: expected {}, got {}: a bug in stagecraft, please report it\n", l.number, twin->expect, interp::check_name(d.kind));
    return 1;
  }
  return exit_ok;
}

}  // namespace

namespace detail {
std::vector<host_tensor> random_inputs(ir::Kernel const& k, std::uint64_t seed) { return cli::random_inputs(k, seed); }
interp::policy parse_policy(std::string const& p) { return cli::parse_policy(p); }
std::uint64_t parse_seed(const char* flag, std::string const& text) { return cli::parse_seed(flag, text); }
std::string first_mismatch(ir::Kernel const& k, std::vector<host_tensor> const& got_all, std::vector<host_tensor> const& expected,
                           const char* what, std::int64_t& checked, std::optional<interp::mma_tolerance> const& tol) {
  return cli::first_mismatch(k, got_all, expected, what, checked, tol);
}
void check_distinct(std::vector<std::pair<const char*, std::optional<std::string> const*>> const& outputs) {
  cli::check_distinct_outputs(outputs);
}
std::string describe_values(param_values const& v) {
  std::vector<std::string> words;
  for (auto const& [n, x] : v)  // a size marked --dynamic ("M?" = 1) is said with its value
    if (n.empty() || n.back() != '?') words.push_back(fmt::format("{}={}{}", n, x, is_dynamic(v, n) ? " (run-time)" : ""));
  return fmt::format("{}", fmt::join(words, " "));
}
}  // namespace detail

int main(int argc, char** argv, registry const& kernels) {
  CLI::App app{"stagecraft: pipelined GPU kernels as typed C++ expression trees"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every subcommand");

  auto* list_cmd = app.add_subcommand("list", "list the registered kernels and their parameters");

  auto* show_cmd = app.add_subcommand("show", "print a kernel's lowered IR");
  std::string kernel_name;
  std::vector<std::string> sets;
  std::vector<std::string> dynamic;
  bool show_all = false;
  show_cmd->add_option("kernel", kernel_name, "kernel name (see `stagecraft list`)");
  show_cmd->add_option("--set", sets, "override a parameter: --set K=3 (repeatable)");
  show_cmd->add_option("--dynamic", dynamic, "make a size parameter a run-time extent: one compiled kernel for all its values (repeatable)");
  show_cmd->add_flag("--all", show_all, "show every registered kernel with its default parameters");

  auto* run_cmd = app.add_subcommand("run", "run a kernel in the interpreter on seeded random inputs and check it");
  run_flags rf;
  bool run_all = false;
  run_cmd->add_option("kernel", kernel_name, "kernel name (see `stagecraft list`)");
  run_cmd->add_option("--set", sets, "override a parameter: --set K=3 (repeatable)");
  run_cmd->add_option("--dynamic", dynamic, "make a size parameter a run-time extent: one compiled kernel for all its values (repeatable)");
  run_cmd->add_flag("--all", run_all, "run every registered kernel with its default parameters");
  run_cmd->add_option("--backend", rf.backend, "interp (the CPU interpreter), host (the generated CUDA C++ run on the CPU) or gpu (NVRTC + the CUDA driver)")->capture_default_str();
  run_cmd->add_option("--policy", rf.policy, "schedule: eager, lazy, random or pct")->capture_default_str();
  std::string seed_text = "0", input_seed_text = "1";
  run_cmd->add_option("--seed", seed_text, "schedule seed (random, pct; first seed of --explore)")->capture_default_str();
  run_cmd->add_option("--input-seed", input_seed_text, "seed of the random inputs")->capture_default_str();
  auto* explore_opt = run_cmd->add_option("--explore", rf.explore, "run up to N schedules (pct unless --policy random) and report the first failing seed");
  run_cmd->add_option("--time-budget", rf.time_budget,
                      "--explore: stop after this many seconds (checked between schedules), saying how many of the N ran");
  run_cmd->add_option("--pct-depth", rf.pct_depth, "PCT bug depth d (d-1 priority change points)")->capture_default_str();
  run_cmd->add_flag("--no-checks", rf.no_checks, "skip race, fence and poison checks (protocol checks stay on)");
  run_cmd->add_flag("--cta-scopes", rf.cta_scopes,
                    "interp: what if every cluster barrier arrived and waited at .cta scope? (the races a weak scope would leave; "
                    "the generated code's scopes come from ir::cluster_barrier_scope, docs/interpreter.md)");
  run_cmd->add_option("--trace", rf.trace_file, "write a Chrome/Perfetto trace (JSON)");
  run_cmd->add_option("--watchdog-ms", rf.watchdog_ms, "--backend gpu: a barrier wait longer than this traps with a report (0: off)")
      ->capture_default_str();
  run_cmd->add_option("--deadline-ms", rf.deadline_ms, "--backend gpu: the host gives up on a launch after this long (0: never)")
      ->capture_default_str();
  run_cmd->add_option("--timeline", rf.timeline_file, "write a self-contained HTML timeline");
  run_cmd->add_option("--math", rf.math, "exact (bit-equal across backends; default for interp and host) or fast (SFU approximations, FMA; default for gpu)");
  std::optional<std::string> shard_text, results_file;
  run_cmd->add_option("--shard", shard_text, "i/N: run only this shard's schedules (unit u of N, kernel-major); needs --results (docs/bench.md)");
  run_cmd->add_option("--results", results_file, "write the results as JSON lines for `stagecraft merge`");

  auto* merge_cmd = app.add_subcommand("merge", "combine the JSON-lines shards of `run --shard` or `bench --shard` into one run's results");
  detail::merge_request mr;
  merge_cmd->add_option("files", mr.files, "the shard files (each shard 0..N-1 exactly once)")->required();
  merge_cmd->add_option("-o,--output", mr.out, "write the merged JSON lines here instead of stdout");
  merge_cmd->add_option("--json", mr.json, "bench shards: write the merged report as JSON");
  merge_cmd->add_option("--csv", mr.csv, "bench shards: write the merged report as CSV");
  merge_cmd->add_option("--svg", mr.svg, "bench shards: write the merged sweep's SVG plot");
  auto bench_cmd = detail::add_bench(app);

  auto* ptx_cmd = app.add_subcommand("ptx", "generate CUDA C++, JIT it with NVRTC and print or write the PTX / CUBIN");
  ptx_flags pf;
  ptx_cmd->add_option("kernel", kernel_name, "kernel name (see `stagecraft list`)")->required();
  ptx_cmd->add_option("--set", sets, "override a parameter: --set K=3 (repeatable)");
  ptx_cmd->add_option("--dynamic", dynamic, "make a size parameter a run-time extent: one compiled kernel for all its values (repeatable)");
  ptx_cmd->add_option("--arch", pf.arch, "sm_90a or sm_100a (default: the target the kernel is written for)");
  ptx_cmd->add_option("-o,--output", pf.out, "write the PTX here instead of printing it");
  ptx_cmd->add_option("--cubin", pf.cubin, "write the CUBIN here");
  ptx_cmd->add_option("--math", pf.math, "fast (ex2/rcp/rsqrt.approx, FMA contraction) or exact (the interpreter's bits)")->capture_default_str();
  ptx_cmd->add_option("--source", pf.source, "write the generated CUDA C++ here");
  ptx_cmd->add_option("--watchdog-ms", pf.watchdog_ms, "generate bounded barrier waits that trap after this long (0: off)")
      ->capture_default_str();

  auto* device_cmd = app.add_subcommand("device", "show the CUDA driver, NVRTC and device 0, and the target stagecraft uses for it");

  auto* lesson_cmd = app.add_subcommand("lesson", "list the lessons on barrier semantics, or run one with narration and a timeline");
  std::string lesson_name;
  lesson_flags lf;
  std::string buggy_name;
  lesson_cmd->add_option("lesson", lesson_name, "lesson number (01) or name (one_barrier); none: list them");
  auto* buggy_opt = lesson_cmd->add_option("--buggy", buggy_name, "run a buggy twin (its name, or the first)")->expected(0, 1);
  lesson_cmd->add_option("--barrier", lf.barrier, "narrate only this barrier's events (b1, b1[0])");
  lesson_cmd->add_option("--timeline", lf.timeline_file, "where to write the HTML timeline (default lessonNN[_twin].html)");
  lesson_cmd->add_option("--lines", lf.lines, "narration lines shown (0: all)")->capture_default_str();
  lesson_cmd->add_option("--cubin-dir", lf.cubin_dir, "a lesson with variants (13): write each way's CUBIN into this directory (bench/lesson_sass.sh reads them)");
  lesson_cmd->add_flag("--step", lf.step, "drive the schedule yourself: pick what moves next at every step (from the terminal, or lines on stdin)");

  try {
    app.parse(argc, argv);
  } catch (CLI::CallForHelp const& e) {
    return app.exit(e);
  } catch (CLI::CallForAllHelp const& e) {
    return app.exit(e);
  } catch (CLI::ParseError const& e) {
    std::cerr << "stagecraft: " << e.what() << " (see --help)\n";
    return exit_usage;
  }

  try {
    if (*list_cmd) {
      list(kernels);
    } else if (*device_cmd) {
      return device_report();
    } else if (*lesson_cmd) {
      if (lesson_name.empty()) {
        if (buggy_opt->count()) throw usage_error("lesson --buggy: name a lesson (see `stagecraft lesson`)");
        list_lessons();
        return exit_ok;
      }
      if (buggy_opt->count()) lf.buggy = buggy_name;
      return run_lesson(lesson_registry::global().find(lesson_name), lf);
    } else if (*show_cmd) {
      if (show_all) {
        if (!kernel_name.empty() || !sets.empty() || !dynamic.empty()) throw usage_error("show --all takes no kernel name, --set or --dynamic");
        for (auto const* e : kernels.all()) show(*e, {});
      } else {
        if (kernel_name.empty()) throw usage_error("show: name a kernel (see `stagecraft list`) or pass --all");
        show(kernels.find(kernel_name), parse_sets(kernels.find(kernel_name), sets, dynamic));
      }
    } else if (*merge_cmd) {
      return detail::merge(mr);
    } else if (bench_cmd->parsed()) {
      return bench_cmd->run(kernels);
    } else if (*ptx_cmd) {
      return ptx_kernel(kernels.find(kernel_name), parse_sets(kernels.find(kernel_name), sets, dynamic), pf);
    } else if (*run_cmd) {
      rf.seed = parse_seed("--seed", seed_text);
      rf.input_seed = parse_seed("--input-seed", input_seed_text);
      if (explore_opt->count() && rf.explore < 1)
        throw usage_error(fmt::format("--explore {}: the number of schedules must be at least 1", rf.explore));
      if (rf.time_budget) {
        if (!(*rf.time_budget > 0) || !std::isfinite(*rf.time_budget))
          throw usage_error(fmt::format("--time-budget {}: give a positive number of seconds", *rf.time_budget));
        if (rf.explore < 1) throw usage_error("--time-budget bounds an exploration: give --explore N too");
        if (rf.backend == "gpu") throw usage_error("--time-budget bounds --explore, which --backend gpu does not take (one launch)");
        // A shard that stops early leaves schedules no shard ran, and the merge would have to
        // guess their verdict.
        if (shard_text || results_file)
          throw usage_error("run --results: --time-budget would leave schedules of this shard unexplored, and `merge` needs every one: "
                            "give each shard fewer schedules (more shards, --shard i/N) instead");
      }
      check_distinct_outputs({{"--trace", &rf.trace_file}, {"--timeline", &rf.timeline_file}, {"--results", &results_file}});
      if (shard_text || results_file) {
        if (!results_file) throw usage_error("run --shard: name the JSON-lines file with --results F (then `stagecraft merge` the shards)");
        if (rf.backend != "interp") throw usage_error(fmt::format("run --results: only the interpreter's schedules are sharded, not --backend {}", rf.backend));
        // Shards run the interpreter in exact mode (cli/shard.cpp): say so rather than ignore --math.
        if (parse_math(rf.math, ir::math_mode::exact) != ir::math_mode::exact)
          throw usage_error("run --results: sharded schedules run in exact math mode; --math fast is not sharded yet");
        if (rf.trace_file || rf.timeline_file) throw usage_error("run --results writes no trace or timeline: run the kernel alone for those");
        detail::explore_request req{.policy = rf.policy, .seed = rf.seed, .input_seed = rf.input_seed, .explore = rf.explore,
                                    .pct_depth = rf.pct_depth, .checks = !rf.no_checks, .results = *results_file,
                                    .progress = ::isatty(STDERR_FILENO) != 0};
        if (shard_text) req.shard = detail::parse_shard(*shard_text);
        std::vector<std::pair<kernel_entry const*, param_values>> selected;
        if (run_all) {
          if (!kernel_name.empty() || !sets.empty() || !dynamic.empty()) throw usage_error("run --all takes no kernel name, --set or --dynamic");
          for (auto const* e : kernels.all()) selected.emplace_back(e, registry::resolve(*e, {}));
        } else {
          if (kernel_name.empty()) throw usage_error("run: name a kernel (see `stagecraft list`) or pass --all");
          auto const& e = kernels.find(kernel_name);
          selected.emplace_back(&e, registry::resolve(e, parse_sets(e, sets, dynamic)));
        }
        return detail::run_explore_records(selected, req);
      }
      // One clock for the whole command: `run --all`'s budget is for all its kernels together.
      detail::explore_clock clock(rf.time_budget, ::isatty(STDERR_FILENO) != 0);
      if (run_all) {
        if (!kernel_name.empty() || !sets.empty() || !dynamic.empty()) throw usage_error("run --all takes no kernel name, --set or --dynamic");
        if (rf.trace_file || rf.timeline_file) throw usage_error("run --all writes no trace: name one kernel");
        // Every kernel runs, whatever an earlier one did. One the backend cannot run (code the
        // generator cannot express yet) is skipped with its reason, and counted, so
        // a kernel that silently stops running shows in the count; it does not change the exit
        // code, which is the worst of the kernels that ran (0 only when every one is correct).
        int worst = exit_ok;
        std::size_t correct = 0, failed = 0, skipped = 0;
        for (auto const* e : kernels.all()) {
          int rc = exit_ok;
          try {
            rc = run_kernel(*e, {}, rf, clock);
          } catch (nvrtc::unsupported const& x) {
            fmt::print("{}: skipped: the {} backend cannot run it: {}\n", e->name, rf.backend, x.what());
            ++skipped;
            continue;
          }
          ++(rc == exit_ok ? correct : failed);
          worst = std::max(worst, rc);
        }
        fmt::print("run --all ({} backend): {} kernel(s): {} correct, {} failed, {} skipped\n", rf.backend, correct + failed + skipped, correct,
                   failed, skipped);
        return worst;
      }
      if (kernel_name.empty()) throw usage_error("run: name a kernel (see `stagecraft list`) or pass --all");
      return run_kernel(kernels.find(kernel_name), parse_sets(kernels.find(kernel_name), sets, dynamic), rf, clock);
    }
    return exit_ok;
  } catch (usage_error const& e) {
    std::cerr << "stagecraft: " << e.what() << "\n";
    return exit_usage;
  } catch (bench::no_device const& e) {
    std::cout << e.what() << "\n";
    return exit_no_driver;
  } catch (nvrtc::unsupported const& e) {
    std::cerr << "stagecraft: " << e.what() << "\n";
    return exit_usage;
#ifdef STAGECRAFT_HAVE_NVRTC
  } catch (nvrtc::compile_error const& e) {
    std::cerr << "stagecraft: " << e.what() << "\n";
    return exit_internal;
#endif
  } catch (std::invalid_argument const& e) {
    std::cerr << "stagecraft: " << e.what() << "\n";
    return exit_usage;
  } catch (ir::ConfigError const& e) {  // a kernel retargeted for the GPU, verified again by a backend
    std::cerr << "stagecraft: " << e.what() << "\n";
    return exit_usage;
  } catch (ir::ProtocolError const& e) {  // the user's kernel breaks the protocol (show, ptx, ... build it too)
    std::cerr << "stagecraft: protocol error (" << e.check << "): " << e.what() << "\n";
    return exit_protocol;
  } catch (ir::VerifyError const& e) {
    std::cerr << "stagecraft: internal error, the kernel does not verify: " << e.what() << "\n";
    return exit_internal;
  } catch (environment_error const& e) {  // the machine, not the user or us: a full disk, an output we may not write
    std::cerr << "stagecraft: " << e.what() << "\n";
    return exit_environment;
  } catch (std::bad_alloc const&) {
    std::cerr << "stagecraft: out of host memory: choose smaller sizes (see `stagecraft list` for each kernel's parameters)\n";
    return exit_usage;
  } catch (std::exception const& e) {
    // Whatever escapes (a kernel's reference, a backend) ends here, never in std::terminate.
    std::cerr << "stagecraft: internal error (" << e.what() << "): please report a bug\n";
    return exit_internal;
  } catch (...) {
    std::cerr << "stagecraft: internal error (an exception that is not a std::exception): please report a bug\n";
    return exit_internal;
  }
}

}  // namespace stagecraft::cli
