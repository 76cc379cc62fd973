// C = (A . Sa) * (B . Sb)^T, e4m3 in, f32 accumulate, bf16 out, with DeepSeek-V3's blockwise
// scale factors: A is scaled per row and 128 of K (Sa: one f32 per 1 x 128 block), B per
// 128 x 128 block (Sb). gemm_fp8's warp-specialized pipeline with CUTLASS's "2xAcc" promotion.
//
// Each CTA owns a 128 x 128 tile of C. Warpgroup 0 streams 128-wide K slices of A (128 x 128),
// B (128 x 128) and the slice's 128 A scales through an S-deep ring with TMA (three arrivals on
// `ready`: one per input). Each consumer takes 64 rows; per K slice it
//
//   part  = A_k * B_k^T                      4 wgmma m64n128k32 (.e4m3.e4m3), from zero
//   acc  += part * (sa_k[row] * sb_k)        one FFMA per element, the scale hoisted per row
//
// so no K slice is summed in the tensor core's fp8 accumulator beyond its 128 products (the
// promotion every 128 of K that keeps fp8's reduced accumulation precision from growing with K).
// sa_k[row] comes from the stage in SMEM; sb_k, one number per CTA and slice, is read from GMEM
// (the same address for every thread: one L1 line).
//
// Scale layouts (DeepGEMM's): Sa is (ceil(K / 128), Mp), MN-major, so a CTA's 128 row scales of
// one slice are a single 512-byte TMA box; Mp is M rounded up to 4 (TMA rows are 16-byte units;
// the padding columns are never read into a stored row). Sb is (ceil(N / 128), ceil(K / 128)).
// Any M, N (a multiple of 8), K (a multiple of 16): a partial last slice is zero-filled by TMA in
// A and B and scaled by its own (partial-block) factors; C's TMA stores drop the overhang.
#include <algorithm>
#include <string>
#include <vector>

#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

constexpr long long BM = 128, BN = 128, BK = 128;

std::int64_t padded_rows(std::int64_t M) { return (M + 3) / 4 * 4; }

