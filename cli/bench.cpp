// `stagecraft bench`: a kernel measured on the GPU or predicted by the modelled machine over a
// sweep of its parameters (docs/bench.md). The work is stagecraft::bench's; this file is flags,
// files, the progress bar and exit codes.
#include "bench.hpp"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "internal.hpp"
#include "shard.hpp"
#include "stagecraft/bench/bench.hpp"
#include "stagecraft/cli.hpp"
#include "stagecraft/interp/trace.hpp"

namespace stagecraft::cli::detail {
namespace {
using json = nlohmann::ordered_json;

int verdict(bench::report const& rep);

struct bench_command_impl final : bench_command {
  CLI::App* cmd = nullptr;
  std::string kernel, backend = "model", machine = "H200", shard_text;
  std::vector<std::string> sets, sweeps, dynamic;
  std::optional<std::string> json_file, csv_file, svg_file, timeline_file, results_file, machines_file, fitted_file, issue_profile;
  bool no_flush = false, no_check = false, calibrate = false, no_progress = false;
  int min_reps = 10, max_reps = 500;
  double max_seconds = 2.0;
  std::string input_seed_text = "1";
  std::string math = "fast";

  explicit bench_command_impl(CLI::App& app) {
    cmd = app.add_subcommand("bench", "measure a kernel on the GPU, or predict it with the modelled machine, over a sweep of its parameters");
    cmd->add_option("kernel", kernel, "kernel name (see `stagecraft list`)")->required();
    cmd->add_option("--set", sets, "fix a parameter: --set M=8192 (repeatable)");
    cmd->add_option("--sweep", sweeps, "sweep a parameter: --sweep K=1..6 or --sweep K=1,2,4 (repeatable: the product)");
    cmd->add_option("--dynamic", dynamic, "make a size parameter a run-time extent: one compiled kernel for every point (repeatable)");
    cmd->add_option("--backend", backend, "gpu (NVRTC + the CUDA driver, measured) or model (the cost model, predicted; no GPU needed)")->capture_default_str();
    cmd->add_option("--machine", machine, "--backend model: H200, H100 or B200 (data/machines.json)")->capture_default_str();
    cmd->add_option("--machines", machines_file, "a machine file of your own (the format of data/machines.json, e.g. from --calibrate)");
    cmd->add_option("--json", json_file, "write the report as JSON");
    cmd->add_option("--csv", csv_file, "write the report as CSV");
    cmd->add_option("--svg", svg_file, "write an SVG plot of the sweep (GB/s or TFLOP/s, one line per other parameter, the baseline dashed)");
    cmd->add_option("--timeline", timeline_file, "--backend model: write the modelled CTA's timeline (HTML; one file per point of a sweep)");
    cmd->add_flag("--no-flush", no_flush, "--backend gpu: do not flush the L2 between timed launches");
    cmd->add_flag("--no-check", no_check, "--backend gpu: do not compare the outputs with the reference");
    cmd->add_option("--min-reps", min_reps, "--backend gpu: timed launches at least")->capture_default_str();
    cmd->add_option("--max-reps", max_reps, "--backend gpu: timed launches at most")->capture_default_str();
    cmd->add_option("--max-seconds", max_seconds, "--backend gpu: time spent repeating one configuration at most")->capture_default_str();
    cmd->add_option("--input-seed", input_seed_text, "seed of the random inputs")->capture_default_str();
    cmd->add_option("--math", math, "fast (SFU approximations, FMA; what users run) or exact (the interpreter's bits): what the GPU runs, or what the model counts")->capture_default_str();
    cmd->add_option("--issue-profile", issue_profile,
                    "--backend model: the SASS of the MMA loop as the static gate measured it ({\"kloop\": N, \"mufu\": M}; bench/perf_static.py --profiles): "
                    "what each iteration issues, instead of the IR's estimate");
    cmd->add_option("--shard", shard_text, "i/N: only the sweep points p with p mod N = i; needs --results (then `stagecraft merge`)");
    cmd->add_option("--results", results_file, "write the points as JSON lines for `stagecraft merge`");
    cmd->add_flag("--calibrate", calibrate, "--backend gpu: fit the model of --machine to the measurements and report its error per point");
    cmd->add_option("--fitted", fitted_file, "--calibrate: write the fitted machine here (a --machines file)");
    cmd->add_flag("--no-progress", no_progress, "no progress bar (there is none when stderr is not a terminal)");
  }

  bool parsed() const override { return cmd->parsed(); }

