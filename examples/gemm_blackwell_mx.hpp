// C = (A * SFA) (B * SFB)^T, block-scaled, f32 accumulate in TMEM, bf16 out: the block-scaled
// Blackwell GEMM (issue 28) in its three formats, by element type TA/TB and scale type SF:
//   MXFP8  e4m3/e5m2 elements, u8 (ue8m0) scales per 32 of K: tcgen05.mma kind::mxf8f6f4.block_scale.block32
//   MXFP4  e2m1x2 (two e2m1 a byte), u8 (ue8m0) scales per 32 of K: kind::mxf4.block_scale.block32
//   NVFP4  e2m1x2, ue4m3 scales per 16 of K: kind::mxf4nvf4.block_scale.block16
//   MXFP6  e2m3/e3m2 elements, u8 (ue8m0) scales per 32 of K: kind::mxf8f6f4.block_scale.block32,
//          packed in GMEM (K a multiple of 128: TMA's 16U6_ALIGN16B), a byte of footprint each in
//          SMEM, so every SMEM size, step and descriptor is MXFP8's
//   MXFP8 x MXFP4  e4m3 A, e2m1 B one to a byte of SMEM (TMA's 16U4_ALIGN16B), the same kind: the
//          mixed-input form (FP8 activations, FP4 weights) kind::mxf4 cannot take
//
// gemm_blackwell's structure (warp-specialized, persistent, two TMEM accumulators so the epilogue
// overlaps the next tile's MMAs) with 128 x 128 tiles and 128-byte K slices (128 fp8 or 256 fp4
// values, one 128 B swizzle row), plus the scales:
//   - the producer (role 1, warp 4) streams per K slice A (128 x 128 B), B (128 x 128 B), and the
//     NB 512-byte blocks of each one's scales (128 rows x 4 scales each: NB = 1 for MXFP8, 2 for
//     MXFP4, 4 for NVFP4) into one stage of a 4-deep ring: four TMA loads on full[s];
//   - the MMA issuer (role 2, warp 5) per K slice waits for its stage, copies the scale blocks
//     into the stage's TMEM scale columns (tcgen05_copy_scales: tcgen05.cp 32x128b.warpx4, block
//     j into column group j), issues the four m128n128 instructions (k32 fp8 or k64 fp4; each
//     reads its 1, 2 or 4 scales of a row from the cell its group and ID name) and frees the stage
//     with tcgen05_commit_arrive(empty[s]), which covers the copies as well;
//   - the epilogue (role 0, warps 0-3) is gemm_blackwell's: TMEM -> bf16 subtiles -> TMA stores.
// Why the scales have a TMEM ring as deep as the SMEM ring: the ISA orders a copy before a later
// MMA of the same thread, but not an MMA before a later copy into columns it still reads. Stage
// s's scale columns are rewritten at step g + S only after the issuer waited on full[s] for that
// step, which the producer could only fill after waiting on empty[s], on which MMA g's commit
// arrived: that chain orders the copy after MMA g has completed. (CUTLASS overwrites one set of
// columns per K slice; the interpreter reports that as a race, which the spec text supports.)
//
// Scales in GMEM: the layout cuBLASLt (VEC32_UE8M0, VEC16_UE4M3) and CUTLASS keep them in,
// 512-byte blocks of 128 rows x 4 scales, block (row / 128, scale / 4) at (r / 128, kb / 4) of sfa
// (ceil(M / 128), ceil(K / (4 SB)), 32, 16) for SB values of K per scale, inside it byte
// (r % 32) * 16 + (r % 128 / 32) * 4 + kb % 4: exactly what tcgen05.cp 32x128b.warpx4 copies to where
// the MMA reads (ir/tcgen05.hpp). The scale tensors are padded to whole blocks, as cuBLASLt's are,
// so any M (a launch argument with --dynamic M), N and K work: edge tiles of A and B overhang into
// TMA's zero fill, whose products are 0 whatever their padded scales say, and C's store drops the
// overhang. (NVFP4's per-tensor f32 scale is the caller's: it multiplies C.)
//
// TMEM: D 2 x 128 columns, the scale rings 2 x S x max(8, 4 NB) columns (4 per block; at least 32
// columns an allocation): 320 of 512 for MXFP8 and MXFP4, 384 for NVFP4.
#pragma once
#include <algorithm>
#include <string>
#include <utility>

#include <stagecraft/ir/mx_formats.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "gemm_blackwell_epilogue.hpp"

