// Every complete kernel shown in docs/reference.md, verbatim. Each region between
// `// snippet: NAME` and `// end snippet` must equal the ```cpp block that follows
// `<!-- snippet: NAME -->` in the document (test docs.reference.snippets), so the page can only
// show code that compiles, lowers and, where a backend runs it, gives the right answer.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/nvrtc/codegen.hpp>
#include <stagecraft/stagecraft.hpp>

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {

// snippet: stream_ring
// y = 2x + 1 over (M, N) f32: K TMA loads in flight, two output slots stored with TMA.
template <long long K>
auto stream_ring(std::int64_t M, std::int64_t N) {
  const std::int64_t steps = N / 64;
  return kernel<sm_90a>("stream_ring", grid(M / 64), threads(1_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)),
      smem<f32>(shape(int_c<K>, 64_c, 64_c)),     // in:  (stage, row, col)
      smem<f32>(shape(2_c, 64_c, 64_c)),          // out: (slot, row, col)
      barrier(arrivals(1_c), count(int_c<K>)),    // full[stage]
      [&](auto x, auto y, auto in, auto out, auto full) {
        auto row = program_id();
        auto load_step = [&](auto s) {            // s: a stage cursor, s.step its step number
          return if_(s.step < steps, copy_gmem_to_smem(x.block(row, s.step), in[s], full[s]));
        };
        auto prologue = for_(range(int_c<K>), [&](auto j) { return load_step(stage<K>(j)); });
        auto main_loop = for_(range(steps), [&](auto j) {
          auto s = stage<K>(j);
          auto o = stage<2>(j);
          return seq(barrier_wait(full[s]),
                     wait_smem_to_gmem(1_c, read_only),  // out[o]'s store of step j-2 has read it
                     store(out[o], load(in[s]) * 2.0f + 1.0f),
                     commit_smem(),                      // make the generic writes visible to TMA
                     copy_smem_to_gmem(out[o], y.block(row, j)),
                     commit_smem_to_gmem_group(),
                     load_step(s.advance(int_c<K>)));    // refill in[s] with step j + K
        });
        return seq(prologue, main_loop, wait_smem_to_gmem(0_c));
      });
}
// end snippet