template <long long S>
auto gemm_fp8_blockwise(std::int64_t M, std::int64_t N, std::int64_t K) {
  const std::int64_t KB = ceil_div(K, BK);
  auto a = gmem<e4m3>("a", shape(M, K));                                         // (m, k)
  auto b = gmem<e4m3>("b", shape(N, K));                                         // (n, k): C = A * B^T
  auto sa = gmem<f32>("sa", shape(KB, padded_rows(M)));                          // (k block, m): A's scale per row and 128 of K
  auto sb = gmem<f32>("sb", shape(ceil_div(N, BN), KB));                         // (n block, k block): B's scale per 128 x 128
  auto c = gmem<bf16>("c", shape(M, N));                                         // (m, n)
  auto as = smem<e4m3>(shape(int_c<S>, int_c<BM>, int_c<BK>), swizzle(128_c));  // (stage, m, k), K-major
  auto bs = smem<e4m3>(shape(int_c<S>, int_c<BN>, int_c<BK>), swizzle(128_c));  // (stage, n, k), K-major
  auto ss = smem<f32>(shape(int_c<S>, 1_c, int_c<BM>));                          // (stage, 1, m): the slice's A scales
  auto cs = smem<bf16>(shape(2_c, 64_c, int_c<BN>), tiling(64_c, 64_c), swizzle(128_c));  // each consumer's C subtile
  auto rows = shape(64_c, int_c<BN>);
  return kernel<sm_90a>(
      "gemm_fp8_blockwise", grid(ceil_div(N, BN), ceil_div(M, BM)), threads(3_c), a, b, sa, sb, c, as, bs, ss, cs,
      barrier(arrivals(3_c), count(int_c<S>)),  // ready[stage]: A, B and A's scales landed
      barrier(arrivals(2_c), count(int_c<S>)),  // consumed[stage]: both consumers are done
      accumulator<f32>(rows),                   // acc: each consumer's (m, n), promoted
      accumulator<f32>(rows),                   // part: one K slice's products
      [K, rows](auto a, auto b, auto sa, auto sb, auto c, auto as, auto bs, auto ss, auto cs, auto ready, auto consumed, auto acc, auto part) {
        auto n = program_id(0_c);
        auto m = program_id(1_c);
        return emit_pipeline_warp_specialized<S, 2>(
            ceil_div(K, BK), ready, consumed,
            ins(in(a, as, [&](auto k) { return a.block(m, k); }), in(b, bs, [&](auto k) { return b.block(n, k); }),
                in(sa, ss, [&](auto k) { return sa.block(k, m); })),
            [&](auto k, auto half, auto a_k, auto b_k, auto s_k) {  // a_k: (128, 128), b_k: (128, 128), s_k: (1, 128)
              auto sa_rows = slice<0>(load(s_k[0_c]), half * 64_c, 64_c);                // (64): this consumer's rows
              auto sb_rows = full(shape(64_c), load(sb.tile(shape(1_c, 1_c), n, k)));  // (64): the block's one factor
              return seq(store(part, 0.0f), wgmma(part, slice<0>(a_k, half * 64_c, 64_c), transpose(b_k)), wgmma_commit(), wgmma_wait(0_c),
                         store(acc, fma(load(part), broadcast<1>(sa_rows * sb_rows, rows), load(acc))));
            },
            [&](auto) { return store(acc, 0.0f); },
            [&](auto half) {
              return seq(store(cs[half], cast<bf16>(load(acc))), commit_smem(), copy_smem_to_gmem(cs[half], c.block(m * 2_c + half, n)),
                         commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
            });
      });
}

// C[i, j] = sum over K blocks kb of sa[kb, i] sb[j / 128, kb] sum_{k in kb} a[i, k] b[j, k], in
// double, rounded once to bf16.
void gemm_fp8_blockwise_reference(std::vector<host_tensor>& t, param_values const& p) {
  const std::int64_t M = p.at("M"), N = p.at("N"), K = p.at("K"), Mp = padded_rows(M), KB = ceil_div(K, BK);
  auto const &a = t[0], &b = t[1], &sa = t[2], &sb = t[3];
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double sum = 0;
      for (std::int64_t kb = 0; kb < KB; ++kb) {
        double block = 0;
        for (std::int64_t k = kb * BK; k < std::min<std::int64_t>(K, (kb + 1) * BK); ++k) block += a.get(i * K + k) * b.get(j * K + k);
        sum += block * sa.get(kb * Mp + i) * sb.get(j / BN * KB + kb);
      }
      t[4].set(i * N + j, sum);
    }
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "gemm_fp8_blockwise",
    .summary = "C = (A.Sa) * (B.Sb)^T, e4m3 in with DeepSeek-V3 blockwise f32 scales (A per 1x128, B per 128x128), f32 promoted every 128 of K, bf16 out",
    .params = {{.name = "M", .default_value = 256, .help = "rows of A and C (any; Sa's rows are padded to a multiple of 4)", .min = 128},
               {.name = "N", .default_value = 256, .help = "rows of B, columns of C (bf16 rows of 16-byte TMA units: a multiple of 8)", .min = 128, .multiple_of = 8},
               {.name = "K", .default_value = 256, .help = "the reduced dimension (e4m3 rows of 16-byte TMA units: a multiple of 16)", .min = 128, .multiple_of = 16},
               {.name = "stages", .default_value = 4, .help = "pipeline stages (32.5 KB of SMEM each)", .allowed = {2, 3, 4}}},
    .build =
        [](param_values const& p) {
          return dispatch<2, 3, 4>(p.at("stages"), [&](auto S) { return lower(gemm_fp8_blockwise<decltype(S)::value>(p.at("M"), p.at("N"), p.at("K"))); });
        },
    .reference = gemm_fp8_blockwise_reference,
});

}  // namespace
}  // namespace stagecraft::examples
