// C = A * B^T, bf16 or fp8 in, f32 accumulate (in TMEM), bf16 out (or s8/u8 in, s32 accumulate,
// i32 out): the Blackwell GEMM over a CTA pair.
//
// A cluster of 2 along grid axis 0 is one pair, and the pair owns a 256 x BN tile of C: one
// tcgen05_mma_2cta (cta_group::2, m256nBNk16) computes all of it. Each CTA holds its half of
// both operands, at the same SMEM offsets: A's 128 rows of its own, and BN / 2 of B's rows (the
// even CTA the first half); each CTA's TMEM receives its 128 rows of D, the whole BN. So each CTA
// streams half of the B tile the pair needs: the pair reads B once where two gemm_blackwell CTAs
// would each read all of it.
//
// Persistent (ctas = N: N / (2 mc) clusters; 0: one cluster per tile): cluster c computes tiles
// c, c + clusters, ... and each CTA keeps two accumulators in a TMEM ring d, as gemm_blackwell
// does: the even CTA's MMA thread accumulates tile i into stage i % 2 once both CTAs' epilogues
// have handed back what tile i - 2 left there (acc_empty, a cluster barrier of the pair: each
// epilogue arrives in both CTAs), and commits to acc_full[i % 2] in both CTAs after the tile's
// last K slice. So the epilogue of tile i overlaps the pair's MMAs of tile i + 1. The hand-back is
// a .cluster release (ir::cluster_barrier_scope): the odd CTA's epilogue read TMEM that the even
// CTA's next MMA overwrites, and a .cta arrival publishes no TMEM read to another CTA.
//
// Roles (threads(warpgroup, warp, warp): the epilogue a warpgroup, the producer and the MMA
// issuer one warp each), in both CTAs:
//   - the producer (role 1) streams A (128 x 64) and its half of B (BN/2 x 64) through an S-deep ring with
//     TMA loads of the pair (copy_gmem_to_smem(..., pair_leader): .cta_group::2): each lands in
//     its own CTA's SMEM, and both CTAs' bytes complete on full[s] of the even CTA, whose
//     producer alone arrives there, expecting both halves. So full[s] completes in the even CTA
//     once the whole stage of the pair has landed, with no relay between the CTAs;
//   - the even CTA's MMA warp (role 2) waits for full[s], issues the pair's MMA over the stage and frees
//     it with tcgen05_commit_arrive_2cta(empty[s]), whose multicast arrives on empty[s] in both
//     CTAs once the MMA has read both halves; after the tile's last K slice it commits to
//     acc_full (both CTAs). The odd CTA's MMA warp has nothing to do;
//   - the epilogue (role 0) waits on its CTA's acc_full, reads its 128 rows of D from TMEM 64 columns at a
//     time, rounds each subtile to bf16 into one of two SMEM buffers and stores it with TMA (as in
//     gemm_blackwell), then hands the accumulator back.
// The odd CTA's TMEM and SMEM are read and written by an instruction issued in the other CTA: its
// producer refills a stage and its epilogue reads D only after its own barrier received the commit.
// fp8 = 1 (e4m3 A and B) or 2 (e4m3 A, e5m2 B): kind::f8f6f4, m256nBNk32, with 128-wide K slices
// (one 128-byte swizzled row, as 64 bf16 are), as in gemm_blackwell. int8 = 1 (s8 A and B) or 2
// (u8 A, s8 B): kind::i8 into tmem<i32>, C in i32, exact, as in gemm_blackwell.
//
// mc = 2: a cluster of (2, 2), two pairs side by side along grid axis 1, the tiles of C at the
// same rows and adjacent columns. Both pairs read the same A rows, so each CTA loads half of its
// 128 rows of A (64) and the TMA multicasts them into the CTA at the same place in the other pair
// (copy_gmem_to_smem(..., collective_axes(1_c), pair_leader)): each CTA's as[s] fills from two
// CTAs' loads, whose bytes complete on the full[s] of that CTA's pair leader, and the cluster
// reads A once where two pairs would read it twice. So a CTA's refill of stage s writes into the
// other pair's SMEM too: it may start only once both pairs' MMAs over the stage completed. Each
// pair's commit therefore arrives in all four CTAs (tcgen05_commit_arrive_2cta(empty[s],
// collective_axes(1_c))) and empty[s] counts two arrivals, one per pair. acc_full and acc_empty
// stay the pair's own: only its MMAs write this CTA's TMEM.
#include <string>
#include <type_traits>

