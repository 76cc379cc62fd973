// C = relu(A) * B^T, bf16 in, f32 accumulate (in TMEM), bf16 out, with A read by the tensor core
// from TMEM: the [a_tmem] form of tcgen05.mma, which exists so that an operand computed in
// registers (FlashAttention-4 keeps P = softmax(S) there) reaches the tensor core without a
// round trip through SMEM. Here the computation is a ReLU on A.
//
// Each CTA owns a 128 x BN tile of C. Three roles, one warpgroup each:
//   - the producer streams K slices of A (128 x 64) and B (BN x 64) through an S-deep ring of
//     128-byte swizzled stages with TMA;
//   - the converter waits for a stage, reads its A slice into registers, applies the ReLU and
//     writes it into TMEM with store_tmem (tcgen05.st 32x32b: thread t writes lane t, row t of A;
//     two bf16 to a 32-bit column, so 64 of K take 32 columns), then arrives on a_full. Before
//     overwriting those columns it waits on a_free, which the MMA issuer's commit arrives on once
//     the previous MMA reading them has completed;
//   - the MMA issuer waits on a_full, issues one tcgen05_mma(d, at, transpose(bs[s]), ...) (4
//     instructions of kind::f16 m128nBNk16, each reading 8 columns of `at`), then commits to
//     empty[s] (the stage's B, and the converter's A reads of it, are done) and to a_free; after
//     the last slice it commits to `done`;
//   - the converter then turns epilogue: waits on `done`, reads D (async_load_tmem), rounds to bf16
//     into SMEM, frees both TMEM allocations and stores the tile with TMA.
// One A buffer in TMEM: the converter of slice j + 1 overlaps the TMA ring, not the MMA of slice j.
// Any M >= 128, N >= BN and K >= 64 (N and K multiples of 8: bf16 rows in 16-byte TMA units): the
// last tiles overhang, TMA fills A's and B's outside with zeros and drops C's.
#include <string>

#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "gemm_reference.hpp"

namespace stagecraft::examples {
namespace {

constexpr long long BM = 128, BK = 64;

template <long long S, long long BN>
auto gemm_blackwell_ts(size_expr M, std::int64_t N, std::int64_t K) {
  return kernel<sm_100a>(
      "gemm_blackwell_ts", grid(ceil_div(N, BN), ceil_div(M, BM)), threads(3_c),
      gmem<bf16>("a", shape(M, K)),                                              // (m, k)
      gmem<bf16>("b", shape(N, K)),                                              // (n, k): C = relu(A) * B^T
      gmem<bf16>("c", shape(M, N)),                                              // (m, n)
      smem<bf16>(shape(int_c<S>, int_c<BM>, int_c<BK>), swizzle(128_c)),         // as: (stage, m, k)
      smem<bf16>(shape(int_c<S>, int_c<BN>, int_c<BK>), swizzle(128_c)),         // bs: (stage, n, k), K-major
      // cs: the epilogue's staging tile, as BM x 64 tiles of 128-byte swizzled rows (one TMA box
      // each): thread t writes row t 16 bytes at a time, and the swizzle spreads a warp's 32 rows
      // over every bank (unswizzled, rows 2 BN bytes apart share them: 8-way).
      smem<bf16>(shape(int_c<BM>, int_c<BN>), tiling(int_c<BM>, 64_c), swizzle(128_c)),
      barrier(arrivals(2_c), count(int_c<S>)),                                   // full[stage]: A and B landed
      barrier(arrivals(1_c), count(int_c<S>), orders_tensor_core),               // empty[stage]: the MMA reading it completed
      barrier(arrivals(1_c)),                                                    // a_full: relu(A)'s slice is in TMEM
      barrier(arrivals(1_c), orders_tensor_core),                                // a_free: the MMA reading it completed
      barrier(arrivals(1_c), orders_tensor_core),                                // done: D is complete
      tmem<f32>(shape(128_c, int_c<BN>)),                                        // d: (m, n) in BN TMEM columns
      tmem<bf16>(shape(128_c, int_c<BK>)),                                       // at: relu(A) (m, k), 32 columns
      [K](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto empty, auto a_full, auto a_free, auto done, auto d, auto at) {
        auto n = program_id(0_c);
        auto m = program_id(1_c);
        const std::int64_t steps = ceil_div(K, BK);  // a K tail loads zeros (TMA's fill): relu(0) * b adds nothing
        auto producer = for_(range(steps), [&](auto j) {
          auto s = stage<S>(j);
          return seq(if_(j >= int_c<S>, barrier_wait(empty[s])),  // the MMA of step j - S (and the converter's reads) are done
                     copy_gmem_to_smem(a.block(m, j), as[s], full[s]), copy_gmem_to_smem(b.block(n, j), bs[s], full[s]));
        });
        auto mma = seq(for_(range(steps),
                            [&](auto j) {
                              auto s = stage<S>(j);
                              return seq(barrier_wait(full[s]), barrier_wait(a_full), tcgen05_mma(d, at, transpose(bs[s]), j > 0_c),
                                         tcgen05_commit_arrive(empty[s]), tcgen05_commit_arrive(a_free));
                            }),
                       tcgen05_commit_arrive(done));
        auto convert = for_(range(steps), [&](auto j) {
          auto s = stage<S>(j);
          // (128, 64) bf16: row i is TMEM lane i, written by thread i of this warpgroup
          return seq(barrier_wait(full[s]), if_(j > 0_c, barrier_wait(a_free)), store_tmem(at, max(load(as[s]), 0.0f)), barrier_arrive(a_full));
        });
        auto epilogue = seq(barrier_wait(done), store(cs, cast<bf16>(async_load_tmem(d))), tmem_dealloc(d), tmem_dealloc(at), commit_smem(),
                            copy_smem_to_gmem(cs, c.block(m, n)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
        return if_(thread_id() == 0_c, producer, if_(thread_id() == 1_c, mma, seq(convert, epilogue)));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "gemm_blackwell_ts",
    .summary = "C = relu(A) * B^T (bf16 in, f32 accumulate in TMEM, bf16 out) on sm_100a with A read from TMEM: a warpgroup applies the ReLU "
               "in registers and writes A with store_tmem (tcgen05.st), the MMA takes it in the [a_tmem] form",
    .params = {{.name = "M", .default_value = 256, .help = "rows of A and C (any; --dynamic M: a launch argument)", .min = 128, .run_time = true},
               {.name = "N", .default_value = 256, .help = "rows of B, columns of C (at least BN; a multiple of 8)", .min = 64, .multiple_of = 8},
               {.name = "K", .default_value = 256, .help = "the reduced dimension (a multiple of 8)", .min = 64, .multiple_of = 8},
               {.name = "BN", .default_value = 256, .help = "columns of C per CTA: TMEM columns of D", .allowed = {64, 128, 256}},
               {.name = "stages", .default_value = 3, .help = "pipeline stages", .allowed = {2, 3}}},
    .build =
        [](param_values const& p) {
          const auto N = p.at("N"), bn = p.at("BN");
          if (N < bn)
            throw usage_error("gemm_blackwell_ts: N=" + std::to_string(N) + " must be at least BN=" + std::to_string(bn) + " (a TMA box of B fits in B)");
          return dispatch<2, 3>(p.at("stages"), [&](auto S) {
            return dispatch<64, 128, 256>(bn, [&](auto B) { return lower(gemm_blackwell_ts<decltype(S)::value, decltype(B)::value>(size_param(p, "M"), N, p.at("K"))); });
          });
        },
    .reference = gemm_relu_abt_reference,
});

}  // namespace
}  // namespace stagecraft::examples
