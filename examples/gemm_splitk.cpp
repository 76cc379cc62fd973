// C += A * B^T with K split over the grid's third axis: split-K by atomic reduction.
//
// CTA (n, m, z) owns the 64 x BN block (m, n) of C and slice z of K: ceil(K/64 / splits) of
// the 64-wide K blocks (the last slices may have fewer, or none). It runs gemm_small's pipeline
// over its slice (an S-deep ring of 128-byte swizzled stages, one wgmma per step) and reduces
// the register accumulator straight into C, store(c.tile(...), load(acc), reduce_add): one
// red.relaxed.gpu.global.add.f32 per element, from the D fragment's registers. No workspace, no
// second pass, no cluster: the `splits` partials of a block meet in C, in whatever order the
// CTAs finish (so the result is exact only up to the reassociation of those adds, well inside the
// MMA tolerance, which counts the whole K of every partial reduced into an element).
// This is cuBLAS's split-K with beta = 1: C's initial contents are kept (give zeros for C = A B^T).
// Any M, N, K (K a multiple of 8 and N of 4: TMA's 16-byte rows). The edge blocks of C are
// masked tiles, so their red instructions are predicated on the bounds.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "gemm_reference.hpp"

namespace stagecraft::examples {
namespace {

template <long long S, long long BN>
auto gemm_splitk(size_expr M, std::int64_t N, std::int64_t K, std::int64_t splits) {
  const std::int64_t kblocks = ceil_div(K, 64), per = ceil_div(kblocks, splits);  // K blocks: all, per slice
  return kernel<sm_90a>(
      "gemm_splitk", grid(ceil_div(N, BN), ceil_div(M, 64), splits), threads(1_c),
      gmem<bf16>("a", shape(M, K)),                                  // (m, k)
      gmem<bf16>("b", shape(N, K)),                                  // (n, k): C += A * B^T
      gmem<f32>("c", shape(M, N)),                                   // (m, n)
      smem<bf16>(shape(int_c<S>, 64_c, 64_c), swizzle(128_c)),       // as: (stage, m, k), K-major
      smem<bf16>(shape(int_c<S>, int_c<BN>, 64_c), swizzle(128_c)),  // bs: (stage, n, k), K-major
      barrier(arrivals(2_c), count(int_c<S>)),                       // full[stage]: A and B landed
      accumulator<f32>(shape(64_c, int_c<BN>)),                      // acc: (m, n) in registers, this slice's partial
      [&](auto a, auto b, auto c, auto as, auto bs, auto full, auto acc) {
        auto n = program_id(0_c);
        auto m = program_id(1_c);
        auto first = program_id(2_c) * per;                // this slice's first K block
        auto steps = max(0_c, min(per, kblocks - first));  // the last slices may have fewer, or none
        return seq(store(acc, 0.0f),
                   emit_pipeline<S>(steps, full,
                                    ins(in(a, as, [&](auto k) { return a.block(m, first + k); }),
                                        in(b, bs, [&](auto k) { return b.block(n, first + k); })),
                                    outs(),
                                    [&](auto, auto a_k, auto b_k) {  // a_k: (64, 64), b_k: (BN, 64)
                                      return seq(wgmma(acc, a_k, transpose(b_k)), wgmma_commit(), wgmma_wait(0_c));
                                    }),
                   store(c.tile(shape(64_c, int_c<BN>), masked(), m, n), load(acc), reduce_add));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "gemm_splitk",
    .summary = "C += A * B^T (bf16 in, f32 out), K split over the grid: each CTA's partial reduced into C with red.global.add",
    .params = {{.name = "M", .default_value = 256, .help = "rows of A and C (any; --dynamic M: a launch argument)", .min = 64, .run_time = true},
               {.name = "N", .default_value = 256, .help = "rows of B, columns of C (any multiple of 4: TMA's 16-byte rows of B)", .min = 128, .multiple_of = 4},
               {.name = "K", .default_value = 512, .help = "the reduced dimension (bf16 rows of 16-byte units: a multiple of 8)", .min = 64, .multiple_of = 8},
               {.name = "splits", .default_value = 4, .help = "K slices, one CTA each per block of C", .min = 1, .max = 64},
               {.name = "S", .default_value = 2, .help = "pipeline stages", .allowed = {1, 2, 3, 4}}},
    .build =
        [](param_values const& p) {
          return dispatch<1, 2, 3, 4>(p.at("S"), [&](auto S) {
            return lower(gemm_splitk<decltype(S)::value, 128>(size_param(p, "M"), p.at("N"), p.at("K"), p.at("splits")));
          });
        },
    .reference = gemm_abt_accumulate_reference,
});

}  // namespace
}  // namespace stagecraft::examples
