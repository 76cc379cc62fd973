// C = A * B^T, bf16 or fp8 in, f32 accumulate (in TMEM), bf16 out (or s8/u8 in, s32 accumulate,
// i32 out): the warp-specialized, persistent Blackwell GEMM.
//
// Each output tile is 128 x BN (BN = 256 by default). The grid has `ctas` CTAs (0: one per tile),
// and CTA c computes tiles c, c + ctas, c + 2 ctas, ... Three roles (threads(warpgroup, warp,
// warp): 192 threads, as CUTLASS's sm100 kernels give the TMA producer and the MMA issuer one
// warp each; the epilogue is a warpgroup, whose four warps reach the four lane quarters of TMEM):
//   - the producer (role 1, warp 4) streams K slices of A (128 x BK) and B (BN x BK) through an
//     S-deep ring of 128-byte swizzled stages with TMA (one elected thread issues them); BK is
//     one 128-byte swizzle row: 64 bf16 or 128 fp8 elements, so a stage holds the same bytes. Its
//     loop runs over all of the CTA's K slices, tile after tile (one step counter), so it
//     prefetches the next tile's first slices while the MMAs finish the current one;
//   - the MMA issuer (role 2, warp 5) takes tile i's accumulator, stage i % 2 of a TMEM ring d
//     (two 128 x BN accumulators side by side: 2 BN of the SM's 512 columns), once the epilogue
//     has read what tile i - 2 left there (acc_empty); per K slice it waits for a stage, issues
//     one tcgen05_mma over it (4 instructions of kind::f16 m128nBNk16 for bf16, of kind::f8f6f4
//     m128nBNk32 for e4m3/e5m2) and frees the stage with tcgen05_commit_arrive(empty[s]), which
//     arrives only once those MMAs have read it (one elected thread issues the MMAs and the
//     commit: one elect per K slice); after the tile's last slice it commits to acc_full[i % 2],
//     which arrives once that accumulator is complete;
//   - the epilogue (role 0, warps 0-3) waits on acc_full and takes the accumulator 64 columns at
//     a time: it reads a 128 x 64 subtile from TMEM (async_load_tmem of slice<1>(d[b], 64 j, 64):
//     tcgen05.ld 32x32b, warp w reading lanes 32w..32w+31, i.e. rows of the tile), rounds it to
//     bf16 into one of two SMEM buffers and stores it with TMA, so a subtile's rounding overlaps
//     the store of the one before; a buffer is refilled once the store that used it two subtiles
//     ago has read it (wait_smem_to_gmem(1, read_only)). After the last subtile it hands the
//     accumulator back (acc_empty). Two 16 KiB buffers instead of one 64 KiB tile buy the ring
//     its 4th stage.
// The accumulator pipeline is what CUTLASS's sm100 kernels do: while the epilogue reads and stores
// tile i, the tensor core already accumulates tile i + 1 into the other stage, so with more tiles
// than CTAs neither waits for the other. Unlike the Hopper GEMM the accumulator is nobody's
// registers: the MMA warp never touches it, and the stage is released by the tensor core's
// own completion, not by a thread. Every CTA runs its loops to the same bound (the most tiles any
// CTA gets) and skips the rounds past the last tile, all three roles alike, so their barrier
// phases stay in step.
//
// fp8 (parameter fp8 = 1: e4m3 A and B; 2: e4m3 A, e5m2 B): kind::f8f6f4 reads each operand in
// its own format, named by the instruction descriptor; the interpreter's MMA tolerance for fp8
// inputs allows for the hardware's narrower accumulation, as for gemm_fp8 (docs/interpreter.md).
//
// int8 (parameter int8 = 1: s8 A and B; 2: u8 A, s8 B): kind::i8, m128nBNk32, into an s32
// accumulator in TMEM (tmem<i32>: one column per element, as f32), C in i32. The products are
// exact and the sum wraps at 32 bits, so the result is exact: the interpreter, the host backend
// and the reference agree bit for bit. The epilogue's subtiles are 32 i32 columns (128 bytes).
#include <string>
#include <type_traits>

