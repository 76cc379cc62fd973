// The modelled machine: a cost model of a Hopper/Blackwell GPU that predicts a kernel's time
// from the interpreter's execution of it (docs/bench.md, "The model"). It is a MODEL: every
// figure it produces says so, and none is ever presented as a measurement.
//
// How: the interpreter runs one cluster of the kernel (eager schedule, trace on). Its trace is
// the kernel's protocol as it happened: each warpgroup's ops in order, which arrivals and
// landed bytes completed which barrier phase, which completion each wait waited for, which
// store each bulk group holds. A discrete-event replay gives every op a cost and every TMA copy
// a latency and a share of bandwidth, and lets a wait finish when the arrival or transaction
// that completed its phase happens in modelled time. Whole-grid time is that CTA's time for
// each wave of CTAs over the SMs, each CTA with its share of HBM bandwidth, plus a launch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "stagecraft/host/tensor.hpp"
#include "stagecraft/interp/trace.hpp"
#include "stagecraft/ir/kernel.hpp"
#include "stagecraft/ir/math.hpp"

namespace stagecraft::bench {

// One machine's parameters (data/machines.json documents each).
struct machine {
  std::string name, description;
  int sms = 132;
  double clock_ghz = 1.98;
  double hbm_gbps = 4800;         // peak HBM bandwidth, GB/s (1e9 B/s), reads and writes together
  double hbm_efficiency = 0.9;    // the fraction of peak a streaming copy reaches
  double sm_tma_gbps = 220;       // what one SM's TMA traffic can reach at most
  double tma_latency_ns = 900;    // issue to the last byte landing in SMEM, for a lone load
  double tma_issue_ns = 30;       // minimum gap between two TMA instructions of one SM
  double store_latency_ns = 600;  // a TMA store's last byte reaching GMEM after the bandwidth share
  double smem_bytes_per_clk = 128;  // per SM
  double tc_flops_per_clk = 4096;   // dense 16-bit tensor-core FLOPs per clock per SM (8-bit: 2x, tf32: 1/2)
  double l2_gbps = 7000;            // L2 to SMs, the whole chip: what re-read tiles (a GEMM's A and B) come through
  double fp32_lanes_per_clk = 128;  // FP32 FMA/ADD/MUL results per clock per SM (4 SMSPs x 32)
  double mufu_lanes_per_clk = 16;   // special-function (MUFU: ex2, lg2, rcp, rsqrt) results per clock per SM
  double barrier_latency_ns = 40;   // a phase completion becoming visible to a waiter
  double op_ns = 15;                // issuing any op (a warpgroup's instruction stream)
  double launch_us = 4;             // launch and teardown, as CUDA events see it
  std::int64_t smem_per_sm = 233472;
  int max_ctas_per_sm = 32;
  double l2_bytes = 50 << 20;
};

// The machines of a data file: `path`, else $STAGECRAFT_MACHINES, else the copy built into
// stagecraft (the same data/machines.json that is installed to share/stagecraft/).
// Throws std::invalid_argument naming the file and the field for a malformed one.
std::vector<machine> load_machines(std::string const& path = "");
machine find_machine(std::string const& name, std::string const& path = "");  // usage_error if unknown
std::string machines_json(std::vector<machine> const& ms);  // the data file's format

struct warpgroup_time {
  int cta = 0, wg = 0;
  double busy_ns = 0;      // issuing and executing its ops
  double waiting_ns = 0;   // blocked in barrier_wait / wait_smem_to_gmem
  double barrier_wait_ns = 0, group_wait_ns = 0;
};

struct prediction {
  double kernel_ms = 0;  // the whole grid, launch included: MODELLED
  double cta_ns = 0;     // one CTA in a full wave
  std::int64_t ctas = 0;
  int ctas_per_sm = 0;   // occupancy (SMEM, threads, the CTA limit)
  std::int64_t concurrent = 0, waves = 0;
  double hbm_share_gbps = 0;  // one CTA's bandwidth in a full wave
  double hbm_bound_ms = 0;    // the arrays' bytes, each read or written once / (peak * efficiency): no kernel beats it
  double hbm_fraction = 1;    // of the bytes the CTAs move, the share HBM serves (the rest: L2, re-reads)
  // Of one CTA's modelled time: its tensor-core work, its warps' instruction issue, its TMA pipe.
  double tc_busy = 0, issue_busy = 0, pipe_busy = 0;
  std::string limited_by;     // "HBM bandwidth", "latency (too few stages in flight)", ...
  std::vector<warpgroup_time> warpgroups;  // of the modelled cluster, in a full wave
  interp::trace timeline;     // the modelled cluster in modelled time (ns)
};

// What the static speed gate measured of the generated code (bench/perf_static.py --profile):
// the SASS instructions one warp issues per iteration of the innermost MMA loop, and how many of
// them are MUFU (the special-function unit, 8 clocks of a sub-partition per warp instruction at
// 16 lanes per SM). Given, the replay charges each iteration of that loop what its SASS issues
// instead of its estimate from the IR (docs/bench.md, "Instruction issue").
struct issue_profile {
  double kloop = 0, mufu = 0;
  // The epilogue's SMEM stores: wavefronts per warp over the conflict-free count (the gate's
  // smem_wavefronts / smem_ideal_wavefronts); a generic store into SMEM takes that much longer.
  double smem_conflict = 1;
  std::string source;  // where it was measured: the kernel's gate entry, the SASS file
  bool empty() const { return kloop <= 0; }
};
// Reads {"kloop": N, "mufu": M, "smem_conflict": X, "source": "..."} (mufu, smem_conflict and
// source optional); std::invalid_argument naming the file and the field.
issue_profile load_issue_profile(std::string const& path);

// How the kernel is compiled, for the model's instruction estimate (the fast SFU approximations
// or the exact software sequences) and the measured loop, if any.
struct model_options {
  ir::math_mode math = ir::math_mode::fast;
  issue_profile profile;
};

// Runs one cluster of `k` in the interpreter on `inputs` and replays it on `m`. Throws
// std::invalid_argument if the interpreter reports a diagnostic (the model needs a kernel that
// runs clean) or the kernel does not fit an SM of `m`.
prediction predict(ir::Kernel const& k, std::vector<host_tensor> const& inputs, machine const& m, model_options const& o = {});

// The replay alone, on a trace of one cluster recorded under the eager policy.
prediction replay(ir::Kernel const& k, interp::trace const& t, machine const& m, model_options const& o = {});

// Calibration: one measured configuration of a kernel and its trace.
struct sample {
  ir::Kernel kernel;
  interp::trace trace;
  double measured_ms = 0;
  std::string label;
};
struct fit {
  machine fitted;
  std::vector<double> error_before, error_after;  // (predicted - measured) / measured, per sample
};
// Fits the latency, bandwidth and overhead parameters of `start` to the samples (least squares
// of the relative error, coordinate search on a log scale); needs at least 2 samples.
fit calibrate(machine const& start, std::vector<sample> const& samples);

}  // namespace stagecraft::bench