// snippet: cluster_share
// y = x * w for x (M, N) and w (128, N): the 2 CTAs of a cluster need the same w blocks, so
// each block is loaded once per cluster (multicast), and a cluster barrier says when both CTAs
// are done with a stage of ws, which the next multicast overwrites in both.
auto cluster_share(std::int64_t M, std::int64_t N) {
  const std::int64_t steps = N / 64;
  return kernel<sm_90a>("cluster_share", grid(M / 128), threads(1_c), cluster(2_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("w", shape(128_c, N)), gmem<f32>("y", shape(M, N)),
      smem<f32>(shape(2_c, 128_c, 64_c)),                                 // xs: (stage, row, col)
      smem<f32>(shape(2_c, 128_c, 64_c)),                                 // ws: (stage, row, col)
      barrier(arrivals(2_c), count(2_c)),                                 // full[stage]: x's and w's copy
      cluster_barrier(collective_axes(0_c), arrivals(1_c), count(2_c)),   // freed[stage]: one per CTA
      [&](auto x, auto w, auto y, auto xs, auto ws, auto full, auto freed) {
        auto row = program_id();
        auto load_step = [&](auto s) {
          return seq(copy_gmem_to_smem(x.block(row, s.step), xs[s], full[s]),
                     copy_gmem_to_smem(w.block(0_c, s.step), ws[s], full[s], collective_axes(0_c)));
        };
        auto prologue = for_(range(2_c), [&](auto j) { return if_(j < steps, load_step(stage<2>(j))); });
        auto main_loop = for_(range(steps), [&](auto j) {
          auto s = stage<2>(j);
          auto next = s.advance(2_c);
          return seq(barrier_wait(full[s]),
                     store(y.tile(shape(128_c, 64_c), row, j), load(xs[s]) * load(ws[s])),
                     if_(next.step < steps,
                         seq(barrier_arrive(freed[s]),   // arrives on freed[s] of both CTAs
                             barrier_wait(freed[s]),     // both have read ws[s]: overwrite it
                             load_step(next))));
        });
        return seq(prologue, main_loop);
      });
}
// end snippet

// snippet: pipelined
// y = x + z with emit_pipeline: K steps in flight; z's stage is released one step late.
template <long long K>
auto pipelined(std::int64_t M, std::int64_t N) {
  return kernel<sm_90a>("pipelined", grid(M / 64), threads(1_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("z", shape(M, N)), gmem<f32>("y", shape(M, N)),
      smem<f32>(shape(int_c<K>, 64_c, 64_c)),     // xs: (stage, row, col)
      smem<f32>(shape(int_c<K>, 64_c, 64_c)),     // zs
      smem<f32>(shape(int_c<K>, 64_c, 64_c)),     // ys
      barrier(arrivals(2_c), count(int_c<K>)),    // full[stage]: one arrival per input
      [&](auto x, auto z, auto y, auto xs, auto zs, auto ys, auto full) {
        auto row = program_id();
        return emit_pipeline<K>(N / 64, full,
            ins(in(x, xs, [&](auto j) { return x.block(row, j); }),
                in(z, zs, [&](auto j) { return z.block(row, j); }, delay_release<1>)),
            outs(out(y, ys, [&](auto j) { return y.block(row, j); })),
            [&](auto, auto x_view, auto z_view, auto y_view) { return store(y_view, load(x_view) + load(z_view)); });
      });
}
// end snippet

// snippet: ws_scale
// y = 3x: warpgroup 0 loads every step, warpgroups 1 and 2 take alternate steps.
template <long long K>
auto ws_scale(std::int64_t M, std::int64_t N) {
  return kernel<sm_90a>("ws_scale", grid(M / 64), threads(3_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)),
      smem<f32>(shape(int_c<K>, 64_c, 64_c)),     // xs: (stage, row, col)
      barrier(arrivals(1_c), count(int_c<K>)),    // ready[stage]: one arrival per input
      barrier(arrivals(2_c), count(int_c<K>)),    // consumed[stage]: one per consumer
      [&](auto x, auto y, auto xs, auto ready, auto consumed) {
        auto row = program_id();
        return emit_pipeline_warp_specialized<K, 2>(N / 64, ready, consumed,
            ins(in(x, xs, [&](auto j) { return x.block(row, j); })),
            [&](auto j, auto c, auto x_view) {
              return if_(j % 2_c == c, store(y.tile(shape(64_c, 64_c), row, j), load(x_view) * 3.0f));
            });
      });
}
// end snippet

// snippet: hopper_mma
// D = A B on Hopper, one 64x64x64 wgmma (f16 in, f32 accumulate in registers).
auto hopper_mma() {
  return kernel<sm_90a>("hopper_mma", grid(1), threads(1_c),
      gmem<f16>("a", shape(64_c, 64_c)), gmem<f16>("b", shape(64_c, 64_c)), gmem<f32>("d", shape(64_c, 64_c)),
      smem<f16>(shape(64_c, 64_c), swizzle(128_c)),    // as
      smem<f16>(shape(64_c, 64_c), swizzle(128_c)),    // bs
      smem<f32>(shape(64_c, 64_c)),                    // ds
      accumulator<f32>(shape(64_c, 64_c)),             // acc: the warpgroup's registers
      barrier(arrivals(2_c)),                          // loaded: one barrier, both copies
      [](auto a, auto b, auto d, auto as, auto bs, auto ds, auto acc, auto loaded) {
        return seq(copy_gmem_to_smem(a.block(0_c, 0_c), as, loaded),
                   copy_gmem_to_smem(b.block(0_c, 0_c), bs, loaded),
                   barrier_wait(loaded),
                   store(acc, 0.0f), wgmma(acc, as, bs), wgmma_commit(), wgmma_wait(0_c),
                   store(ds, load(acc)), commit_smem(),
                   copy_smem_to_gmem(ds, d.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      });
}
// end snippet

// snippet: blackwell_mma
// D = A B on Blackwell, one 128x64x64 tcgen05 MMA (bf16 in, f32 accumulate in TMEM).
auto blackwell_mma() {
  return kernel<sm_100a>("blackwell_mma", grid(1), threads(1_c),
      gmem<bf16>("a", shape(128_c, 64_c)), gmem<bf16>("b", shape(64_c, 64_c)), gmem<f32>("d", shape(128_c, 64_c)),
      smem<bf16>(shape(128_c, 64_c), swizzle(128_c)),    // as
      smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),     // bs
      smem<f32>(shape(128_c, 64_c)),                     // ds
      tmem<f32>(shape(128_c, 64_c)),                     // acc: 64 TMEM columns
      barrier(arrivals(2_c)),                            // loaded
      barrier(arrivals(1_c), orders_tensor_core),        // mma_done
      [](auto a, auto b, auto d, auto as, auto bs, auto ds, auto acc, auto loaded, auto mma_done) {
        return seq(copy_gmem_to_smem(a.block(0_c, 0_c), as, loaded),
                   copy_gmem_to_smem(b.block(0_c, 0_c), bs, loaded),
                   barrier_wait(loaded),
                   tcgen05_mma(acc, as, bs, false),      // false: overwrite, do not accumulate
                   tcgen05_commit_arrive(mma_done),      // arrives when the MMA has completed
                   barrier_wait(mma_done),
                   store(ds, async_load_tmem(acc)),
                   tmem_dealloc(acc),                    // D is read: free its TMEM
                   commit_smem(),
                   copy_smem_to_gmem(ds, d.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      });
}
// end snippet

std::vector<host_tensor> random_inputs(ir::Kernel const& k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<host_tensor> out;
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < t.elements(); ++i) t.set(i, dist(rng));
    out.push_back(std::move(t));
  }
  return out;
}

// Runs `k` under eager, lazy and a few PCT schedules; every run must be clean and produce what
// `expect(inputs, index)` says for every element of output `out`.
template <class Expect>
void run_everywhere(ir::Kernel const& k, int out, Expect expect) {
  const std::uint64_t seed = 20261201;
  const auto inputs = random_inputs(k, seed);
  INFO("kernel " << k.name << ", input seed " << seed);
  std::vector<interp::options> runs{{.schedule = interp::policy::eager}, {.schedule = interp::policy::lazy}};
  for (std::uint64_t s = 1; s <= 4; ++s) runs.push_back({.schedule = interp::policy::pct, .seed = s});
  for (auto const& o : runs) {
    INFO("policy " << interp::policy_name(o.schedule) << ", seed " << o.seed);
    const auto r = interp::run(k, inputs, o);
    for (auto const& d : r.diagnostics) FAIL_CHECK(d.message);
    REQUIRE(r.ok());
    auto const& y = r.buffers[static_cast<std::size_t>(out)];
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < y.elements(); ++i)
      if (y.get(i) != expect(inputs, i)) ++wrong;
    CHECK(wrong == 0);
  }
}

}  // namespace

