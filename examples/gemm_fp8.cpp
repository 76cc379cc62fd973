// C = A * B^T, e4m3 in, f32 (or f16) accumulate, bf16 out: gemm_hopper's warp-specialized pipeline on
// Hopper's fp8 tensor cores.
//
// Each CTA owns a 128 x 256 tile of C. Warpgroup 0 streams 128-wide K slices of A (128 x 128, as
// two 64-row halves) and B (256 x 128) through an S-deep ring of 128-byte swizzled stages with
// TMA: 128 fp8 elements are one 128-byte swizzle row, so a slice is the same 48 KB a bf16
// slice of 64 is, and each consumer's wgmma over it is 4 instructions of m64n256k32 (kind
// .e4m3.e4m3). fp8 operands are K-major only, so both are stored (rows, K) and B is read as
// transpose(b). The epilogue rounds the f32 accumulators to bf16 in SMEM and stores with TMA.
// Any M, N, K (N a multiple of 8 and K of 16: TMA rows are 16-byte units): edge tiles overhang,
// TMA fills A's and B's outside with zeros and C's stores drop it, as in gemm_hopper.
//
// scaled = 1: per-tensor scale factors, C = (sa sb) A * B^T with sa and sb one f32 each (the
// usual fp8 quantization of a whole tensor), applied once to the f32 accumulator in the epilogue,
// read per row of the D fragment (a register each, not a load per element). gemm_fp8_blockwise
// scales per block instead.
//
// Numerics: the interpreter sums each instruction's 32 exact products in double and adds them
// to f32; the hardware's fp8 accumulation keeps fewer bits, which interp::mma_tolerance allows
// for fp8 inputs (docs/interpreter.md).
#include <string>

#include <type_traits>

#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "gemm_reference.hpp"

