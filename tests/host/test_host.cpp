// The host backend: the generated CUDA C++ run on the CPU, compared bit for bit with the
// interpreter and the reference; and bugs planted in the generated source, each of which it
// must catch (so these tests can tell a wrong number).
#include <algorithm>
#include <sys/resource.h>
#include <unistd.h>

#include <ctime>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <random>
#include <optional>
#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "../interp/row_state_kernels.hpp"
#include "../interp/stmatrix_kernels.hpp"
#include "../interp/tile_ops_kernels.hpp"
#include "../interp/nan_fill_kernels.hpp"
#include "../interp/ragged_kernels.hpp"
#include "../interp/tmem_rows_kernels.hpp"
#include "../interp/atomic_kernels.hpp"
#include "../interp/clc_kernels.hpp"
#include "../interp/reduce_kernels.hpp"
#include "../interp/workspace_kernels.hpp"
#include "../zoo/zoo.hpp"
#include "stagecraft/hostexec/hostexec.hpp"
#include "stagecraft/interp/interp.hpp"
#include "stagecraft/ir/fp8.hpp"
#include "stagecraft/registry.hpp"
#include "stagecraft/stagecraft.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {

constexpr std::uint64_t input_seed = 20261201;
constexpr int schedules = 5;  // host seeds 0 (the reference schedule) .. 4

std::vector<host_tensor> random_inputs(ir::Kernel const& k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<host_tensor> t;
  for (auto const& p : k.params) {
    auto h = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < h.elements(); ++i) h.set(i, ir::dtype_is_float(p.dtype) ? dist(rng) : std::floor(dist(rng) * 20));
    t.push_back(std::move(h));
  }
  seed_segment_tables(k, t, seed);  // a ragged batch's offsets must be a valid table
  return t;
}

// The first written element where `got` and `want` differ, as text; empty when they agree.
std::string first_difference(ir::Kernel const& k, std::vector<host_tensor> const& got, std::vector<host_tensor> const& want) {
  for (int p : interp::written_params(k))
    if (got[p].bytes != want[p].bytes)
      for (std::int64_t i = 0; i < got[p].elements(); ++i)
        if (std::memcmp(got[p].bytes.data() + i * ir::dtype_bits(got[p].dtype) / 8, want[p].bytes.data() + i * ir::dtype_bits(got[p].dtype) / 8,
                        static_cast<std::size_t>(ir::dtype_bits(got[p].dtype) / 8)) != 0)
          return fmt::format("{}[{}] = {} but {} expected", k.params[p].name, i, got[p].get(i), want[p].get(i));
  return {};
}

// Process CPU time: the machines that run the suite are shared, wall time of a run this short is
// mostly other processes.
struct cpu_clock {
  using time_point = std::clock_t;
  static time_point now() { return std::clock(); }
};
double seconds_since(cpu_clock::time_point t0) { return static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC; }

// Host runs of `k` under seeds 0..n-1, each result's buffers checked by `check`; the mean CPU
// seconds of a run.
template <class Check>
double for_schedules(ir::Kernel const& k, std::vector<host_tensor> const& inputs, Check const& check) {
  const auto c = hostexec::compile(k);
  double total = 0;
  for (int s = 0; s < schedules; ++s) {
    INFO("kernel " << k.name << ", host seed " << s);
    hostexec::options o;
    o.seed = static_cast<std::uint64_t>(s);
    const auto t0 = cpu_clock::now();
    const auto r = hostexec::run(c, k, inputs, o);
    total += seconds_since(t0);
    INFO(r.message);
    REQUIRE(r.ok());
    check(r.buffers);
  }
  return total / schedules;
}

// Host runs of `k` under seeds 0..n-1 must equal `expected` exactly.
void check_schedules(ir::Kernel const& k, std::vector<host_tensor> const& inputs, std::vector<host_tensor> const& expected, const char* what,
                     double* host_seconds = nullptr) {
  const double s = for_schedules(k, inputs, [&](std::vector<host_tensor> const& got) {
    const auto diff = first_difference(k, got, expected);
    INFO("against " << what << ": " << diff);
    CHECK(diff.empty());
  });
  if (host_seconds) *host_seconds = s;
}

// Every written element of `got` within `tol` of `want`.
void check_within(ir::Kernel const& k, std::vector<host_tensor> const& got, std::vector<host_tensor> const& want, interp::mma_tolerance const& tol,
                  const char* what) {
  for (int p : interp::written_params(k))
    for (std::int64_t i = 0; i < got[p].elements(); ++i)
      if (!tol.within(got[p].get(i), want[p].get(i), got[p].dtype, p)) {
        FAIL(fmt::format("{}: kernel {}: {}[{}] = {} but {} expected (bound {})", what, k.name, k.params[p].name, i, got[p].get(i), want[p].get(i),
                         tol.bound(want[p].get(i), got[p].dtype, p)));
      }
}

// Host runs of `k` under seeds 0..n-1 within `tol` of the interpreter's and the reference's
// outputs; the mean CPU seconds of a run.
double check_schedules_within(ir::Kernel const& k, std::vector<host_tensor> const& inputs, std::vector<host_tensor> const& interpreter,
                              std::vector<host_tensor> const& reference, interp::mma_tolerance const& tol) {
  return for_schedules(k, inputs, [&](std::vector<host_tensor> const& got) {
    check_within(k, got, interpreter, tol, "the host against the interpreter");
    check_within(k, got, reference, tol, "the host against the reference");
  });
}

// The generated code of `k` with `from` replaced by `to` (which must occur), compiled for the host.
hostexec::compiled planted(ir::Kernel const& k, std::string const& from, std::string const& to) {
  auto g = nvrtc::generate(k);
  const auto at = g.source.find(from);
  INFO("planting '" << to << "' for '" << from << "' in " << k.name);
  REQUIRE(at != std::string::npos);
  g.source.replace(at, from.size(), to);
  return hostexec::compile_generated(std::move(g), k);
}

// Does any of the seeds 0..n-1 show the planted bug: a failed run or a wrong number?
std::string caught(hostexec::compiled const& c, ir::Kernel const& k, std::vector<host_tensor> const& inputs,
                   std::vector<host_tensor> const& expected, int n) {
  for (int s = 0; s < n; ++s) {
    hostexec::options o;
    o.seed = static_cast<std::uint64_t>(s);
    const auto r = hostexec::run(c, k, inputs, o);
    if (!r.ok()) return fmt::format("seed {}: {}", s, r.message);
    if (auto d = first_difference(k, r.buffers, expected); !d.empty()) return fmt::format("seed {}: wrong result: {}", s, d);
  }
  return {};
}

ir::Kernel example(std::string const& name, param_values const& set = {}) {
  auto const& e = registry::global().find(name);
  return e.build(registry::resolve(e, set));
}
std::vector<host_tensor> reference_of(std::string const& name, std::vector<host_tensor> inputs, param_values const& set = {}) {
  auto const& e = registry::global().find(name);
  e.reference(inputs, registry::resolve(e, set));
  return inputs;
}

}  // namespace

TEST_CASE("host: every example equals the interpreter and the reference under 5 host schedules", "[host]") {
  // The cost of a host schedule against the interpreter's default run (eager, every check on),
  // printed for docs/host.md; seconds per schedule, the host object already compiled.
  std::printf("%-18s %12s %12s %8s\n", "example", "interp [cpu s]", "host [cpu s]", "ratio");
  for (auto const* e : registry::global().all()) {
    const auto values = registry::resolve(*e, {});
    const auto k = e->build(values);
    auto inputs = random_inputs(k, input_seed);
    if (e->inputs) e->inputs(inputs, values);  // attention_hopper_bwd: the forward pass's LSE and delta
    auto expected = inputs;
    e->reference(expected, values);
    auto t0 = cpu_clock::now();
    auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
    for (int rep = 1; rep < schedules; ++rep) ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
    const double interp_s = seconds_since(t0) / schedules;
    REQUIRE(ir.ok());
    double host_s = 0;
    if (const auto tol = interp::tolerance_of(k, ir, inputs)) {
      // Tensor-core kernels: the interpreter within the MMA bound of the reference, the host
      // within it of both (bit-equal to the interpreter where the order of the sums is fixed:
      // tested below).
      check_within(k, ir.buffers, expected, *tol, "the interpreter against the reference");
      host_s = check_schedules_within(k, inputs, ir.buffers, expected, *tol);
    } else {
      REQUIRE(first_difference(k, ir.buffers, expected).empty());
      // the interpreter equals the reference (above), so equal to it is equal to both
      check_schedules(k, inputs, ir.buffers, "the interpreter and the reference", &host_s);
    }
    std::printf("%-18s %12.4f %12.4f %8.1f\n", e->name.c_str(), interp_s, host_s, host_s / interp_s);
  }
}

// A run-time extent on the host: softmax_rows --dynamic M compiled once (one translation unit,
// one loaded object) and run at other M through ir::bind, each equal to the interpreter and the
// reference: the generated code reads M from its argument and the tensor maps come from the
// bound kernel's shapes, so a partial last block at M = 333 is filled and dropped as at 1000.
TEST_CASE("host: one compiled softmax_rows --dynamic M runs at every M, equal to the interpreter and the reference", "[host][run_time]") {
  const auto k = example("softmax_rows", {{"M", 1000}, {"M?", 1}});
  const auto c = hostexec::compile(k);
  for (std::int64_t M : {1000, 333, 16, 1025}) {
    INFO("M=" << M);
    const auto km = ir::bind(k, {{"M", M}});
    CHECK(km.params[0].shape[0] == M);
    const auto again = hostexec::compile(km);
    CHECK(again.translation_unit == c.translation_unit);
    CHECK(again.mod == c.mod);  // the same loaded object: nothing was compiled for this M
    const auto inputs = random_inputs(km, input_seed + static_cast<std::uint64_t>(M));
    const auto expected = reference_of("softmax_rows", inputs, {{"M", M}});
    const auto ir = interp::run(km, inputs, {.schedule = interp::policy::eager});
    REQUIRE(ir.ok());
    CHECK(first_difference(km, ir.buffers, expected).empty());
    // Given the kernel as lowered (M = 1000) and buffers of this M, the run binds M itself.
    const auto unbound = hostexec::run(c, k, inputs);
    REQUIRE(unbound.ok());
    CHECK(first_difference(km, unbound.buffers, expected).empty());
    for (int seed = 0; seed < schedules; ++seed) {  // the object compiled at M = 1000, run at this M
      hostexec::options o;
      o.seed = static_cast<std::uint64_t>(seed);
      const auto r = hostexec::run(c, km, inputs, o);
      INFO("host seed " << seed << ": " << r.message);
      REQUIRE(r.ok());
      CHECK(first_difference(km, r.buffers, expected).empty());
    }
  }
}

// splitk_cluster's TMA-store variant: the partials leave SMEM by TMA store into the workspace,
// the full bulk-group wait comes before the cluster arrive, and rank 0's generic loads after
// the wait see them (the host lands a store's GMEM write as its own event, after the SMEM read).
TEST_CASE("host: splitk_cluster with TMA-stored partials equals the interpreter and the reference", "[host][workspace]") {
  auto const& e = registry::global().find("splitk_cluster");
  for (std::int64_t S : {2, 4}) {
    auto values = registry::resolve(e, {{"tma", 1}, {"S", S}});
    INFO("S=" << S);
    const auto k = e.build(values);
    const auto inputs = random_inputs(k, input_seed);
    auto expected = inputs;
    e.reference(expected, values);
    const auto ir = interp::run(k, inputs, {.schedule = interp::policy::lazy});
    REQUIRE(ir.ok());
    REQUIRE(first_difference(k, ir.buffers, expected).empty());
    check_schedules(k, inputs, expected, "the interpreter and the reference");
  }
}