  static std::string timeline_name(std::string const& base, bench::point const& p, std::vector<std::string> const& axes, bool many) {
    if (!many) return base;
    std::string tag;
    for (auto const& a : axes) tag += fmt::format("-{}{}", a, p.values.at(a));
    const std::filesystem::path path(base);
    return (path.parent_path() / (path.stem().string() + tag + path.extension().string())).string();
  }

  int run(registry const& kernels) override {
    auto const& e = kernels.find(kernel);
    bench::options o;
    for (auto const& s : sets) {
      auto [n, v] = registry::parse_assignment(s, e);
      if (!o.set.emplace(n, v).second) throw usage_error(fmt::format("--set {} is given twice", n));
    }
    // --dynamic M: "M?" = 1 (registry.hpp), so every point builds M as a launch argument and the
    // JIT cache compiles one kernel for the whole sweep of M.
    for (auto const& d : dynamic)
      if (!o.set.emplace(d + "?", 1).second) throw usage_error(fmt::format("--dynamic {} is given twice", d));
    for (auto const& s : sweeps) o.sweep.push_back(bench::parse_sweep(s));
    if (auto m = ir::parse_math_mode(math)) o.math = *m;
    else throw usage_error(fmt::format("unknown --math '{}' (exact or fast)", math));
    if (backend == "gpu") o.where = bench::backend::gpu;
    else if (backend != "model") throw usage_error(fmt::format("unknown --backend '{}' for bench (gpu or model)", backend));
    o.machine = machine;
    if (machines_file) o.machines_file = *machines_file;
    o.flush_l2 = !no_flush;
    o.check = !no_check;
    if (min_reps < 1 || max_reps < min_reps) throw usage_error(fmt::format("--min-reps {} --max-reps {}: need 1 <= min <= max", min_reps, max_reps));
    o.min_reps = min_reps;
    o.max_reps = max_reps;
    if (!(max_seconds > 0)) throw usage_error(fmt::format("--max-seconds {}: must be positive", max_seconds));
    o.max_seconds = max_seconds;
    o.input_seed = parse_seed("--input-seed", input_seed_text);
    shard_spec shard;
    if (!shard_text.empty()) {
      if (!results_file) throw usage_error("bench --shard: name the JSON-lines file with --results F (then `stagecraft merge` the shards)");
      shard = parse_shard(shard_text);
    }
    o.shard_index = shard.index;
    o.shard_count = shard.count;
    if (timeline_file && o.where != bench::backend::model) throw usage_error("bench --timeline: only the model has a timeline (--backend model)");
    if (issue_profile) {
      if (o.where != bench::backend::model) throw usage_error("bench --issue-profile: only the model takes one (--backend model)");
      try {
        o.profile = bench::load_issue_profile(*issue_profile);
      } catch (std::invalid_argument const& e) {
        throw usage_error(e.what());
      }
    }
    if (calibrate && o.where != bench::backend::gpu) throw usage_error("bench --calibrate fits the model to measurements: it needs --backend gpu");
    if (fitted_file && !calibrate) throw usage_error("bench --fitted: only with --calibrate");
    check_distinct({{"--json", &json_file}, {"--csv", &csv_file}, {"--svg", &svg_file}, {"--results", &results_file}, {"--fitted", &fitted_file}});
    // Output files are opened before the work, so a bad path fails at once.
    std::optional<output_file> jf, cf, sf, rf, ff;
    if (json_file) jf.emplace("--json", *json_file);
    if (csv_file) cf.emplace("--csv", *csv_file);
    if (svg_file) sf.emplace("--svg", *svg_file);
    if (results_file) rf.emplace("--results", *results_file);
    if (fitted_file) ff.emplace("--fitted", *fitted_file);
    npoints = bench::points_of(e, o).size();

    const bool bar = !no_progress && ::isatty(STDERR_FILENO);
    if (bar)
      o.progress = [](std::size_t done, std::size_t total, std::string const& what) {
        const int width = 30, filled = total ? static_cast<int>(width * done / total) : width;
        std::fprintf(stderr, "\r[%s%s] %zu/%zu %-40.40s", std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), done, total,
                     what.c_str());
        if (done == total) std::fprintf(stderr, "\r%*s\r", width + 60, "");
        std::fflush(stderr);
      };
    std::vector<std::string> timelines_written;
    if (timeline_file) {
      const auto axes = [&] {
        std::vector<std::string> a;
        for (auto const& x : o.sweep) a.push_back(x.name);
        return a;
      }();
      o.on_prediction = [&, axes](bench::point const& p, bench::prediction const& pr) {
        const auto name = timeline_name(*timeline_file, p, axes, npoints > 1);
        output_file f("--timeline", name);
        f.write(interp::to_html(pr.timeline));
        timelines_written.push_back(name);
      };
    }