namespace stagecraft::examples::mx {


constexpr long long BM = 128, BN = 128, BK = 128, S = 4;  // BK: bytes of K per slice (128 fp8 values, 256 fp4)

// A format's constants: V values of K per element, SB values of K per scale, NB scale blocks
// (4 scales of each of 128 rows) per K slice.
template <class T, class SF>
struct format {
  static constexpr long long V = std::is_same_v<T, e2m1x2> ? 2 : 1;
  static constexpr long long SB = std::is_same_v<SF, ue4m3> ? 16 : 32;
  static constexpr long long NB = BK * V / SB / 4;
};

// M_blocks: ceil(M / 128), the scale tensor's first extent; with a run-time M its own run-time
// extent (a parameter's dimension is one extent, which the launch reads from that tensor).
// K: values of K (fp4: twice A's and B's bytes per row).
template <class TA, class TB, class SF = u8, bool OneScaleBuffer = false>
auto gemm_blackwell_mx(size_expr M, size_expr M_blocks, std::int64_t N, std::int64_t K, size_expr ctas, std::int64_t raster,
                       const char* name = "gemm_blackwell_mx") {
  using F = format<TA, SF>;
  constexpr long long NB = F::NB;
  const std::int64_t KE = K / F::V;                 // A's and B's elements per row
  const std::int64_t KG = ceil_div(K, 4 * F::SB);   // scale blocks along K
  // OneScaleBuffer: one set of scale columns rewritten every K slice (CUTLASS's choice), for the
  // test that shows the interpreter reporting the copy racing the previous slice's MMAs.
  auto scale_columns = [] {
    if constexpr (OneScaleBuffer) return tmem<SF>(shape(128_c, 128_c));                         // (lane, byte): 32 columns
    else return tmem<SF>(shape(int_c<S>, 128_c, int_c<std::max(32LL, 16 * NB)>));            // (stage, lane, byte): 4 columns a block
  };
  auto at = [](auto const& t, auto const& s) {
    if constexpr (OneScaleBuffer) return t;
    else return t[s];
  };
  return kernel<sm_100a>(
      name, grid(ctas), threads(warpgroup, warp, warp),
      gmem<TA>("a", shape(M, KE)),                                         // (m, k / V)
      gmem<TB>("b", shape(N, KE)),                                         // (n, k / V): C = A * B^T
      gmem<SF>("sfa", shape(M_blocks, KG, 32_c, 16_c)),                    // (m block, k block, row % 32, 4 x row group + k % 4)
      gmem<SF>("sfb", shape(ceil_div(N, 128), KG, 32_c, 16_c)),            // the same for B's rows
      gmem<bf16>("c", shape(M, N)),                                        // (m, n)
      smem<TA>(shape(int_c<S>, int_c<BM>, int_c<BK>), swizzle(128_c)),     // as: (stage, m, k), K-major
      smem<TB>(shape(int_c<S>, int_c<BN>, int_c<BK>), swizzle(128_c)),     // bs: (stage, n, k), K-major
      smem<SF>(shape(int_c<S>, 1_c, int_c<NB>, 32_c, 16_c)),               // sfas: (stage, 1, block, row % 32, 16 bytes), NB 512-byte blocks
      smem<SF>(shape(int_c<S>, 1_c, int_c<NB>, 32_c, 16_c)),               // sfbs
      smem<bf16>(shape(2_c, int_c<BM>, 64_c), swizzle(128_c)),             // cs: (buffer, m, n), the epilogue's subtiles
      barrier(arrivals(4_c), count(int_c<S>)),                             // full[stage]: A, B and their scales landed
      barrier(arrivals(1_c), count(int_c<S>), orders_tensor_core),         // empty[stage]: the copies and MMAs reading it completed
      barrier(arrivals(1_c), count(2_c), orders_tensor_core),              // acc_full[b]: accumulator b is complete
      barrier(arrivals(1_c), count(2_c)),                                  // acc_empty[b]: the epilogue has read accumulator b
      tmem<f32>(shape(2_c, 128_c, int_c<BN>)),                             // d: (b, m, n)
      scale_columns(),                                                     // sfa_t: A's scales, block j in columns 4j .. 4j + 3 of a stage
      scale_columns(),                                                     // sfb_t: B's
      [=](auto a, auto b, auto sfa, auto sfb, auto c, auto as, auto bs, auto sfas, auto sfbs, auto cs, auto full, auto empty, auto acc_full,
          auto acc_empty, auto d, auto sfa_t, auto sfb_t) {
        const std::int64_t steps = ceil_div(KE, BK);
        const auto sched = static_schedule(ceil_div(M, BM), ceil_div(N, BN), ctas, program_id(0_c), raster);
        const size_expr rounds = sched.rounds();
        auto valid = [&](auto i) { return sched.valid(i); };
        auto m = [&](auto i) { return sched.m(i); };
        auto n = [&](auto i) { return sched.n(i); };
        auto producer = for_(range(rounds * steps), [&](auto g) {
          auto i = g / steps, k = g % steps;
          auto s = stage<S>(g);
          return if_(valid(i), seq(if_(g >= int_c<S>, barrier_wait(empty[s])),  // the copies and MMAs of step g - S have read the stage
                                   copy_gmem_to_smem(a.block(m(i), k), as[s], full[s]), copy_gmem_to_smem(b.block(n(i), k), bs[s], full[s]),
                                   copy_gmem_to_smem(sfa.block(m(i), k, 0_c, 0_c), sfas[s], full[s]),
                                   copy_gmem_to_smem(sfb.block(n(i), k, 0_c, 0_c), sfbs[s], full[s])));
        });
        auto mma = for_(range(rounds), [&](auto i) {
          auto acc = stage<2>(i);
          auto k_loop = for_(range(steps), [&](auto k) {
            auto s = stage<S>(i * steps + k);
            // Block j of each operand's scales into column group j of the stage; one flat seq, so
            // one elected thread issues the copies, the MMAs and the commit together.
            auto step = [&]<long long... J>(std::integer_sequence<long long, J...>) {
              return seq(barrier_wait(full[s]), tcgen05_copy_scales(sfas[s][0_c][int_c<J>], at(sfa_t, s), int_c<J>)...,
                         tcgen05_copy_scales(sfbs[s][0_c][int_c<J>], at(sfb_t, s), int_c<J>)...,
                         tcgen05_mma(d[acc], as[s], transpose(bs[s]), block_scale(at(sfa_t, s), at(sfb_t, s)), k > 0_c), tcgen05_commit_arrive(empty[s]));
            };
            return step(std::make_integer_sequence<long long, NB>{});
          });
          return if_(valid(i), seq(if_(i >= 2_c, barrier_wait(acc_empty[acc])), k_loop, tcgen05_commit_arrive(acc_full[acc])));
        });
        auto epilogue = tmem_subtile_epilogue<BN>(rounds, valid, m, n, d, cs, c, acc_full, acc_empty);
        // The last acc_full the epilogue waited on follows every copy and MMA of the issuer.
        return if_(thread_id() == 1_c, producer,
                   if_(thread_id() == 2_c, mma, seq(epilogue, wait_smem_to_gmem(0_c), tmem_dealloc(d), tmem_dealloc(sfa_t), tmem_dealloc(sfb_t))));
      });
}

// The scale of row r of a (rows, K) operand for its kb-th block of sb values of K, from its
// blocked tensor (ue8m0 codes in u8, or ue4m3).
inline double scale(host_tensor const& sf, std::int64_t K, std::int64_t sb, std::int64_t r, std::int64_t kb) {
  const std::int64_t at = (((r / 128) * ceil_div(K, 4 * sb) + kb / 4) * 32 + r % 32) * 16 + (r % 128) / 32 * 4 + kb % 4;
  const auto code = static_cast<unsigned>(sf.get(at));
  return sf.dtype == ir::DType::ue4m3 ? ir::mx::decode(ir::mx::ue4m3, code) : ir::mx::decode_ue8m0(code);
}
// Element k of row r of a (rows, K) operand: its value, or (e2m1x2) nibble k % 2 of byte k / 2,
// or (FP6, kind::mxf8f6f4's e2m1) its code's.
inline double value(host_tensor const& t, std::int64_t K, std::int64_t r, std::int64_t k) {
  if (ir::dtype_is_unit_packed(t.dtype)) return ir::mx::decode(ir::mx::unit_format(t.dtype), static_cast<unsigned>(t.get(r * K + k)));
  if (t.dtype != ir::DType::e2m1x2) return t.get(r * K + k);
  const auto byte = static_cast<std::uint8_t>(t.get(r * (K / 2) + k / 2));
  return ir::mx::decode(ir::mx::e2m1, ir::mx::unpack_e2m1(byte, static_cast<int>(k % 2)));
}

// C = sum over K blocks of sfa * sfb * (the block's dot product), in double, rounded once.
inline void reference(std::vector<host_tensor>& t, param_values const& p) {
  const std::int64_t M = p.at("M"), N = p.at("N"), K = p.at("K");
  auto const &a = t[0], &b = t[1], &sfa = t[2], &sfb = t[3];
  const std::int64_t sb = sfa.dtype == ir::DType::ue4m3 ? 16 : 32;
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double sum = 0;
      for (std::int64_t kb = 0; kb < ceil_div(K, sb); ++kb) {
        double dot = 0;
        for (std::int64_t k = sb * kb; k < std::min(sb * kb + sb, K); ++k) dot += value(a, K, i, k) * value(b, K, j, k);
        sum += dot * scale(sfa, K, sb, i, kb) * scale(sfb, K, sb, j, kb);
      }
      t[4].set(i * N + j, sum);
    }
}

// Random scale codes would be up to 2^128 or NaN: keep them near 1, still drawn from the seeded
// values: ue8m0 code 124 + x % 7 (2^-3 .. 2^3), ue4m3 code 48 + x % 17 (0.5 .. 2.25). The FP4
// operands' random bytes are two valid e2m1 codes each (e2m1 has no NaN).
inline void inputs(std::vector<host_tensor>& t, param_values const&) {
  for (int s : {2, 3}) {
    auto& sf = t[static_cast<std::size_t>(s)];
    const bool ue4m3 = sf.dtype == ir::DType::ue4m3;
    for (std::int64_t i = 0; i < sf.elements(); ++i) {
      const auto x = static_cast<std::int64_t>(sf.get(i));
      sf.set(i, ue4m3 ? 48.0 + static_cast<double>(x % 17) : 124.0 + static_cast<double>(x % 7));
    }
  }
}

}  // namespace stagecraft::examples::mx
