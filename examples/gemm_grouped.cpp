// Grouped GEMM: C_g = A_g * B_g^T for G groups of different row counts in one launch (an MoE
// layer's experts, each with the tokens routed to it).
//
// The groups' rows are packed: A (T, K) and C (T, N) hold group g in rows [t[g], t[g + 1]) of a
// segment table t (segment_offsets: 0 = t[0] <= ... <= t[G] = T, any sizes, empty groups too),
// and B (G * N, K) holds group g's B in rows [g * N, (g + 1) * N). CTA (n, y, g) computes the
// 64 x BN tiles y, y + R, y + 2R, ... of group g's rows against column block n: the number of
// tiles is read from the table at run time (t.at(g)), so one compiled kernel serves every
// distribution of rows, and R (CTAs per group along M) only trades occupancy for idle CTAs.
//
// One S-deep TMA ring runs over the CTA's whole share, steps(tiles, K slices), so its barrier
// phases continue from tile to tile. A, B and C are windows of rows (x.rows(lo, hi)): TMA boxes
// of A may read on into the next group's rows (the tensor map knows only the packed array), which
// only feeds C rows past the window; the epilogue stores the accumulator with a masked generic
// store that drops them, and the columns past N, so no CTA writes another group's rows.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

template <long long S, long long BN>
// T (the packed rows) is a size: with --dynamic T one compiled kernel serves every total, as an MoE
// layer's token count changes from step to step (the split among groups is already read at run
// time from the table).
auto gemm_grouped(std::int64_t G, size_expr T, std::int64_t N, std::int64_t K, std::int64_t R) {
  constexpr long long KT = 64;  // a K slice: 64 bf16, the 128-byte swizzle's row
  return kernel<sm_90a>(
      "gemm_grouped", grid(ceil_div(N, BN), R, G), threads(1_c),
      gmem<bf16>("a", shape(T, K)),                                    // (t, k): every group's rows, packed
      segment_offsets("offsets", G, T),                                // (G + 1): group g is rows [t[g], t[g + 1])
      gmem<bf16>("b", shape(G * N, K)),                                // (g * N + n, k): C_g = A_g * B_g^T
      gmem<f32>("c", shape(T, N)),                                     // (t, n)
      smem<bf16>(shape(int_c<S>, 64_c, int_c<KT>), swizzle(128_c)),    // as: (stage, m, k), K-major
      smem<bf16>(shape(int_c<S>, int_c<BN>, int_c<KT>), swizzle(128_c)),  // bs: (stage, n, k), K-major
      barrier(arrivals(2_c), count(int_c<S>)),                         // full[stage]: A and B landed
      accumulator<f32>(shape(64_c, int_c<BN>)),                        // acc: (m, n) in registers
      [&](auto a, auto offsets, auto b, auto c, auto as, auto bs, auto full, auto acc) {
        auto n = program_id(0_c);
        auto y = program_id(1_c);
        auto g = program_id(2_c);
        auto lo = offsets.at(g), hi = offsets.at(g + 1_c);
        auto tiles = (hi - lo + 63_c) / 64_c;                       // the group's 64-row tiles
        auto mine = (max(tiles - y, 0_c) + (R - 1)) / R;            // tiles y, y + R, ... of them
        const auto k_slices = ceil_div(K, KT);
        auto a_g = a.rows(lo, hi);                                   // group g's rows of A, of C
        auto c_g = c.rows(lo, hi);
        auto b_g = b.rows(g * N, g * N + N);                         // group g's B
        return emit_pipeline<S>(
            steps(mine, k_slices), full,
            ins(in(a, as, [&](auto t, auto k) { return a_g.block(y + t * R, k); }),
                in(b, bs, [&](auto, auto k) { return b_g.block(n, k); })),
            outs(),
            [&](auto t, auto k, auto a_k, auto b_k) {  // a_k: (64, KT), b_k: (BN, KT)
              return seq(if_(k == 0_c, store(acc, 0)),
                         wgmma(acc, a_k, transpose(b_k)), wgmma_commit(), wgmma_wait(0_c),
                         if_(k == k_slices - 1, store(c_g.tile(shape(64_c, int_c<BN>), masked(), y + t * R, n), load(acc))));
            });
      });
}

// C_g = A_g * B_g^T in double, rounded once, group by group (the table is what the run used).
void gemm_grouped_reference(std::vector<host_tensor>& t, param_values const& p) {
  const std::int64_t G = p.at("G"), N = p.at("N"), K = p.at("K");
  auto const& a = t[0];
  auto const& offsets = t[1];
  auto const& b = t[2];
  for (std::int64_t g = 0; g < G; ++g)
    for (auto i = static_cast<std::int64_t>(offsets.get(g)); i < static_cast<std::int64_t>(offsets.get(g + 1)); ++i)
      for (std::int64_t j = 0; j < N; ++j) {
        double sum = 0;
        for (std::int64_t k = 0; k < K; ++k) sum += a.get(i * K + k) * b.get((g * N + j) * K + k);
        t[3].set(i * N + j, sum);
      }
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "gemm_grouped",
    .summary = "C_g = A_g * B_g^T for G groups of different row counts (packed rows, a segment table of offsets), bf16 in, f32 out",
    .params = {{.name = "G", .default_value = 4, .help = "groups (each gets a random share of the T rows; some are empty)", .min = 1, .max = 4096},
               {.name = "T", .default_value = 600, .help = "rows of A and C: every group's rows, packed (any; at least one 64-row TMA box; --dynamic T: a launch argument)", .min = 64,
                .run_time = true},
               {.name = "N", .default_value = 200, .help = "columns of C, rows of each group's B (C's rows are 16-byte units: a multiple of 4)", .min = 128, .multiple_of = 4},
               {.name = "K", .default_value = 136, .help = "the reduced dimension (rows of 16-byte units: a multiple of 8)", .min = 64, .multiple_of = 8},
               {.name = "R", .default_value = 2, .help = "CTAs per group along M (each takes every R-th 64-row tile of its group)", .min = 1, .max = 65535},
               {.name = "S", .default_value = 2, .help = "pipeline stages", .allowed = {1, 2, 3, 4}}},
    .build =
        [](param_values const& p) {
          return dispatch<1, 2, 3, 4>(p.at("S"), [&](auto S) {
            return lower(gemm_grouped<decltype(S)::value, 128>(p.at("G"), size_param(p, "T"), p.at("N"), p.at("K"), p.at("R")));
          });
        },
    .reference = gemm_grouped_reference,
});

}  // namespace
}  // namespace stagecraft::examples