    try {
      if (calibrate) {
        auto c = bench::calibrate(e, o);
        fmt::print("{}", c.table);
        if (ff) ff->write(bench::machines_json({c.fitted}));
        return exit_ok;
      }
      const auto rep = bench::run(e, o);
      fmt::print("{}", bench::table(rep));
      if (jf) jf->write(bench::to_json(rep));
      if (cf) cf->write(bench::to_csv(rep));
      if (sf) sf->write(bench::to_svg(rep));
      for (auto const& t : timelines_written) fmt::print("timeline (MODEL): {}\n", t);
      if (rf) rf->write(shard_lines(rep, o, shard));
      return verdict(rep);
    } catch (bench::no_device const& x) {
      fmt::print("{}: {}\n", e.name, x.what());
      return exit_no_driver;
    }
  }

  static json config_of(bench::report const& rep, bench::options const& o, std::size_t total) {
    json set = json::object(), sweep = json::array();
    for (auto const& [n, v] : o.set) set[n] = v;
    for (auto const& a : o.sweep) sweep.push_back({{"name", a.name}, {"values", a.values}});
    return {{"kernel", rep.kernel}, {"backend", bench::backend_name(rep.where)}, {"device", rep.device}, {"machine", rep.machine},
            {"set", set}, {"sweep", sweep}, {"points", total}, {"flush_l2", o.flush_l2}, {"check", o.check}, {"input_seed", o.input_seed}};
  }

  std::size_t npoints = 0;

  std::string shard_lines(bench::report const& rep, bench::options const& o, shard_spec s) const {
    std::string out = json{{"record", "shard"}, {"command", "bench"}, {"shard", s.index}, {"of", s.count}, {"config", config_of(rep, o, npoints)}}.dump() + "\n";
    for (auto const& p : rep.points) out += "{\"record\":\"point\"," + bench::point_json(p).substr(1) + "\n";
    return out;
  }
};

// A wrong result is exit 1, as for `run`; a point the kernel does not allow is the user's
// mistake (64), reported after the points that did run.
int verdict(bench::report const& rep) {
  int rc = exit_ok;
  for (auto const& p : rep.points) {
    if (p.check.rfind("WRONG", 0) == 0) return exit_wrong;
    if (!p.error.empty()) rc = exit_usage;
  }
  if (rc == exit_usage) std::cerr << "stagecraft: bench: some configurations could not run (their errors are in the table)\n";
  return rc;
}

}  // namespace

std::unique_ptr<bench_command> add_bench(CLI::App& app) { return std::make_unique<bench_command_impl>(app); }

// The bench shards' points -> every point of the sweep once, in sweep order, and the report's
// files from them as one run would write them.
int merge_bench(nlohmann::ordered_json const& config, std::vector<nlohmann::ordered_json> const& records, std::string& lines, merge_request const& req) {
  bench::report rep;
  rep.kernel = config["kernel"].get<std::string>();
  rep.where = config["backend"] == "gpu" ? bench::backend::gpu : bench::backend::model;
  rep.device = config["device"].get<std::string>();
  rep.machine = config["machine"].get<std::string>();
  for (auto const& a : config["sweep"]) rep.axes.push_back(a["name"].get<std::string>());
  const auto total = config["points"].get<std::size_t>();
  std::vector<std::optional<bench::point>> got(total);
  for (auto const& r : records) {
    auto p = bench::point_from_json(r.dump());
    if (p.index >= total) throw usage_error(fmt::format("merge: point {} is outside the sweep's {} points", p.index, total));
    if (got[p.index]) throw usage_error(fmt::format("merge: point {} ({}) is in two shards", p.index, bench::describe_point(p.values)));
    got[p.index] = std::move(p);
  }
  for (std::size_t i = 0; i < total; ++i) {
    if (!got[i]) throw usage_error(fmt::format("merge: point {} of the sweep is in no shard", i));
    rep.points.push_back(*got[i]);
    lines += "{\"record\":\"point\"," + bench::point_json(*got[i]).substr(1) + "\n";
  }
  std::optional<output_file> jf, cf, sf;
  if (req.json) jf.emplace("--json", *req.json);
  if (req.csv) cf.emplace("--csv", *req.csv);
  if (req.svg) sf.emplace("--svg", *req.svg);
  if (jf) jf->write(bench::to_json(rep));
  if (cf) cf->write(bench::to_csv(rep));
  if (sf) sf->write(bench::to_svg(rep));
  if (req.out) fmt::print("{}", bench::table(rep));
  return verdict(rep);
}

}  // namespace stagecraft::cli::detail
