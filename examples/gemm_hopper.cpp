// C = A * B^T, bf16 in, f32 accumulate, bf16 out: the warp-specialized Hopper GEMM.
//
// Each CTA owns a 128 x 256 tile of C; by default two CTAs form a cluster that shares A (below). Warpgroup 0 (the producer) streams 64-wide K slices of A
// (128 x 64, as two 64-row halves) and B (256 x 64) through an S-deep ring of 128-byte swizzled
// stages with TMA; warpgroups 1 and 2 (the consumers) each own one 64-row half of the tile and
// a 64 x 256 f32 accumulator in registers (128 per thread). Per stage a consumer issues one wgmma
// over the slice (4 instructions of m64n256k16), waits for it and releases the stage to the
// producer. The epilogue rounds to bf16 into SMEM, and one TMA store per consumer writes it out.
//
// A is declared (M/64, 64, K) -- the same bytes as (M, K) -- so that one TMA box lands as a
// (2, 64, 64) stage whose halves the two consumers index (as in ws_copy).
#include <string>

#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

constexpr long long BM = 128, BN = 256, BK = 64;

// The CTA's work, with the pipeline's barriers given. Cl = 1: the library's warp-specialized
// pipeline. Cl = 2: the two CTAs of a 2x1 cluster (neighbours along N) need the same A tile, so
// each loads one 64-row half with a multicast TMA copy that lands in both CTAs; a stage may then
// be refilled only when the consumers of *both* CTAs are done with it, so `consumed` is a cluster
// barrier (each consumer's arrival reaches both CTAs: 2 x 2 per phase). The library's pipeline
// issues CTA-local copies and releases, so this one is written out.
template <long long S, long long Cl>
auto gemm_body(std::int64_t K) {
  return [K](auto a, auto b, auto c, auto as, auto bs, auto cs, auto ready, auto consumed, auto acc) {
    auto n = program_id(0_c);
    auto m = program_id(1_c);
    const std::int64_t steps = K / BK;
    auto mma = [&](auto half, auto a_k, auto b_k) {  // a_k: (2, 64, 64), b_k: (256, 64)
      return seq(wgmma(acc, a_k[half], transpose(b_k)), wgmma_commit(), wgmma_wait(0_c));
    };
    auto zero = [&](auto) { return store(acc, 0.0f); };
    auto epilogue = [&](auto half) {
      return seq(store(cs[half], cast<bf16>(load(acc))), commit_smem(), copy_smem_to_gmem(cs[half], c.block(m * 2_c + half, n)),
                 commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
    };
    if constexpr (Cl == 1) {
      return emit_pipeline_warp_specialized<S, 2>(
          steps, ready, consumed,
          ins(in(a, as, [&](auto k) { return a.block(m, 0_c, k); }), in(b, bs, [&](auto k) { return b.block(n, k); })),
          [&](auto, auto half, auto a_k, auto b_k) { return mma(half, a_k, b_k); }, zero, epilogue);
    } else {
      auto producer = for_(range(steps), [&](auto j) {
        auto s = stage<S>(j);
        return seq(if_(j >= int_c<S>, barrier_wait(consumed[s])),  // both CTAs released step j - S
                   copy_gmem_to_smem(a.block(m, 0_c, j), as[s], ready[s], collective_axes(0_c)),
                   copy_gmem_to_smem(b.block(n, j), bs[s], ready[s]));
      });
      auto consumer = [&](auto half) {
        auto loop = for_(range(steps), [&](auto j) {
          auto s = stage<S>(j);
          return seq(barrier_wait(ready[s]), mma(half, as[s], bs[s]), barrier_arrive(consumed[s]));
        });
        return seq(zero(half), loop, epilogue(half));
      };
      return if_(thread_id() == 0_c, producer, seq(if_(thread_id() == 1_c, consumer(0_c)), if_(thread_id() == 2_c, consumer(1_c))));
    }
  };
}

template <long long S, long long Cl>
auto gemm_hopper(std::int64_t M, std::int64_t N, std::int64_t K) {
  auto a = gmem<bf16>("a", shape(M / 64, 64_c, K));                        // (m / 64, m % 64, k)
  auto b = gmem<bf16>("b", shape(N, K));                                   // (n, k): C = A * B^T
  auto c = gmem<bf16>("c", shape(M, N));                                   // (m, n)
  auto as = smem<bf16>(shape(int_c<S>, 2_c, 64_c, int_c<BK>), swizzle(128_c));   // (stage, half, m, k), K-major
  auto bs = smem<bf16>(shape(int_c<S>, int_c<BN>, int_c<BK>), swizzle(128_c));  // (stage, n, k), K-major
  auto cs = smem<bf16>(shape(2_c, 64_c, int_c<BN>));                       // each consumer's half of the C tile
  auto ready = barrier(arrivals(2_c), count(int_c<S>));                    // ready[stage]: A and B landed
  auto acc = accumulator<f32>(shape(64_c, int_c<BN>));                     // each consumer's own (m, n)
  if constexpr (Cl == 1)
    return kernel<sm_90a>("gemm_hopper", grid(N / BN, M / BM), threads(3_c), a, b, c, as, bs, cs, ready,
                          barrier(arrivals(2_c), count(int_c<S>)),  // consumed[stage]: both consumers are done
                          acc, gemm_body<S, Cl>(K));
  else
    return kernel<sm_90a>("gemm_hopper", grid(N / BN, M / BM), threads(3_c), cluster(2_c), a, b, c, as, bs, cs, ready,
                          cluster_barrier(collective_axes(0_c), arrivals(2_c), count(int_c<S>)),  // consumed: both CTAs' consumers
                          acc, gemm_body<S, Cl>(K));
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "gemm_hopper",
    .summary = "C = A * B^T (bf16 in, f32 accumulate, bf16 out): 128x256x64 tiles, S-stage TMA ring, 1 producer + 2 wgmma consumer warpgroups",
    .params = {{.name = "M", .default_value = 256, .help = "rows of A and C (a multiple of 128)", .min = 128, .multiple_of = 128},
               {.name = "N", .default_value = 512, .help = "rows of B, columns of C (a multiple of 256; of 512 with cluster=2)", .min = 256,
                .multiple_of = 256},
               {.name = "K", .default_value = 256, .help = "the reduced dimension (a multiple of 64)", .min = 64, .multiple_of = 64},
               {.name = "stages", .default_value = 3, .help = "pipeline stages (48 KB of SMEM each)", .allowed = {2, 3}},
               {.name = "cluster", .default_value = 2, .help = "CTAs per cluster along N, sharing A by multicast", .allowed = {1, 2}}},
    .build =
        [](param_values const& p) {
          const auto N = p.at("N"), cl = p.at("cluster");
          if (N % (BN * cl) != 0)
            throw usage_error("gemm_hopper: N=" + std::to_string(N) + " must be a multiple of " + std::to_string(BN * cl) + " with cluster=" +
                              std::to_string(cl) + " (whole clusters of 256-column tiles)");
          return dispatch<2, 3>(p.at("stages"), [&](auto S) {
            return dispatch<1, 2>(cl, [&](auto C) {
              return lower(gemm_hopper<decltype(S)::value, decltype(C)::value>(p.at("M"), N, p.at("K")));
            });
          });
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