#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "gemm_blackwell_epilogue.hpp"
#include "gemm_reference.hpp"

namespace stagecraft::examples {
namespace {


constexpr long long BM = 128;  // rows of one CTA; the pair's tile has 2 BM

// TA, TB: bf16 and bf16, each of e4m3/e5m2, or i8 B with i8 or u8 A. BK: K per stage, one
// 128-byte row. MC: pairs per cluster along grid axis 1, which share (multicast) A. TD, TC: the
// accumulator and C, f32 and bf16, or i32 and i32 for 8-bit integers (cta_group::2 kind::i8).
template <long long S, long long BN, class TA = bf16, class TB = bf16, long long MC = 1>
auto gemm_blackwell_2cta(std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t clusters, std::int64_t raster) {
  constexpr long long HN = BN / 2;  // B's rows (C's columns) each CTA holds
  constexpr long long BK = 128 * 8 / TA::bits;
  constexpr bool integer = ir::dtype_is_int8(TA::code);
  using TD = std::conditional_t<integer, i32, f32>;
  using TC = std::conditional_t<integer, i32, bf16>;
  constexpr long long W = 1024 / TC::bits;  // the epilogue's subtile: one 128-byte row of C
  auto pairs = [] {
    if constexpr (MC == 1) return cluster(2_c);
    else return cluster(2_c, int_c<MC>);
  }();
  auto ctas = [clusters] {  // axis 0: the clusters' pairs side by side; axis 1: the MC pairs of a cluster
    if constexpr (MC == 1) return grid(2 * clusters);
    else return grid(2 * clusters, int_c<MC>);
  }();
  // The A load and the stage's release: the pair's own, or shared with the pairs along axis 1.
  auto load_a = [](auto src, auto dst, auto bar) {
    if constexpr (MC == 1) return copy_gmem_to_smem(src, dst, bar, pair_leader);
    else return copy_gmem_to_smem(src, dst, bar, collective_axes(1_c), pair_leader);  // this CTA's 128 / MC rows, into every pair
  };
  auto release = [](auto bar) {
    if constexpr (MC == 1) return tcgen05_commit_arrive_2cta(bar);
    else return tcgen05_commit_arrive_2cta(bar, collective_axes(1_c));  // every CTA whose A this pair's MMA read
  };
  return kernel<sm_100a>(
      "gemm_blackwell_2cta", ctas, threads(warpgroup, warp, warp), pairs,
      gmem<TA>("a", shape(M, K)),                                              // (m, k)
      gmem<TB>("b", shape(N, K)),                                              // (n, k): C = A * B^T
      gmem<TC>("c", shape(M, N)),                                              // (m, n)
      smem<TA>(shape(int_c<S>, int_c<BM>, int_c<BK>), swizzle(128_c)),         // as: (stage, m, k), this CTA's rows
      smem<TB>(shape(int_c<S>, int_c<HN>, int_c<BK>), swizzle(128_c)),         // bs: (stage, n, k), this CTA's half of B
      // cs: the epilogue's two subtile buffers, BM x W of 128-byte swizzled rows (one TMA box
      // each): thread t writes row t 16 bytes at a time, and the swizzle spreads a warp's 32 rows
      // over every bank (unswizzled, rows 128 bytes apart share them: 8-way).
      smem<TC>(shape(2_c, int_c<BM>, int_c<W>), swizzle(128_c)),               // (buffer, m, n)
      barrier(arrivals(2_c), count(int_c<S>)),                                 // full[stage]: the pair's A and B landed (the even CTA's)
      barrier(arrivals(int_c<MC>), count(int_c<S>), orders_tensor_core),       // empty[stage]: every pair's MMA reading it completed
      barrier(arrivals(1_c), count(2_c), orders_tensor_core),                  // acc_full[b]: this CTA's rows of accumulator b are complete
      cluster_barrier(collective_axes(0_c), arrivals(1_c), count(2_c)),        // acc_empty[b]: both CTAs' epilogues have read accumulator b (one each)
      tmem<TD>(shape(2_c, 128_c, int_c<BN>)),                                  // d: (b, m, n), this CTA's rows of two accumulators
      [M, N, K, clusters, raster, load_a, release](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto empty, auto acc_full, auto acc_empty,
                                           auto d) {
        // Partial tiles: edge tiles overhang A, B and C (TMA fills the loads' outside with zeros,
        // which add nothing, and C's store drops it). A CTA whose A rows or B half lie wholly
        // past the end (the odd CTA of the last pair, the second half of a narrow last tile)
        // loads the last block instead -- a load wholly outside is a runaway index to the
        // interpreter -- and its D rows are never stored: its store lies wholly outside.
        const std::int64_t steps = ceil_div(K, BK), blocks_m = ceil_div(M, BM), halves_n = ceil_div(N, HN);
        auto half = cluster_idx(0_c);                // 0: the even CTA, which issues
        // Cluster c's 2 BM x MC BN tiles c, c + clusters, ... in bands of `raster` rows of tiles
        // (static_schedule: L2-friendly).
        const auto sched = static_schedule(compiled_in(ceil_div(M, 2 * BM)), ceil_div(N, MC * BN), compiled_in(clusters), program_id(0_c) / 2_c, raster);
        const size_expr rounds = sched.rounds();  // the most tiles a cluster gets
        auto valid = [&](auto i) { return sched.valid(i); };
        auto m = [&](auto i) { return sched.m(i) * 2_c + half; };  // this CTA's 128-row block
        auto n = [&](auto i) {                                     // this pair's BN-column tile
          if constexpr (MC == 1) return sched.n(i);
          else return sched.n(i) * int_c<MC> + cluster_idx(1_c);
        };
        // One flat loop over the cluster's K slices, tile after tile.
        auto producer = for_(range(rounds * steps), [&](auto g) {
          auto i = g / steps, k = g % steps;
          auto s = stage<S>(g);
          return if_(valid(i), seq(if_(g >= int_c<S>, barrier_wait(empty[s])),  // every pair MMA of step g - S has read the stage
                                          load_a(a.block(min(m(i), blocks_m - 1), k), as[s], full[s]),
                                          copy_gmem_to_smem(b.block(min(n(i) * 2_c + half, halves_n - 1), k), bs[s], full[s], pair_leader)));
        });
        auto mma = for_(range(rounds), [&](auto i) {
          auto acc = stage<2>(i);
          auto k_loop = for_(range(steps), [&](auto k) {
            auto s = stage<S>(i * steps + k);
            return seq(barrier_wait(full[s]), tcgen05_mma_2cta(d[acc], as[s], transpose(bs[s]), k > 0_c), release(empty[s]));
          });
          return if_(valid(i), seq(if_(i >= 2_c, barrier_wait(acc_empty[acc])),  // both epilogues have read tile i - 2's accumulator
                                          k_loop, tcgen05_commit_arrive_2cta(acc_full[acc])));
        });
        auto epilogue = tmem_subtile_epilogue<BN>(rounds, valid, m, n, d, cs, c, acc_full, acc_empty);
        // Every pair MMA into this CTA's d completed before the last acc_full its epilogue waited on.
        return if_(thread_id() == 1_c, producer,
                   if_(thread_id() == 2_c, if_(half == 0_c, mma), seq(epilogue, wait_smem_to_gmem(0_c), tmem_dealloc(d))));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "gemm_blackwell_2cta",
    .summary = "C = A * B^T (bf16 or fp8 in, f32 accumulate in TMEM, bf16 out; or int8 in, s32 accumulate, i32 out) on sm_100a over CTA pairs: 256xBN tiles, one tcgen05_mma_2cta "
               "(cta_group::2) issuer per pair, each CTA holding half of A and B, multicast commits, two TMEM accumulators per CTA, persistent over tiles; "
               "mc=2: two pairs per cluster share A by TMA multicast",
    .params = {{.name = "M", .default_value = 256, .help = "rows of A and C (any)", .min = 128},
               {.name = "N", .default_value = 512, .help = "rows of B, columns of C (at least BN; bf16 rows of 16-byte TMA units: a multiple of 8)", .min = 64, .multiple_of = 8},
               {.name = "K", .default_value = 256, .help = "the reduced dimension (a multiple of 8, at least 64; with fp8 a multiple of 16, at least 128)", .min = 64, .multiple_of = 8},
               {.name = "BN", .default_value = 256, .help = "columns of C per pair tile: TMEM columns of D in each CTA", .allowed = {64, 128, 256}},
               {.name = "stages", .default_value = 3, .help = "pipeline stages (16 KiB of A and BN/2 rows of B each)", .allowed = {2, 3}},
               {.name = "fp8", .default_value = 0, .help = "input types: 0 bf16 A and B (kind::f16); 1 e4m3 A and B, 2 e4m3 A and e5m2 B (kind::f8f6f4)",
                .allowed = {0, 1, 2}, .min = 0},
               {.name = "int8", .default_value = 0, .help = "8-bit integer inputs instead (cta_group::2 kind::i8, s32 accumulator, C in i32): 1 s8 A and "
                "B, 2 u8 A and s8 B; K as for fp8; stages=3, BN 128 or 256, mc=1", .allowed = {0, 1, 2}, .min = 0},
               {.name = "mc", .default_value = 1, .help = "pairs per cluster along N: 1, or 2 sharing A by TMA multicast (N a multiple of 2 BN)",
                .allowed = {1, 2}},
               {.name = "ctas", .default_value = 0, .help = "CTAs in the grid, clusters of 2 x mc each looping over 256 x mc BN tiles (e.g. 148, the SMs "
                "of a B200); 0: one cluster per tile; more than the tiles need: one cluster per tile", .min = 0},
               {.name = "raster", .default_value = 8, .help = "persistent tile order: bands of this many rows of tiles, column by column "
                "(L2-friendly; 1: row-major)", .min = 1, .max = 64}},
    .build =
        [](param_values const& p) {
          const auto N = p.at("N"), K = p.at("K"), bn = p.at("BN"), fp8 = p.at("fp8"), int8 = p.at("int8"), mc = p.at("mc");
          if (N < bn)
            throw usage_error("gemm_blackwell_2cta: N=" + std::to_string(N) + " must be at least BN=" + std::to_string(bn) +
                              " (a TMA box of C may overhang N, not exceed it)");
          check_8bit_inputs("gemm_blackwell_2cta", K, fp8, int8);
          const std::int64_t tiles = ceil_div(p.at("M"), 2 * BM) * ceil_div(N, mc * bn), ctas = p.at("ctas");
          if (ctas != 0 && ctas < 2 * mc)
            throw usage_error("gemm_blackwell_2cta: ctas=" + std::to_string(ctas) + " is less than one cluster of " + std::to_string(2 * mc) + " CTAs (mc=" +
                              std::to_string(mc) + ")");
          const std::int64_t clusters = ctas == 0 ? tiles : std::min(ctas / (2 * mc), tiles);  // a remainder of CTAs short of a cluster idles
          if (int8 != 0) {
            // 3 stages, BN 128 or 256 and one pair per cluster: 4 instantiations (compile time).
            if (p.at("stages") != 3 || bn == 64 || mc != 1)
              throw usage_error("gemm_blackwell_2cta: int8=" + std::to_string(int8) + " is offered with stages=3, BN=128 or 256 and mc=1, got stages=" +
                                std::to_string(p.at("stages")) + " BN=" + std::to_string(bn) + " mc=" + std::to_string(mc));
            return dispatch<128, 256>(bn, [&](auto B) {
              constexpr long long b = decltype(B)::value;
              if (int8 == 1) return lower(gemm_blackwell_2cta<3, b, i8, i8>(p.at("M"), N, K, clusters, p.at("raster")));
              return lower(gemm_blackwell_2cta<3, b, u8, i8>(p.at("M"), N, K, clusters, p.at("raster")));
            });
          }
          return dispatch<2, 3>(p.at("stages"), [&](auto S) {
            return dispatch<64, 128, 256>(bn, [&](auto B) {
              return dispatch<1, 2>(mc, [&](auto C) {
                constexpr long long s = decltype(S)::value, b = decltype(B)::value, c = decltype(C)::value;
                if (fp8 == 1) return lower(gemm_blackwell_2cta<s, b, e4m3, e4m3, c>(p.at("M"), N, K, clusters, p.at("raster")));
                if (fp8 == 2) return lower(gemm_blackwell_2cta<s, b, e4m3, e5m2, c>(p.at("M"), N, K, clusters, p.at("raster")));
                return lower(gemm_blackwell_2cta<s, b, bf16, bf16, c>(p.at("M"), N, K, clusters, p.at("raster")));
              });
            });
          });
        },
    .reference = gemm_abt_reference,
});

}  // namespace
}  // namespace stagecraft::examples
