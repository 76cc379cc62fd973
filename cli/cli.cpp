#include "stagecraft/cli.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <range/v3/algorithm/max_element.hpp>
#include <range/v3/view/transform.hpp>

#include "stagecraft/hostexec/hostexec.hpp"
#include "stagecraft/interp/interp.hpp"
#include "stagecraft/nvrtc/codegen.hpp"
#ifdef STAGECRAFT_HAVE_NVRTC
#include "stagecraft/nvrtc/nvrtc.hpp"
#endif
#ifdef STAGECRAFT_HAVE_CUDA_RUNTIME
#include "stagecraft/cuda/runtime.hpp"
#endif

namespace stagecraft::cli {
namespace {

param_values parse_sets(std::vector<std::string> const& sets) {
  param_values v;
  for (auto const& s : sets) {
    auto [name, value] = registry::parse_assignment(s);
    v[name] = value;
  }
  return v;
}

std::string describe_params(kernel_entry const& e) {
  auto one = [](param_spec const& p) {
    std::string range = p.allowed.empty() ? fmt::format("{}..{}", p.min, p.max) : fmt::format("{{{}}}", fmt::join(p.allowed, ","));
    if (p.multiple_of > 1) range += fmt::format(", multiple of {}", p.multiple_of);
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
  const ir::Kernel k = e.build(values);
  std::vector<std::string> set;
  for (auto const& [n, v] : values) set.push_back(fmt::format("{}={}", n, v));
  fmt::print("# {} ({})\n# hash {:016x}\n{}\n", e.name, fmt::join(set, " "), ir::hash(k), ir::print(k));
}

// Seeded random inputs, never all zeros: floats in [-2, 2), integers in a small range.
std::vector<host_tensor> random_inputs(ir::Kernel const& k, std::uint64_t seed) {
  std::vector<host_tensor> out;
  std::uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < t.elements(); ++i) {
      const auto r = next();
      if (ir::dtype_is_float(p.dtype)) t.set(i, static_cast<double>(r >> 40) / static_cast<double>(1ull << 24) * 4.0 - 2.0);
      else if (p.dtype == ir::DType::u32) t.set(i, static_cast<double>(r % 200));
      else t.set(i, static_cast<double>(static_cast<std::int64_t>(r % 201) - 100));
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string index_text(std::vector<std::int64_t> const& shape, std::int64_t flat) {
  std::vector<std::int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("[{}]", fmt::join(idx, ", "));
}

struct run_flags {
  std::string backend = "interp";
  std::string policy = "eager";
  std::uint64_t seed = 0;
  std::uint64_t input_seed = 1;
  int explore = 0;
  int pct_depth = 3;
  bool no_checks = false;
  std::string trace_file, timeline_file;
};

interp::policy parse_policy(std::string const& p) {
  if (p == "eager") return interp::policy::eager;
  if (p == "lazy") return interp::policy::lazy;
  if (p == "random") return interp::policy::random;
  if (p == "pct") return interp::policy::pct;
  throw usage_error(fmt::format("unknown policy '{}' (eager, lazy, random, pct)", p));
}

void write_file(std::string const& path, std::string const& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw usage_error(fmt::format("cannot write '{}'", path));
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

// Runs one kernel through the interpreter; returns the exit code.
int compare_with_reference(ir::Kernel const& k, std::vector<host_tensor> const& got, std::vector<host_tensor> const& expected,
                           const char* what, std::uint64_t steps);

// `run --backend gpu`: JIT, launch, and check against the reference and the interpreter.
int run_on_gpu(kernel_entry const& e, param_values const& values, ir::Kernel const& k, run_flags const& f) {
#ifdef STAGECRAFT_HAVE_CUDA_RUNTIME
  const auto st = cuda::driver_status();
  if (!st.available) {
    fmt::print("{}: {}\n", e.name, st.reason);
    return exit_no_driver;
  }
  const ir::Target target = st.compute_major >= 10 ? ir::Target::sm_100a : ir::Target::sm_90a;
  ir::Kernel kk = k;
  kk.target = target;
  const auto inputs = random_inputs(kk, f.input_seed);
  const auto c = nvrtc::compile(kk, target);
  auto r = cuda::launch(c, kk, inputs);
  fmt::print("{} on {} ({}): {:.3f} ms\n", e.name, st.device, ir::target_name(target), r.milliseconds);
  auto expected = inputs;
  e.reference(expected, values);
  if (int rc = compare_with_reference(kk, r.buffers, expected, "the reference", 0); rc != exit_ok) return rc;
  auto interp_result = interp::run(kk, inputs, {.schedule = interp::policy::eager, .checks = false});
  return compare_with_reference(kk, r.buffers, interp_result.buffers, "the interpreter", 0);
#else
  (void)values;
  (void)k;
  (void)f;
  fmt::print("{}: no CUDA driver available: this build has no CUDA toolkit (configure found none)\n", e.name);
  return exit_no_driver;
#endif
}

// `run --backend host`: the CUDA C++ the code generator emits, compiled for the CPU and run with
// every CUDA thread a fiber, under host schedule --seed (with --explore N, seeds seed..seed+N-1);
// each schedule is checked against the reference and the interpreter.
int run_on_host(kernel_entry const& e, param_values const& values, ir::Kernel const& k, run_flags const& f) {
  const auto inputs = random_inputs(k, f.input_seed);
  hostexec::compiled c;
  try {
    c = hostexec::compile(k);
  } catch (hostexec::compile_error const& x) {
    std::cerr << "stagecraft: " << x.what() << "\n";
    return exit_internal;
  }
  const int n = std::max(1, f.explore);
  std::vector<std::string> set;
  for (auto const& [name, v] : values) set.push_back(fmt::format("{}={}", name, v));
  fmt::print("{} ({}): inputs seeded random (--input-seed {}), host backend ({}), schedule seed(s) {}..{}\n", e.name, fmt::join(set, " "), f.input_seed,
             c.from_cache ? "cached object" : fmt::format("compiled in {:.2f} s", c.compile_seconds), f.seed, f.seed + static_cast<std::uint64_t>(n) - 1);
  auto expected = inputs;
  e.reference(expected, values);
  const auto by_interp = interp::run(k, inputs, {.schedule = interp::policy::eager, .checks = false});
  for (int i = 0; i < n; ++i) {
    const std::uint64_t seed = f.seed + static_cast<std::uint64_t>(i);
    const auto r = hostexec::run(c, k, inputs, {.seed = seed});
    if (!r.ok()) {
      fmt::print("{}\nverdict: protocol error (host {} with --seed {} after {} steps)\n", r.message, hostexec::failure_name(r.kind), seed, r.steps);
      return exit_protocol;
    }
    if (int rc = compare_with_reference(k, r.buffers, expected, "the reference", r.steps); rc != exit_ok) {
      fmt::print("(host schedule --seed {})\n", seed);
      return rc;
    }
    if (int rc = compare_with_reference(k, r.buffers, by_interp.buffers, "the interpreter", r.steps); rc != exit_ok) {
      fmt::print("(host schedule --seed {})\n", seed);
      return rc;
    }
  }
  return exit_ok;
}

int run_kernel(kernel_entry const& e, param_values const& overrides, run_flags const& f) {
  const auto values = registry::resolve(e, overrides);
  const ir::Kernel k = e.build(values);
  if (f.backend == "gpu") return run_on_gpu(e, values, k, f);
  if (f.backend == "host") return run_on_host(e, values, k, f);
  if (f.backend != "interp") throw usage_error(fmt::format("unknown backend '{}' (interp, host or gpu)", f.backend));
  interp::options o;
  o.schedule = parse_policy(f.policy);
  o.seed = f.seed;
  o.pct_depth = f.pct_depth;
  o.checks = !f.no_checks;
  o.trace = !f.trace_file.empty() || !f.timeline_file.empty();
  if (f.explore > 0 && (o.schedule == interp::policy::eager || o.schedule == interp::policy::lazy)) o.schedule = interp::policy::pct;
  if (o.pct_depth < 1) throw usage_error("--pct-depth must be at least 1");
  const auto inputs = random_inputs(k, f.input_seed);
  std::vector<std::string> set;
  for (auto const& [n, v] : values) set.push_back(fmt::format("{}={}", n, v));
  fmt::print("{} ({}): inputs seeded random (--input-seed {}), policy {}{}{}\n", e.name, fmt::join(set, " "), f.input_seed,
             interp::policy_name(o.schedule), o.schedule == interp::policy::random || o.schedule == interp::policy::pct ? fmt::format(" --seed {}", o.seed) : "",
             o.checks ? "" : ", checks off");

  interp::result r;
  if (f.explore > 0) {
    auto ex = interp::explore(k, inputs, o, f.explore);
    if (ex.failing_seed) {
      fmt::print("explored {} schedule(s): seed {} fails (replay: --policy {} --seed {})\n", ex.schedules, *ex.failing_seed,
                 interp::policy_name(o.schedule), *ex.failing_seed);
      r = std::move(*ex.failure);
    } else {
      fmt::print("explored {} schedule(s) (seeds {}..{}): no diagnostic\n", ex.schedules, o.seed, o.seed + ex.schedules - 1);
      o.seed = o.seed + ex.schedules - 1;
      r = interp::run(k, inputs, o);  // the last schedule again, for the result check and the trace
    }
  } else {
    r = interp::run(k, inputs, o);
  }
  if (!f.trace_file.empty()) write_file(f.trace_file, interp::to_chrome_json(r.timeline));
  if (!f.timeline_file.empty()) write_file(f.timeline_file, interp::to_html(r.timeline));
  if (!r.ok()) {
    for (auto const& d : r.diagnostics) fmt::print("{}\n", d.message);
    fmt::print("verdict: protocol error ({} after {} steps)\n", interp::check_name(r.diagnostics.front().kind), r.steps);
    return exit_protocol;
  }
  auto expected = inputs;
  e.reference(expected, values);
  return compare_with_reference(k, r.buffers, expected, "the reference", r.steps);
}

int compare_with_reference(ir::Kernel const& k, std::vector<host_tensor> const& got_all, std::vector<host_tensor> const& expected,
                           const char* what, std::uint64_t steps) {
  std::int64_t checked = 0;
  for (int p : interp::written_params(k)) {
    auto const& got = got_all[p];
    auto const& want = expected[p];
    for (std::int64_t i = 0; i < got.elements(); ++i, ++checked) {
      const double g = got.get(i), w = want.get(i);
      if (!(g == w || (std::isnan(g) && std::isnan(w)))) {
        fmt::print("verdict: wrong result: {}{} = {} but {} gives {} ({} elements matched before it)\n", k.params[p].name,
                   index_text(got.shape, i), g, what, w, checked);
        return exit_wrong;
      }
    }
  }
  fmt::print("verdict: correct ({} output elements match {}{})\n", checked, what, steps ? fmt::format("; {} steps", steps) : std::string());
  return exit_ok;
}

struct ptx_flags {
  std::string arch = "sm_90a";
  std::string out, cubin, source;
};

// `stagecraft ptx`: generate CUDA C++, JIT it with NVRTC (ptxas validates it) and write the
// results. Without NVRTC only --source can be honoured.
int ptx_kernel(kernel_entry const& e, param_values const& overrides, ptx_flags const& f) {
  ir::Target target;
  if (f.arch == "sm_90a") target = ir::Target::sm_90a;
  else if (f.arch == "sm_100a") target = ir::Target::sm_100a;
  else throw usage_error(fmt::format("unknown --arch '{}' (sm_90a or sm_100a)", f.arch));
  const auto values = registry::resolve(e, overrides);
  ir::Kernel k = e.build(values);
  k.target = target;  // the same IR for the other generation (ops that need one are rejected by verify)
  ir::verify(k);
  const auto gen = nvrtc::generate(k);
  if (!f.source.empty()) write_file(f.source, gen.source);
#ifdef STAGECRAFT_HAVE_NVRTC
  const auto c = nvrtc::compile(k, target);
  if (!f.cubin.empty()) write_file(f.cubin, std::string(c.cubin.begin(), c.cubin.end()));
  if (!f.out.empty()) write_file(f.out, c.ptx);
  else if (f.source.empty() && f.cubin.empty()) fmt::print("{}", c.ptx);
  std::fprintf(stderr, "%s on %s: %zu bytes of PTX, %zu bytes of CUBIN, %d registers, %d spill bytes, %lld bytes of SMEM, %zu tensor maps (%s)\n",
               e.name.c_str(), f.arch.c_str(), c.ptx.size(), c.cubin.size(), c.registers, c.spill_bytes,
               static_cast<long long>(c.code.smem_bytes), c.code.maps.size(),
               c.origin == nvrtc::compiled::source::compiled ? "compiled" : "from cache");
  return exit_ok;
#else
  if (!f.out.empty() || !f.cubin.empty() || f.source.empty())
    throw usage_error("this build has no NVRTC (no CUDA toolkit found at configure time): only --source FILE can be written");
  return exit_ok;
#endif
}

}  // namespace

int main(int argc, char** argv, registry const& kernels) {
  CLI::App app{"stagecraft: pipelined GPU kernels as typed C++ expression trees"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every subcommand");

  auto* list_cmd = app.add_subcommand("list", "list the registered kernels and their parameters");

  auto* show_cmd = app.add_subcommand("show", "print a kernel's lowered IR");
  std::string kernel_name;
  std::vector<std::string> sets;
  bool show_all = false;
  show_cmd->add_option("kernel", kernel_name, "kernel name (see `stagecraft list`)");
  show_cmd->add_option("--set", sets, "override a parameter: --set K=3 (repeatable)");
  show_cmd->add_flag("--all", show_all, "show every registered kernel with its default parameters");

  auto* run_cmd = app.add_subcommand("run", "run a kernel in the interpreter on seeded random inputs and check it");
  run_flags rf;
  bool run_all = false;
  run_cmd->add_option("kernel", kernel_name, "kernel name (see `stagecraft list`)");
  run_cmd->add_option("--set", sets, "override a parameter: --set K=3 (repeatable)");
  run_cmd->add_flag("--all", run_all, "run every registered kernel with its default parameters");
  run_cmd->add_option("--backend", rf.backend, "interp (the CPU interpreter), host (the generated CUDA C++ run on the CPU) or gpu (NVRTC + the CUDA driver)")->capture_default_str();
  run_cmd->add_option("--policy", rf.policy, "schedule: eager, lazy, random or pct")->capture_default_str();
  run_cmd->add_option("--seed", rf.seed, "schedule seed (random, pct; first seed of --explore)")->capture_default_str();
  run_cmd->add_option("--input-seed", rf.input_seed, "seed of the random inputs")->capture_default_str();
  run_cmd->add_option("--explore", rf.explore, "run up to N schedules (pct unless --policy random) and report the first failing seed");
  run_cmd->add_option("--pct-depth", rf.pct_depth, "PCT bug depth d (d-1 priority change points)")->capture_default_str();
  run_cmd->add_flag("--no-checks", rf.no_checks, "skip race, fence and poison checks (protocol checks stay on)");
  run_cmd->add_option("--trace", rf.trace_file, "write a Chrome/Perfetto trace (JSON)");
  run_cmd->add_option("--timeline", rf.timeline_file, "write a self-contained HTML timeline");

  auto* ptx_cmd = app.add_subcommand("ptx", "generate CUDA C++, JIT it with NVRTC and print or write the PTX / CUBIN");
  ptx_flags pf;
  ptx_cmd->add_option("kernel", kernel_name, "kernel name (see `stagecraft list`)")->required();
  ptx_cmd->add_option("--set", sets, "override a parameter: --set K=3 (repeatable)");
  ptx_cmd->add_option("--arch", pf.arch, "sm_90a or sm_100a")->capture_default_str();
  ptx_cmd->add_option("-o,--output", pf.out, "write the PTX here instead of printing it");
  ptx_cmd->add_option("--cubin", pf.cubin, "write the CUBIN here");
  ptx_cmd->add_option("--source", pf.source, "write the generated CUDA C++ here");

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
    } else if (*show_cmd) {
      if (show_all) {
        if (!kernel_name.empty() || !sets.empty()) throw usage_error("show --all takes no kernel name and no --set");
        for (auto const* e : kernels.all()) show(*e, {});
      } else {
        if (kernel_name.empty()) throw usage_error("show: name a kernel (see `stagecraft list`) or pass --all");
        show(kernels.find(kernel_name), parse_sets(sets));
      }
    } else if (*ptx_cmd) {
      return ptx_kernel(kernels.find(kernel_name), parse_sets(sets), pf);
    } else if (*run_cmd) {
      if (run_all) {
        if (!kernel_name.empty() || !sets.empty()) throw usage_error("run --all takes no kernel name and no --set");
        if (!rf.trace_file.empty() || !rf.timeline_file.empty()) throw usage_error("run --all writes no trace: name one kernel");
        int worst = exit_ok;
        for (auto const* e : kernels.all()) worst = std::max(worst, run_kernel(*e, {}, rf));
        return worst;
      }
      if (kernel_name.empty()) throw usage_error("run: name a kernel (see `stagecraft list`) or pass --all");
      return run_kernel(kernels.find(kernel_name), parse_sets(sets), rf);
    }
    return exit_ok;
  } catch (usage_error const& e) {
    std::cerr << "stagecraft: " << e.what() << "\n";
    return exit_usage;
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
  } catch (ir::VerifyError const& e) {
    std::cerr << "stagecraft: internal error, the kernel does not verify: " << e.what() << "\n";
    return exit_internal;
  }
}

}  // namespace stagecraft::cli
