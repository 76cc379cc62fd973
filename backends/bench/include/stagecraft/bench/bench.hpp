// `stagecraft bench` as a library: a kernel of the registry measured (on a GPU) or predicted
// (by the modelled machine) over a sweep of its parameters, with a same-run baseline, and
// written as a table, JSON, CSV or an SVG plot (docs/bench.md).
//
//   bench::options o;
//   o.sweep = {bench::parse_sweep("K=1..6")};
//   o.where = bench::backend::model;
//   auto rep = bench::run(registry::global().find("add_one"), o);
//   std::cout << bench::table(rep);
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "stagecraft/bench/model.hpp"
#include "stagecraft/ir/math.hpp"
#include "stagecraft/registry.hpp"

namespace stagecraft::bench {

// Nothing can be measured here: no CUDA driver, no NVRTC or an unsupported device (the CLI's
// exit code 3). The message says which.
struct no_device : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct axis {
  std::string name;
  std::vector<std::int64_t> values;
};
// "K=1..6" (inclusive) or "K=1,2,4"; usage_error naming the text otherwise.
axis parse_sweep(std::string const& text);

enum class backend { gpu, model };
const char* backend_name(backend b);

struct options {
  param_values set;            // fixed parameters (the kernel's defaults for the rest)
  std::vector<axis> sweep;     // the points are their product, the first axis varying slowest
  backend where = backend::model;
  std::string machine = "H200";  // --backend model: the machine of the data file
  std::string machines_file;     // "" : $STAGECRAFT_MACHINES or the built-in data/machines.json
  // --backend gpu
  bool flush_l2 = true;        // write a buffer twice the L2's size between timed runs
  int warmup = 3;
  int min_reps = 10, max_reps = 500;
  double max_seconds = 2.0;    // per configuration, for the repetitions
  double target_spread = 0.02; // stop once the median's 95% interval is within this fraction
  std::uint32_t deadline_ms = 10000;
  bool check = true;           // compare the outputs with the reference once per configuration
  // --backend gpu: what is timed (fast: the SFU approximations and FMA, what users run; the
  // check then uses the fast-math bound) or exact (the interpreter's bits).
  ir::math_mode math = ir::math_mode::fast;
  issue_profile profile;  // --backend model: the MMA loop's measured SASS (empty: estimated from the IR)
  std::uint64_t input_seed = 1;
  int shard_index = 0, shard_count = 1;  // only points p with p % count == index
  std::function<void(std::size_t done, std::size_t total, std::string const& what)> progress;
  // --backend model: called with each point's prediction (its timeline, per-warpgroup waits).
  std::function<void(struct point const&, prediction const&)> on_prediction;
};

// Seeded inputs for every GMEM parameter, never all zeros: floats in [-2, 2), small integers.
// The very inputs `stagecraft run --input-seed S` uses (the CLI calls this), so a benchmarked
// configuration replays in the interpreter.
std::vector<host_tensor> seeded_inputs(ir::Kernel const& k, std::uint64_t seed);

// What the kernel moves and computes, from its IR: every TMA copy and generic GMEM access of
// every CTA and warpgroup, with the loop trip counts and branches each takes.
struct work {
  double read_bytes = 0, write_bytes = 0;  // GMEM
  double flops = 0;         // elementwise arithmetic
  double tensor_flops = 0;  // 2*M*N*K of tensor-core ops
  bool memory_bound() const { return tensor_flops == 0; }
};
// `inputs`: the parameters' contents, which decide the trip counts of kernels that read index
// tables (x.at(i): a ragged batch's offsets).
work work_of(ir::Kernel const& k, std::vector<host_tensor> const& inputs);

struct point {
  std::size_t index = 0;   // in the sweep (the shard unit)
  param_values values;     // every parameter of the kernel
  std::string error;       // not empty: this configuration could not run (the reason)
  double median_ms = 0, min_ms = 0, spread = 0;  // spread: (p90 - p10) / median
  int reps = 0;
  double bytes = 0, flops = 0, gbps = 0, tflops = 0;
  std::string baseline;    // "device-to-device copy", or "" when none applies
  double baseline_ms = 0, baseline_gbps = 0, of_baseline = 0;  // of_baseline: baseline_ms / median_ms
  std::string check;       // "correct (N elements)", "WRONG: ...", "not checked (...)"
  // --backend model
  std::string limited_by;
  std::int64_t ctas = 0, waves = 0;
  int ctas_per_sm = 0;
  std::vector<double> wait_fraction;  // per warpgroup of the modelled CTA: time blocked / CTA time
};

struct report {
  std::string kernel;
  backend where = backend::model;
  std::string device;                // the GPU, or "MODEL of H200 (...)"
  std::string machine;               // --backend model: the machine's name
  std::vector<std::string> axes;     // swept parameter names
  std::vector<point> points;         // this shard's, in sweep order
  bool modelled() const { return where == backend::model; }
};

// Every point of the sweep (of this shard). Throws usage_error for bad parameters or sweeps,
// no_device for --backend gpu without a GPU. A configuration the kernel does not allow becomes a
// point with its error; the others still run.
report run(kernel_entry const& e, options const& o);
std::string describe_point(param_values const& v);  // "K=4 M=512"
// The sweep's points (the product of the axes over the fixed and default values).
std::vector<param_values> points_of(kernel_entry const& e, options const& o);

// Writers. Everything from the model says MODEL (table header, JSON "modelled": true and
// "kind", CSV column, SVG title).
std::string table(report const& r);
std::string to_json(report const& r);
std::string to_csv(report const& r);
std::string to_svg(report const& r);
// One point as a JSON object (a shard's line) and back.
std::string point_json(point const& p);
point point_from_json(std::string const& line);

// --backend gpu --calibrate: measures every point, fits the model of `o.machine` to the
// measurements and returns the fitted machine (as the data file's JSON) and a per-point
// predicted-vs-measured table. Throws no_device without a GPU.
struct calibration {
  machine fitted;
  std::string table;
};
calibration calibrate(kernel_entry const& e, options const& o);

}  // namespace stagecraft::bench
