// C = (A * SFA) (B * SFB)^T, MXFP8 in (e4m3 or e5m2 elements, one ue8m0 scale per 32 of K for
// each row of A and of B), f32 accumulate in TMEM, bf16 out: the block-scaled Blackwell GEMM
// (tcgen05.mma kind::mxf8f6f4.block_scale.block32; issue 28).
//
// gemm_blackwell's structure (warp-specialized, persistent, two TMEM accumulators so the epilogue
// overlaps the next tile's MMAs) with 128 x 128 tiles and 128-deep K slices, plus the scales:
//   - the producer (role 1, warp 4) streams per K slice A (128 x 128 e4m3), B (128 x 128), and
//     the two 512-byte blocks of their scales (128 rows x 4 K blocks each) into one stage of a
//     4-deep ring: four TMA loads on full[s];
//   - the MMA issuer (role 2, warp 5) per K slice waits for its stage, copies both scale blocks
//     into the stage's TMEM scale columns (tcgen05_copy_scales: tcgen05.cp 32x128b.warpx4), issues
//     the four m128n128k32 instructions (scale bytes 0-3 of each cell) and frees the stage with
//     tcgen05_commit_arrive(empty[s]), which covers the copies as well;
//   - the epilogue (role 0, warps 0-3) is gemm_blackwell's: TMEM -> bf16 subtiles -> TMA stores.
// Why the scales have a TMEM ring as deep as the SMEM ring: the ISA orders a copy before a later
// MMA of the same thread, but not an MMA before a later copy into columns it still reads. Stage
// s's scale columns are rewritten at step g + S only after the issuer waited on full[s] for that
// step, which the producer could only fill after waiting on empty[s], on which MMA g's commit
// arrived: that chain orders the copy after MMA g has completed. (CUTLASS overwrites one set of
// columns per K slice; the interpreter reports that as a race, which the spec text supports.)
//
// Scales in GMEM: the layout cuBLASLt (VEC32_UE8M0) and CUTLASS keep them in, 512-byte blocks of
// 128 rows x 4 K blocks, block (row / 128, K block / 4) at (r / 128, kb / 4) of sfa
// (ceil(M / 128), ceil(K / 128), 32, 16), inside it byte (r % 32) * 16 + (r % 128 / 32) * 4 + kb % 4:
// exactly what tcgen05.cp 32x128b.warpx4 copies to where the MMA reads (ir/tcgen05.hpp). The scale
// tensors are padded to whole blocks, as cuBLASLt's are, so any M (a launch argument with
// --dynamic M), N and K work: edge tiles of A and B overhang into TMA's zero fill, whose products
// are 0 whatever their padded scales say, and C's store drops the overhang.
//
// TMEM: D 2 x 128 columns, the scale rings 2 x 32 (8 columns a stage: 4 for 128 rows, 4 spare, as
// allocations are 32 columns at least): 320 of 512.
#pragma once
#include <algorithm>
#include <string>

#include <stagecraft/ir/mx_formats.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "gemm_blackwell_epilogue.hpp"