// The host backend zero-fills a workspace whatever its slot holds (random here), through a plain
// load and through a TMA load (its tensor map built over the workspace), and leaves the slot as
// given although the generic probe overwrites its workspace.
TEST_CASE("host: a workspace starts as zeros, through loads and TMA, and its slot comes back as given", "[host][workspace]") {
  for (bool tma : {false, true}) {
    const auto k = tma ? testing::workspace_probe<true>() : testing::workspace_probe<false>();
    INFO("kernel " << k.name);
    const auto inputs = random_inputs(k, input_seed);
    REQUIRE(inputs[2].get(0) != 0.0);
    auto expected = inputs;
    expected[1] = inputs[0];  // y = 0 + x
    check_schedules(k, inputs, expected, "y = x");
    const auto r = hostexec::run(k, inputs);
    REQUIRE(r.ok());
    CHECK(r.buffers[2].bytes == inputs[2].bytes);
  }
}

// The generated code's fp8 conversions (the prelude's STAGECRAFT_FP8_FN, compiled here as the
// host backend compiles the GPU's text) against the interpreter's and ir/fp8.hpp's: f32 ->
// e4m3, f32 -> e5m2 of products, and e4m3 -> f32, on values from fp8's subnormals to far beyond
// its largest finite value, bit for bit.
TEST_CASE("host: fp8 casts and stores in generated code equal the interpreter's, bit for bit", "[host][fp8]") {
  const auto k = lower(kernel<sm_90a>(
      "fp8_convert", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 64_c)), gmem<e4m3>("q", shape(64_c, 64_c)),
      gmem<e5m2>("r", shape(64_c, 64_c)), gmem<f32>("y", shape(64_c, 64_c)), smem<f32>(shape(64_c, 64_c)), smem<e4m3>(shape(64_c, 64_c)),
      smem<e5m2>(shape(64_c, 64_c)), smem<f32>(shape(64_c, 64_c)), barrier(arrivals(1_c)),
      [](auto x, auto q, auto r, auto y, auto xs, auto qs, auto rs, auto ys, auto bar) {
        return seq(copy_gmem_to_smem(x.block(0_c, 0_c), xs, bar), barrier_wait(bar), store(qs, cast<e4m3>(load(xs))),
                   store(rs, cast<e5m2>(load(xs) * 2.0f)), store(ys, cast<f32>(load(qs))), commit_smem(), copy_smem_to_gmem(qs, q.block(0_c, 0_c)),
                   copy_smem_to_gmem(rs, r.block(0_c, 0_c)), copy_smem_to_gmem(ys, y.block(0_c, 0_c)), commit_smem_to_gmem_group(),
                   wait_smem_to_gmem(0_c));
      }));
  auto inputs = random_inputs(k, input_seed);
  std::mt19937_64 rng(input_seed);
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  auto& x = inputs[0];
  for (std::int64_t i = 0; i < x.elements(); ++i) {
    // Every fp8 value and the midpoints next to it (ties), then random magnitudes 2^-20 .. 2^20.
    const auto b = static_cast<unsigned char>(i % 256);
    if (i < 512) x.set(i, ir::e4m3_to_f32(b) * (i < 256 ? 1.0f : 1.0625f));
    else if (i < 1024) x.set(i, ir::e5m2_to_f32(b) * (i < 768 ? 0.5f : 0.5625f));
    else x.set(i, std::ldexp(mant(rng), static_cast<int>(rng() % 41) - 20));
  }
  auto expected = inputs;
  for (std::int64_t i = 0; i < x.elements(); ++i) {
    const float v = x.as<float>()[i];
    expected[1].as<std::uint8_t>()[i] = ir::f32_to_e4m3(v);
    expected[2].as<std::uint8_t>()[i] = ir::f32_to_e5m2(v * 2.0f);
    expected[3].as<float>()[i] = ir::e4m3_to_f32(ir::f32_to_e4m3(v));
  }
  const auto ir_run = interp::run(k, inputs, {.schedule = interp::policy::eager});
  REQUIRE(ir_run.ok());
  REQUIRE(first_difference(k, ir_run.buffers, expected).empty());
  check_schedules(k, inputs, expected, "the interpreter and ir/fp8.hpp");
}

// A 16-bit accumulator in generated code is N/4 32-bit registers per m64 block, element pairs
// packed (sc::pack_f16, or bf16's pair conversion) and unpacked (sc::acc_f16, sc::acc_bf16):
// written from SMEM, scaled in place, read back, it must hold exactly what the interpreter's
// accumulator of that dtype holds. (A bf16 one is never a wgmma D: attention's P register tile.)
namespace {
template <class T>
float round_to(float x) {
  if constexpr (std::is_same_v<T, f16>) return f16_to_f32(f32_to_f16(x));
  else return bf16_to_f32(f32_to_bf16(x));
}
}  // namespace

TEMPLATE_TEST_CASE("host: a 16-bit accumulator's packed registers hold what the interpreter's accumulator holds", "[host][fp8]", f16, bf16) {
  const auto k = lower(kernel<sm_90a>(
      "acc16_roundtrip", grid(1), threads(1_c), gmem<TestType>("x", shape(128_c, 64_c)), gmem<f32>("y", shape(128_c, 64_c)),
      smem<TestType>(shape(128_c, 64_c)), smem<f32>(shape(128_c, 64_c)), barrier(arrivals(1_c)), accumulator<TestType>(shape(128_c, 64_c)),
      [](auto x, auto y, auto xs, auto ys, auto bar, auto acc) {
        return seq(copy_gmem_to_smem(x.block(0_c, 0_c), xs, bar), barrier_wait(bar), store(acc, load(xs)), store(acc, load(acc) * 3.0f),
                   store(acc, load(acc) + 1.0f),  // an odd number of writes: a swapped pair cannot swap back
                   store(ys, cast<f32>(load(acc))), commit_smem(), copy_smem_to_gmem(ys, y.block(0_c, 0_c)), commit_smem_to_gmem_group(),
                   wait_smem_to_gmem(0_c));
      }));
  const auto g = nvrtc::generate(k);
  const std::string name = ir::dtype_name(TestType::code);
  REQUIRE_THAT(g.source, Contains("unsigned acc3[32];") && Contains(fmt::format("sc::acc_{}(acc3, ", name)) &&
                             Contains(std::is_same_v<TestType, f16> ? "sc::pack_f16(" : "sc::f32x2_to_bf16x2("));
  const auto inputs = random_inputs(k, input_seed);
  auto expected = inputs;
  for (std::int64_t i = 0; i < inputs[0].elements(); ++i)
    expected[1].template as<float>()[i] = round_to<TestType>(round_to<TestType>(static_cast<float>(inputs[0].get(i)) * 3.0f) + 1.0f);
  const auto ir_run = interp::run(k, inputs, {.schedule = interp::policy::eager});
  REQUIRE(ir_run.ok());
  REQUIRE(first_difference(k, ir_run.buffers, expected).empty());
  check_schedules(k, inputs, expected, "the interpreter and 16-bit arithmetic");
}

