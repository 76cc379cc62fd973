// C = A * B^T on one warpgroup: the smallest pipelined Hopper GEMM.
//
// Each CTA owns a 64 x BN block of C. emit_pipeline streams 64-wide K slices of A (64 x 64) and
// B (BN x 64) through an S-deep ring of 128-byte swizzled stages; each step is one wgmma over the
// slice (4 instructions of k16), committed and waited before its stage is refilled. The
// accumulator lives in the warpgroup's registers; the epilogue stores it through SMEM with TMA.
// Any M, N, K (K a multiple of 8 and N of 4: TMA rows are 16-byte units): the last K slice
// overhangs A and B, and TMA fills both with zeros, which add nothing; the edge blocks of C
// overhang it, and the store drops what lies outside.
//
// int8 = 1: the same kernel on s8 operands into an s32 accumulator (wgmma .m64nNk32.s32.s8.s8):
// K slices of 128 elements (128 bytes, the swizzle's row), C in i32, exact (integer products
// summed without rounding, wrapping at 32 bits as the hardware does without .satfinite). K a
// multiple of 16 there (16-byte TMA rows of one-byte elements). int8 = 2: A unsigned (u8: a
// quantized activation, 0..255) against s8 B (.s32.u8.s8).
#include <cmath>

#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "gemm_reference.hpp"

namespace stagecraft::examples {
namespace {

// In: bf16 (C in f32) or i8 (C in i32); InA: A's, u8 against i8. KT: the K slice, 128 bytes of In.
template <long long S, long long BN, class In, class Out, class InA = In>
auto gemm_small(size_expr M, std::int64_t N, std::int64_t K) {
  constexpr long long KT = 128 / (In::bits / 8);
  return kernel<sm_90a>(
      "gemm_small", grid(ceil_div(N, BN), ceil_div(M, 64)), threads(1_c),
      gmem<InA>("a", shape(M, K)),                                        // (m, k)
      gmem<In>("b", shape(N, K)),                                         // (n, k): C = A * B^T
      gmem<Out>("c", shape(M, N)),                                        // (m, n)
      smem<InA>(shape(int_c<S>, 64_c, int_c<KT>), swizzle(128_c)),        // as: (stage, m, k), K-major
      smem<In>(shape(int_c<S>, int_c<BN>, int_c<KT>), swizzle(128_c)),    // bs: (stage, n, k), K-major
      // cs: the epilogue's staging tile, as 64 x 8 tiles of 32-byte swizzled rows (one TMA box each).
      // The fragment stores pairs of 4-byte elements, a quad's 32 bytes per row: with 128-byte
      // swizzled rows, rows r and r ^ 1 hit the same banks (2-way, 128 wavefronts per warp); with
      // 32-byte rows each row of a quad's store is its own swizzle atom, conflict free (64, the
      // ideal: bench/perf_budgets.json gemm_small@int8).
      smem<Out>(shape(64_c, int_c<BN>), tiling(64_c, 8_c), swizzle(32_c)),
      barrier(arrivals(2_c), count(int_c<S>)),                            // full[stage]: A and B landed
      accumulator<Out>(shape(64_c, int_c<BN>)),                           // acc: (m, n) in registers
      [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto acc) {
        auto n = program_id(0_c);
        auto m = program_id(1_c);
        return seq(store(acc, 0),
                   emit_pipeline<S>(ceil_div(K, KT), full,
                                    ins(in(a, as, [&](auto k) { return a.block(m, k); }),
                                        in(b, bs, [&](auto k) { return b.block(n, k); })),
                                    outs(),
                                    [&](auto, auto a_k, auto b_k) {  // a_k: (64, KT), b_k: (BN, KT)
                                      return seq(wgmma(acc, a_k, transpose(b_k)), wgmma_commit(), wgmma_wait(0_c));
                                    }),
                   store(cs, load(acc)), commit_smem(),
                   copy_smem_to_gmem(cs, c.block(m, n)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "gemm_small",
    .summary = "C = A * B^T (bf16 in, f32 out; or int8=1: s8 in, s32 out; int8=2: u8 A, s8 B) on one warpgroup: an S-deep TMA ring feeding wgmma",
    .params = {{.name = "M", .default_value = 256, .help = "rows of A and C (any; --dynamic M: a launch argument)", .min = 64, .run_time = true},
               {.name = "N", .default_value = 256, .help = "rows of B, columns of C (C's rows are 16-byte TMA units: a multiple of 4)", .min = 128, .multiple_of = 4},
               {.name = "K", .default_value = 256, .help = "the reduced dimension (bf16 rows of 16-byte units: a multiple of 8)", .min = 64, .multiple_of = 8},
               {.name = "S", .default_value = 2, .help = "pipeline stages", .allowed = {1, 2, 3, 4}},
               {.name = "int8", .default_value = 0, .help = "1: s8 inputs, s32 accumulator and C; 2: u8 A, s8 B (K a multiple of 16)", .allowed = {0, 1, 2}}},
    .build =
        [](param_values const& p) {
          return dispatch<1, 2, 3, 4>(p.at("S"), [&](auto S) {
            if (p.at("int8") == 1) return lower(gemm_small<decltype(S)::value, 128, i8, i32>(size_param(p, "M"), p.at("N"), p.at("K")));
            if (p.at("int8") == 2) return lower(gemm_small<decltype(S)::value, 128, i8, i32, u8>(size_param(p, "M"), p.at("N"), p.at("K")));
            return lower(gemm_small<decltype(S)::value, 128, bf16, f32>(size_param(p, "M"), p.at("N"), p.at("K")));
          });
        },
    .reference = gemm_abt_reference,
});

}  // namespace
}  // namespace stagecraft::examples