TEST_CASE("reference.md: stream_ring lowers and computes 2x + 1 under every schedule", "[reference][docs]") {
  const auto k = lower(stream_ring<3>(128, 512));
  CHECK(k.grid[0] == 2);
  CHECK_THAT(ir::print(k), Contains("wait_smem_to_gmem 1 read_only"));
  run_everywhere(k, 1, [](auto const& in, std::int64_t i) { return static_cast<double>(static_cast<float>(in[0].get(i)) * 2.0f + 1.0f); });
}

TEST_CASE("reference.md: cluster_share multicasts w and hands stages back with a cluster barrier", "[reference][docs]") {
  const std::int64_t M = 512, N = 256;
  const auto k = lower(cluster_share(M, N));
  const auto text = ir::print(k);
  CHECK_THAT(text, Contains("cluster=(2)"));
  CHECK_THAT(text, Contains("multicast over cluster axes (0)"));
  CHECK_THAT(text, Contains("collective_axes=(0)"));
  run_everywhere(k, 2, [&](auto const& in, std::int64_t i) {
    const std::int64_t r = i / N, c = i % N;
    return static_cast<double>(static_cast<float>(in[0].get(i)) * static_cast<float>(in[1].get((r % 128) * N + c)));
  });
}

TEST_CASE("reference.md: the emit_pipeline snippets lower and compute their results", "[reference][docs]") {
  run_everywhere(lower(pipelined<2>(128, 384)), 2, [](auto const& in, std::int64_t i) {
    return static_cast<double>(static_cast<float>(in[0].get(i)) + static_cast<float>(in[1].get(i)));
  });
  const auto ws = lower(ws_scale<2>(128, 384));
  CHECK(ws.roles == 3);
  run_everywhere(ws, 1, [](auto const& in, std::int64_t i) { return static_cast<double>(static_cast<float>(in[0].get(i)) * 3.0f); });
}

