// O = softmax(Q K^T / sqrt(D) + mask) V over a packed ragged batch: several sequences of
// different lengths in one launch, as FlashAttention's varlen API takes them (bf16, one head).
//
// Q, K, V and O are (T, 64): the sequences' rows one after another, sequence b being rows
// [cu[b], cu[b + 1]) of a segment table cu (segment_offsets: FlashAttention's cu_seqlens, any
// lengths, empty sequences too). CTA (t, b) takes the 64 query rows 64 t.. of sequence b, or
// nothing when they lie past its end: the grid covers the longest sequence T can hold, and the
// lengths are read in the kernel (cu.at(b)), so one compiled kernel serves every split of T.
//
// One warpgroup: Q's tile loaded once by TMA through the sequence's window of rows, then an
// S-deep ring of K and V blocks (64 keys each) over the sequence's key blocks, a run-time count;
// per block
//
//   S  = Q K^T                          wgmma, f32 (64, 64)
//   S  = select(key < len [&& key <= row], S, -1e30)   the keys past the sequence (the next one's
//                                        rows, which TMA reads on into) and, causal, after the row
//   m' = max(m, max<1>(S) * scale), P = exp2(S * scale - m'), l = l * exp2(m - m') + sum<1>(P)
//   O  = O * exp2(m - m') + P V          P from registers as wgmma's A
//
// The mask compares iota with run-time lengths (tile math with index expressions, ValueOp::index).
// O / l goes out with a masked generic store through the window, which drops the rows past the
// sequence: no CTA writes another sequence's rows.
//
// Not yet: head dimensions other than 64, several heads, FA3's producer/consumer split and
// ping-pong (attention_hopper has them for fixed lengths), and a max_seqlen bound on the grid.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "attention_common.hpp"

namespace stagecraft::examples {
namespace {

template <long long S, bool Causal>
auto attention_varlen(std::int64_t B, size_expr T) {  // T: a size (--dynamic T: a launch argument)
  constexpr long long D = 64, BK = 64;
  const float scale = attention_scale(D);
  auto tile = shape(64_c, 64_c);  // (rows, keys) of S and P; (rows, d) of O
  auto rows = shape(T, int_c<D>);
  return kernel<sm_90a>(
      "attention_varlen", grid(ceil_div(T, 64), B), threads(1_c), gmem<bf16>("Q", rows), gmem<bf16>("K", rows), gmem<bf16>("V", rows),
      gmem<bf16>("O", rows), segment_offsets("cu_seqlens", B, T),
      smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),                        // qs: (row, d)
      smem<bf16>(shape(int_c<S>, int_c<BK>, 64_c), swizzle(128_c)),        // ks: (stage, key, d)
      smem<bf16>(shape(int_c<S>, int_c<BK>, 64_c), swizzle(128_c)),        // vs: (stage, key, d)
      barrier(arrivals(1_c), count(1_c)),                                  // q_full
      barrier(arrivals(2_c), count(int_c<S>)),                             // full[stage]: K and V landed
      accumulator<f32>("S", tile), accumulator<f32>("O_acc", tile),
      accumulator<f32>("m", shape(64_c)), accumulator<f32>("m_new", shape(64_c)), accumulator<f32>("l", shape(64_c)),
      accumulator<f32>("alpha", shape(64_c)),
      [=](auto q, auto k, auto v, auto o, auto cu, auto qs, auto ks, auto vs, auto q_full, auto full, auto Sacc, auto O, auto m, auto mn, auto l,
          auto alpha) {
        auto t = program_id(0_c);
        auto b = program_id(1_c);
        auto lo = cu.at(b), hi = cu.at(b + 1_c);
        auto len = hi - lo;                                   // the sequence's length
        auto key_blocks = [&] {                               // the blocks the tile's rows see
          if constexpr (Causal) return min((len + 63_c) / 64_c, t + 1_c);
          else return (len + 63_c) / 64_c;
        }();
        auto seq_q = q.rows(lo, hi), seq_k = k.rows(lo, hi), seq_v = v.rows(lo, hi);
        auto seq_o = o.rows(lo, hi);
        // Keys past the sequence and, causal, after the row: -1e30 (exp2 of it is 0).
        auto masked_scores = [&](auto j) {
          auto key = iota<1>(tile) + j * 64_c;
          if constexpr (Causal)
            return select(key < len, select(key <= iota<0>(tile) + t * 64_c, load(Sacc), -1e30f), -1e30f);
          else
            return select(key < len, load(Sacc), -1e30f);
        };
        auto block = [&](auto j, auto k_j, auto v_j) {  // k_j, v_j: (BK, 64)
          return seq(store(Sacc, 0.0f), wgmma(Sacc, qs, transpose(k_j)), wgmma_commit(), wgmma_wait(0_c),
                     store(Sacc, masked_scores(j)),
                     online_softmax(Sacc, m, mn, l, alpha, scale, tile),
                     store(O, load(O) * broadcast<1>(load(alpha), tile)), wgmma(O, cast<bf16>(load(Sacc)), v_j), wgmma_commit(), wgmma_wait(0_c));
        };
        return if_(t * 64_c < len,
                   seq(copy_gmem_to_smem(seq_q.block(t, 0_c), qs, q_full[0_c]), barrier_wait(q_full[0_c]),
                       store(m, -1e30f), store(mn, -1e30f), store(l, 0.0f), store(O, 0.0f),
                       emit_pipeline<S>(steps(key_blocks), full,
                                        ins(in(k, ks, [&](auto j) { return seq_k.block(j, 0_c); }), in(v, vs, [&](auto j) { return seq_v.block(j, 0_c); })),
                                        outs(), block),
                       store(l, 1.0f / load(l)),
                       store(seq_o.tile(tile, masked(), t, 0_c), cast<bf16>(load(O) * broadcast<1>(load(l), tile)))));
      });
}

// Each row of each sequence against the sequence's keys (attention_common.hpp).
void attention_varlen_reference(std::vector<host_tensor>& t, param_values const& p) {
  for (std::int64_t b = 0; b < p.at("B"); ++b) {
    const auto lo = static_cast<std::int64_t>(t[4].get(b)), len = static_cast<std::int64_t>(t[4].get(b + 1)) - lo;
    for (std::int64_t r = 0; r < len; ++r) attention_row_reference(t[0], t[1], t[2], t[3], lo + r, lo, len, r, p.at("causal") != 0, 64, 64);
  }
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "attention_varlen",
    .summary = "O = softmax(Q K^T / sqrt(64) + mask) V over B sequences of different lengths packed in (T, 64) (cu_seqlens), bf16, one warpgroup",
    .params = {{.name = "B", .default_value = 3, .help = "sequences (each gets a random share of the T rows; some are empty)", .min = 1, .max = 65535},
               {.name = "T", .default_value = 300, .help = "rows of Q, K, V and O: every sequence's, packed (any; at least one 64-row TMA box; --dynamic T: a launch argument)", .min = 64,
                .run_time = true},
               {.name = "causal", .default_value = 0, .help = "1: query r of a sequence sees its keys <= r", .allowed = {0, 1}},
               {.name = "S", .default_value = 2, .help = "K/V ring stages", .allowed = {1, 2, 3}}},
    .build =
        [](param_values const& p) {
          return dispatch<1, 2, 3>(p.at("S"), [&](auto S) {
            return dispatch<0, 1>(p.at("causal"), [&](auto C) {
              return lower(attention_varlen<decltype(S)::value, decltype(C)::value == 1>(p.at("B"), size_param(p, "T")));
            });
          });
        },
    .reference = attention_varlen_reference,
});

}  // namespace
}  // namespace stagecraft::examples
