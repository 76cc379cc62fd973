// The deterministic interpreter: runs an ir::Kernel on the CPU with a modelled barrier /
// async-copy machine, checks the barrier protocol, finds races and deadlocks, explores
// schedules and records a timeline (DESIGN.md section 5).
//
// Determinism: the schedule is a pure function of (kernel, inputs, options). Same inputs, same
// options -> byte-identical buffers, diagnostics and trace.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stagecraft/host/tensor.hpp"
#include "stagecraft/host/view.hpp"
#include "stagecraft/interp/trace.hpp"
#include "stagecraft/ir/kernel.hpp"
#include "stagecraft/ir/math.hpp"

namespace stagecraft::interp {

enum class policy : std::uint8_t {
  eager,   // async work completes as soon as it is issued
  lazy,    // async work completes only when nothing else can run, oldest first
  random,  // every step picks uniformly among runnable agents and pending completions
  pct,     // probabilistic concurrency testing: random priorities, d-1 random change points
};
const char* policy_name(policy p);

// One scheduling decision, as a learner driving the schedule sees it (options::choose): what
// may move next, and where every barrier of the running cluster stands.
struct step_choice {
  std::string who;    // "wg1" (a one-CTA cluster) or "cta1.wg0"; an async operation: "async3"
  std::string what;   // its next op, or the async operation and what completing it does
  bool async = false;
};
struct step_point {
  std::uint64_t step = 0;             // steps taken so far in the whole run
  std::vector<step_choice> choices;   // runnable agents (in agent order), then pending async operations (in issue order)
  std::vector<std::string> barriers;  // "b1[0]: 1 completed (phase 1), arrivals 0/1, tx 0 bytes pending"
  std::vector<std::string> blocked;   // agents that may not move: "wg1 waits on b1[0] (completion #1)"
};
// Picks the index of the choice that moves next. Called only when there are choices; it may
// throw to stop the run (the exception leaves interp::run as it is).
using chooser = std::function<std::size_t(step_point const&)>;

struct options {
  policy schedule = policy::eager;
  std::uint64_t seed = 0;
  int pct_depth = 3;       // PCT's d: bugs of depth <= d are found with probability >= 1/(n k^(d-1))
  bool checks = true;      // races, proxy fences, poison; the protocol checks always run
  bool trace = false;      // record the timeline
  // The run stands for this many CTAs that run at one pace (bench's model replays one cluster
  // for the grid): an atomic add of v moves its counter by v x atomic_share, what every CTA's
  // same add would, and returns what it held. So a ticket counter hands the replayed CTA the
  // tiles an even share gives it, not every tile. 1 (the default): the kernel's own grid.
  std::int64_t atomic_share = 1;
  // Added to every CTA's program_id: the model replays a one-cluster grid standing for the
  // cluster at this origin of the kernel's own grid (its last, besides its first: a causal
  // attention's CTAs do 1 to S / 128 key blocks, and the first alone put the grid at 10x its work).
  std::array<std::int64_t, 3> pid_offset{0, 0, 0};
  std::uint64_t max_steps = std::uint64_t{1} << 34;
  // exact: the shared polynomials, bit-equal with the host backend and the GPU's exact mode.
  // fast: ir::fast_* (the C library standing in for the SFU), as the GPU's fast mode computes
  // within the PTX ISA's errors; outputs then compared within math_tolerance's bound.
  ir::math_mode math = ir::math_mode::exact;
  // What if every cluster barrier arrived and waited at .cta scope, whatever
  // ir::cluster_barrier_scope decides? Shows what a weak scope leaves unordered (a kernel that
  // needs .cluster then reports the race its GPU run could have). Off: the rule's scopes, which
  // are the ones the code generator emits.
  bool all_cta_scopes = false;
  // Set: every step is this function's choice, whatever `schedule` says (stagecraft lesson
  // --step: the learner drives). A schedule it picks replays exactly from the same picks.
  chooser choose;
};

// Each check is a distinct, named diagnostic.
enum class check : std::uint8_t {
  deadlock,            // every agent blocked, nothing in flight
  missed_phase,        // a waiter skipped a completion (hardware parity aliases)
  tx_underflow,        // more bytes completed than were expected
  over_arrival,        // an arrival when the phase expects none
  index_out_of_range,  // run-time barrier / SMEM index, or GMEM block, outside its shape
  data_race,           // conflicting accesses not ordered by happens-before
  missing_fence,       // generic SMEM write read by the async proxy without commit_smem()
  store_pending_at_exit,  // a warpgroup exits with TMA stores not waited for
  load_pending_at_exit,   // every warpgroup of a CTA has exited while TMA loads into its SMEM are in flight
  poison_read,         // a read of SMEM never written
  step_limit,          // the step budget ran out (a loop that does not end?)
  unsupported,         // an op this interpreter does not model yet
  wgmma_pending_at_exit,  // a warpgroup exits with wgmma groups not committed or not waited for
  tcgen05_pending_at_dealloc,  // TMEM freed (at CTA exit) under an MMA in flight, or MMAs no commit covers
  tcgen05_pair_issuer,         // a pair MMA (cta_group::2) issued by the odd CTA of its pair
  tmem_use_after_dealloc,      // TMEM used (MMA, async_load_tmem, tmem_dealloc) after a tmem_dealloc freed it
  tmem_not_freed,              // a CTA exits with TMEM that no tmem_dealloc freed
  named_barrier_count_mismatch,  // participants of one named-barrier phase name different thread counts
  semaphore_value,     // a semaphore signalled or waited on with a value that is not 1 to 2^31 - 1
  clc_after_failure,   // a try_cancel issued after its CTA observed a failed cluster launch control response
};
const char* check_name(check c);

struct diagnostic {
  check kind;
  std::string message;  // names the kernel, op (#N as printed by `stagecraft show`), agent, values
  int op = -1;
  int cta = -1;         // linear CTA index
  int warpgroup = -1;
};

struct result {
  std::vector<host_tensor> buffers;  // every GMEM parameter, after the run
  std::vector<diagnostic> diagnostics;
  trace timeline;
  std::uint64_t steps = 0;
  // Kernels with wgmma or tcgen05: the largest K any accumulator (or TMEM D) had summed when it
  // was read (load(acc), async_load_tmem), the MMA input type (B's) and the accumulator type.
  // Their outputs are compared with a tolerance derived from these (mma_tolerance), data
  // movement stays bit exact. 0: no accumulator result was read.
  std::int64_t mma_k = 0;
  ir::DType mma_input = ir::DType::bf16;
  ir::DType mma_accumulator = ir::DType::f32;
  // The largest |x| any exp was applied to (the rounding of x log2 e in fast mode scales with
  // it), and the math mode the run used.
  double max_exp_arg = 0;
  ir::math_mode math = ir::math_mode::exact;
  bool ok() const { return diagnostics.empty(); }
};

// Runs the kernel on `buffers` (one per GMEM parameter, in order; shapes and dtypes must match).
// Throws std::invalid_argument for inputs that do not fit the kernel, ir::VerifyError for an IR
// that does not verify. Protocol errors are diagnostics, never exceptions.
result run(ir::Kernel const& k, std::vector<host_tensor> buffers, options const& o = {});

// run() on the user's own arrays (one view per GMEM parameter, in order): the inputs are read
// from them and every output the kernel writes is written back into them, whatever the verdict
// (a run with diagnostics leaves what the kernel had written when it stopped). The result's
// buffers are empty: the views hold the data. Throws std::invalid_argument, naming the kernel
// and parameter, for a view whose dtype, shape or size does not fit.
result run_in_place(ir::Kernel const& k, std::span<host_view const> arrays, options const& o = {});

struct exploration {
  int schedules = 0;                         // how many ran
  std::optional<std::uint64_t> failing_seed;  // the first seed with a diagnostic
  std::optional<result> failure;             // its result (replays exactly with that seed)
};
// Runs up to n schedules with seeds base.seed, base.seed+1, ... under base.schedule (random or
// pct; eager/lazy are single schedules) and stops at the first one with a diagnostic.
exploration explore(ir::Kernel const& k, std::vector<host_tensor> const& buffers, options base, int n);

// The GMEM parameters a kernel writes (its outputs), by index. A workspace is not among them:
// its contents after the run are the kernel's business, and the result holds the slot as given.
std::vector<int> written_params(ir::Kernel const& k);

// How far the output of a kernel that runs wgmma may be from its reference, computed exactly
// (in double) on the same inputs. Tensor cores (and the interpreter, docs/interpreter.md) sum
// in f32 in an order of their own, so MMA outputs get a bound derived from the K the
// accumulators summed and the input type; everything else stays bit exact.
//   bound(ref) = (K * 2^-23 + K/ik * u_step + u_in) * K * max|x|^2 + ulp_out(ref)
// K * 2^-23: one f32 rounding (truncating hardware: up to one ulp) per product added, each of
// a partial sum at most K * max|x|^2 (max|x|: the largest input magnitude over every GMEM
// parameter the kernel only reads). K/ik * u_step: one narrower rounding per instruction (ik
// products): u_step = 2^-10 for f16 accumulators; 2^-13 for f32 accumulators of fp8 inputs,
// whose hardware accumulation keeps about 14 bits (DeepSeek-V3 report, section 3.3.2: up to 2 %
// relative error at K = 4096 on H800, i.e. 128 k32 steps of 2^-13); 0 otherwise. u_in: 0 for
// bf16, f16 and fp8 inputs (the reference multiplies the same values), 2^-9 for f32 read as
// tf32 (two 10-bit truncations); ulp_out: one unit in the last place of the output type at
// |ref| (the output's own rounding may differ by one).
// Scaled fp8 GEMMs (gemm_fp8_blockwise): every product is a b sa sb, so max|x|^2 becomes
// max|x|^(2 + s), s the kernel's float inputs besides its two operands; K is the whole K the
// output summed, the promoted partial sums' Ks added (a store acc = fma(part, scale, acc) adds
// part's K to acc's), so each 128-wide part's fp8 rounding and each promotion's f32 rounding
// are both counted.
//
// Fast math mode adds (math_units > 0; docs/codegen.md, "Math modes"):
//   fast(ref) = E 2^-24 (|ref| + R) + 2^-125 [+ ulp_out(ref) when there is no MMA part]
//   E = sum over the kernel's statements s that compute a tile value of
//         T(s) * sum over the nodes v of its value of L(v) * (e(v) + [v is a multiply])
// e(v): the PTX ISA's stated error of the instruction v compiles to, in units of 2^-24
// (ir::fast_error_units; exp adds max|x| for the rounding of x log2 e). [v is a multiply]: one
// unit, as --fmad=true may fuse it with the add that consumes it (one rounding fewer). L(v): the
// product of the lengths of the reductions v is under (each of their terms carries the error).
// T(s): the trip counts of the loops around s when s reads what it overwrites (an accumulation:
// the error of one iteration is carried into the next, as the online softmax's rescaling is),
// else 1. E is kernel-wide: any approximation may feed any output. R: the largest |element| of
// the output tensor in the run (a normwise term: a fused multiply-add's missing rounding is
// relative to the product, not to a result that cancellation made small).
// 2^-125: the .ftz instructions flush subnormal results to zero.
struct mma_tolerance {
  std::int64_t k = 0;  // 0: no MMA part
  ir::DType input = ir::DType::bf16;
  ir::DType accumulator = ir::DType::f32;
  double max_input = 0;
  // Inputs that multiply every product besides the two MMA operands (an fp8 GEMM's scale
  // tensors): the products' bound is max_input^(2 + scale_factors) (max_input >= 1 taken). Counted
  // as an fp8 kernel's float inputs that are not fp8 themselves (its f32 scales; fp8 attention's
  // Q, K and V are all operands).
  int scale_factors = 0;
  // A block-scaled MMA (kind::mxf8f6f4): every product is also multiplied by sa * sb, its two
  // ue8m0 scales; this is the largest such product the u8 scale inputs hold (1: none).
  double block_scale = 1;
  double math_units = 0;  // E of fast math mode; 0: none (exact mode, or nothing approximate)
  double math_scale = 0;  // R: the largest over every output (what bound() uses without a param)
  std::vector<double> param_scale;  // R of each GMEM parameter, by index (0 for inputs)
  // param: the output tensor `reference` belongs to (its own R); -1: the largest R of all.
  double bound(double reference, ir::DType output, int param = -1) const;
  // The comparison itself: equal values (infinities of one sign included, which |got - ref| would
  // make NaN) and two NaNs match; otherwise |got - ref| <= bound(ref, output, param).
  bool within(double got, double reference, ir::DType output, int param = -1) const;
  // Which rule bound() applies, with its numbers, for `run` to print.
  std::string rule() const;
};
using math_tolerance = mma_tolerance;
// The tolerance of a run of `k` on `inputs`, or none when the kernel has no wgmma or no
// accumulator result was read and the run was exact (its outputs are then compared bit exactly).
std::optional<mma_tolerance> tolerance_of(ir::Kernel const& k, result const& r, std::vector<host_tensor> const& inputs);
// E of fast math mode for kernel k (see above), given the largest |x| an exp saw.
double fast_math_units(ir::Kernel const& k, double max_exp_arg);
// The tolerance for comparing two fast-mode results that are each within `t` of the exact
// reference (a backend and the interpreter): the fast part doubled, the MMA part as it is.
mma_tolerance between_fast_runs(mma_tolerance t);

}  // namespace stagecraft::interp
