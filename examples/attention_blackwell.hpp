// O = softmax(Q K^T / sqrt(D) + mask) V, bf16 in and out: a FlashAttention-4-style forward pass
// for sm_100a. S and O live in TMEM, P goes from the softmax's registers to TMEM and from there
// into the tensor core as the A operand of P V, and the rescale of O is its own warpgroup's job.
//
// Q, K, V and O are (B, S, D): batch x head, position, head dimension. A CTA takes 128 query rows
// (one TMEM lane each) of one of the B slices, in four roles (threads(warpgroup, warpgroup, warp,
// warp): 320 threads, the warpgroups first since tcgen05.ld reaches a warp's own lane quarter):
//   - the producer (role 2, one warp) loads the Q tile once, then streams 128-key blocks of K
//     and V through a 2-stage ring of 128-byte swizzled stages with TMA (K and V on their own
//     barriers, released by the tensor core's commits);
//   - the MMA issuer (role 3, one warp) issues S = Q K^T into TMEM (m128n128k16, one call per
//     64-column chunk of D), and O_c += P V_c for each chunk (P read from TMEM: the [a_tmem] form,
//     V's stage read MN-major). S is a ring of two stages: S(j + 1) is issued into the other
//     stage before the MMA waits for the softmax of block j, so the tensor core computes it
//     while the softmax runs (with one S the tensor core idled through every softmax: the
//     model's B200 put the kernel at 17 % tensor-core busy), then P V(j) once P(j) is written;
//   - the softmax (role 0, a warpgroup): thread t owns row t of S (TMEM lane t), so a row max or
//     a row sum is one thread's own fold, with no shuffle. Per block j
//
//       m'  = max(m, max<1>(S) * scale)               scale = log2(e) / sqrt(D)
//       alpha = exp2(m - m')                           (handed to the correction)
//       E   = exp2(S * scale - broadcast<1>(m'))       (an expression, not stored)
//       l   = l * alpha + sum<1>(E)
//       P   = cast<bf16>(E)                            into TMEM, two to a column: P V's A
//
//     m, m', l and alpha are (128) row vectors in SMEM, element t read and written by thread t
//     only (the same lane as its TMEM row);
//   - the correction (role 1, a warpgroup) rescales O in TMEM, O_c := O_c * broadcast<1>(alpha),
//     between P V(j - 1) and P V(j), then writes the epilogue: LSE = m ln 2 + ln l, and O / l
//     rounded to bf16 through Q's SMEM (free once the last MMA completed) and out by TMA.
//
// Barriers (one phase per key block each): s_full[stage] (the commit after S(j)), p_full
// (the softmax: S(j) read, P(j) and alpha(j) written), o_ready (the correction: O rescaled by
// alpha(j), or at j = 0 only that it has seen p_full(0)), p_free (the commit after P V(j): P, alpha
// and O are free again). The correction's o_ready at j = 0 has a job beyond ordering: without it
// P V(0) could complete, the softmax run on to p_full(1) and p_full(2) could not, so no barrier
// gets two phases ahead of a role still to wait on it (an mbarrier's parity names one phase).
// S(j + 2) overwrites S(j)'s stage only after the MMA warp waited for p_full(j), the softmax's
// word that it has read S(j): no barrier of its own.
//
// Causal: query row r sees keys k <= r. With 128-key blocks the tile's diagonal block is its own
// (block q_tile), masked by a static triangle; the blocks after it are neither loaded nor
// computed. Not causal: the last block's keys past S (TMA's zero fill, scoring 0) are masked to
// -1e30. The mask is applied where S is read, in the max and in the exponential (exp2 of
// -1e30 * scale - m' is 0), so only the last block pays for it.
//
// This is `tiles=1`; attention_blackwell_2q below (`tiles=2`, the default) takes two query tiles
// per CTA as FA4 does. What FA4 does that neither does (yet): exp2 emulated on the FMA pipe for
// part of a row, the rescale skipped while the row max moves less than a threshold, and P written
// over S's own columns (which would let two tiles keep 128-key blocks at D = 128). Here S is read
// from TMEM twice per block where FA4 reads it once into registers: once for the row max, once
// for l and P, whose two statements the code generator runs as one pass over the row with E
// computed once per element (tcgen05.cpp, fused_rows). Before, S := exp2(...) was written back
// to TMEM and read again for l and for P: four reads and two writes of the row per block.
#pragma once
#include <string>