#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "gemm_blackwell_epilogue.hpp"
#include "gemm_reference.hpp"

namespace stagecraft::examples {
namespace {

constexpr long long BM = 128;

// The MMA issuer's round i: accumulator i % 2, once the epilogue has read tile i - 2's out of it,
// then per K slice one tcgen05_mma over a stage and the commit that frees it, then the commit that
// hands the accumulator to the epilogue.
template <long long S, class I, class AS, class BS, class D, class Full, class Empty, class AccFull, class AccEmpty>
auto mma_tile(I const& i, std::int64_t steps, AS const& as, BS const& bs, D const& d, Full const& full, Empty const& empty, AccFull const& acc_full,
              AccEmpty const& acc_empty) {
  auto acc = stage<2>(i);
  auto k_loop = for_(range(steps), [&](auto k) {
    auto s = stage<S>(i * steps + k);
    return seq(barrier_wait(full[s]), tcgen05_mma(d[acc], as[s], transpose(bs[s]), k > 0_c), tcgen05_commit_arrive(empty[s]));
  });
  auto reuse = [&] {  // the epilogue has read tile i - 2's accumulator (round 0 of clc_tiles: i is the constant 0)
    if constexpr (static_int<I>) return seq();
    else return if_(i >= 2_c, barrier_wait(acc_empty[acc]));
  };
  return seq(reuse(), k_loop, tcgen05_commit_arrive(acc_full[acc]));
}

// TA, TB: bf16 and bf16, each of e4m3/e5m2, or i8 B with i8 or u8 A. BK: K per stage, one
// 128-byte row. TD, TC: the accumulator and C, f32 and bf16, or i32 and i32 for 8-bit integers.
template <long long S, long long BN, class TA = bf16, class TB = bf16>
auto gemm_blackwell(size_expr M, std::int64_t N, std::int64_t K, size_expr ctas, std::int64_t raster) {
  constexpr long long BK = 128 * 8 / TA::bits;
  constexpr bool integer = ir::dtype_is_int8(TA::code);
  using TD = std::conditional_t<integer, i32, f32>;
  using TC = std::conditional_t<integer, i32, bf16>;
  constexpr long long W = 1024 / TC::bits;  // the epilogue's subtile: one 128-byte row of C
  return kernel<sm_100a>(
      "gemm_blackwell", grid(ctas), threads(warpgroup, warp, warp),
      gmem<TA>("a", shape(M, K)),                                              // (m, k)
      gmem<TB>("b", shape(N, K)),                                              // (n, k): C = A * B^T
      gmem<TC>("c", shape(M, N)),                                              // (m, n)
      smem<TA>(shape(int_c<S>, int_c<BM>, int_c<BK>), swizzle(128_c)),         // as: (stage, m, k), K-major
      smem<TB>(shape(int_c<S>, int_c<BN>, int_c<BK>), swizzle(128_c)),         // bs: (stage, n, k), K-major
      // cs: the epilogue's two subtile buffers, BM x W of 128-byte swizzled rows (one TMA box
      // each): thread t writes row t 16 bytes at a time, and the swizzle spreads a warp's 32 rows
      // over every bank (unswizzled, rows 128 bytes apart share them: 8-way).
      smem<TC>(shape(2_c, int_c<BM>, int_c<W>), swizzle(128_c)),               // (buffer, m, n)
      barrier(arrivals(2_c), count(int_c<S>)),                                 // full[stage]: A and B landed
      barrier(arrivals(1_c), count(int_c<S>), orders_tensor_core),             // empty[stage]: the MMAs reading it completed
      barrier(arrivals(1_c), count(2_c), orders_tensor_core),                  // acc_full[b]: accumulator b is complete
      barrier(arrivals(1_c), count(2_c)),                                      // acc_empty[b]: the epilogue has read accumulator b
      tmem<TD>(shape(2_c, 128_c, int_c<BN>)),                                  // d: (b, m, n), two accumulators in 2 BN TMEM columns
      [=](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto empty, auto acc_full, auto acc_empty, auto d) {
        const std::int64_t steps = ceil_div(K, BK);  // edge tiles overhang: TMA's zero fill adds nothing, C's store drops it
        // CTA c's tiles c, c + ctas, ... in bands of `raster` rows of tiles (L2-friendly).
        const auto sched = static_schedule(ceil_div(M, BM), ceil_div(N, BN), ctas, program_id(0_c), raster);
        const size_expr rounds = sched.rounds();  // the most tiles a CTA gets
        auto valid = [&](auto i) { return sched.valid(i); };
        auto m = [&](auto i) { return sched.m(i); };
        auto n = [&](auto i) { return sched.n(i); };
        // One flat loop over the CTA's K slices, tile after tile.
        auto producer = for_(range(rounds * steps), [&](auto g) {
          auto i = g / steps, k = g % steps;
          auto s = stage<S>(g);
          return if_(valid(i), seq(if_(g >= int_c<S>, barrier_wait(empty[s])),  // the MMAs of step g - S have read the stage
                                          copy_gmem_to_smem(a.block(m(i), k), as[s], full[s]), copy_gmem_to_smem(b.block(n(i), k), bs[s], full[s])));
        });
        auto mma = for_(range(rounds), [&](auto i) { return if_(valid(i), mma_tile<S>(i, steps, as, bs, d, full, empty, acc_full, acc_empty)); });
        auto epilogue = tmem_subtile_epilogue<BN>(rounds, valid, m, n, d, cs, c, acc_full, acc_empty);
        // Every MMA into d completed before the last acc_full the epilogue waited on.
        return if_(thread_id() == 1_c, producer, if_(thread_id() == 2_c, mma, seq(epilogue, wait_smem_to_gmem(0_c), tmem_dealloc(d))));
      });
}

// The same GEMM on a dynamic schedule (clc = 1): one CTA per tile is launched, and a CTA that
// finishes a tile asks cluster launch control (ops/clc.hpp) for the tile of a CTA that has not
// started, which then never runs; so the tiles go to whichever SMs are free, as CUTLASS's sm100
// dynamic persistent kernels do. Each role runs clc_tiles (pipeline/tile_schedule.hpp) over the
// same responses, a ring of 4 (64 bytes of SMEM), which the producer asks for: the response that
// decides round i + 1 is in flight during round i. Per tile the roles do what the static kernel
// does; the producer's K loop is per tile (its step counter still runs on across tiles).
template <long long S, long long BN>
auto gemm_blackwell_clc(size_expr M, std::int64_t N, std::int64_t K, std::int64_t raster) {
  using TA = bf16;
  constexpr long long BK = 64, R = 4;
  const size_expr tiles = ceil_div(M, BM) * ceil_div(N, BN);
  return kernel<sm_100a>(
      "gemm_blackwell", grid(tiles), threads(warpgroup, warp, warp),
      gmem<TA>("a", shape(M, K)),                                              // (m, k)
      gmem<TA>("b", shape(N, K)),                                              // (n, k): C = A * B^T
      gmem<bf16>("c", shape(M, N)),                                            // (m, n)
      smem<TA>(shape(int_c<S>, int_c<BM>, int_c<BK>), swizzle(128_c)),         // as: (stage, m, k), K-major
      smem<TA>(shape(int_c<S>, int_c<BN>, int_c<BK>), swizzle(128_c)),         // bs: (stage, n, k), K-major
      smem<bf16>(shape(2_c, int_c<BM>, 64_c), swizzle(128_c)),                 // cs: (buffer, m, n), the epilogue's subtiles
      smem<u32>(shape(int_c<R>, 4_c)),                                         // resp: (slot, word), try_cancel responses
      barrier(arrivals(2_c), count(int_c<S>)),                                 // full[stage]: A and B landed
      barrier(arrivals(1_c), count(int_c<S>), orders_tensor_core),             // empty[stage]: the MMAs reading it completed
      barrier(arrivals(1_c), count(2_c), orders_tensor_core),                  // acc_full[b]: accumulator b is complete
      barrier(arrivals(1_c), count(2_c)),                                      // acc_empty[b]: the epilogue has read accumulator b
      barrier(arrivals(1_c), count(int_c<R>)),                                 // clc_full[slot]: a response landed
      barrier(arrivals(3_c), count(int_c<R>)),                                 // clc_empty[slot]: the three roles have read it
      tmem<f32>(shape(2_c, 128_c, int_c<BN>)),                                 // d: (b, m, n), two accumulators in 2 BN TMEM columns
      [=](auto a, auto b, auto c, auto as, auto bs, auto cs, auto resp, auto full, auto empty, auto acc_full, auto acc_empty, auto clc_full,
          auto clc_empty, auto d) {
        const std::int64_t steps = ceil_div(K, BK);
        // Linear tile t in the grouped order of the static schedule (one worker per tile).
        auto order = [&](auto t) { return static_schedule(ceil_div(M, BM), ceil_div(N, BN), tiles, t, raster); };
        auto producer = clc_tiles<R, true>(tiles, resp, clc_full, clc_empty, [&](auto i, auto t) {
          return for_(range(steps), [&](auto k) {
            auto g = i * steps + k;
            auto s = stage<S>(g);
            return seq(if_(g >= int_c<S>, barrier_wait(empty[s])),  // the MMAs of step g - S have read the stage
                       copy_gmem_to_smem(a.block(order(t).m(0_c), k), as[s], full[s]), copy_gmem_to_smem(b.block(order(t).n(0_c), k), bs[s], full[s]));
          });
        });
        auto mma = clc_tiles<R, false>(tiles, resp, clc_full, clc_empty,
                                       [&](auto i, auto) { return mma_tile<S>(i, steps, as, bs, d, full, empty, acc_full, acc_empty); });
        auto epilogue = clc_tiles<R, false>(tiles, resp, clc_full, clc_empty, [&](auto i, auto t) {
          return tmem_subtile_tile<BN>(i, order(t).m(0_c), order(t).n(0_c), d, cs, c, acc_full, acc_empty);
        });
        return if_(thread_id() == 1_c, producer, if_(thread_id() == 2_c, mma, seq(epilogue, wait_smem_to_gmem(0_c), tmem_dealloc(d))));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "gemm_blackwell",
    .summary = "C = A * B^T (bf16 or fp8 in, f32 accumulate in TMEM, bf16 out; or int8 in, s32 accumulate, i32 out) on sm_100a: 128xBN tiles, S-stage TMA ring, one tcgen05_mma "
               "issuer, two TMEM accumulators so the epilogue overlaps the next tile's MMAs, persistent over tiles",
    .params = {{.name = "M", .default_value = 256, .help = "rows of A and C (any; --dynamic M: a launch argument)", .min = 128, .run_time = true},
               {.name = "N", .default_value = 256, .help = "rows of B, columns of C (at least BN; bf16 rows of 16-byte TMA units: a multiple of 8)", .min = 64, .multiple_of = 8},
               {.name = "K", .default_value = 256, .help = "the reduced dimension (a multiple of 8, at least 64; with fp8 a multiple of 16, at least 128)", .min = 64, .multiple_of = 8},
               {.name = "BN", .default_value = 256, .help = "columns of C per CTA: TMEM columns of D", .allowed = {64, 128, 256}},
               {.name = "stages", .default_value = 4, .help = "pipeline stages (48 KiB of SMEM each)", .allowed = {2, 3, 4}},
               {.name = "fp8", .default_value = 0, .help = "input types: 0 bf16 A and B (kind::f16); 1 e4m3 A and B, 2 e4m3 A and e5m2 B (kind::f8f6f4)",
                .allowed = {0, 1, 2}, .min = 0},
               {.name = "int8", .default_value = 0, .help = "8-bit integer inputs instead (kind::i8, s32 accumulator, C in i32): 1 s8 A and B, "
                "2 u8 A and s8 B; K as for fp8; stages=4, BN 128 or 256", .allowed = {0, 1, 2}, .min = 0},
               {.name = "ctas", .default_value = 0, .help = "CTAs in the grid, each looping over output tiles (e.g. 148, the SMs of a B200); "
                "0: one per tile; more than the tiles: one per tile", .min = 0},
               {.name = "raster", .default_value = 8, .help = "persistent tile order: bands of this many rows of tiles, column by column "
                "(L2-friendly; 1: row-major)", .min = 1, .max = 64},
               {.name = "clc", .default_value = 0, .help = "1: one CTA per tile, each taking over the tiles of CTAs not yet started by cluster "
                "launch control (dynamic persistent; bf16, BN=256, stages=4, ctas=0)", .allowed = {0, 1}, .min = 0}},
    .build =
        [](param_values const& p) {
          const auto N = p.at("N"), K = p.at("K"), bn = p.at("BN"), fp8 = p.at("fp8"), int8 = p.at("int8");
          if (N < bn)
            throw usage_error("gemm_blackwell: N=" + std::to_string(N) + " must be at least BN=" + std::to_string(bn) + " (a TMA box of B may overhang N, not exceed it)");
          check_8bit_inputs("gemm_blackwell", K, fp8, int8);
          const auto M = size_param(p, "M");
          if (p.at("clc") == 1) {
            if (fp8 != 0 || int8 != 0 || bn != 256 || p.at("stages") != 4 || p.at("ctas") != 0)
              throw usage_error("gemm_blackwell: clc=1 is offered for bf16 (fp8=0, int8=0), BN=256, stages=4 and ctas=0 (one CTA per tile), got fp8=" +
                                std::to_string(fp8) + " int8=" + std::to_string(int8) + " BN=" + std::to_string(bn) + " stages=" + std::to_string(p.at("stages")) +
                                " ctas=" + std::to_string(p.at("ctas")));
            return lower(gemm_blackwell_clc<4, 256>(M, N, K, p.at("raster")));
          }
          const size_expr tile_ctas = ceil_div(M, BM) * ceil_div(N, bn);  // one CTA per output tile
          const size_expr grid_ctas = p.at("ctas") == 0 ? tile_ctas : min(p.at("ctas"), tile_ctas);
          if (int8 != 0) {
            // 4 stages (48 KiB each at BN = 256, as bf16's) and BN 128 or 256: 4 instantiations
            // where every ring depth and width would be 18, a third of this file's compile time.
            if (p.at("stages") != 4 || bn == 64)
              throw usage_error("gemm_blackwell: int8=" + std::to_string(int8) + " is offered with stages=4 and BN=128 or 256, got stages=" +
                                std::to_string(p.at("stages")) + " BN=" + std::to_string(bn));
            return dispatch<128, 256>(bn, [&](auto B) {
              constexpr long long b = decltype(B)::value;
              if (int8 == 1) return lower(gemm_blackwell<4, b, i8, i8>(M, N, K, grid_ctas, p.at("raster")));
              return lower(gemm_blackwell<4, b, u8, i8>(M, N, K, grid_ctas, p.at("raster")));
            });
          }
          return dispatch<2, 3, 4>(p.at("stages"), [&](auto S) {
            return dispatch<64, 128, 256>(bn, [&](auto B) {
              constexpr long long s = decltype(S)::value, b = decltype(B)::value;
              if (fp8 == 1) return lower(gemm_blackwell<s, b, e4m3, e4m3>(M, N, K, grid_ctas, p.at("raster")));
              if (fp8 == 2) return lower(gemm_blackwell<s, b, e4m3, e5m2>(M, N, K, grid_ctas, p.at("raster")));
              return lower(gemm_blackwell<s, b>(M, N, K, grid_ctas, p.at("raster")));
            });
          });
        },
    .reference = gemm_abt_reference,
});

}  // namespace
}  // namespace stagecraft::examples
