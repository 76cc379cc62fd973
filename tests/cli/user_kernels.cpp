// A user's own program over stagecraft::cli::main, with kernels whose parameter specs are looser
// than their code: values that pass the specs still make a kernel its ops do not allow. Each of
// those is the user's mistake and must come back as a usage error (exit 64) with the numbers,
// not as "internal error, please report a bug" (exit 70).
#include <stagecraft/cli.hpp>
#include <stagecraft/stagecraft.hpp>

using namespace stagecraft;

namespace {

// y = x + 1 over (M, 64) in 128-row tiles, one CTA per tile. The spec forgets that M must be a
// multiple of 128: M = 64 gives a grid of 0, M = 192 a tile that does not divide the rows.
ir::Kernel tiles(std::int64_t M) {
  return lower(kernel<sm_90a>("tiles", grid(M / 128), threads(1_c), gmem<f32>("x", shape(M, 64_c)), gmem<f32>("y", shape(M, 64_c)),
                              [&](auto x, auto y) {
                                auto t = [&](auto g) { return g.tile(shape(128_c, 64_c), program_id(), 0_c); };
                                return store(t(y), load(t(x)) + 1.0f);
                              }));
}

// The same over clusters of two CTAs: an odd number of tiles is a grid the cluster does not divide.
ir::Kernel pairs(std::int64_t tiles) {
  return lower(kernel<sm_90a>("pairs", grid(tiles), threads(1_c), cluster(2_c), gmem<f32>("x", shape(tiles * 128, 64_c)),
                              gmem<f32>("y", shape(tiles * 128, 64_c)), [&](auto x, auto y) {
                                auto t = [&](auto g) { return g.tile(shape(128_c, 64_c), program_id(), 0_c); };
                                return store(t(y), load(t(x)) + 1.0f);
                              }));
}

// A Hopper wgmma kernel: `ptx --arch sm_100a` asks for a target it cannot run on.
ir::Kernel mma() {
  return lower(kernel<sm_90a>("mma", grid(1), threads(1_c), smem<f16>(shape(64_c, 64_c), swizzle(128_c)),
                              smem<f16>(shape(64_c, 64_c), swizzle(128_c)), accumulator<f32>(shape(64_c, 64_c)),
                              [](auto a, auto b, auto acc) {
                                return seq(store(acc, 0.0f), wgmma(acc, a, b), wgmma_wait(0_c), store(a, cast<f16>(load(acc))),
                                           commit_smem());
                              }));
}

// One Blackwell tcgen05 MMA, C = A * B^T (128x64x64), whose author forgot tmem_dealloc: a
// protocol mistake in the user's kernel (exit 2), not a bug in the library (exit 70).
// direct: the epilogue stores TMEM straight to GMEM (registers, no SMEM staging), as a user
// wrote it; `ptx` once refused that kernel with `--arch sm_90a`, its default (issue 27, edge 1).
ir::Kernel tmem_gemm(bool frees, bool direct) {
  return lower(kernel<sm_100a>(
      "tmem_gemm", grid(1), threads(1_c), gmem<bf16>("a", shape(128_c, 64_c)), gmem<bf16>("b", shape(64_c, 64_c)),
      gmem<f32>("c", shape(128_c, 64_c)), smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
      smem<f32>(shape(128_c, 64_c)), barrier(arrivals(2_c)), barrier(arrivals(1_c), orders_tensor_core), tmem<f32>(shape(128_c, 64_c)),
      [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto done, auto d) {
        auto read = seq(barrier_wait(done), store(cs, async_load_tmem(d)));
        auto out = seq(commit_smem(), copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
        auto mma = seq(copy_gmem_to_smem(a.block(0_c, 0_c), as, loaded), copy_gmem_to_smem(b.block(0_c, 0_c), bs, loaded), barrier_wait(loaded),
                       tcgen05_mma(d, as, transpose(bs), false), tcgen05_commit_arrive(done));
        if (direct) return seq(mma, barrier_wait(done), store(c.tile(shape(128_c, 64_c), 0_c, 0_c), async_load_tmem(d)), tmem_dealloc(d));
        if (frees) return seq(mma, read, tmem_dealloc(d), out);
        return seq(mma, read, out);  // MISTAKE: no tmem_dealloc(d)
      }));
}

// RMSNorm as a user first writes it, one expression (issue 27, rough edge 2): the row sum sits
// inside the stored expression, and the generated code folds it again for each of the row's 128
// elements. hoisted = 1 stores 1/rms into a tile of its own first: once per row.
ir::Kernel rmsnorm(bool hoisted) {
  return lower(kernel<sm_90a>(
      "rmsnorm", grid(4), threads(1_c), gmem<f32>("x", shape(64_c, 128_c)), gmem<f32>("w", shape(128_c)), gmem<f32>("y", shape(64_c, 128_c)),
      smem<f32>(shape(16_c)),  // 1 / rms of each row of the block (hoisted = 1)
      [&](auto x, auto w, auto y, auto inv) {
        auto X = load(x.tile(shape(16_c, 128_c), program_id(), 0_c));
        auto W = broadcast<0>(load(w.tile(shape(128_c), 0_c)), X);
        auto out = y.tile(shape(16_c, 128_c), program_id(), 0_c);
        auto inv_rms = rsqrt(sum<1>(X * X) / 128.0f + 1e-6f);  // (16): one per row
        if (hoisted) return seq(store(inv, inv_rms), store(out, X * broadcast<1>(load(inv), X) * W));
        return seq(store(out, X * broadcast<1>(inv_rms, X) * W));
      }));
}

void rmsnorm_reference(std::vector<host_tensor>& t, param_values const&) {  // in the kernel's f32 order
  for (std::int64_t r = 0; r < 64; ++r) {
    float ss = -0.0f;
    for (std::int64_t c = 0; c < 128; ++c) ss = ss + static_cast<float>(t[0].get(r * 128 + c)) * static_cast<float>(t[0].get(r * 128 + c));
    const float inv = 1.0f / __builtin_sqrtf(ss / 128.0f + 1e-6f);  // as the interpreter: two correctly rounded ops
    for (std::int64_t c = 0; c < 128; ++c) t[2].set(r * 128 + c, static_cast<float>(t[0].get(r * 128 + c)) * inv * static_cast<float>(t[1].get(c)));
  }
}

void gemm_abt(std::vector<host_tensor>& t, param_values const&) {
  for (std::int64_t m = 0; m < 128; ++m)
    for (std::int64_t n = 0; n < 64; ++n) {
      double acc = 0;
      for (std::int64_t k = 0; k < 64; ++k) acc += t[0].get(m * 64 + k) * t[1].get(n * 64 + k);
      t[2].set(m * 64 + n, acc);
    }
}

void plus_one(std::vector<host_tensor>& t, param_values const&) {
  auto x = t[0].as<float>();
  auto y = t[1].as<float>();
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] + 1.0f;
}

registry user_kernels() {
  registry r;
  r.add({.name = "tiles",
         .summary = "y = x + 1 in 128-row tiles (M's spec lacks multiple_of = 128)",
         .params = {{.name = "M", .default_value = 256, .help = "rows", .max = 1 << 20}},
         .build = [](param_values const& p) { return tiles(p.at("M")); },
         .reference = plus_one});
  r.add({.name = "pairs",
         .summary = "y = x + 1 in 128-row tiles over clusters of 2 CTAs (the spec allows odd tile counts)",
         .params = {{.name = "tiles", .default_value = 2, .help = "128-row tiles (grid x)", .max = 64}},
         .build = [](param_values const& p) { return pairs(p.at("tiles")); },
         .reference = plus_one});
  // A reference with a typo in a parameter name: std::out_of_range from deep inside a run.
  r.add({.name = "typo",
         .summary = "tiles, whose reference reads a parameter that does not exist",
         .params = {{.name = "M", .default_value = 128, .help = "rows", .max = 1 << 20}},
         .build = [](param_values const& p) { return tiles(p.at("M")); },
         .reference = [](std::vector<host_tensor>& t, param_values const& p) { t.at(static_cast<std::size_t>(p.at("N"))); }});
  r.add({.name = "mma",
         .summary = "one Hopper wgmma, 64x64x64",
         .params = {},
         .build = [](param_values const&) { return mma(); },
         .reference = [](std::vector<host_tensor>&, param_values const&) {}});
  r.add({.name = "rmsnorm",
         .summary = "RMSNorm of 64 x 128 f32; hoisted=0: one expression, the row sum inside it",
         .params = {{.name = "hoisted", .default_value = 0, .help = "1: 1/rms stored into a tile first", .allowed = {0, 1}}},
         .build = [](param_values const& p) { return rmsnorm(p.at("hoisted") != 0); },
         .reference = rmsnorm_reference});
  r.add({.name = "tmem_gemm",
         .summary = "one tcgen05 MMA into TMEM; frees=0 forgets tmem_dealloc",
         .params = {{.name = "frees", .default_value = 0, .help = "1: the kernel frees its TMEM", .allowed = {0, 1}},
                    {.name = "direct", .default_value = 0, .help = "1: TMEM straight to GMEM (and freed)", .allowed = {0, 1}}},
         .build = [](param_values const& p) { return tmem_gemm(p.at("frees") != 0, p.at("direct") != 0); },
         .reference = gemm_abt});
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  static const registry kernels = user_kernels();
  return cli::main(argc, argv, kernels);
}