#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "attention_common.hpp"

namespace stagecraft::examples::fa4 {

inline constexpr long long BQ = 128, BK = 128, STAGES = 2, S_STAGES = 2;

// The softmax of one key block on a query tile's S in TMEM (thread t: row t), the online softmax
// of attention_common.hpp with S, P in TMEM and m, m', l, alpha (128) row vectors in SMEM:
//   m' = max(m, max<1>(S) * scale);  [P V(j - 1) complete]  alpha = exp2(m - m');
//   E = exp2(S * scale - m');  l = l * alpha + sum<1>(E);  P = cast<bf16>(E);  m = m'
// then p_full: S taken, P and alpha written. `mask` rewrites the scores where S is read. l and
// P are consecutive statements reading S alone: one pass over the row, E computed once.
template <class J, class SFull, class SView, class PView, class Row, class PFree, class PFull, class Mask, class Tile>
auto softmax_step(J j, SFull const& s_full, SView const& s, PView const& p, Row const& m, Row const& mn, Row const& l, Row const& alpha,
                  PFree const& p_free, PFull const& p_full, Mask const& mask, float scale, Tile const& s_tile) {
  auto e = exp2(mask(async_load_tmem(s)) * scale - broadcast<1>(load(mn), s_tile));  // (128, BK): the block's exponentials
  return seq(barrier_wait(s_full), store(mn, max(load(m), max<1>(mask(async_load_tmem(s))) * scale)),
             if_(j > 0_c, barrier_wait(p_free)),  // P V(j - 1) is complete: P and alpha are free
             store(alpha, exp2(load(m) - load(mn))), store(l, load(l) * load(alpha) + sum<1>(e)), store_tmem(p, cast<bf16>(e)), store(m, load(mn)),
             barrier_arrive(p_full));
}

// The correction of one key block for one query tile: once the softmax has written alpha(j)
// and P V(j - 1) has completed (`wait_pv`), O_c := O_c * alpha for each 64-column chunk `o(c)`
// of O in TMEM, then o_ready lets P V(j) go.
template <long long DC, class J, class PFull, class WaitPv, class OChunk, class Row, class OReady>
auto correction_step(J j, PFull const& p_full, WaitPv const& wait_pv, OChunk const& o, Row const& alpha, OReady const& o_ready) {
  return seq(barrier_wait(p_full),
             if_(j > 0_c, seq(wait_pv(),  // P V(j - 1) is complete: O holds it
                              each<DC>([&](auto c) { return store_tmem(o(c), async_load_tmem(o(c)) * broadcast<1>(load(alpha), shape(128_c, 64_c))); }))),
             barrier_arrive(o_ready));
}

// RescaleWaits = false is the bug zoo's zoo_rescale_before_pv: the correction rescales O without
// waiting for the P V still writing it.
template <long long D, bool Causal, bool RescaleWaits = true>
auto attention_blackwell(std::int64_t B, size_expr S, const char* name = "attention_blackwell") {
  constexpr long long DC = D / 64;  // 64-column chunks of the head dimension: one swizzle row each
  const size_expr q_tiles = ceil_div(S, BQ), kv_blocks = ceil_div(S, BK);
  const size_expr tail = S - (kv_blocks - 1) * BK;  // keys in the last block: 1 to BK
  const float scale = attention_scale(D);
  auto s_tile = shape(128_c, int_c<BK>);  // (row, key) of S and P
  auto o_tile = shape(128_c, 64_c);       // (row, d) of a chunk of O
  auto rows = shape(B, S, int_c<D>);      // (slice, position, d)
  return kernel<sm_100a>(
      name, grid(B * q_tiles), threads(warpgroup, warpgroup, warp, warp), gmem<bf16>("Q", rows), gmem<bf16>("K", rows),
      gmem<bf16>("V", rows), gmem<bf16>("O", rows), gmem<f32>("LSE", shape(B, S)),
      smem<bf16>(shape(int_c<DC>, 1_c, 128_c, 64_c), swizzle(128_c)),                         // qs: (chunk, 1, row, d); O leaves through it
      smem<bf16>(shape(int_c<STAGES>, int_c<DC>, 1_c, int_c<BK>, 64_c), swizzle(128_c)),      // ks: (stage, chunk, 1, key, d)
      smem<bf16>(shape(int_c<STAGES>, int_c<DC>, 1_c, int_c<BK>, 64_c), swizzle(128_c)),      // vs: (stage, chunk, 1, key, d): B of P V, MN-major
      smem<f32>("m", shape(128_c)), smem<f32>("m_new", shape(128_c)), smem<f32>("l", shape(128_c)),
      smem<f32>("alpha", shape(128_c)),                                                       // the rescale of O for the block in flight
      barrier(arrivals(int_c<DC>)),                                                           // q_full
      barrier(arrivals(int_c<DC>), count(int_c<STAGES>)),                                     // k_full[stage]
      barrier(arrivals(int_c<DC>), count(int_c<STAGES>)),                                     // v_full[stage]
      barrier(arrivals(1_c), count(int_c<STAGES>), orders_tensor_core),                       // k_free[stage]: S of it is complete
      barrier(arrivals(1_c), count(int_c<STAGES>), orders_tensor_core),                       // v_free[stage]: P V of it is complete
      barrier(arrivals(1_c), count(int_c<S_STAGES>), orders_tensor_core),                   // s_full[stage]: S(j) is in TMEM
      barrier(arrivals(1_c)),                                                                 // p_full: S(j) taken, P(j) and alpha(j) written
      barrier(arrivals(1_c), orders_tensor_core),                                             // p_free: P V(j) is complete
      barrier(arrivals(1_c)),                                                                 // o_ready: O rescaled for P V(j)
      tmem<f32>("S", shape(int_c<S_STAGES>, 128_c, int_c<BK>)),                              // (stage, row, key): 256 columns
      tmem<bf16>("P", s_tile),                                                                // 64 columns: two bf16 to a column
      tmem<f32>("O0", o_tile), tmem<f32>("O1", o_tile),                                       // d 0..63 and 64..127 (O1 unused at D = 64)
      [=](auto q, auto k, auto v, auto o, auto lse, auto qs, auto ks, auto vs, auto m, auto mn, auto l, auto alpha, auto q_full, auto k_full,
          auto v_full, auto k_free, auto v_free, auto s_full, auto p_full, auto p_free, auto o_ready, auto St, auto Pt, auto O0, auto O1) {
        auto O = [&](auto c) {
          if constexpr (decltype(c)::value == 0) return O0;
          else return O1;
        };
        auto cta = program_id(0_c);
        auto q_tile = cta % q_tiles;  // which 128 rows of the slice
        auto slice = cta / q_tiles;   // which of the B slices
        // The CTA's last key block (masked): causal, its diagonal; else the last of the slice.
        auto last = [&] {
          if constexpr (Causal) return q_tile;
          else return as_index(kv_blocks - 1);
        }();
        auto blocks = last + 1_c;

        auto producer = seq(each<DC>([&](auto c) { return copy_gmem_to_smem(q.block(slice, q_tile, c), qs[c], q_full); }),
                            for_(range(blocks), [&](auto j) {
                              auto s = stage<STAGES>(j);
                              return seq(if_(j >= int_c<STAGES>, barrier_wait(k_free[s])),
                                         each<DC>([&](auto c) { return copy_gmem_to_smem(k.block(slice, j, c), ks[s][c], k_full[s]); }),
                                         if_(j >= int_c<STAGES>, barrier_wait(v_free[s])),
                                         each<DC>([&](auto c) { return copy_gmem_to_smem(v.block(slice, j, c), vs[s][c], v_full[s]); }));
                            }));

        // S = Q K^T of block j (D / 64 calls accumulating over the chunks), committed to K's
        // stage and to the softmax.
        auto issue_s = [&](auto j) {
          auto s = stage<STAGES>(j);
          return seq(barrier_wait(k_full[s]),
                     each<DC>([&](auto c) { return tcgen05_mma(St[stage<S_STAGES>(j)], qs[c][0_c], transpose(ks[s][c][0_c]), decltype(c)::value > 0); }),
                     tcgen05_commit_arrive(k_free[s]), tcgen05_commit_arrive(s_full[stage<S_STAGES>(j)]));
        };
        // O_c += P V_c of block j (O_c := P V_c at j = 0), once the correction has rescaled O.
        auto issue_pv = [&](auto j) {
          auto s = stage<STAGES>(j);
          return seq(barrier_wait(v_full[s]), barrier_wait(o_ready),
                     each<DC>([&](auto c) { return tcgen05_mma(O(c), Pt, vs[s][c][0_c], j > 0_c); }), tcgen05_commit_arrive(v_free[s]),
                     tcgen05_commit_arrive(p_free));
        };
        auto mma = seq(barrier_wait(q_full), issue_s(0_c), for_(range(blocks), [&](auto j) {
                         // S(j + 1) into the other stage (S(j - 1) there is taken: p_full(j - 1)
                         // was waited for), under the softmax of block j; then P V(j).
                         return seq(if_(j < last, issue_s(j + 1_c)), barrier_wait(p_full), issue_pv(j));
                       }));

        // The scores of the block, as the softmax reads them: masked or not.
        auto unmasked = [](auto const& x) { return x; };
        auto with_mask = [&](auto const& x) {
          if constexpr (Causal) return select(iota<1>(s_tile) <= iota<0>(s_tile), x, -1e30f);  // the diagonal block: key <= row
          else return select(iota<1>(s_tile) < tail, x, -1e30f);                               // keys past S
        };
        auto softmax_block = [&](auto j, auto const& mask) {
          return softmax_step(j, s_full[stage<S_STAGES>(j)], St[stage<S_STAGES>(j)], Pt, m, mn, l, alpha, p_free, p_full, mask, scale, s_tile);
        };
        auto softmax = seq(store(m, -1e30f), store(l, 0.0f), for_(range(blocks), [&](auto j) { return if_(j < last, softmax_block(j, unmasked)); }),
                           softmax_block(last, with_mask));

        auto wait_pv = [&] {
          if constexpr (RescaleWaits) return barrier_wait(p_free);
          else return seq();
        };
        auto correction = seq(
            for_(range(blocks),
                 [&](auto j) { return correction_step<DC>(j, p_full, wait_pv, O, alpha, o_ready); }),
            barrier_wait(p_free),  // the last P V is complete: O is final, and Q's SMEM free
            // LSE = ln(sum exp(scaled scores)) = m ln 2 + ln l; the masked tile drops rows past S.
            store(lse.tile(shape(1_c, 128_c), masked(), slice, q_tile), reshape(load(m) * 0.6931471805599453f + log(load(l)), shape(1_c, 128_c))),
            store(l, 1.0f / load(l)),
            each<DC>([&](auto c) {
              return store_tile(qs[c], cast<bf16>(async_load_tmem(O(c)) * broadcast<1>(load(l), o_tile)), o.block(slice, q_tile, c), int_c<DC>);
            }),
            wait_smem_to_gmem(0_c, read_only), tmem_dealloc(St), tmem_dealloc(Pt), tmem_dealloc(O0), tmem_dealloc(O1));

        return if_(thread_id() == 0_c, softmax, if_(thread_id() == 1_c, correction, if_(thread_id() == 2_c, producer, mma)));
      });
}

// ---- tiles = 2: two query tiles per CTA, FlashAttention-4's ping-pong -------------------------
// A CTA takes 256 query rows as two tiles of 128, each with its own softmax warpgroup (roles 0
// and 1), S, P and O in TMEM: while one tile's softmax runs, the tensor core computes the other
// tile's S and P V, and two softmax warpgroups keep twice the exponentials in flight. The
// correction warpgroup (role 2) rescales both tiles' O and writes both epilogues; the producer
// (role 3) and the MMA warp (role 4) serve both tiles from one K and V ring. 448 threads.
//
// TMEM: S (tile, row, key) 2 BK columns, P0 and P1 BK / 2 each, O (tile * D / 64 + chunk, row, d)
// 2 D columns: 448 at D = 128 with BK = 64, 512 at D = 64 with BK = 128 (D = 128 with BK = 128
// would need 640: FA4 writes P over S's own columns, which a TMEM view cannot yet express).
//
// The MMA warp, per key block j (S_t(0) issued before the loop; a tile t computes blocks 0 to
// last_t, last_0 <= last_1):
//   wait v_full(j);  [j <= last_0] wait p_full_0, O_0 += P_0 V(j), S_0(j + 1);
//   wait p_full_1, O_1 += P_1 V(j), commit v_free(j), S_1(j + 1), commit k_free(j + 1)
// so S_0(j + 1) and P V_1(j) run under the softmax of tile 1, and S_1(j + 1) and P V_0(j + 1)
// under tile 0's. Each K block is waited for once, before the first S of it, and released after
// tile 1's (every tile-0 block is a tile-1 block); V likewise.
//
// Causal: tile t's rows start at row r0 = 256 q + 128 t and see keys <= row; its last block is
// the one holding key r0 + 127. A block needs the mask when it reaches past r0 (the triangle, any
// BK) or is the slice's last (keys past S). The masked and unmasked softmax are the two arms of
// an if_ on that run-time test. A tile whose rows all lie past S (the second of the slice's last
// CTA) loads the last Q tile instead, computes rows nobody stores, and stores nothing.
template <long long D, long long BKV, bool Causal>
auto attention_blackwell_2q(std::int64_t B, size_expr S, const char* name = "attention_blackwell") {
  constexpr long long DC = D / 64;
  static_assert(2 * (BKV + std::max(BKV / 2, 32LL) + D) <= 512, "attention_blackwell_2q: two tiles' S, P and O exceed TMEM's 512 columns");
  const size_expr q_tiles = ceil_div(S, 2 * BQ), kv_blocks = ceil_div(S, BKV), tiles128 = ceil_div(S, BQ);
  const float scale = attention_scale(D);
  auto s_tile = shape(128_c, int_c<BKV>);
  auto rows = shape(B, S, int_c<D>);
  return kernel<sm_100a>(
      name, grid(B * q_tiles), threads(warpgroup, warpgroup, warpgroup, warp, warp), gmem<bf16>("Q", rows), gmem<bf16>("K", rows),
      gmem<bf16>("V", rows), gmem<bf16>("O", rows), gmem<f32>("LSE", shape(B, S)),
      smem<bf16>(shape(2_c, int_c<DC>, 1_c, 128_c, 64_c), swizzle(128_c)),                    // qs: (tile, chunk, 1, row, d); O leaves through it
      smem<bf16>(shape(int_c<STAGES>, int_c<DC>, 1_c, int_c<BKV>, 64_c), swizzle(128_c)),     // ks: (stage, chunk, 1, key, d)
      smem<bf16>(shape(int_c<STAGES>, int_c<DC>, 1_c, int_c<BKV>, 64_c), swizzle(128_c)),     // vs: (stage, chunk, 1, key, d)
      smem<f32>("m", shape(2_c, 128_c)), smem<f32>("m_new", shape(2_c, 128_c)), smem<f32>("l", shape(2_c, 128_c)),
      smem<f32>("alpha", shape(2_c, 128_c)),                                                  // (tile, row)
      barrier(arrivals(int_c<2 * DC>)),                                                       // q_full: both tiles
      barrier(arrivals(int_c<DC>), count(int_c<STAGES>)),                                     // k_full[stage]
      barrier(arrivals(int_c<DC>), count(int_c<STAGES>)),                                     // v_full[stage]
      barrier(arrivals(1_c), count(int_c<STAGES>), orders_tensor_core),                       // k_free[stage]
      barrier(arrivals(1_c), count(int_c<STAGES>), orders_tensor_core),                       // v_free[stage]
      barrier(arrivals(1_c), count(2_c), orders_tensor_core),                                 // s_full[tile]
      barrier(arrivals(1_c), count(2_c)),                                                     // p_full[tile]
      barrier(arrivals(1_c), count(2_c), orders_tensor_core),                                 // p_free[tile]
      barrier(arrivals(1_c), count(2_c)),                                                     // o_ready[tile]
      tmem<f32>("S", shape(2_c, 128_c, int_c<BKV>)),                                          // (tile, row, key)
      tmem<bf16>("P0", s_tile), tmem<bf16>("P1", s_tile),                                     // each tile's P (A from TMEM: whole allocations)
      tmem<f32>("O_acc", shape(int_c<2 * DC>, 128_c, 64_c)),                                  // (tile * DC + chunk, row, d)
      [=](auto q, auto k, auto v, auto o, auto lse, auto qs, auto ks, auto vs, auto m, auto mn, auto l, auto alpha, auto q_full, auto k_full,
          auto v_full, auto k_free, auto v_free, auto s_full, auto p_full, auto p_free, auto o_ready, auto St, auto P0, auto P1, auto Ot) {
        auto P = [&](auto t) {
          if constexpr (decltype(t)::value == 0) return P0;
          else return P1;
        };
        auto O = [&](auto t) {  // tile t's chunk c of O: stage t DC + c of the ring
          return [&](auto c) { return Ot[int_c<DC * decltype(t)::value + decltype(c)::value>]; };
        };
        auto cta = program_id(0_c);
        auto q_tile = cta % q_tiles;  // which 256 rows of the slice
        auto slice = cta / q_tiles;
        auto tile128 = [&](auto t) { return q_tile * 2_c + t; };                       // the tile's 128-row block of the slice
        auto q_block = [&](auto t) { return min(tile128(t), as_index(tiles128 - 1)); };  // a tile wholly past S loads the last
        auto row0 = [&](auto t) { return tile128(t) * 128_c; };
        auto last = [&](auto t) {
          if constexpr (Causal) return min((row0(t) + 127_c) / int_c<BKV>, as_index(kv_blocks - 1));
          else return as_index(kv_blocks - 1);
        };
        auto stg = [&](auto j) { return stage<STAGES>(j); };

        auto producer = seq(each<2>([&](auto t) { return each<DC>([&](auto c) { return copy_gmem_to_smem(q.block(slice, q_block(t), c), qs[t][c], q_full); }); }),
                            for_(range(last(1_c) + 1_c), [&](auto j) {
                              auto s = stg(j);
                              return seq(if_(j >= int_c<STAGES>, barrier_wait(k_free[s])),
                                         each<DC>([&](auto c) { return copy_gmem_to_smem(k.block(slice, j, c), ks[s][c], k_full[s]); }),
                                         if_(j >= int_c<STAGES>, barrier_wait(v_free[s])),
                                         each<DC>([&](auto c) { return copy_gmem_to_smem(v.block(slice, j, c), vs[s][c], v_full[s]); }));
                            }));

        auto issue_s = [&](auto t, auto j) {
          return seq(each<DC>([&](auto c) { return tcgen05_mma(St[t], qs[t][c][0_c], transpose(ks[stg(j)][c][0_c]), decltype(c)::value > 0); }),
                     tcgen05_commit_arrive(s_full[t]));
        };
        auto issue_pv = [&](auto t, auto j) {
          return seq(barrier_wait(p_full[t]), barrier_wait(o_ready[t]),
                     each<DC>([&](auto c) { return tcgen05_mma(O(t)(c), P(t), vs[stg(j)][c][0_c], j > 0_c); }), tcgen05_commit_arrive(p_free[t]));
        };
        auto mma = seq(barrier_wait(q_full), barrier_wait(k_full[stg(0_c)]), issue_s(0_c, 0_c), issue_s(1_c, 0_c), tcgen05_commit_arrive(k_free[stg(0_c)]),
                       for_(range(last(1_c) + 1_c), [&](auto j) {
                         auto next = j + 1_c;
                         return seq(barrier_wait(v_full[stg(j)]),
                                    if_(j <= last(0_c), seq(issue_pv(0_c, j), if_(j < last(0_c), seq(barrier_wait(k_full[stg(next)]), issue_s(0_c, next))))),
                                    issue_pv(1_c, j), tcgen05_commit_arrive(v_free[stg(j)]),
                                    if_(j < last(1_c), seq(if_(j >= last(0_c), barrier_wait(k_full[stg(next)])), issue_s(1_c, next),
                                                           tcgen05_commit_arrive(k_free[stg(next)]))));
                       }));

        // Block j of tile t needs a mask where it reaches past the tile's first row (causal) or
        // holds the slice's last keys; the mask keeps key < S and (causal) key <= row.
        auto needs_mask = [&](auto t, auto j) {
          if constexpr (Causal) return j == as_index(kv_blocks - 1) || j * int_c<BKV> + int_c<BKV - 1> > row0(t);
          else return j == as_index(kv_blocks - 1);
        };
        auto mask_of = [&](auto t, auto j) {
          return [=](auto const& x) {
            auto keys = S - j * int_c<BKV>;  // keys of the slice from this block's first on
            if constexpr (Causal)
              return select(iota<1>(s_tile) < keys, select(iota<1>(s_tile) <= iota<0>(s_tile) + (row0(t) - j * int_c<BKV>), x, -1e30f), -1e30f);
            else return select(iota<1>(s_tile) < keys, x, -1e30f);
          };
        };
        auto unmasked = [](auto const& x) { return x; };
        auto softmax = [&](auto t) {
          auto step = [&](auto j, auto const& mask) {
            return softmax_step(j, s_full[t], St[t], P(t), m[t], mn[t], l[t], alpha[t], p_free[t], p_full[t], mask, scale, s_tile);
          };
          return seq(store(m[t], -1e30f), store(l[t], 0.0f), for_(range(last(t) + 1_c), [&](auto j) {
                       return if_(needs_mask(t, j), step(j, mask_of(t, j)), step(j, unmasked));
                     }));
        };

        auto wait_pv = [&](auto t) { return [=] { return barrier_wait(p_free[t]); }; };
        auto epilogue = [&](auto t) {
          return seq(barrier_wait(p_free[t]),  // the tile's last P V is complete
                     if_(tile128(t) < as_index(tiles128),
                         seq(store(lse.tile(shape(1_c, 128_c), masked(), slice, tile128(t)),
                                   reshape(load(m[t]) * 0.6931471805599453f + log(load(l[t])), shape(1_c, 128_c))),
                             store(l[t], 1.0f / load(l[t])), each<DC>([&](auto c) {
                               return store_tile(qs[t][c], cast<bf16>(async_load_tmem(O(t)(c)) * broadcast<1>(load(l[t]), shape(128_c, 64_c))),
                                                 o.block(slice, tile128(t), c), int_c<2 * DC>);
                             }))));
        };
        auto correction = seq(for_(range(last(1_c) + 1_c),
                                   [&](auto j) {
                                     return seq(if_(j <= last(0_c), correction_step<DC>(j, p_full[0_c], wait_pv(0_c), O(0_c), alpha[0_c], o_ready[0_c])),
                                                correction_step<DC>(j, p_full[1_c], wait_pv(1_c), O(1_c), alpha[1_c], o_ready[1_c]));
                                   }),
                              epilogue(0_c), epilogue(1_c), wait_smem_to_gmem(0_c, read_only), tmem_dealloc(St), tmem_dealloc(P0), tmem_dealloc(P1),
                              tmem_dealloc(Ot));

        return if_(thread_id() == 0_c, softmax(0_c),
                   if_(thread_id() == 1_c, softmax(1_c), if_(thread_id() == 2_c, correction, if_(thread_id() == 3_c, producer, mma))));
      });
}

// The keys per block the parameters pick: BK, or with BK=0 the largest TMEM allows.
inline std::int64_t block_keys(param_values const& p) {
  const std::int64_t bk = p.count("BK") ? p.at("BK") : 0, tiles = p.count("tiles") ? p.at("tiles") : 1;
  if (bk != 0) return bk;
  return tiles == 2 && p.at("D") == 128 ? 64 : 128;
}

// Each row of each slice: its S keys, in the kernel's BK-key blocks (attention_common.hpp).
inline void reference(std::vector<host_tensor>& t, param_values const& p) {
  const std::int64_t B = p.at("B"), S = p.at("S"), D = p.at("D"), BK = block_keys(p);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t r = 0; r < S; ++r)
      attention_row_reference(t[0], t[1], t[2], t[3], b * S + r, b * S, S, r, p.at("causal") != 0, D, BK, attention_p::bf16, 0, nullptr, &t[4]);
}

}  // namespace stagecraft::examples::fa4