namespace stagecraft::examples::mx {


constexpr long long BM = 128, BN = 128, BK = 128, S = 4;

// M_blocks: ceil(M / 128), the scale tensor's first extent; with a run-time M its own run-time
// extent (a parameter's dimension is one extent, which the launch reads from that tensor).
template <class TA, class TB, bool OneScaleBuffer = false>
auto gemm_blackwell_mx(size_expr M, size_expr M_blocks, std::int64_t N, std::int64_t K, size_expr ctas, std::int64_t raster,
                       const char* name = "gemm_blackwell_mx") {
  // OneScaleBuffer: one set of scale columns rewritten every K slice (CUTLASS's choice), for the
  // test that shows the interpreter reporting the copy racing the previous slice's MMAs.
  auto scale_columns = [] {
    if constexpr (OneScaleBuffer) return tmem<u8>(shape(128_c, 128_c));  // (lane, byte): 32 columns, the first 4 used
    else return tmem<u8>(shape(int_c<S>, 128_c, 32_c));                  // (stage, lane, byte): 8 columns a stage, the first 4 used
  };
  auto at = [](auto const& t, auto const& s) {
    if constexpr (OneScaleBuffer) return t;
    else return t[s];
  };
  return kernel<sm_100a>(
      name, grid(ctas), threads(warpgroup, warp, warp),
      gmem<TA>("a", shape(M, K)),                                          // (m, k)
      gmem<TB>("b", shape(N, K)),                                          // (n, k): C = A * B^T
      gmem<u8>("sfa", shape(M_blocks, ceil_div(K, 128), 32_c, 16_c)),  // (m block, k block, row % 32, 4 x row group + k % 4): ue8m0
      gmem<u8>("sfb", shape(ceil_div(N, 128), ceil_div(K, 128), 32_c, 16_c)),  // the same for B's rows
      gmem<bf16>("c", shape(M, N)),                                        // (m, n)
      smem<TA>(shape(int_c<S>, int_c<BM>, int_c<BK>), swizzle(128_c)),     // as: (stage, m, k), K-major
      smem<TB>(shape(int_c<S>, int_c<BN>, int_c<BK>), swizzle(128_c)),     // bs: (stage, n, k), K-major
      smem<u8>(shape(int_c<S>, 1_c, 1_c, 32_c, 16_c)),                     // sfas: (stage, 1, 1, row % 32, 16 bytes), one 512-byte block
      smem<u8>(shape(int_c<S>, 1_c, 1_c, 32_c, 16_c)),                     // sfbs
      smem<bf16>(shape(2_c, int_c<BM>, 64_c), swizzle(128_c)),             // cs: (buffer, m, n), the epilogue's subtiles
      barrier(arrivals(4_c), count(int_c<S>)),                             // full[stage]: A, B and their scales landed
      barrier(arrivals(1_c), count(int_c<S>), orders_tensor_core),         // empty[stage]: the copies and MMAs reading it completed
      barrier(arrivals(1_c), count(2_c), orders_tensor_core),              // acc_full[b]: accumulator b is complete
      barrier(arrivals(1_c), count(2_c)),                                  // acc_empty[b]: the epilogue has read accumulator b
      tmem<f32>(shape(2_c, 128_c, int_c<BN>)),                             // d: (b, m, n)
      scale_columns(),                                                     // sfa_t: A's scales, columns 0-3 of each stage
      scale_columns(),                                                     // sfb_t: B's
      [=](auto a, auto b, auto sfa, auto sfb, auto c, auto as, auto bs, auto sfas, auto sfbs, auto cs, auto full, auto empty, auto acc_full,
          auto acc_empty, auto d, auto sfa_t, auto sfb_t) {
        const std::int64_t steps = ceil_div(K, BK);
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
            return seq(barrier_wait(full[s]), tcgen05_copy_scales(sfas[s], at(sfa_t, s)), tcgen05_copy_scales(sfbs[s], at(sfb_t, s)),
                       tcgen05_mma(d[acc], as[s], transpose(bs[s]), block_scale(at(sfa_t, s), at(sfb_t, s)), k > 0_c), tcgen05_commit_arrive(empty[s]));
          });
          return if_(valid(i), seq(if_(i >= 2_c, barrier_wait(acc_empty[acc])), k_loop, tcgen05_commit_arrive(acc_full[acc])));
        });
        auto epilogue = tmem_subtile_epilogue<BN>(rounds, valid, m, n, d, cs, c, acc_full, acc_empty);
        // The last acc_full the epilogue waited on follows every copy and MMA of the issuer.
        return if_(thread_id() == 1_c, producer,
                   if_(thread_id() == 2_c, mma, seq(epilogue, wait_smem_to_gmem(0_c), tmem_dealloc(d), tmem_dealloc(sfa_t), tmem_dealloc(sfb_t))));
      });
}

// The scale of row r of a (rows, K) operand for K block kb (of 32), from its blocked tensor.
inline double scale(host_tensor const& sf, std::int64_t K, std::int64_t r, std::int64_t kb) {
  const std::int64_t at = (((r / 128) * ceil_div(K, 128) + kb / 4) * 32 + r % 32) * 16 + (r % 128) / 32 * 4 + kb % 4;
  return ir::mx::decode_ue8m0(static_cast<unsigned>(sf.get(at)));
}

// C = sum over K blocks of sfa * sfb * (the block's dot product), in double, rounded once.
inline void reference(std::vector<host_tensor>& t, param_values const& p) {
  const std::int64_t M = p.at("M"), N = p.at("N"), K = p.at("K");
  auto const &a = t[0], &b = t[1], &sfa = t[2], &sfb = t[3];
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double sum = 0;
      for (std::int64_t kb = 0; kb < ceil_div(K, 32); ++kb) {
        double dot = 0;
        for (std::int64_t k = 32 * kb; k < std::min(32 * kb + 32, K); ++k) dot += a.get(i * K + k) * b.get(j * K + k);
        sum += dot * scale(sfa, K, i, kb) * scale(sfb, K, j, kb);
      }
      t[4].set(i * N + j, sum);
    }
}

// Random u8 scale codes would be up to 2^128 or NaN (255): keep them within 2^-3 .. 2^3, still
// drawn from the seeded values (code 124 + x % 7).
inline void inputs(std::vector<host_tensor>& t, param_values const&) {
  for (int s : {2, 3})
    for (std::int64_t i = 0; i < t[static_cast<std::size_t>(s)].elements(); ++i)
      t[static_cast<std::size_t>(s)].set(i, 124.0 + static_cast<double>(static_cast<std::int64_t>(t[static_cast<std::size_t>(s)].get(i)) % 7));
}

}  // namespace stagecraft::examples::mx
