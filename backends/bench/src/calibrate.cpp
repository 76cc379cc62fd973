// Fitting the model to measurements: coordinate search on a log scale over the parameters a
// streaming kernel's time depends on, minimising the squared log error (so a 2x miss on a fast
// point weighs as much as on a slow one).
#include <cmath>

#include <fmt/format.h>

#include "stagecraft/bench/bench.hpp"
#include "stagecraft/interp/interp.hpp"

namespace stagecraft::bench {

fit calibrate(machine const& start, std::vector<sample> const& samples) {
  if (samples.size() < 2) throw std::invalid_argument(fmt::format("calibration needs at least 2 measured configurations, got {}", samples.size()));
  auto errors = [&](machine const& m) {
    std::vector<double> e;
    for (auto const& s : samples) e.push_back((replay(s.kernel, s.trace, m).kernel_ms - s.measured_ms) / s.measured_ms);
    return e;
  };
  auto cost = [&](machine const& m) {
    double c = 0;
    for (auto const& s : samples) {
      const double r = std::log(replay(s.kernel, s.trace, m).kernel_ms / s.measured_ms);
      c += r * r;
    }
    return c;
  };
  fit f;
  f.fitted = start;
  f.error_before = errors(start);
  double best = cost(f.fitted);
  std::vector<double machine::*> knobs = {&machine::tma_latency_ns, &machine::store_latency_ns, &machine::sm_tma_gbps, &machine::hbm_efficiency,
                                          &machine::launch_us, &machine::tma_issue_ns, &machine::barrier_latency_ns, &machine::op_ns};
  for (double step : {2.0, 1.25, 1.05})
    for (int round = 0; round < 12; ++round) {
      bool improved = false;
      for (auto knob : knobs)
        for (double factor : {step, 1 / step}) {
          machine m = f.fitted;
          m.*knob *= factor;
          if (m.hbm_efficiency > 1) m.hbm_efficiency = 1;
          const double c = cost(m);
          if (c < best * (1 - 1e-9)) best = c, f.fitted = m, improved = true;
        }
      if (!improved) break;
    }
  f.error_after = errors(f.fitted);
  return f;
}

calibration calibrate(kernel_entry const& e, options const& o) {
  options gpu = o;
  gpu.where = backend::gpu;
  const auto measured = run(e, gpu);  // throws no_device without a GPU
  const machine start = find_machine(o.machine, o.machines_file);
  std::vector<sample> samples;
  for (auto const& p : measured.points) {
    if (!p.error.empty() || p.median_ms <= 0) continue;
    ir::Kernel k = registry::build(e, p.values);
    ir::Kernel one = k;
    one.grid = k.cluster_rank > 0 ? k.cluster : std::array<std::int64_t, 3>{1, 1, 1};
    std::vector<host_tensor> in;
    for (auto const& prm : k.params) in.push_back(host_tensor::zeros(prm.dtype, prm.shape));
    auto r = interp::run(one, in, {.schedule = interp::policy::eager, .checks = false, .trace = true});
    if (!r.ok()) continue;
    samples.push_back({k, std::move(r.timeline), p.median_ms, describe_point(p.values)});
  }
  const auto f = calibrate(start, samples);
  calibration c{f.fitted, {}};
  c.table = fmt::format("{} on {}: the MODEL of {} fitted to {} measured configurations\n{:<40} {:>12} {:>14} {:>14}\n", e.name, measured.device,
                        start.name, samples.size(), "configuration", "measured ms", "error before", "error after");
  for (std::size_t i = 0; i < samples.size(); ++i)
    c.table += fmt::format("{:<40} {:>12.4f} {:>13.1f}% {:>13.1f}%\n", samples[i].label, samples[i].measured_ms, 100 * f.error_before[i], 100 * f.error_after[i]);
  return c;
}

}  // namespace stagecraft::bench