// What reference.md says of the tensor-core ops: they type-check and lower; the interpreter
// runs wgmma and tcgen05 (hopper_mma and blackwell_mma within the MMA tolerance of D = A B);
// the code generator emits both (tcgen05 with its TMEM allocation and dealloc).
TEST_CASE("reference.md: wgmma and tcgen05 run in the interpreter and both generate", "[reference][docs]") {
  {
    const auto k = lower(hopper_mma());
    const auto in = random_inputs(k, 7);
    const auto r = interp::run(k, in);
    INFO("interpreter: " << (r.ok() ? std::string("ok") : r.diagnostics.front().message));
    REQUIRE(r.ok());
    const auto tol = interp::tolerance_of(k, r, in);
    REQUIRE(tol.has_value());
    CHECK(tol->k == 64);
    for (std::int64_t i = 0; i < 64; ++i)
      for (std::int64_t j = 0; j < 64; ++j) {
        double want = 0;  // as stored: a (M, K), b (K, N)
        for (std::int64_t x = 0; x < 64; ++x) want += in[0].get(i * 64 + x) * in[1].get(x * 64 + j);
        REQUIRE(std::abs(r.buffers[2].get(i * 64 + j) - want) <= tol->bound(want, ir::DType::f32));
      }
  }
  {
    // B stored (K, N): read N-major, through the transpose bit of the instruction descriptor.
    const auto k = lower(blackwell_mma());
    const auto in = random_inputs(k, 7);
    const auto r = interp::run(k, in);
    INFO("interpreter: " << (r.ok() ? std::string("ok") : r.diagnostics.front().message));
    REQUIRE(r.ok());
    const auto tol = interp::tolerance_of(k, r, in);
    REQUIRE(tol.has_value());
    CHECK(tol->k == 64);
    for (std::int64_t i = 0; i < 128; ++i)
      for (std::int64_t j = 0; j < 64; ++j) {
        double want = 0;
        for (std::int64_t x = 0; x < 64; ++x) want += in[0].get(i * 64 + x) * in[1].get(x * 64 + j);
        REQUIRE(std::abs(r.buffers[2].get(i * 64 + j) - want) <= tol->bound(want, ir::DType::f32));
      }
  }
  CHECK_THAT(nvrtc::generate(lower(hopper_mma())).source, Contains("wgmma.mma_async.sync.aligned.m64n"));
  CHECK_THAT(nvrtc::generate(lower(blackwell_mma())).source,
             Contains("sc::tmem_alloc(") && Contains("sc::tc_mma_f16(") && Contains("sc::tc_commit(") && Contains("sc::tmem_ld_32x32b_x") &&
                 Contains("sc::tmem_dealloc("));
  CHECK_THAT(ir::print(lower(hopper_mma())), Contains("wgmma acc3 += s0 * s1"));
  CHECK(ir::tmem_columns(lower(blackwell_mma())) == 64);
}
