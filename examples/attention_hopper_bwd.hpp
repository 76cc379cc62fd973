// dQ, dK and dV of O = softmax(Q K^T / sqrt(D) + mask) V for sm_90a: the backward pass of
// attention_hopper, FlashAttention-2/3's algorithm (one CTA per key block, the query blocks
// streamed past it, dQ summed across CTAs by reductions in GMEM).
//
// Q, K, V, dO: (B, S, D) bf16, the forward pass's layouts. LSE: (B, S) f32, each row's natural
// log-sum-exp of its scaled scores (attention_hopper's LSE output). delta: (B, S) f32, each row's
// sum of dO * O (what FA3 computes in its own small kernel before this one, dot_do_o). Outputs:
// dK, dV (B, S, D) bf16, and dQ (B, S, D) f32, which this kernel adds into (the caller zeroes it:
// FA3's dq_accum).
//
// A CTA owns 64 keys of one slice: warpgroup 0 (the producer) loads its K and V blocks once and
// streams the slice's 64-row blocks of Q and dO through a 2-stage ring; warpgroup 1 computes, per
// query block i (causal: the blocks from the CTA's own diagonal on),
//
//   S   = Q K^T                                wgmma, both operands in SMEM        (64 q, 64 k)
//   P   = exp2(S log2(e) / sqrt(D) - LSE log2(e))   in S's registers (LSE a row vector)
//   dP  = dO V^T                               wgmma, both operands in SMEM        (64 q, 64 k)
//   dS  = P (dP - delta) / sqrt(D)             in dP's registers (delta a row vector)
//   dV += P^T dO                               A = P through SMEM, read transposed (keys, q)
//   dK += dS^T Q                               A = dS through SMEM, read transposed
//   dQ  = dS K                                 A = dS from SMEM as it is; in S's and dP's registers,
//                                              then TMA reduce-adds into GMEM
//
// P and dS are the rows-by-keys fragments the row vectors broadcast over (queries are the rows),
// so their transposes reach the tensor core through SMEM: stored once as bf16, read MN-major by
// the two wgmmas (FA3 does the same). dK and dV end in the CTA's registers and go out through
// the K and V buffers by TMA.
//
// Any S: Q, dO, K and V blocks past S are TMA's zero fill, and the LSE and delta rows past S are
// read as 0 (masked tiles): a padded query row has dO = 0, so it adds nothing to dK or dV; a
// padded key has K = V = 0, so it adds nothing to dQ, and its dK and dV rows are dropped by the
// TMA stores, as the dQ rows past S are by the TMA reduces.
//
// Causal: query row r sees keys k <= r. The CTA of key block j starts at query block j, the one
// block the mask changes (keys above the diagonal get -1e30 before the exponential: P = 0, dS = 0).
//
// Per block, three waits: S and dP (one group), then dV, dK and dQ (one group), then the bulk
// group of a dQ buffer's last reduce before it is rewritten. D = 128: dK and dV are two (64, 64)
// accumulators each (128 registers per thread beside S's and dP's 64), and dQ's two chunks take
// S's and dP's registers.
#pragma once
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "attention_common.hpp"