namespace stagecraft::examples {
namespace {

constexpr long long BM = 128, BN = 256, BK = 128;

// Acc: f32, or f16 (fp8 kinds also accumulate in f16: half the registers, two per 32-bit one).
template <long long S, class Acc, bool Scaled>
auto gemm_fp8(size_expr M, std::int64_t N, std::int64_t K) {
  static_assert(!Scaled || std::is_same_v<Acc, f32>, "gemm_fp8: scaled=1 scales an f32 accumulator");
  auto a = gmem<e4m3>("a", shape(M, K));                                         // (m, k)
  auto b = gmem<e4m3>("b", shape(N, K));                                         // (n, k): C = A * B^T
  auto c = gmem<bf16>("c", shape(M, N));                                         // (m, n)
  auto as = smem<e4m3>(shape(int_c<S>, int_c<BM>, int_c<BK>), swizzle(128_c));  // (stage, m, k), K-major: a consumer's half is 64 rows
  auto bs = smem<e4m3>(shape(int_c<S>, int_c<BN>, int_c<BK>), swizzle(128_c));  // (stage, n, k), K-major
  // C's staging, 64 x 64 tiles of 128-byte swizzled rows (conflict-free fragment stores): an f32
  // accumulator is stored a 64 x 128 column half at a time (half the SMEM: room for a 4th stage);
  // an f16 one, two elements per register, whole.
  constexpr long long CW = std::is_same_v<Acc, f32> ? BN / 2 : BN;
  auto cs = smem<bf16>(shape(2_c, 64_c, int_c<CW>), tiling(64_c, 64_c), swizzle(128_c));  // each consumer's C subtile
  auto body = [K](auto a, auto b, auto c, auto as, auto bs, auto cs, auto ready, auto consumed, auto acc, auto... scales) {
        auto n = program_id(0_c);
        auto m = program_id(1_c);
        // The accumulator, scaled by sa sb when Scaled (f32 only): one number per row, which the
        // epilogue computes once per row of the fragment.
        auto result = [&](auto const& t) {
          if constexpr (Scaled) {
            auto one = [&](auto x) { return load(x.tile(shape(1_c), 0_c)); };
            auto factor = [&](auto const& sa, auto const& sb) { return one(sa) * one(sb); };
            return t * broadcast<1>(full(shape(64_c), factor(scales...)), t);
          } else {
            return t;
          }
        };
        return emit_pipeline_warp_specialized<S, 2>(
            ceil_div(K, BK), ready, consumed,  // edge tiles overhang: TMA's zero fill adds nothing, C's store drops it
            ins(in(a, as, [&](auto k) { return a.block(m, k); }), in(b, bs, [&](auto k) { return b.block(n, k); })),
            [&](auto, auto half, auto a_k, auto b_k) {  // a_k: (128, 128), b_k: (256, 128)
              return seq(wgmma(acc, slice<0>(a_k, half * 64_c, 64_c), transpose(b_k)), wgmma_commit(), wgmma_wait(0_c));
            },
            [&](auto) { return store(acc, 0.0f); },
            [&](auto half) {
              if constexpr (CW == BN) {
                return seq(store(cs[half], cast<bf16>(result(load(acc)))), commit_smem(), copy_smem_to_gmem(cs[half], c.block(m * 2_c + half, n)),
                           commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
              } else {
                auto column_half = [&](auto j) {  // the subtile is free again once the previous stores have read it
                  return store_tile(cs[half], cast<bf16>(result(slice<1>(load(acc), j * int_c<CW>, int_c<CW>))), c.block(m * 2_c + half, n * 2_c + j), 0_c);
                };
                return seq(column_half(0_c), column_half(1_c), wait_smem_to_gmem(0_c));
              }
            });
      };
  auto declare = [&](auto... scales) {  // scales: none, or sa and sb (after c, so C's slot stays 2)
    return [=](auto const& f) {
      return kernel<sm_90a>("gemm_fp8", grid(ceil_div(N, BN), ceil_div(M, BM)), threads(3_c), a, b, c, scales..., as, bs, cs,
                            barrier(arrivals(2_c), count(int_c<S>)),   // ready[stage]: A and B landed
                            barrier(arrivals(2_c), count(int_c<S>)),   // consumed[stage]: both consumers are done
                            accumulator<Acc>(shape(64_c, int_c<BN>)),  // each consumer's own (m, n)
                            f);
    };
  };
  if constexpr (Scaled) {
    return declare(gmem<f32>("sa", shape(1_c)), gmem<f32>("sb", shape(1_c)))(  // A's and B's one scale
        [body](auto a, auto b, auto c, auto sa, auto sb, auto as, auto bs, auto cs, auto ready, auto consumed, auto acc) {
          return body(a, b, c, as, bs, cs, ready, consumed, acc, sa, sb);
        });
  } else {
    return declare()(body);
  }
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "gemm_fp8",
    .summary = "C = A * B^T (e4m3 in, f32 or f16 accumulate, bf16 out): 128x256x128 tiles, S-stage TMA ring, 1 producer + 2 wgmma consumer warpgroups",
    .params = {{.name = "M", .default_value = 256, .help = "rows of A and C (any; --dynamic M: a launch argument)", .min = 128, .run_time = true},
               {.name = "N", .default_value = 256, .help = "rows of B, columns of C (bf16 rows of 16-byte TMA units: a multiple of 8)", .min = 256, .multiple_of = 8},
               {.name = "K", .default_value = 256, .help = "the reduced dimension (e4m3 rows of 16-byte TMA units: a multiple of 16)", .min = 128, .multiple_of = 16},
               {.name = "stages", .default_value = 3, .help = "pipeline stages (48 KB of SMEM each; 4 with acc=32 only)", .allowed = {2, 3, 4}},
               {.name = "acc", .default_value = 32, .help = "accumulator bits: 32 (f32) or 16 (f16)", .allowed = {32, 16}},
               {.name = "scaled", .default_value = 0, .help = "1: per-tensor f32 scales sa and sb, C = sa sb A * B^T (acc=32)", .allowed = {0, 1}}},
    .build =
        [](param_values const& p) {
          if (p.at("acc") == 16 && p.at("stages") == 4)
            throw usage_error("gemm_fp8: stages=4 needs acc=32 (an f16 accumulator's epilogue stages the whole 128 x 256 tile: 64 KB of "
                              "SMEM, room for 3 stages)");
          if (p.at("acc") == 16 && p.at("scaled") == 1)
            throw usage_error("gemm_fp8: scaled=1 needs acc=32 (the scales multiply the f32 accumulator)");
          return dispatch<2, 3, 4>(p.at("stages"), [&](auto S) {
            constexpr long long s = decltype(S)::value;
            if constexpr (s < 4) {
              if (p.at("acc") == 16) return lower(gemm_fp8<s, f16, false>(size_param(p, "M"), p.at("N"), p.at("K")));
            }
            if (p.at("scaled") == 1) return lower(gemm_fp8<s, f32, true>(size_param(p, "M"), p.at("N"), p.at("K")));
            return lower(gemm_fp8<s, f32, false>(size_param(p, "M"), p.at("N"), p.at("K")));
          });
        },
    .reference =
        [](std::vector<host_tensor>& t, param_values const& p) {
          if (p.at("scaled") == 0) return gemm_abt_reference(t, p);
          // C = sa sb (A * B^T): t[3] and t[4] are sa and sb, one element each.
          const double scale = t[3].get(0) * t[4].get(0);
          gemm_fabt_reference(t, p, [scale](double x) { return x * scale; });
        },
});

}  // namespace
}  // namespace stagecraft::examples