// A bf16 register tile as wgmma's A, read whole (attention's P kept for the next P V): the
// generated code hands the tile's packed registers to the wgmma unchanged, and the product is
// the interpreter's bit for bit (A rounded to bf16 once, when the tile was written).
TEST_CASE("host: a bf16 register tile is wgmma's A from registers as it is packed, and the product is the interpreter's", "[host][tensor_core]") {
  const auto k = lower(kernel<sm_90a>(
      "bf16_tile_as_a", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 64_c)), gmem<bf16>("v", shape(64_c, 64_c)), gmem<f32>("o", shape(64_c, 64_c)),
      smem<f32>(shape(64_c, 64_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)), smem<f32>(shape(64_c, 64_c)), barrier(arrivals(2_c)),
      accumulator<bf16>(shape(64_c, 64_c)), accumulator<f32>(shape(64_c, 64_c)),
      [](auto x, auto v, auto o, auto xs, auto vs, auto os, auto bar, auto p, auto acc) {
        return seq(copy_gmem_to_smem(x.block(0_c, 0_c), xs, bar), copy_gmem_to_smem(v.block(0_c, 0_c), vs, bar), barrier_wait(bar),
                   store(p, cast<bf16>(load(xs) * 0.75f)), store(acc, 0.0f), wgmma(acc, cast<bf16>(load(p)), vs), wgmma_commit(), wgmma_wait(0_c),
                   store(os, load(acc)), commit_smem(), copy_smem_to_gmem(os, o.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
  const auto g = nvrtc::generate(k);
  // The A registers are the tile's own (no unpacking, no second rounding).
  REQUIRE_THAT(g.source, Contains("unsigned ra0_0[4] = {acc4[") && Contains("a4's packed registers") && !Contains("sc::acc_bf16(acc4"));
  const auto inputs = random_inputs(k, input_seed);
  const auto ir_run = interp::run(k, inputs, {.schedule = interp::policy::eager});
  INFO((ir_run.ok() ? "" : ir_run.diagnostics.front().message));
  REQUIRE(ir_run.ok());
  check_schedules(k, inputs, ir_run.buffers, "the interpreter");
}

// A D fragment stored into a (1, 64, 64) block of a 3-D array (the rows of one slice of a
// (B, S, D) tensor, as a backward pass's dQ rows reduced element by element): the walk drops the
// leading 1 (it took it as the fragment's rows, and the reshape was refused), plainly and as
// red.global.add, equal to the interpreter bit for bit.
template <bool Reduce>
ir::Kernel acc_into_3d_block() {
  return lower(kernel<sm_90a>(
      Reduce ? "acc_reduced_into_3d_block" : "acc_into_3d_block", grid(1), threads(1_c), gmem<bf16>("a", shape(64_c, 64_c)),
      gmem<bf16>("b", shape(64_c, 64_c)), gmem<f32>("o", shape(2_c, 64_c, 64_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
      smem<bf16>(shape(64_c, 64_c), swizzle(128_c)), barrier(arrivals(2_c)), accumulator<f32>(shape(64_c, 64_c)),
      [](auto a, auto b, auto o, auto as, auto bs, auto bar, auto acc) {
        auto dst = o.tile(shape(1_c, 64_c, 64_c), 1_c, 0_c, 0_c);  // slice 1 of o
        auto out = [&] {
          if constexpr (Reduce) return store(dst, reshape(load(acc) * 0.5f, shape(1_c, 64_c, 64_c)), reduce_add);
          else return store(dst, reshape(load(acc) * 0.5f, shape(1_c, 64_c, 64_c)));
        };
        return seq(copy_gmem_to_smem(a.block(0_c, 0_c), as, bar), copy_gmem_to_smem(b.block(0_c, 0_c), bs, bar), barrier_wait(bar), store(acc, 0.0f),
                   wgmma(acc, as, transpose(bs)), wgmma_commit(), wgmma_wait(0_c), out());
      }));
}

TEST_CASE("host: an accumulator stored into a (1, 64, 64) block of a 3-D array walks its fragment, plainly and reduced, as the interpreter does",
          "[host][tensor_core]") {
  for (const auto& k : {acc_into_3d_block<false>(), acc_into_3d_block<true>()}) {
    INFO(k.name);
    const auto g = nvrtc::generate(k);
    REQUIRE_THAT(g.source, Contains("store over the fragment of a3 (64, 64): 1 block(s) x 32 elements per thread"));
    const auto inputs = random_inputs(k, input_seed);
    const auto ir_run = interp::run(k, inputs, {.schedule = interp::policy::eager});
    INFO((ir_run.ok() ? "" : ir_run.diagnostics.front().message));
    REQUIRE(ir_run.ok());
    check_schedules(k, inputs, ir_run.buffers, "the interpreter");
  }
}

// The 8-bit twin: an e4m3 tile packs four elements a register in the quad gather's input order
// (sc::acc8_word), so the wgmma's A is sc::quad_gather8 of its registers; read back element by
// element (sc::acc_e4m3) it is the rounding of what was stored. Both equal the interpreter's.
TEST_CASE("host: an e4m3 register tile is gathered into wgmma's 8-bit A as it is packed, and reads back as stored", "[host][tensor_core]") {
  const auto k = lower(kernel<sm_90a>(
      "e4m3_tile_as_a", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 128_c)), gmem<e4m3>("v", shape(64_c, 128_c)), gmem<f32>("o", shape(64_c, 64_c)),
      gmem<f32>("back", shape(64_c, 128_c)), smem<f32>(shape(64_c, 128_c)), smem<e4m3>(shape(64_c, 128_c), swizzle(128_c)), smem<f32>(shape(64_c, 64_c)),
      barrier(arrivals(2_c)), accumulator<e4m3>(shape(64_c, 128_c)), accumulator<f32>(shape(64_c, 64_c)),
      [](auto x, auto v, auto o, auto back, auto xs, auto vs, auto os, auto bar, auto p, auto acc) {
        return seq(copy_gmem_to_smem(x.block(0_c, 0_c), xs, bar), copy_gmem_to_smem(v.block(0_c, 0_c), vs, bar), barrier_wait(bar),
                   store(p, cast<e4m3>(load(xs) * 0.75f)), store(acc, 0.0f), wgmma(acc, load(p), transpose(vs)), wgmma_commit(), wgmma_wait(0_c),
                   store(os, load(acc)), store(xs, cast<f32>(load(p))), commit_smem(), copy_smem_to_gmem(os, o.block(0_c, 0_c)),
                   copy_smem_to_gmem(xs, back.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      }));
  const auto g = nvrtc::generate(k);
  REQUIRE_THAT(g.source, Contains("four to a register (e4m3)") && Contains("= sc::quad_gather8(acc") && Contains("sc::acc_e4m3(acc") &&
                             !Contains("8-bit, from the quad's D fragments"));
  const auto inputs = random_inputs(k, input_seed);
  const auto ir_run = interp::run(k, inputs, {.schedule = interp::policy::eager});
  INFO((ir_run.ok() ? "" : ir_run.diagnostics.front().message));
  REQUIRE(ir_run.ok());
  for (std::int64_t i = 0; i < 64 * 128; ++i) REQUIRE(ir_run.buffers[3].get(i) == ir::round_e4m3(static_cast<float>(inputs[0].get(i)) * 0.75f));
  check_schedules(k, inputs, ir_run.buffers, "the interpreter");
}

TEST_CASE("host: the zoo's fixed kernels (multicast, clusters, warp specialisation) equal their references", "[host]") {
  for (auto const& z : zoo::all()) {
    const auto k = z.build(zoo::variant::fixed);
    const auto inputs = random_inputs(k, input_seed);
    auto expected = inputs;
    z.reference(expected);
    check_schedules(k, inputs, expected, "the reference");
  }
}

TEST_CASE("host: the same seed replays exactly, different seeds schedule differently", "[host]") {
  const auto k = example("handoff");
  const auto inputs = random_inputs(k, input_seed);
  const auto c = hostexec::compile(k);
  std::set<std::uint64_t> steps;
  for (std::uint64_t s = 1; s <= 5; ++s) {
    const auto a = hostexec::run(c, k, inputs, {.seed = s});
    const auto b = hostexec::run(c, k, inputs, {.seed = s});
    REQUIRE(a.ok());
    CHECK(a.steps == b.steps);
    CHECK(first_difference(k, a.buffers, b.buffers).empty());
    steps.insert(a.steps);
  }
  CHECK(steps.size() >= 3);
}

// ---- planted bugs: each one a mistake the code generator could make -----------------------------

TEST_CASE("host: an expect_tx 16 bytes too many or too few deadlocks, naming barrier, phase and threads", "[host]") {
  const auto k = example("add_one");
  const auto inputs = random_inputs(k, input_seed);
  for (int delta : {16, -16}) {
    const auto c = planted(k, "sc::mbar_arrive_expect_tx(bar, 32768u);", fmt::format("sc::mbar_arrive_expect_tx(bar, {}u);", 32768 + delta));
    const auto r = hostexec::run(c, k, inputs, {});
    INFO(r.message);
    REQUIRE(r.kind == hostexec::failure::deadlock);
    CHECK_THAT(r.message, Contains("kernel 'add_one'") && Contains("thread(s) 0-127 wait(s) on mbarrier b1[0] of CTA (0, 0, 0)") &&
                              Contains("for the phase of parity 0 to complete") && Contains("in phase 0 (parity 0)") &&
                              Contains(fmt::format("0 of 1 arrival(s) and {} tx byte(s) pending", delta)));
  }
}

// Issue 25's third zoo case, which the front end cannot express (a TMA load's expect_tx is the
// bytes of its SMEM destination, by type): an expect_tx that counts only the part of an
// overhanging box inside the array. TMA completes the whole box (the outside lands as zeros), so
// the transaction count overshoots: a wait that never returns on hardware, a deadlock naming
// the barrier and the surplus on the host. Planted in add_one at M = 200 (CTA x = 1 holds rows 128..199
// of a 128-row box: 72 rows, 18432 of its 32768 bytes); the fixed twin is the kernel as generated.
TEST_CASE("host: an expect_tx counting only the in-bounds bytes of an overhanging TMA box is caught, as generated it runs", "[host]") {
  const auto k = example("add_one", {{"M", 200}});
  const auto inputs = random_inputs(k, input_seed);
  const auto expected = reference_of("add_one", inputs, {{"M", 200}});
  check_schedules(k, inputs, expected, "the reference");  // the fixed twin
  const auto c = planted(k, "sc::mbar_arrive_expect_tx(bar, 32768u);",
                         "sc::mbar_arrive_expect_tx(bar, static_cast<unsigned>(min(128LL, 200LL - static_cast<long long>(blockIdx.x) * 128LL) * 256LL));");
  const auto r = hostexec::run(c, k, inputs, {});
  INFO(r.message);
  REQUIRE_FALSE(r.ok());
  // The box's 32768 bytes land against 18432 expected: the count can never return to zero.
  REQUIRE(r.kind == hostexec::failure::deadlock);
  CHECK_THAT(r.message, Contains("kernel 'add_one'") && Contains("CTA (1, 0, 0) thread(s) 0-127 wait(s) on mbarrier b1[0]") &&
                            Contains("-14336 tx byte(s) pending"));
}

TEST_CASE("host: a bulk wait one group too lenient lets a refill overwrite a stage its store still reads", "[host]") {
  const auto k = example("add_one");
  const auto inputs = random_inputs(k, input_seed);
  const auto expected = reference_of("add_one", inputs);
  const auto c = planted(k, "sc::bulk_wait_read<1>()", "sc::bulk_wait_read<2>()");
  const auto why = caught(c, k, inputs, expected, 20);
  INFO(why);
  CHECK_THAT(why, Contains("wrong result"));
}

TEST_CASE("host: a parity bit never flipped reads stages before they land", "[host]") {
  const auto k = example("add_one");
  const auto inputs = random_inputs(k, input_seed);
  const auto expected = reference_of("add_one", inputs);
  const auto c = planted(k, "parity[0] ^= 1u << (e % 32);", "");
  CHECK_FALSE(caught(c, k, inputs, expected, 10).empty());
}

TEST_CASE("host: a store without the proxy fence writes what the async proxy saw", "[host]") {
  const auto k = example("add_one");
  const auto inputs = random_inputs(k, input_seed);
  const auto expected = reference_of("add_one", inputs);
  const auto c = planted(k, "sc::fence_proxy_async();", "");
  const auto r = hostexec::run(c, k, inputs, {});
  REQUIRE(r.ok());
  CHECK_FALSE(first_difference(k, r.buffers, expected).empty());
}

TEST_CASE("host: a swizzle XOR on the wrong address bits reads the wrong elements", "[host]") {
  // y = 2x on one 64x64 f16 tile through 128-byte swizzled SMEM. TMA lands the tile at the
  // documented swizzled addresses; the generated code reads it through the device prelude's
  // own swz<128>, compiled for the host, so a wrong XOR there misplaces elements. (Read and
  // written in place, a wrong swizzle would cancel out: the output goes straight to GMEM.)
  const auto k = lower(kernel<sm_90a>("swz", grid(1), threads(1_c), gmem<f16>("x", shape(64_c, 64_c)), gmem<f16>("y", shape(64_c, 64_c)),
                                      smem<f16>(shape(64_c, 64_c), swizzle(128_c)), barrier(arrivals(1_c)), [](auto x, auto y, auto buf, auto bar) {
                                        return seq(copy_gmem_to_smem(x.block(0_c, 0_c), buf, bar), barrier_wait(bar),
                                                   store(y.tile(shape(64_c, 64_c), 0_c, 0_c), load(buf) * 2.0f));
                                      }));
  const auto inputs = random_inputs(k, input_seed);
  auto expected = inputs;
  for (std::int64_t i = 0; i < expected[1].elements(); ++i) expected[1].set(i, expected[0].get(i) * 2.0);
  check_schedules(k, inputs, expected, "the reference");
  const auto c = planted(k, "return o ^ (((o >> 7) & 7u) << 4);", "return o ^ (((o >> 8) & 7u) << 4);");
  CHECK_THAT(caught(c, k, inputs, expected, 1), Contains("wrong result"));
}

TEST_CASE("host: tiled SMEM moves one TMA box per tile and its elements are where TMA put them, a wrong tile layout shows", "[host][tiling]") {
  // 64 x 128 f16 tiles in SMEM laid out as 32 x 64 tiles of 128-byte swizzled rows (the GEMM
  // epilogue's staging). y = 2x: TMA lands x in four boxes and the generated code reads the
  // elements through the device prelude's tiled() and swz<128>() straight into GMEM; z = 3x: the
  // generated code writes them from GMEM and TMA stores four boxes. (SMEM read and written
  // through the same wrong layout would cancel out: each path has one generic side only.) The
  // interpreter lays tiles out by the same function (ir/swizzle.hpp).
  const auto k = lower(kernel<sm_90a>("tiles", grid(1), threads(1_c), gmem<f16>("x", shape(64_c, 128_c)), gmem<f16>("y", shape(64_c, 128_c)),
                                      gmem<f16>("z", shape(64_c, 128_c)), smem<f16>(shape(64_c, 128_c), tiling(32_c, 64_c), swizzle(128_c)),
                                      smem<f16>(shape(64_c, 128_c), tiling(32_c, 64_c), swizzle(128_c)), barrier(arrivals(1_c)),
                                      [](auto x, auto y, auto z, auto in, auto out, auto bar) {
                                        auto xt = x.tile(shape(64_c, 128_c), 0_c, 0_c);
                                        return seq(copy_gmem_to_smem(x.block(0_c, 0_c), in, bar), barrier_wait(bar),
                                                   store(y.tile(shape(64_c, 128_c), 0_c, 0_c), load(in) * 2.0f), store(out, load(xt) * 3.0f),
                                                   commit_smem(), copy_smem_to_gmem(out, z.block(0_c, 0_c)), commit_smem_to_gmem_group(),
                                                   wait_smem_to_gmem(0_c));
                                      }));
  const auto g = nvrtc::generate(k);
  CHECK(g.maps.size() == 2);
  for (auto const& m : g.maps) CHECK(m.box == std::vector<std::int64_t>{32, 64});
  const auto inputs = random_inputs(k, input_seed);
  auto expected = inputs;
  for (std::int64_t i = 0; i < expected[1].elements(); ++i) {
    expected[1].set(i, expected[0].get(i) * 2.0);
    expected[2].set(i, expected[0].get(i) * 3.0);
  }
  const auto ir = interp::run(k, inputs, {.schedule = interp::policy::lazy});
  REQUIRE(ir.ok());
  CHECK(first_difference(k, ir.buffers, expected).empty());
  check_schedules(k, inputs, expected, "the reference");
  // The tiles in column-major order (2 x 2 of them here), or each tile's rows upside down.
  for (auto [from, to] : {std::pair{"((row / TR) * (Cols / TC) + col / TC)", "(row / TR + col / TC * (Cols / TC))"},
                          std::pair{"(row % TR) * TC + col % TC;", "(TR - 1 - row % TR) * TC + col % TC;"}}) {
    INFO(to);
    CHECK_THAT(caught(planted(k, from, to), k, inputs, expected, 1), Contains("wrong result"));
  }
}

TEST_CASE("host: a multicast mask off by one CTA is refused", "[host]") {
  const auto k = zoo::leader_only_multicast(zoo::variant::fixed);
  const auto inputs = random_inputs(k, input_seed);
  const auto c = planted(k, "static_cast<unsigned short>(0x0003u << rank_base)", "static_cast<unsigned short>(0x0006u << rank_base)");
  const auto r = hostexec::run(c, k, inputs, {});
  INFO(r.message);
  REQUIRE(r.kind == hostexec::failure::protocol);
  CHECK_THAT(r.message, Contains("multicast mask 0x0006 must name CTAs of the cluster, which has 2"));
}

TEST_CASE("host: generated source without the device prelude is refused by name", "[host]") {
  const auto k = example("add_one");
  auto g = nvrtc::generate(k);
  g.source = "extern \"C\" __global__ void add_one() {}\n";
  CHECK_THROWS_WITH(hostexec::compile_generated(g, k), Contains("kernel 'add_one'") && Contains("portable block"));
}

TEST_CASE("host: a host compiler that fails is reported with the kernel and its command", "[host]") {
  const auto k = example("add_one");
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("stagecraft-host-test-{}", ::getpid());
  hostexec::options o;
  o.cache_dir = dir.string();
  o.compiler = "false";
  CHECK_THROWS_WITH(hostexec::compile(k, o), Contains("kernel 'add_one'") && Contains("'false' -std=c++17"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("host: the zoo's buggy kernels go wrong on the host too", "[host]") {
  // Each zoo bug is one the hardware would act on; on the host it must show within 10 schedules
  // as a failed run (deadlock, broken PTX rule, SMEM released under a copy, a fault) or a wrong
  // number. The races between warpgroups (early_release, one_consumer_releases) and the waiter
  // two phases behind (single_release) need a priority schedule (seeds 3, 6, 9): one warpgroup
  // running far ahead of the other.
  // Three missing fences are out of the host's reach: it runs memory operations in program order
  // and keeps one view of GMEM, so a generic write that the hardware may let a later TMA access
  // overtake (GMEM read by TMA in one CTA or from a peer's partial, SMEM refilled by TMA) lands
  // in order. The interpreter's missing-fence check is what catches those three (tests/zoo).
  const std::set<std::string> reordering_only = {"zoo_workspace_no_fence", "zoo_refill_over_generic_store", "zoo_generic_store_then_tma_read"};
  // A lost update is out of its reach too: the host switches CUDA threads only inside runtime
  // calls, so a plain load and store of the same element (zoo_plain_store_accumulate's y += p)
  // never interleave with another thread's. The interpreter's race check catches it.
  const std::set<std::string> interleaving_only = {"zoo_plain_store_accumulate", "zoo_serial_without_wait"};
  for (auto const& z : zoo::all()) {
    INFO(z.name);
    if (reordering_only.count(z.name) || interleaving_only.count(z.name)) continue;
    const auto k = z.build(zoo::variant::buggy);
    const auto inputs = random_inputs(k, input_seed);
    auto expected = inputs;
    z.reference(expected);
    const auto why = caught(hostexec::compile(k), k, inputs, expected, 10);
    CHECK_FALSE(why.empty());
    // The .read wait before the peer's generic read: the GMEM write lands late, a wrong sum.
    if (std::string(z.name) == "zoo_tma_store_then_generic_read") CHECK_THAT(why, Contains("wrong result"));
  }
}

TEST_CASE("host: a generated index past the end of SMEM is a report, not a crash", "[host]") {
  const auto k = zoo::out_ring_indexed_by_step(zoo::variant::buggy);
  const auto r = hostexec::run(k, random_inputs(k, input_seed), {});
  INFO(r.message);
  REQUIRE(r.kind == hostexec::failure::memory_fault);
  CHECK_THAT(r.message, Contains("kernel 'zoo_out_ring_indexed_by_step'") && Contains("thread 0 (warpgroup 0, lane 0) accessed SMEM offset") &&
                            Contains("which has 98312 bytes"));
  // and the process goes on: the fixed twin runs clean right after
  const auto f = zoo::out_ring_indexed_by_step(zoo::variant::fixed);
  CHECK(hostexec::run(f, random_inputs(f, input_seed), {.seed = 3}).ok());
}

TEST_CASE("host: the swizzled example goes wrong with either swizzle function wrong", "[host]") {
  const auto k = example("swizzled_widen");
  const auto inputs = random_inputs(k, input_seed);
  const auto expected = reference_of("swizzled_widen", inputs);
  // in through swz<64>, out through swz<128>: the XOR taking address bits 8.. instead of 7..
  for (auto [from, to] : {std::pair{"return o ^ (((o >> 7) & 3u) << 4);", "return o ^ (((o >> 8) & 3u) << 4);"},
                          std::pair{"return o ^ (((o >> 7) & 7u) << 4);", "return o ^ (((o >> 8) & 7u) << 4);"}}) {
    INFO(from);
    CHECK_THAT(caught(planted(k, from, to), k, inputs, expected, 1), Contains("wrong result"));
  }
}

TEST_CASE("host: the multicast example goes wrong with a share's SMEM offset or rows wrong", "[host]") {
  const auto k = example("multicast_scale");
  const auto inputs = random_inputs(k, input_seed);
  const auto expected = reference_of("multicast_scale", inputs);
  // Each CTA of the pair loads rows [pos * 64, pos * 64 + 64) of w into bytes [pos * 16384, ...)
  // of both CTAs' SMEM. Both halves landing on the first half, or both CTAs loading the first
  // rows, leaves half of w wrong in SMEM (the bytes still add up: no deadlock).
  CHECK_THAT(caught(planted(k, "static_cast<unsigned>(pos * 16384)", "static_cast<unsigned>(0 * 16384)"), k, inputs, expected, 1),
             Contains("wrong result"));
  CHECK_THAT(caught(planted(k, "0LL * 128 + pos * 64)", "0LL * 128 + 0 * 64)"), k, inputs, expected, 1), Contains("wrong result"));
  // and a mask naming one CTA too few: the peer's barrier never gets the bytes it expects
  const auto r = hostexec::run(planted(k, "static_cast<unsigned short>(0x0003u << rank_base)", "static_cast<unsigned short>(0x0001u << rank_base)"), k, inputs, {});
  INFO(r.message);
  CHECK(r.kind == hostexec::failure::deadlock);
}

TEST_CASE("host: a cluster barrier needs every peer's arrival and an .acquire.cluster wait", "[host]") {
  // Two CTAs per cluster: each loads its block, then both meet on a cluster barrier (each CTA's
  // arrival lands on both CTAs' barriers) before storing y = x + 1.
  const auto k = lower(kernel<sm_90a>("cluster_meet", grid(4), threads(1_c), cluster(2_c), gmem<f32>("x", shape(512, 64)),
                                      gmem<f32>("y", shape(512, 64)), smem<f32>(shape(128_c, 64_c)), barrier(arrivals(1_c), count(1_c)),
                                      cluster_barrier(collective_axes(0_c), arrivals(1_c)), [](auto x, auto y, auto buf, auto landed, auto met) {
                                        return seq(copy_gmem_to_smem(x.block(program_id(), 0_c), buf, landed), barrier_wait(landed),
                                                   barrier_arrive(met), barrier_wait(met),
                                                   store(y.tile(shape(128_c, 64_c), program_id(), 0_c), load(buf) + 1.0f));
                                      }));
  const auto inputs = random_inputs(k, input_seed);
  auto expected = inputs;
  for (std::int64_t i = 0; i < expected[1].elements(); ++i) expected[1].set(i, static_cast<float>(expected[0].get(i)) + 1.0f);
  check_schedules(k, inputs, expected, "x + 1");

  const auto cta_scope = hostexec::run(planted(k, "sc::mbar_wait_cluster(", "sc::mbar_wait("), k, inputs, {});
  INFO(cta_scope.message);
  CHECK(cta_scope.kind == hostexec::failure::protocol);
  CHECK_THAT(cta_scope.message, Contains("with .acquire.cta, but peers arrive on it with .release.cluster") && Contains("mbarrier cb"));

  // arriving on one's own CTA only: the barrier expects 2 arrivals and gets 1
  // (a .cluster barrier: the kernel stores y generically, ir/scopes.hpp)
  const auto own_only =
      hostexec::run(planted(k, "sc::mbar_arrive_remote<true>(", "if (r == static_cast<int>(sc::cluster_ctaid<2u>(0))) sc::mbar_arrive_remote<true>("), k, inputs, {});
  INFO(own_only.message);
  CHECK(own_only.kind == hostexec::failure::deadlock);
  CHECK_THAT(own_only.message, Contains("mbarrier cb") && Contains("with 1 of 2 arrival(s)"));
}

TEST_CASE("host: a TMA store issued without the warpgroup barrier stores lanes' unwritten elements", "[host]") {
  const auto k = example("scale_store");
  const auto inputs = random_inputs(k, input_seed);
  const auto expected = reference_of("scale_store", inputs);
  auto g = nvrtc::generate(k);
  const auto op = g.source.find("copy_smem_to_gmem s");
  REQUIRE(op != std::string::npos);
  const auto sync = g.source.find("sc::wg_sync(wg);\n", op);
  REQUIRE(sync != std::string::npos);
  g.source.erase(sync, std::string_view("sc::wg_sync(wg);\n").size());
  const auto c = hostexec::compile_generated(std::move(g), k);
  CHECK_THAT(caught(c, k, inputs, expected, 10), Contains("wrong result"));
}

TEST_CASE("host: TMA follows the tensor map it is handed: a wrong box or swizzle in a descriptor shows", "[host]") {
  // The descriptors are the code generator's tensor_map_specs, encoded as cuda::launch encodes
  // them; the host's TMA reads box, strides and swizzle from those bytes, not from the IR.
  const auto k = example("swizzled_widen");
  const auto inputs = random_inputs(k, input_seed);
  const auto expected = reference_of("swizzled_widen", inputs);
  {
    auto g = nvrtc::generate(k);
    REQUIRE(g.maps.size() == 2);
    g.maps[0].box[0] /= 2;  // half the rows: half the bytes the barrier expects ever land
    const auto r = hostexec::run(hostexec::compile_generated(std::move(g), k), k, inputs, {});
    INFO(r.message);
    CHECK(r.kind == hostexec::failure::deadlock);
    CHECK_THAT(r.message, Contains("2048 tx byte(s) pending"));
  }
  {
    auto g = nvrtc::generate(k);
    g.maps[1].swizzle = 0;  // the store reads the 128-byte swizzled block as if it were plain
    CHECK_THAT(caught(hostexec::compile_generated(std::move(g), k), k, inputs, expected, 1), Contains("wrong result"));
  }
}

TEST_CASE("host: a masked(NAN) TMA block asks its tensor map for the NaN fill, and the overhang lands as the interpreter's NaN, bit for bit",
          "[host][nan_fill]") {
  const auto kernels = {testing::nan_fill_probe<f32>("nan_fill_f32"), testing::nan_fill_probe<bf16>("nan_fill_bf16"),
                        testing::nan_fill_probe<f16>("nan_fill_f16")};
  for (auto const& k : kernels) {
    INFO("kernel " << k.name);
    const auto g = nvrtc::generate(k);
    REQUIRE(g.maps.size() == 2);
    CHECK(g.maps[0].nan_fill);   // x: the load's
    CHECK(!g.maps[1].nan_fill);  // y: the store's (a store drops the overhang, it fills nothing)
    const auto inputs = random_inputs(k, input_seed);
    const auto expected = interp::run(k, inputs, {});
    REQUIRE(expected.ok());
    check_schedules(k, inputs, expected.buffers, "the interpreter");
    // The same kernel with the zero fill: the padding rows of y are zeros, so the NaN came from the map.
    auto g0 = nvrtc::generate(k);
    g0.maps[0].nan_fill = false;
    CHECK_THAT(caught(hostexec::compile_generated(std::move(g0), k), k, inputs, expected.buffers, 1), Contains("wrong result: y["));
  }
}

TEST_CASE("host: ragged batches (index tables, windows of rows, index tiles) equal the interpreter", "[host][ragged]") {
  // segment_scale: a seeded segment table, tiles counted and scaled by run-time lengths.
  // copy_segments: a plain index table whose windows end inside a tile (30 rows, none, 64 rows).
  auto copy = testing::copy_segments<true>(4);
  auto copy_in = random_inputs(copy, input_seed);
  testing::set_table(copy_in[1], {0, 30, 30, 94});
  const auto scale = testing::segment_scale();
  for (auto const& [k, inputs] : {std::pair{scale, random_inputs(scale, input_seed)}, std::pair{copy, copy_in}}) {
    const auto expected = interp::run(k, inputs, {});
    INFO(k.name << (expected.ok() ? "" : ": " + expected.diagnostics.front().message));
    REQUIRE(expected.ok());
    check_schedules(k, inputs, expected.buffers, "the interpreter");
  }
}

// The host backend computes each wgmma and tcgen05 instruction from the bits the generated code
// issues (descriptors, instruction descriptors, TMEM addresses) with the interpreter's decoders
// and its summation rule, so the GEMMs' outputs are the interpreter's bit for bit. Variants cover
// SS wgmma, f32, f16 and s32 accumulators, fp8 with scales, TMEM A (ts), the CTA pair, and
// tcgen05's kind::f8f6f4 and kind::i8 (s32 in TMEM).
TEST_CASE("host: the tensor-core GEMMs equal the interpreter bit for bit under 5 host schedules", "[host][tensor_core]") {
  const std::vector<std::pair<std::string, param_values>> cases = {
      {"gemm_small", {}},
      {"gemm_small", {{"int8", 1}, {"K", 208}}},
      {"gemm_hopper", {}},
      {"gemm_fp8", {}},
      {"gemm_fp8", {{"acc", 16}}},
      {"gemm_fp8", {{"scaled", 1}}},
      {"gemm_fp8_blockwise", {}},
      {"gemm_grouped", {}},
      {"gemm_blackwell", {}},
      {"gemm_blackwell", {{"fp8", 1}}},
      {"gemm_blackwell", {{"int8", 2}, {"BN", 128}}},  // kind::i8, u8 x s8 into an s32 TMEM accumulator
      // persistent: one CTA, four tiles through the TMEM ring's two stages
      {"gemm_blackwell", {{"M", 256}, {"N", 512}, {"BN", 128}, {"ctas", 1}}},
      {"gemm_blackwell_ts", {}},
      {"gemm_blackwell_mx", {}},  // kind::mxf8f6f4.block_scale, scales copied into TMEM by tcgen05.cp
      {"gemm_blackwell_mx", {{"fmt", 2}, {"M", 200}, {"N", 264}, {"K", 400}, {"ctas", 2}}},  // partial tiles in M, N and K
      {"gemm_blackwell_mx", {{"fmt", 3}, {"M", 200}, {"N", 136}, {"K", 288}, {"ctas", 2}}},  // MXFP4: kind::mxf4, two scale blocks a slice
      {"gemm_blackwell_mx", {{"fmt", 4}, {"M", 128}, {"N", 128}, {"K", 512}}},                // NVFP4: kind::mxf4nvf4, ue4m3, four blocks a slice
      {"gemm_blackwell_mx", {{"fmt", 6}, {"M", 200}, {"N", 136}, {"K", 256}, {"ctas", 2}}},  // MXFP6 e3m2 x e2m3: packed GMEM, TMA's 16U6 SMEM units
      {"gemm_blackwell_mx", {{"fmt", 7}, {"M", 128}, {"N", 200}, {"K", 256}}},               // e4m3 x e2m1 (kind::mxf8f6f4's FP4): TMA's 16U4 units
      {"gemm_blackwell_2cta", {}},
      {"gemm_blackwell_2cta", {{"mc", 2}, {"BN", 128}}},
      {"gemm_blackwell_2cta", {{"int8", 1}}},  // cta_group::2 kind::i8
      // persistent pair: one cluster, four 256 x 128 tiles through each CTA's two TMEM stages
      {"gemm_blackwell_2cta", {{"M", 512}, {"N", 256}, {"BN", 128}, {"ctas", 2}}},
  };
  for (auto const& [name, set] : cases) {
    const auto k = example(name, set);
    auto inputs = random_inputs(k, input_seed);
    if (auto const& e = registry::global().find(name); e.inputs) e.inputs(inputs, registry::resolve(e, set));  // gemm_blackwell_mx: scale codes in range
    const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
    INFO(fmt::format("{} {}", name, set) << (ir.ok() ? "" : ": " + ir.diagnostics.front().message));
    REQUIRE(ir.ok());
    check_schedules(k, inputs, ir.buffers, "the interpreter");
  }
}

// An i32 tile through TMEM: tcgen05.st and tcgen05.ld move 32-bit columns, which an i32
// allocation (kind::i8's accumulator) holds as integers, not as floats' bits. Before kind::i8 the
// generator refused to load an i32 allocation and wrote one's columns as __float_as_uint(v), which
// converts v to a float first: 7 would have landed as 0x40e00000.
TEST_CASE("host: an i32 tile stored into TMEM and loaded back keeps its integers", "[host][tensor_core][int8]") {
  const auto k = lower(kernel<sm_100a>(
      "tmem_i32", grid(1), threads(warpgroup), gmem<i32>("x", shape(128_c, 32_c)), gmem<i32>("y", shape(128_c, 32_c)), tmem<i32>(shape(128_c, 32_c)),
      [](auto x, auto y, auto t) {
        auto tile = [](auto g) { return g.tile(shape(128_c, 32_c), 0_c, 0_c); };
        return seq(store_tmem(t, load(tile(x)) + 7), store(tile(y), async_load_tmem(t) * 3), tmem_dealloc(t));
      }));
  const auto inputs = random_inputs(k, input_seed);
  auto expected = inputs;
  for (std::int64_t i = 0; i < expected[1].elements(); ++i) expected[1].set(i, (inputs[0].get(i) + 7) * 3);
  const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
  INFO((ir.ok() ? "" : ir.diagnostics.front().message));
  REQUIRE(ir.ok());
  CHECK(first_difference(k, ir.buffers, expected).empty());
  check_schedules(k, inputs, expected, "the reference");
}

// Row statements the generator runs as one pass over the row (and those it keeps apart because a
// later one reads what an earlier one wrote): bit for bit the interpreter's, folds included.
TEST_CASE("host: fused row statements over TMEM equal the interpreter bit for bit", "[host][tensor_core]") {
  const auto k = testing::tmem_rows::kernel();
  const auto inputs = random_inputs(k, input_seed);
  const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
  INFO((ir.ok() ? "" : ir.diagnostics.front().message));
  REQUIRE(ir.ok());
  check_schedules(k, inputs, ir.buffers, "the interpreter");
}

// Attention adds RS wgmma (P * V with P from S's accumulator registers). Its row sums differ from
// the interpreter's by association only (the generated code folds a row by quad shuffles, the
// interpreter left to right: "row reductions ... fragment-order reference" below), so its
// outputs are compared within the MMA bound, against the interpreter and the reference.
TEST_CASE("host: the attention examples equal the interpreter within the MMA bound under 5 host schedules", "[host][tensor_core]") {
  const std::vector<std::pair<std::string, param_values>> cases = {
      {"attention_hopper", {}},
      {"attention_hopper", {{"causal", 1}, {"D", 128}, {"S", 130}}},
      {"attention_hopper", {{"overlap", 1}, {"pingpong", 1}, {"B", 2}}},
      {"attention_hopper", {{"BK", 128}, {"causal", 1}}},
      {"attention_hopper", {{"BK", 176}, {"S", 352}}},
      {"attention_hopper", {{"BK", 128}, {"D", 128}, {"overlap", 1}, {"S", 200}}},  // P a packed bf16 register tile, the P V's A as it is
      {"attention_hopper", {{"BK", 128}, {"fp8", 1}, {"causal", 1}, {"S", 208}, {"D", 128}, {"pingpong", 1}}},
      {"attention_hopper", {{"BK", 128}, {"fp8", 1}, {"S", 256}, {"D", 256}}},
      {"attention_varlen", {{"causal", 1}}},
      {"attention_hopper_bwd", {{"causal", 1}, {"S", 200}}},
      {"attention_hopper_bwd", {{"D", 128}, {"S", 130}, {"B", 2}}},
  };
  for (auto const& [name, set] : cases) {
    const auto k = example(name, set);
    auto inputs = random_inputs(k, input_seed);
    auto const& e = registry::global().find(name);
    if (e.inputs) e.inputs(inputs, registry::resolve(e, set));  // attention_hopper_bwd: the forward pass's LSE and delta
    auto expected = inputs;
    registry::global().find(name).reference(expected, registry::resolve(registry::global().find(name), set));
    const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
    INFO(fmt::format("{} {}", name, set) << (ir.ok() ? "" : ": " + ir.diagnostics.front().message));
    REQUIRE(ir.ok());
    const auto tol = interp::tolerance_of(k, ir, inputs);
    REQUIRE(tol);
    check_within(k, ir.buffers, expected, *tol, "the interpreter against the reference");
    check_schedules_within(k, inputs, ir.buffers, expected, *tol);
  }
}

// The epilogues that store the D fragment by stmatrix (a warp collective: the host's lanes meet
// in the runtime, which writes each row from the registers the PTX ISA's fragment names): every
// layout it serves, against the interpreter (a plain tile store there, element (r, c) through
// the layout) bit for bit, and the interpreter against the product itself. The examples' GEMM
// and attention epilogues go by stmatrix too, so the tensor-core tests above prove it on them.
TEST_CASE("host: epilogues stored by stmatrix equal the interpreter bit for bit in every layout it serves, under 5 host schedules",
          "[host][tensor_core][stmatrix]") {
  auto kernels = testing::stmatrix::kernels();
  kernels.push_back(testing::stmatrix::fallback_kernel());
  for (auto const& k : kernels) {
    INFO("kernel " << k.name);
    const bool stsm = k.name != "stsm_fallback";
    CHECK((nvrtc::generate(k).source.find("sc::stmatrix_x4(") != std::string::npos) == stsm);
    const auto inputs = random_inputs(k, input_seed);
    const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
    INFO((ir.ok() ? "" : ir.diagnostics.front().message));
    REQUIRE(ir.ok());
    // C = A * B^T, the (64, 64) product repeated along C's columns in the ring kernel.
    auto expected = inputs;
    auto const &a = inputs[0], &b = inputs[1];
    auto& c = expected[2];
    const std::int64_t n_b = b.shape[0], n_c = c.shape[1];
    for (std::int64_t m = 0; m < c.shape[0]; ++m)
      for (std::int64_t n = 0; n < n_c; ++n) {
        double sum = 0;
        for (std::int64_t kk = 0; kk < 64; ++kk) sum += a.get(m * 64 + kk) * b.get(n % n_b * 64 + kk);
        c.set(m * n_c + n, sum);
      }
    const auto tol = interp::tolerance_of(k, ir, inputs);
    REQUIRE(tol);
    check_within(k, ir.buffers, expected, *tol, "the interpreter against the reference");
    check_schedules(k, inputs, ir.buffers, "the interpreter");
  }
  for (auto const& [name, set] : std::vector<std::pair<std::string, param_values>>{
           {"gemm_hopper", {}}, {"gemm_fp8", {}}, {"gemm_fp8", {{"acc", 16}}}, {"gemm_fp8", {{"scaled", 1}}}, {"gemm_fp8_blockwise", {}}, {"attention_hopper", {}}}) {
    INFO(name << " " << fmt::format("{}", set));
    CHECK(nvrtc::generate(example(name, set)).source.find("sc::stmatrix_x4(") != std::string::npos);
  }
}

TEST_CASE("host: an stmatrix with two matrices' registers swapped or a lane's row address a row off writes the wrong elements, an unaligned row is refused",
          "[host][tensor_core][stmatrix]") {
  const auto k = example("gemm_hopper");
  const auto inputs = random_inputs(k, input_seed);
  const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
  REQUIRE(ir.ok());
  // Register 0 holds matrix 0 (rows 0-7 of the warp's 16, the first 8 columns), register 1
  // matrix 1 (rows 8-15): swapped, each lands in the other's rows.
  CHECK_THAT(caught(planted(k, "sm[0], sm[1], sm[2], sm[3]", "sm[1], sm[0], sm[2], sm[3]"), k, inputs, ir.buffers, 1), Contains("wrong result"));
  // Lane 8 m + r gives row r's address: taking row r + 1's moves every row of the matrix by one.
  CHECK_THAT(caught(planted(k, "sc::accumulator_element(lane / 32 * 32 + lane % 8 * 4,", "sc::accumulator_element(lane / 32 * 32 + (lane + 1) % 8 * 4,"), k,
                    inputs, ir.buffers, 1),
             Contains("wrong result"));
  // A row address off the 16-byte grid: the GPU's stmatrix takes whole 16-byte rows.
  CHECK_THAT(caught(planted(k, "sc::stmatrix_x4(sc::swz<128>(", "sc::stmatrix_x4(4u + sc::swz<128>("), k, inputs, ir.buffers, 1),
             Contains("is not 16-byte aligned"));
}

TEST_CASE("host: a wgmma descriptor with the wrong swizzle reads the wrong elements", "[host][tensor_core]") {
  // gemm_small's operands are 128-byte swizzled (descriptor bits 62-63 = 1); the planted
  // descriptor says "no swizzle", so the tensor core reads A through the wrong layout.
  const auto k = example("gemm_small");
  const auto inputs = random_inputs(k, input_seed);
  const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
  REQUIRE(ir.ok());
  const auto c = planted(k, "da0 = 0x4000004000010000ull", "da0 = 0x0000004000010000ull");
  CHECK_THAT(caught(c, k, inputs, ir.buffers, 1), Contains("wrong result"));
}

TEST_CASE("host: A from registers with two elements of a register swapped gives the wrong P * V", "[host][tensor_core]") {
  // attention_hopper's P * V takes P from the accumulator registers of S (A from registers); the
  // planted pair puts P's columns 0 and 1 in each other's half of the first register.
  const auto k = example("attention_hopper");
  const auto inputs = random_inputs(k, input_seed);
  const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
  REQUIRE(ir.ok());
  const auto c = planted(k,
                         "static_cast<unsigned>(sc::f32_to_bf16(sc::round_bf16(acc8[0]))) | static_cast<unsigned>(sc::f32_to_bf16(sc::round_bf16(acc8[1]))) << 16",
                         "static_cast<unsigned>(sc::f32_to_bf16(sc::round_bf16(acc8[1]))) | static_cast<unsigned>(sc::f32_to_bf16(sc::round_bf16(acc8[0]))) << 16");
  CHECK_THAT(caught(c, k, inputs, ir.buffers, 1), Contains("wrong result"));
}

TEST_CASE("host: 8-bit A from registers gathered from the wrong halves of the quad's words gives the wrong P * V", "[host][tensor_core]") {
  // fp8 attention's P is packed where S's fragment holds it and gathered from the quad
  // (sc::quad_gather8, the prelude's portable text the host runs): each lane taking the other
  // half of its two words puts keys 8 columns off into A.
  const auto k = example("attention_hopper", {{"BK", 128}, {"fp8", 1}});
  const auto inputs = random_inputs(k, input_seed);
  const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
  REQUIRE(ir.ok());
  const auto c = planted(k, "lane & 2 ? 0x7632u : 0x5410u", "lane & 2 ? 0x5410u : 0x7632u");
  CHECK_THAT(caught(c, k, inputs, ir.buffers, 1), Contains("wrong result"));
}

TEST_CASE("host: the pair's loads complete on the even CTA's barrier, a leader expecting only its own half, or an odd CTA's load gone, is caught",
          "[host][tensor_core]") {
  const auto k = example("gemm_blackwell_2cta");
  const auto inputs = random_inputs(k, input_seed);
  const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
  REQUIRE(ir.ok());
  // The leader's A arrival expecting 16 KiB (its own) where both CTAs' 32 KiB land: the phase
  // completes before the odd CTA's half has, and the surplus bytes run into the next phase.
  const auto own_half = planted(k, "sc::mbar_arrive_expect_tx(bar, 32768u);", "sc::mbar_arrive_expect_tx(bar, 16384u);");
  CHECK_FALSE(caught(own_half, k, inputs, ir.buffers, 3).empty());
  // The odd CTA's B load not issued: the leader's full[s] waits for 16 KiB that never come.
  const auto skipped = planted(k, "sc::tma_load_pair(smem_base + 49152u", "if ((sc::cluster_ctaid<2u>(0) & 1u) == 0u) sc::tma_load_pair(smem_base + 49152u");
  const auto r = hostexec::run(skipped, k, inputs, {});
  CHECK(r.kind == hostexec::failure::deadlock);
  CHECK_THAT(r.message, Contains("16384 tx byte(s) pending"));
}

TEST_CASE("host: tcgen05 follows its instruction descriptor, and a warp reaches only its own TMEM lanes", "[host][tensor_core]") {
  const auto k = example("gemm_blackwell");
  const auto inputs = random_inputs(k, input_seed);
  const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
  REQUIRE(ir.ok());
  // N = 128 in the instruction descriptor (bits 17-22: N >> 3) where the tile has 256 columns:
  // half of D is never written.
  const auto half_n = planted(k, "0x08400490u, acc", "0x08200490u, acc");
  CHECK_THAT(caught(half_n, k, inputs, ir.buffers, 1), Contains("wrong result"));
  // The epilogue's warps each load their 32 TMEM lanes; the planted address sends warp w to lane
  // 16 w, outside its sub-partition (the GPU faults; the host says so).
  const auto lanes = planted(k, "(static_cast<unsigned>(lane / 32 * 32) << 16)", "(static_cast<unsigned>(lane / 32 * 16) << 16)");
  const auto r = hostexec::run(lanes, k, inputs, {});
  CHECK(r.kind == hostexec::failure::protocol);
  CHECK_THAT(r.message, Contains("tcgen05.ld.32x32b at TMEM lane 16: warp 1 (warp 1 of its warpgroup) reaches only lanes 32-63"));
  // TMEM never freed: the CTA ends with its allocation (the interpreter's tmem-not-freed).
  const auto kept = planted(k, "if (lane < 32) sc::tmem_dealloc(", "if (false) sc::tmem_dealloc(");
  const auto leak = hostexec::run(kept, k, inputs, {});
  CHECK(leak.kind == hostexec::failure::protocol);
  CHECK_THAT(leak.message, Contains("CTA (0, 0, 0) ended with 512 TMEM column(s) still allocated"));  // the ring's two accumulators
}

TEST_CASE("host: the tile ops' generated code (prelude math, reductions, broadcasts, iota) equals the interpreter bit for bit", "[host][tile_ops]") {
  // The host compiler builds the NVRTC prelude's own text: the stringified math of
  // stagecraft/ir/math.hpp the GPU runs, against the interpreter's instantiation of it.
  for (auto& c : testing::tile_ops::all()) {
    const auto inputs = testing::tile_ops::inputs(c.kernel, input_seed);
    auto want = inputs;
    c.reference(want);
    const auto ir = interp::run(c.kernel, inputs, {.schedule = interp::policy::eager});
    REQUIRE(ir.ok());
    REQUIRE(first_difference(c.kernel, ir.buffers, want).empty());
    check_schedules(c.kernel, inputs, ir.buffers, "the interpreter");
  }
}

TEST_CASE("host: a reduction folded in another order than the interpreter's is caught", "[host][tile_ops]") {
  // Summing from the last element down rounds differently: the order is part of the op.
  const auto k = testing::tile_ops::reduce_kernel();
  const auto inputs = testing::tile_ops::inputs(k, input_seed);
  const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
  REQUIRE(ir.ok());
  const auto c = planted(k, "const long long rj0 = rb0 + rk0 * 1LL;", "const long long rj0 = rb0 + (31 - rk0) * 1LL;");
  CHECK_THAT(caught(c, k, inputs, ir.buffers, 1), Contains("wrong result"));
}

TEST_CASE("host: a max over rows that are all negative is their largest element, in the interpreter and in the generated code", "[host][tile_ops]") {
  // Rows of 32 random values almost always hold a positive one, so a float max whose fold started
  // from 0 instead of its identity (the generated code starts from NaN, which fmaxf drops; -inf
  // would do as well) would still give every row's right maximum. Here every other row is all
  // negative: its maximum, and the softmax that subtracts it, must be the reference's.
  auto cases = testing::tile_ops::all();
  auto c = std::find_if(cases.begin(), cases.end(), [](auto const& t) { return std::string(t.name) == "tile_reduce"; });
  REQUIRE(c != cases.end());
  const auto& k = c->kernel;
  auto inputs = testing::tile_ops::inputs(k, input_seed);
  REQUIRE(k.params[0].name == "x");
  REQUIRE(k.params[3].name == "row_max");
  using testing::tile_ops::cols;
  using testing::tile_ops::rows;
  for (std::int64_t r = 0; r < rows; r += 2)
    for (std::int64_t col = 0; col < cols; ++col) inputs[0].set(r * cols + col, -std::abs(inputs[0].get(r * cols + col)) - 0.5);
  auto want = inputs;
  c->reference(want);
  for (std::int64_t r = 0; r < rows; r += 2) REQUIRE(want[3].get(r) < 0);  // the rows' maxima are negative: 0 would be wrong
  const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
  REQUIRE(ir.ok());
  INFO("interpreter against the reference: " << first_difference(k, ir.buffers, want));
  REQUIRE(first_difference(k, ir.buffers, want).empty());
  check_schedules(k, inputs, want, "the reference");
}

TEST_CASE("host: row reductions and broadcasts of wgmma accumulators (quad shuffles) compute the online softmax of the fragment-order reference",
          "[host][tile_ops][row_state]") {
  // The host runs the generated code: every thread folds its fragment registers of a row, then
  // two __shfl_xor_sync with its quad. Its row sums are associated (p0 + p1) + (p2 + p3), so it
  // must equal the reference in that association bit for bit; the interpreter's left-to-right
  // sums differ from it only by that rounding, and its maxima and minima not at all.
  namespace rs = testing::row_state;
  const auto k = rs::online_softmax_kernel();
  const auto inputs = rs::inputs(k, input_seed);
  auto by_quad = inputs, in_order = inputs;
  rs::reference(by_quad, rs::sum_by_quad);
  rs::reference(in_order, rs::sum_in_order);
  check_schedules(k, inputs, by_quad, "the fragment-order reference");
  const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
  REQUIRE(ir.ok());
  REQUIRE(first_difference(k, ir.buffers, in_order).empty());
  CHECK(ir.buffers[2].bytes == by_quad[2].bytes);  // m_out: a max does not depend on the order
  CHECK(ir.buffers[5].bytes == by_quad[5].bytes);  // row_min
  CHECK(ir.buffers[4].bytes != by_quad[4].bytes);  // row_sum: the orders do round differently here
  for (int p : {1, 3, 4})
    for (std::int64_t i = 0; i < by_quad[p].elements(); ++i) {
      const double a = ir.buffers[p].get(i), b = by_quad[p].get(i);
      INFO(k.params[p].name << "[" << i << "]: interpreter " << a << ", generated " << b);
      // 64 terms: 64 eps times the sum of magnitudes, at most 64 x 6 (row_sum) or 3 x 64 (l);
      // y = O / l is a ratio of two such sums of positive terms, so relatively as close.
      REQUIRE(std::abs(a - b) <= 64 * std::ldexp(1.0, -23) * (p == 1 ? 2.0 : 384.0));
    }
}

TEST_CASE("host: a row reduction whose butterfly skips a lane of the quad is caught", "[host][tile_ops][row_state]") {
  // xor 4 pairs the quad with the next quad (another row): the sums, maxima and softmax go wrong.
  namespace rs = testing::row_state;
  const auto k = rs::online_softmax_kernel();
  const auto inputs = rs::inputs(k, input_seed);
  auto want = inputs;
  rs::reference(want, rs::sum_by_quad);
  const auto c = planted(k, "__shfl_xor_sync(0xffffffffu, r0, 2)", "__shfl_xor_sync(0xffffffffu, r0, 4)");
  CHECK_THAT(caught(c, k, inputs, want, 1), Contains("wrong result"));
}

TEST_CASE("host: TMA element strides in the tensor map pick the rows that land, dropped or changed strides show", "[host]") {
  // downsample_rows: y = 2 * x[::2, :]; the load's map traverses 64 rows and lands every 2nd.
  const auto k = example("downsample_rows");
  const auto inputs = random_inputs(k, input_seed);
  const auto expected = reference_of("downsample_rows", inputs);
  {
    auto g = nvrtc::generate(k);
    REQUIRE(g.maps[0].elem_strides == std::vector<std::int64_t>{2, 1});
    CHECK(caught(hostexec::compile_generated(std::move(g), k), k, inputs, expected, 3).empty());
  }
  {
    // Dense 32 rows from the start of each footprint: the bytes add up, the rows are wrong.
    auto g = nvrtc::generate(k);
    g.maps[0].elem_strides = {};
    g.maps[0].box[0] = 32;
    CHECK_THAT(caught(hostexec::compile_generated(std::move(g), k), k, inputs, expected, 1), Contains("wrong result"));
  }
  {
    // Every 4th row of the same footprint: 16 rows land, half the bytes the barrier expects.
    auto g = nvrtc::generate(k);
    g.maps[0].elem_strides = {4, 1};
    const auto r = hostexec::run(hostexec::compile_generated(std::move(g), k), k, inputs, {});
    INFO(r.message);
    CHECK(r.kind == hostexec::failure::deadlock);
    CHECK_THAT(r.message, Contains("4096 tx byte(s) pending"));
  }
}

// ---- scale: waves, pooled stacks, address-space limits ------------------------------------------

namespace {

// RLIMIT_AS (ulimit -v) lowered to what the process maps now plus `extra` bytes, for the scope
// of the object; the old soft limit comes back after (the hard limit is never touched).
class address_limit {
 public:
  explicit address_limit(std::size_t extra) {
    REQUIRE(::getrlimit(RLIMIT_AS, &old_) == 0);
    std::size_t pages = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      REQUIRE(std::fscanf(f, "%zu", &pages) == 1);
      std::fclose(f);
    }
    rlimit l = old_;
    l.rlim_cur = pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) + extra;
    if (old_.rlim_max != RLIM_INFINITY && l.rlim_cur > old_.rlim_max) l.rlim_cur = old_.rlim_max;
    REQUIRE(::setrlimit(RLIMIT_AS, &l) == 0);
  }
  ~address_limit() { ::setrlimit(RLIMIT_AS, &old_); }
  address_limit(address_limit const&) = delete;
  address_limit& operator=(address_limit const&) = delete;

 private:
  rlimit old_{};
};

}  // namespace

TEST_CASE("host: 256 CTAs of add_one run in waves, equal the reference and replay exactly", "[host][scale]") {
  // 256 CTAs x 128 threads: all resident at once took two mappings per fiber stack, past
  // vm.max_map_count, and the run threw std::bad_alloc. With waves (4096 threads resident) the
  // reference schedule and seeded ones (1: uniform, 2: lazy) finish and replay.
  const param_values set{{"M", 32768}, {"N", 64}, {"splits", 1}};
  const auto k = example("add_one", set);
  REQUIRE(k.grid[0] * k.grid[1] * k.grid[2] == 256);
  const auto inputs = random_inputs(k, input_seed);
  const auto expected = reference_of("add_one", inputs, set);
  const auto c = hostexec::compile(k);
  for (std::uint64_t s : {0, 1, 2}) {
    INFO("host seed " << s);
    const auto a = hostexec::run(c, k, inputs, {.seed = s});
    INFO(a.message);
    REQUIRE(a.ok());
    CHECK(first_difference(k, a.buffers, expected).empty());
    const auto b = hostexec::run(c, k, inputs, {.seed = s});
    CHECK(a.steps == b.steps);
    CHECK(first_difference(k, a.buffers, b.buffers).empty());
  }
  // A deadlock in the first wave says that the rest of the grid was never resident: 32 of the
  // 256 CTAs (4096 threads) are.
  const auto stuck = planted(k, "sc::mbar_arrive_expect_tx(bar, 32768u);", "sc::mbar_arrive_expect_tx(bar, 32784u);");
  const auto r = hostexec::run(stuck, k, inputs, {});
  INFO(r.message);
  REQUIRE(r.kind == hostexec::failure::deadlock);
  CHECK_THAT(r.message, Contains("and 224 of the 256 clusters are not resident yet: at most 32 are resident at once (the host's cap of 4096 "
                                 "resident threads)"));
}

TEST_CASE("host: a thread that overflows its stack is reported as such, and the next run is clean", "[host][scale]") {
  const auto k = example("add_one");
  const auto inputs = random_inputs(k, input_seed);
  // Recursion planted at the kernel's start, 512 bytes a frame, far past the 128 KiB stack: it
  // must fault in the guard pages below the stack, not run into the stack of another thread.
  const auto c = planted(k, "SC_DYNAMIC_SMEM(smem);",
                         "SC_DYNAMIC_SMEM(smem);\n"
                         "  { auto deep = [](auto& self, int n) -> int { volatile char pad[512]; pad[0] = static_cast<char>(n);\n"
                         "      return n == 0 ? 0 : self(self, n - 1) + pad[0]; };\n"
                         "    if (deep(deep, 1 << 20) == 1) __syncthreads(); }");
  for (std::uint64_t s : {0, 1}) {
    const auto r = hostexec::run(c, k, inputs, {.seed = s});
    INFO("host seed " << s << ": " << r.message);
    REQUIRE(r.kind == hostexec::failure::memory_fault);
    CHECK_THAT(r.message, Contains("kernel 'add_one'") && Contains("overflowed its 128 KiB stack"));
  }
  // The overflowing fiber is abandoned; the pooled stacks of the next runs are sound.
  const auto expected = reference_of("add_one", inputs);
  for (std::uint64_t s : {0, 3}) {
    const auto r = hostexec::run(k, inputs, {.seed = s});
    INFO(r.message);
    REQUIRE(r.ok());
    CHECK(first_difference(k, r.buffers, expected).empty());
  }
}

TEST_CASE("host: under an address-space limit (ulimit -v) every SMEM offset still faults and the examples still equal the reference",
          "[host][scale]") {
  // With RLIMIT_AS finite and too small for a 4 GiB faulting tail per resident CTA, the CTAs'
  // SMEM slots share one tail and only the running CTA's slot is accessible. Before, the first
  // guarded mapping past the limit threw std::bad_alloc.
  const auto add_one = example("add_one");
  const auto add_inputs = random_inputs(add_one, input_seed);
  const auto add_expected = reference_of("add_one", add_inputs);
  const auto mc = example("multicast_scale");  // 2-CTA clusters: TMA multicast writes a peer's slot
  const auto mc_inputs = random_inputs(mc, input_seed);
  const auto mc_expected = reference_of("multicast_scale", mc_inputs);
  const auto ring = zoo::out_ring_indexed_by_step(zoo::variant::buggy);
  const auto ring_inputs = random_inputs(ring, input_seed);
  // The planted read of the next slot: add_one's SMEM (131104 bytes) rounded up to the page is
  // one slot, so this reads, at the same offset, the SMEM of the CTA in the next slot (CTA 1 of
  // the 8 resident under seed 0). It must fault: that slot is not the running CTA's.
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const auto code = nvrtc::generate(add_one);
  REQUIRE(code.smem_bytes == 131104);
  const std::size_t slot = (static_cast<std::size_t>(code.smem_bytes) + page - 1) / page * page;
  const auto next_slot = planted(add_one, "const uint4 raw0 = *reinterpret_cast<const uint4*>(&*reinterpret_cast<float*>(smem + 0 + ",
                                 fmt::format("const uint4 raw0 = *reinterpret_cast<const uint4*>(&*reinterpret_cast<float*>(smem + {} + ", slot));
  const auto c_add = hostexec::compile(add_one), c_mc = hostexec::compile(mc), c_ring = hostexec::compile(ring);

  const address_limit limit(std::size_t{6} << 30);  // 8 resident CTAs would need 32 GiB of tails
  for (std::uint64_t s = 0; s < 5; ++s) {
    INFO("host seed " << s);
    const auto a = hostexec::run(c_add, add_one, add_inputs, {.seed = s});
    INFO(a.message);
    REQUIRE(a.ok());
    CHECK(first_difference(add_one, a.buffers, add_expected).empty());
    const auto m = hostexec::run(c_mc, mc, mc_inputs, {.seed = s});
    INFO(m.message);
    REQUIRE(m.ok());
    CHECK(first_difference(mc, m.buffers, mc_expected).empty());
  }
  const auto r = hostexec::run(c_ring, ring, ring_inputs, {});
  INFO(r.message);
  REQUIRE(r.kind == hostexec::failure::memory_fault);
  CHECK_THAT(r.message, Contains("thread 0 (warpgroup 0, lane 0) accessed SMEM offset") && Contains("which has 98312 bytes"));
  const auto n = hostexec::run(next_slot, add_one, add_inputs, {});
  INFO(n.message);
  REQUIRE(n.kind == hostexec::failure::memory_fault);
  // Whichever thread reads first: an offset within the next slot's first stage.
  const std::string head = "accessed SMEM offset ", tail = " of CTA (0, 0, 0), which has 131104 bytes";
  const auto at = n.message.find(head), end = n.message.find(tail);
  REQUIRE(at != std::string::npos);
  REQUIRE(end != std::string::npos);
  const auto offset = std::stoull(n.message.substr(at + head.size(), end - at - head.size()));
  CHECK(offset >= slot);
  CHECK(offset < slot + 32768);
}

// ---- fast math mode (docs/codegen.md, "Math modes") ---------------------------------------------

TEST_CASE("host: fast math mode runs the approx primitives and contraction, within the fast-math bound of the reference and of the fast interpreter",
          "[host][fastmath]") {
  // The tile ops (exp, exp2, log, rsqrt, tanh, a row softmax), softmax_rows and layernorm_rows,
  // and the online softmax of row-vector accumulators (hoisted per-row rescale factors).
  struct one {
    std::string name;
    ir::Kernel kernel;
    std::vector<host_tensor> inputs, expected;
  };
  std::vector<one> cases;
  for (auto& c : testing::tile_ops::all()) {
    auto in = testing::tile_ops::inputs(c.kernel, input_seed);
    auto want = in;
    c.reference(want);
    cases.push_back({c.kernel.name, c.kernel, in, want});
  }
  for (auto const* name : {"softmax_rows", "layernorm_rows"}) {
    const auto k = example(name);
    const auto in = random_inputs(k, input_seed);
    cases.push_back({name, k, in, reference_of(name, in)});
  }
  {
    namespace rs = testing::row_state;
    const auto k = rs::online_softmax_kernel();
    const auto in = rs::inputs(k, input_seed);
    auto want = in;
    rs::reference(want, rs::sum_by_quad);
    cases.push_back({"online_softmax", k, in, want});
  }
  {
    // Row passes over TMEM: in fast math their f32 arithmetic is pairs (FFMA2, FADD2, FMUL2)
    // and a row sum two interleaved halves; the reference is the exact interpreter's run.
    const auto k = testing::tmem_rows::kernel();
    const auto in = random_inputs(k, input_seed);
    const auto exact = interp::run(k, in, {.schedule = interp::policy::eager});
    REQUIRE(exact.ok());
    cases.push_back({"tmem_rows", k, in, exact.buffers});
  }
  bool any_differs = false;
  for (auto const& c : cases) {
    INFO("kernel " << c.name);
    const auto fast = hostexec::compile(c.kernel, {.math = ir::math_mode::fast});
    const auto exact = hostexec::compile(c.kernel);
    CHECK(fast.code.options.math == ir::math_mode::fast);
    // Kernels with a transcendental or a float division call other functions in fast mode (the
    // others differ only in the compiler's -ffp-contract flag, which is in the object's key).
    const bool approximates = std::any_of(c.kernel.values.begin(), c.kernel.values.end(), [](ir::Value const& v) {
      return ir::dtype_is_float(v.dtype) && ir::fast_error_units(v.op) > 0;
    });
    if (approximates) CHECK(fast.translation_unit != exact.translation_unit);
    else CHECK(fast.translation_unit == exact.translation_unit);
    CHECK_THAT(fast.translation_unit, Contains("float approx_ex2(float x)"));
    const auto ir = interp::run(c.kernel, c.inputs, {.schedule = interp::policy::eager, .math = ir::math_mode::fast});
    REQUIRE(ir.ok());
    const auto tol = interp::tolerance_of(c.kernel, ir, c.inputs);
    const auto between = tol ? std::optional(interp::between_fast_runs(*tol)) : tol;
    for (int s = 0; s < 3; ++s) {
      INFO("host seed " << s);
      hostexec::options o;
      o.seed = static_cast<std::uint64_t>(s);
      const auto r = hostexec::run(fast, c.kernel, c.inputs, o);
      INFO(r.message);
      REQUIRE(r.ok());
      for (int p : interp::written_params(c.kernel))
        for (std::int64_t i = 0; i < r.buffers[p].elements(); ++i) {
          const double g = r.buffers[p].get(i), w = c.expected[p].get(i), x = ir.buffers[p].get(i);
          INFO(c.kernel.params[p].name << "[" << i << "]: host " << g << ", reference " << w << ", fast interpreter " << x);
          if (!tol) {  // nothing approximate (no transcendental, no multiply): bit for bit
            REQUIRE((g == w || (std::isnan(g) && std::isnan(w))));
            continue;
          }
          REQUIRE(tol->within(g, w, r.buffers[p].dtype, p));
          REQUIRE(between->within(g, x, r.buffers[p].dtype, p));
        }
      if (s == 0)
        for (int p : interp::written_params(c.kernel)) any_differs = any_differs || r.buffers[p].bytes != c.expected[p].bytes;
    }
  }
  CHECK(any_differs);  // the fast path computes other bits than the exact reference somewhere
}

TEST_CASE("host: named barriers hand a tile between warpgroups, and the missing first arrival deadlocks naming bar.sync's id", "[host][named_barrier]") {
  const auto fixed = zoo::named_no_initial_arrive(zoo::variant::fixed);
  const auto inputs = random_inputs(fixed, input_seed);
  auto expected = inputs;
  for (std::int64_t i = 0; i < inputs[0].elements(); ++i) expected[1].set(i, static_cast<float>(inputs[0].get(i)) * 2.0f + 1.0f);
  check_schedules(fixed, inputs, expected, "the reference");
  // User ids 0 (full) and 1 (empty) are hardware ids 9 and 10: each warpgroup's 128 threads wait
  // on the barrier the other would arrive at after its own wait.
  const auto buggy = zoo::named_no_initial_arrive(zoo::variant::buggy);
  const auto r = hostexec::run(buggy, inputs, {});
  INFO(r.message);
  REQUIRE(r.kind == hostexec::failure::deadlock);
  CHECK_THAT(r.message, Contains("kernel 'zoo_named_no_initial_arrive'") && Contains("wait(s) in bar.sync 10, 256: 128 of 256 threads arrived") &&
                            Contains("wait(s) in bar.sync 9, 256: 128 of 256 threads arrived"));
}

// Roles of one warp (threads(warpgroup, warp, warp)): the generated code's role, role-relative
// lane, elected issue and __syncwarp run on the host; the zoo's two warps hand a block over on a
// named barrier of 64 threads, and with the count a warpgroup's (128) the host deadlocks too.
TEST_CASE("host: single-warp roles hand a block over on a named barrier, and a warpgroup's count deadlocks", "[host][roles]") {
  const auto fixed = zoo::warp_named_count(zoo::variant::fixed);
  const auto inputs = random_inputs(fixed, input_seed);
  auto expected = inputs;
  expected[1] = inputs[0];
  check_schedules(fixed, inputs, expected, "the reference");
  const auto buggy = zoo::warp_named_count(zoo::variant::buggy);
  const auto r = hostexec::run(buggy, inputs, {});
  INFO(r.message);
  REQUIRE(r.kind == hostexec::failure::deadlock);
  CHECK_THAT(r.message, Contains("kernel 'zoo_warp_named_count'") && Contains("wait(s) in bar.sync 9, 128: 64 of 128 threads arrived"));
}

// Cluster launch control (ops/clc.hpp) on the host: a try_cancel cancels the first cluster of the
// launch order that is not resident yet, which then never starts. Seed 0 has every cluster
// resident (each CTA takes its own tile), other seeds hold only a few at once, so CTAs take over
// others' tiles; every tile is done once, by some CTA, and the zoo's mistakes fail here too.
TEST_CASE("host: cluster launch control hands tiles of CTAs not yet resident to running ones, each tile done once", "[host][clc]") {
  constexpr std::int64_t tiles = 6;
  const auto k = testing::clc_owner(tiles);
  const auto inputs = random_inputs(k, input_seed);
  const auto c = hostexec::compile(k);
  std::set<std::vector<std::int32_t>> seen;
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    INFO("host seed " << seed);
    hostexec::options o;
    o.seed = seed;
    const auto r = hostexec::run(c, k, inputs, o);
    INFO(r.message);
    REQUIRE(r.ok());
    std::vector<std::int32_t> who;
    for (std::int64_t t = 0; t < tiles; ++t) {
      const auto w = static_cast<std::int32_t>(r.buffers[0].get(t * 32));
      for (std::int64_t j = 1; j < 32; ++j) REQUIRE(static_cast<std::int32_t>(r.buffers[0].get(t * 32 + j)) == w);
      REQUIRE((w >= 0 && w < tiles));
      who.push_back(w);
    }
    if (seed == 0) CHECK(who == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5});  // every cluster resident: nothing to cancel
    seen.insert(who);
  }
  CHECK(seen.size() > 1);  // some seeds cancel
  // gemm_blackwell clc=1: equal to the interpreter under five host schedules.
  auto const& e = registry::global().find("gemm_blackwell");
  const auto g = e.build(registry::resolve(e, {{"M", 512}, {"N", 512}, {"K", 128}, {"clc", 1}}));
  const auto gin = random_inputs(g, input_seed);
  const auto ir = interp::run(g, gin, {});
  REQUIRE(ir.ok());
  check_schedules(g, gin, ir.buffers, "the interpreter");
  // A try_cancel after the CTA read a failure (every cluster resident at seed 0: the first fails).
  const auto bad = testing::clc_owner<testing::clc_mistake::skip_not_stop>(tiles);
  const auto rb = hostexec::run(bad, random_inputs(bad, input_seed), {});
  CHECK(rb.kind == hostexec::failure::protocol);
  CHECK_THAT(rb.message, Contains("clusterlaunchcontrol.try_cancel after its CTA read a failed response: undefined"));
}

// Value-returning atomics (ops/atomic.hpp) on the host: the generated sc::atom_fetch, its slot
// and fetched(slot) give each tile to one CTA under every host schedule (which CTA is the
// schedule's), hand tickets between warpgroups, compute what the interpreter computes for each
// op, and publish a CTA's writes to a later one.
TEST_CASE("host: atomics that return what the counter held hand out tickets, relay them and equal the interpreter", "[host][atomic]") {
  auto each_tile_once = [](ir::Kernel const& k, std::int64_t tiles, std::int64_t ctas) {
    auto inputs = random_inputs(k, input_seed);
    for (std::int64_t i = 0; i < inputs[0].elements(); ++i) inputs[0].set(i, -1);
    for_schedules(k, inputs, [&](std::vector<host_tensor> const& got) {
      for (std::int64_t t = 0; t < tiles; ++t) {
        const auto w = static_cast<std::int64_t>(got[0].get(t * 32));
        INFO("tile " << t);
        REQUIRE((w >= 0 && w < ctas));
        for (std::int64_t j = 1; j < 32; ++j) REQUIRE(static_cast<std::int64_t>(got[0].get(t * 32 + j)) == w);
      }
    });
  };
  each_tile_once(testing::atomic_tickets(3, 7), 7, 3);
  each_tile_once(testing::atomic_relay(9), 9, 2);
  const auto g = nvrtc::generate(testing::atomic_tickets(3, 7));
  CHECK_THAT(g.source, Contains("sc::atom_fetch<0, 0, 0>(p_next + "));
  const auto k = testing::atomic_each_op();
  const auto inputs = random_inputs(k, input_seed);
  const auto ir = interp::run(k, inputs, {.schedule = interp::policy::eager});
  INFO((ir.ok() ? std::string() : ir.diagnostics.front().message));
  REQUIRE(ir.ok());
  check_schedules(k, inputs, ir.buffers, "the interpreter");
  // The publish: the host draws the CTAs' order from its seed, so CTA 1 reads the flag before or
  // after CTA 0 sets it: z is untouched, or 2 (x + 1) as the interpreter (launch order) has it.
  const auto p = testing::atomic_publish(memory_order::release, memory_order::acquire);
  const auto pin = random_inputs(p, input_seed);
  const auto pir = interp::run(p, pin, {.schedule = interp::policy::eager});
  REQUIRE(pir.ok());
  for_schedules(p, pin, [&](std::vector<host_tensor> const& got) {
    CHECK((got[2].bytes == pin[2].bytes || got[2].bytes == pir.buffers[2].bytes));
    CHECK(got[1].bytes == pir.buffers[1].bytes);
  });
  // gemm_hopper tickets=1: the producer, one warp, takes the tickets (its atomic syncs that warp
  // alone: a warpgroup sync there would wait for warps that never come) and hands them on; equal
  // to the interpreter under five host schedules, which interleave the CTAs (so the tiles go
  // elsewhere than in the interpreter, whose clusters run one after another).
  auto const& e = registry::global().find("gemm_hopper");
  const auto gh = e.build(registry::resolve(e, {{"M", 512}, {"N", 768}, {"K", 128}, {"cluster", 1}, {"ctas", 3}, {"tickets", 1}}));
  const auto ghin = random_inputs(gh, input_seed);
  const auto ghir = interp::run(gh, ghin, {});
  REQUIRE(ghir.ok());
  check_schedules(gh, ghin, ghir.buffers, "the interpreter");
}

// Reducing stores (ops/reduce.hpp): the generated red.global and cp.reduce.async.bulk.tensor
// calls run on the host's runtime and land the interpreter's bits under every host schedule.
// Integer-valued inputs: f32 sums are exact in any order, so the CTAs' order does not show.
TEST_CASE("host: reducing stores (red.global and the TMA reduce) equal the interpreter", "[host][reduce]") {
  const auto kernels = {testing::reduce_probe<f32, ir::Reduce::add, false>("reduce_add_f32"),
                        testing::reduce_probe<f32, ir::Reduce::add, true>("reduce_add_f32_tma"),
                        testing::reduce_probe<i32, ir::Reduce::add, true>("reduce_add_i32_tma"),
                        testing::reduce_probe<i32, ir::Reduce::min, false>("reduce_min_i32"),
                        testing::reduce_probe<u32, ir::Reduce::max, true>("reduce_max_u32_tma"),
                        testing::reduce_then_read<false>()};
  for (auto const& k : kernels) {
    INFO("kernel " << k.name);
    const auto inputs = testing::integer_buffers(k, input_seed);
    const auto expected = interp::run(k, inputs, {});
    REQUIRE(expected.ok());
    check_schedules(k, inputs, expected.buffers, "the interpreter");
  }
}

// Grid-wide semaphores (ops/semaphore.hpp): the serial split-K runs on the host under every
// schedule and lands the interpreter's bits (its f32 sum in slice order), and the zoo's wait on
// a counter nobody signals is the host's deadlock too, naming the counter.
TEST_CASE("host: semaphores order the serial split-K's slices, and a wait nobody signals deadlocks naming the counter", "[host][semaphore]") {
  const auto k = example("splitk_serial");
  const auto inputs = random_inputs(k, input_seed);
  const auto expected = interp::run(k, inputs, {});
  REQUIRE(expected.ok());
  check_schedules(k, inputs, expected.buffers, "the interpreter");
  const auto buggy = zoo::semaphore_never_signalled(zoo::variant::buggy);
  const auto r = hostexec::run(buggy, random_inputs(buggy, input_seed), {});
  INFO(r.message);
  REQUIRE(r.kind == hostexec::failure::deadlock);
  CHECK_THAT(r.message, Contains("kernel 'zoo_semaphore_never_signalled'") && Contains("wait(s) in semaphore_wait for 'turn' element 1 to hold 1 (it holds 0)"));
}