namespace stagecraft::examples::bwd {

inline constexpr long long BLOCK = 64, STAGES = 2;

// PlainDq: the mistake tests/zoo shows (zoo_dq_plain_store): dQ copied out by a plain TMA store
// instead of a reduce, so the CTAs of one slice overwrite each other's rows.
template <long long D, bool Causal, bool PlainDq = false>
auto attention_hopper_bwd(std::int64_t B, size_expr S, const char* name = "attention_hopper_bwd") {
  constexpr long long DC = D / 64;  // 64-column chunks of the head dimension
  const size_expr blocks = ceil_div(S, BLOCK);
  const float scale = attention_scale(D);                                       // log2(e) / sqrt(D)
  const float ds_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));  // dS carries the scores' 1 / sqrt(D)
  constexpr float log2e = 1.4426950408889634f;
  auto tile = shape(64_c, 64_c);  // (query rows, keys), and each (64, 64) chunk of dK, dV, dQ
  auto body = [=](auto q, auto k, auto v, auto dout, auto lse, auto delta, auto dq, auto dk, auto dv, auto ks, auto vs, auto qs, auto dos, auto ps,
                  auto dss, auto dqs, auto kv_full, auto q_full, auto do_full, auto q_free, auto do_free, auto Sacc, auto dPacc, auto dK0, auto dK1, auto dV0,
                  auto dV1, auto lse_row, auto delta_row) {
    auto dK = [&](auto c) {
      if constexpr (decltype(c)::value == 0) return dK0;
      else return dK1;
    };
    auto dV = [&](auto c) {
      if constexpr (decltype(c)::value == 0) return dV0;
      else return dV1;
    };
    // dQ's chunk c of a query block, in the registers of S (c = 0) or dP (c = 1).
    auto dQ = [&](auto c) {
      if constexpr (decltype(c)::value == 0) return Sacc;
      else return dPacc;
    };
    auto cta = program_id(0_c);
    auto kb = cta % blocks;     // this CTA's 64 keys
    auto bh = cta / blocks;     // of which of the B slices (batch x head)
    // The query blocks that see these keys: all, or causal those from the diagonal on.
    auto first = [&] {
      if constexpr (Causal) return kb;
      else return 0_c;
    }();

    auto producer = seq(each<DC>([&](auto c) { return copy_gmem_to_smem(k.block(bh, kb, c), ks[c], kv_full[0_c]); }),
                        each<DC>([&](auto c) { return copy_gmem_to_smem(v.block(bh, kb, c), vs[c], kv_full[0_c]); }),
                        for_(range(first, blocks), [&](auto i) {
                          auto n = i - first;
                          auto s = stage<STAGES>(n);
                          return seq(if_(n >= int_c<STAGES>, barrier_wait(q_free[s])),
                                     each<DC>([&](auto c) { return copy_gmem_to_smem(q.block(bh, i, c), qs[s][c], q_full[s]); }),
                                     if_(n >= int_c<STAGES>, barrier_wait(do_free[s])),
                                     each<DC>([&](auto c) { return copy_gmem_to_smem(dout.block(bh, i, c), dos[s][c], do_full[s]); }));
                        }));

    // One query block i; `mask` rewrites the scaled scores L = S log2(e) / sqrt(D) (causal: -1e30
    // for the keys after the row, or nothing).
    auto block = [&](auto i, auto const& mask) {
      auto s = stage<STAGES>(i - first);
      auto rows = [&](auto x) { return reshape(load(x.tile(shape(1_c, 64_c), masked(), bh, i)), shape(64_c)); };
      return seq(store(lse_row, rows(lse) * log2e), store(delta_row, rows(delta)),
                 // S = Q K^T and dP = dO V^T, one group each, both in flight
                 barrier_wait(q_full[s]), store(Sacc, 0.0f), each<DC>([&](auto c) { return wgmma(Sacc, qs[s][c][0_c], transpose(ks[c][0_c])); }),
                 wgmma_commit(), barrier_wait(do_full[s]), store(dPacc, 0.0f),
                 each<DC>([&](auto c) { return wgmma(dPacc, dos[s][c][0_c], transpose(vs[c][0_c])); }), wgmma_commit(), wgmma_wait(0_c),
                 // P, then dS, each in its accumulator's registers
                 store(Sacc, exp2(mask(load(Sacc) * scale) - broadcast<1>(load(lse_row), tile))),
                 store(dPacc, load(Sacc) * (load(dPacc) - broadcast<1>(load(delta_row), tile)) * ds_scale),
                 // their transposes through SMEM: dV += P^T dO, dK += dS^T Q; and dQ = dS K, chunk 0
                 // in S's registers and chunk 1 in dP's (free once P and dS are in SMEM): one group
                 store(ps[0_c], cast<bf16>(load(Sacc))), store(dss[0_c], cast<bf16>(load(dPacc))), commit_smem(),
                 each<DC>([&](auto c) { return wgmma(dV(c), transpose(ps[0_c]), dos[s][c][0_c]); }),
                 each<DC>([&](auto c) { return wgmma(dK(c), transpose(dss[0_c]), qs[s][c][0_c]); }),
                 each<DC>([&](auto c) { return seq(store(dQ(c), 0.0f), wgmma(dQ(c), dss[0_c], ks[c][0_c])); }), wgmma_commit(), wgmma_wait(0_c),
                 barrier_arrive(q_free[s]), barrier_arrive(do_free[s]),
                 // dQ's chunks through their f32 buffers into GMEM by TMA reduce-adds (the rows past
                 // S dropped); a buffer is rewritten once the reduce that read it last (one block
                 // ago) has: at most the other chunk's still pending.
                 each<DC>([&](auto c) {
                   return seq(wait_smem_to_gmem(int_c<DC - 1>, read_only),
                              each<2>([&](auto h) { return store(dqs[c][h][0_c], slice<1>(load(dQ(c)), int_c<decltype(h)::value * 32>, 32_c)); }),
                              commit_smem(),
                              each<2>([&](auto h) {
                                if constexpr (PlainDq) return copy_smem_to_gmem(dqs[c][h], dq.block(bh, i, c * 2_c + h));
                                else return copy_smem_to_gmem(dqs[c][h], dq.block(bh, i, c * 2_c + h), reduce_add);
                              }),
                              commit_smem_to_gmem_group());
                 }));
    };
    auto no_mask = [](auto const& L) { return L; };
    auto blocks_of_cta = [&] {
      // Causal: key kb * 64 + c is visible to query i * 64 + r when c - r <= (i - kb) * 64, which
      // only the first block (i = kb) does not satisfy for every c and r. The mask is in every
      // block, one compare and select per element: peeling the diagonal block off the loop (two
      // copies of the block's code) spilled 436 bytes at D = 128, this 0.
      if constexpr (Causal)
        return for_(range(kb, blocks), [&](auto i) {
          return block(i, [&](auto const& L) { return select(iota<1>(tile) - iota<0>(tile) <= (i - kb) * 64_c, L, -1e30f); });
        });
      else return for_(range(blocks), [&](auto i) { return block(i, no_mask); });
    };
    auto consumer = seq(barrier_wait(kv_full[0_c]), each<DC>([&](auto c) { return seq(store(dK(c), 0.0f), store(dV(c), 0.0f)); }), blocks_of_cta(),
                        // dK and dV out through the K and V buffers (every wgmma reading them is waited for)
                        each<DC>([&](auto c) { return store_tile(ks[c], cast<bf16>(load(dK(c))), dk.block(bh, kb, c), int_c<2 * DC>); }),
                        each<DC>([&](auto c) { return store_tile(vs[c], cast<bf16>(load(dV(c))), dv.block(bh, kb, c), int_c<2 * DC>); }),
                        wait_smem_to_gmem(0_c, read_only));
    return if_(thread_id() == 0_c, producer, if_(thread_id() == 1_c, consumer));
  };
  auto rows = shape(B, S, int_c<D>);  // (bh, position, d)
  auto chunks = [] { return smem<bf16>(shape(int_c<DC>, 1_c, 64_c, 64_c), swizzle(128_c)); };                    // (chunk, 1, row, d)
  auto ring = [] { return smem<bf16>(shape(int_c<STAGES>, int_c<DC>, 1_c, 64_c, 64_c), swizzle(128_c)); };      // (stage, chunk, 1, row, d)
  auto square = [] { return smem<bf16>(shape(1_c, 64_c, 64_c), swizzle(128_c)); };                               // (1, query, key)
  return kernel<sm_90a>(name, grid(B * blocks), threads(2_c), gmem<bf16>("Q", rows), gmem<bf16>("K", rows), gmem<bf16>("V", rows),
                        gmem<bf16>("dO", rows), gmem<f32>("LSE", shape(B, S)), gmem<f32>("delta", shape(B, S)), gmem<f32>("dQ", rows),
                        gmem<bf16>("dK", rows), gmem<bf16>("dV", rows),
                        chunks(),                                             // ks: this CTA's K block, later dK's staging
                        chunks(),                                             // vs: its V block, later dV's
                        ring(),                                               // qs
                        ring(),                                               // dos
                        square(),                                             // ps: P (bf16), read transposed by dV's wgmma
                        square(),                                             // dss: dS (bf16), read transposed by dK's wgmma and as is by dQ's
                        // dqs: dQ's chunks on their way to the TMA reduce, each as two 32-column halves
                        // (one 128-byte swizzle row of f32 each: the fragment stores without bank conflicts)
                        smem<f32>(shape(int_c<DC>, 2_c, 1_c, 64_c, 32_c), swizzle(128_c)),  // (chunk, half, 1, row, d)
                        barrier(arrivals(int_c<2 * DC>), count(1_c)),         // kv_full: K and V landed
                        barrier(arrivals(int_c<DC>), count(int_c<STAGES>)),   // q_full[stage]
                        barrier(arrivals(int_c<DC>), count(int_c<STAGES>)),   // do_full[stage]
                        barrier(arrivals(1_c), count(int_c<STAGES>)),         // q_free[stage]: its wgmmas are complete
                        barrier(arrivals(1_c), count(int_c<STAGES>)),         // do_free[stage]
                        accumulator<f32>("S", tile), accumulator<f32>("dP", tile), accumulator<f32>("dK0", tile),
                        accumulator<f32>("dK1", tile),  // columns 64..127 of dK at D = 128 (untouched, no registers, at D = 64)
                        accumulator<f32>("dV0", tile), accumulator<f32>("dV1", tile), accumulator<f32>("lse_log2", shape(64_c)),
                        accumulator<f32>("delta_row", shape(64_c)), body);
}

