// C = A * B^T, bf16 in, f32 accumulate, bf16 out: the warp-specialized Hopper GEMM.
//
// Each CTA owns a 128 x 256 tile of C. Warpgroup 0 (the producer) streams 64-wide K slices of A
// (128 x 64, as two 64-row halves) and B (256 x 64) through an S-deep ring of 128-byte swizzled
// stages with TMA; warpgroups 1 and 2 (the consumers) each own one 64-row half of the tile and
// a 64 x 256 f32 accumulator in registers (128 per thread). Per stage a consumer issues one wgmma
// over the slice (4 instructions of m64n256k16), waits for it and releases the stage to the
// producer. The epilogue rounds to bf16 into SMEM, and one TMA store per consumer writes it out.
//
// A is declared (M/64, 64, K) -- the same bytes as (M, K) -- so that one TMA box lands as a
// (2, 64, 64) stage whose halves the two consumers index (as in ws_copy).
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

constexpr long long BM = 128, BN = 256, BK = 64;

template <long long S>
auto gemm_hopper(std::int64_t M, std::int64_t N, std::int64_t K) {
  return kernel<sm_90a>(
      "gemm_hopper", grid(N / BN, M / BM), threads(3_c),
      gmem<bf16>("a", shape(M / 64, 64_c, K)),                        // (m / 64, m % 64, k)
      gmem<bf16>("b", shape(N, K)),                                   // (n, k): C = A * B^T
      gmem<bf16>("c", shape(M, N)),                                   // (m, n)
      smem<bf16>(shape(int_c<S>, 2_c, 64_c, int_c<BK>), swizzle(128_c)),    // as: (stage, half, m, k), K-major
      smem<bf16>(shape(int_c<S>, int_c<BN>, int_c<BK>), swizzle(128_c)),   // bs: (stage, n, k), K-major
      smem<bf16>(shape(2_c, 64_c, int_c<BN>)),                        // cs: each consumer's half of the C tile
      barrier(arrivals(2_c), count(int_c<S>)),                        // ready[stage]: A and B landed
      barrier(arrivals(2_c), count(int_c<S>)),                        // consumed[stage]: both consumers are done
      accumulator<f32>(shape(64_c, int_c<BN>)),                       // acc: each consumer's own (m, n)
      [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto ready, auto consumed, auto acc) {
        auto n = program_id(0_c);
        auto m = program_id(1_c);
        return emit_pipeline_warp_specialized<S, 2>(
            K / BK, ready, consumed,
            ins(in(a, as, [&](auto k) { return a.block(m, 0_c, k); }), in(b, bs, [&](auto k) { return b.block(n, k); })),
            [&](auto, auto half, auto a_k, auto b_k) {  // a_k: (2, 64, 64), b_k: (256, 64)
              return seq(wgmma(acc, a_k[half], transpose(b_k)), wgmma_commit(), wgmma_wait(0_c));
            },
            [&](auto) { return store(acc, 0.0f); },
            [&](auto half) {
              return seq(store(cs[half], cast<bf16>(load(acc))), commit_smem(),
                         copy_smem_to_gmem(cs[half], c.block(m * 2_c + half, n)), commit_smem_to_gmem_group(),
                         wait_smem_to_gmem(0_c));
            });
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "gemm_hopper",
    .summary = "C = A * B^T (bf16 in, f32 accumulate, bf16 out): 128x256x64 tiles, S-stage TMA ring, 1 producer + 2 wgmma consumer warpgroups",
    .params = {{.name = "M", .default_value = 256, .help = "rows of A and C (a multiple of 128)", .min = 128, .multiple_of = 128},
               {.name = "N", .default_value = 512, .help = "rows of B, columns of C (a multiple of 256)", .min = 256, .multiple_of = 256},
               {.name = "K", .default_value = 256, .help = "the reduced dimension (a multiple of 64)", .min = 64, .multiple_of = 64},
               {.name = "stages", .default_value = 3, .help = "pipeline stages (48 KB of SMEM each)", .allowed = {2, 3}}},
    .build =
        [](param_values const& p) {
          return dispatch<2, 3>(p.at("stages"), [&](auto S) { return lower(gemm_hopper<decltype(S)::value>(p.at("M"), p.at("N"), p.at("K"))); });
        },
    .reference =
        [](std::vector<host_tensor>& t, param_values const& p) {
          const std::int64_t M = p.at("M"), N = p.at("N"), K = p.at("K");
          auto const& a = t[0];
          auto const& b = t[1];
          for (std::int64_t i = 0; i < M; ++i)
            for (std::int64_t j = 0; j < N; ++j) {
              double sum = 0;
              for (std::int64_t k = 0; k < K; ++k) sum += a.get(i * K + k) * b.get(j * K + k);
              t[2].set(i * N + j, sum);
            }
        },
});

}  // namespace
}  // namespace stagecraft::examples