// The gradients in double from the kernel's inputs, rounded where the kernel rounds: P and dS to
// bf16 before the products they feed (P's unrounded value into dS), dK and dV to bf16 at the end.
// t: Q, K, V, dO, LSE, delta, dQ, dK, dV.
inline void reference(std::vector<host_tensor>& t, param_values const& p) {
  const std::int64_t B = p.at("B"), S = p.at("S"), D = p.at("D");
  const bool causal = p.at("causal") != 0;
  const double scale = attention_scale(D), log2e = static_cast<double>(1.4426950408889634f);
  const double ds_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
  auto bf16 = [](double x) { return static_cast<double>(bf16_to_f32(f32_to_bf16(static_cast<float>(x)))); };
  auto at = [&](host_tensor const& x, std::int64_t b, std::int64_t r, std::int64_t d) { return x.get((b * S + r) * D + d); };
  std::vector<double> dk(static_cast<std::size_t>(S * D)), dv(static_cast<std::size_t>(S * D));
  for (std::int64_t b = 0; b < B; ++b) {
    std::fill(dk.begin(), dk.end(), 0.0);
    std::fill(dv.begin(), dv.end(), 0.0);
    for (std::int64_t r = 0; r < S; ++r) {
      const double lse = static_cast<double>(static_cast<float>(t[4].get(b * S + r) * log2e)), delta = t[5].get(b * S + r);
      std::vector<double> dq(static_cast<std::size_t>(D), 0.0);
      for (std::int64_t j = 0; j <= (causal ? r : S - 1); ++j) {
        double s = 0, dp = 0;
        for (std::int64_t d = 0; d < D; ++d) {
          s += at(t[0], b, r, d) * at(t[1], b, j, d);
          dp += at(t[3], b, r, d) * at(t[2], b, j, d);
        }
        const double pf = std::exp2(s * scale - lse), ds = bf16(pf * (dp - delta) * ds_scale), pb = bf16(pf);
        for (std::int64_t d = 0; d < D; ++d) {
          dv[static_cast<std::size_t>(j * D + d)] += pb * at(t[3], b, r, d);
          dk[static_cast<std::size_t>(j * D + d)] += ds * at(t[0], b, r, d);
          dq[static_cast<std::size_t>(d)] += ds * at(t[1], b, j, d);
        }
      }
      for (std::int64_t d = 0; d < D; ++d) t[6].set((b * S + r) * D + d, at(t[6], b, r, d) + dq[static_cast<std::size_t>(d)]);
    }
    for (std::int64_t j = 0; j < S; ++j)
      for (std::int64_t d = 0; d < D; ++d) {
        t[7].set((b * S + j) * D + d, dk[static_cast<std::size_t>(j * D + d)]);
        t[8].set((b * S + j) * D + d, dv[static_cast<std::size_t>(j * D + d)]);
      }
  }
}

// Inputs a backward pass can be given: LSE and delta are the forward pass's of the random Q, K,
// V and dO (O = attention_hopper's output in double, rounded to bf16 as it stores it; delta =
// sum of dO * O in double, then f32), and dQ starts at zero. With random LSE and delta, P would
// not be a softmax (its rows would not sum to 1) and its magnitudes would have no bound.
inline void inputs(std::vector<host_tensor>& t, param_values const& p) {
  const std::int64_t B = p.at("B"), S = p.at("S"), D = p.at("D");
  host_tensor o = host_tensor::zeros(ir::DType::bf16, t[0].shape);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t r = 0; r < S; ++r) attention_row_reference(t[0], t[1], t[2], o, b * S + r, b * S, S, r, p.at("causal") != 0, D, BLOCK, attention_p::bf16, 0, nullptr, &t[4]);
  for (std::int64_t row = 0; row < B * S; ++row) {
    double sum = 0;
    for (std::int64_t d = 0; d < D; ++d) sum += t[3].get(row * D + d) * o.get(row * D + d);
    t[5].set(row, sum);
  }
  for (std::int64_t i = 0; i < t[6].elements(); ++i) t[6].set(i, 0.0);
}

}  // namespace stagecraft::examples::bwd
