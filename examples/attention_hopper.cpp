// O = softmax(Q K^T / sqrt(D) + mask) V, bf16 in and out: a FlashAttention-3-style forward pass
// for sm_90a.
//
// Q, K, V and O are (B, S, D): batch x head, position, head dimension. A CTA takes 128 query rows
// of one of the B slices: warpgroup 0 (the producer) loads its Q tile once, then streams 64-key (or BK = 128-key)
// blocks of K and V through a 2-stage ring of 128-byte swizzled stages with TMA (K and V on their
// own barriers, so S = Q K^T starts before V has landed, and released on their own: K once its S
// is complete, V once its P V is); warpgroups 1 and 2 (the consumers) each
// own a 64-row slice of the Q tile and, per key block,
//
//   S  = Q K^T                         wgmma, both operands in SMEM, f32 D fragment
//   L  = S * log2(e) / sqrt(D)         (causal: on the diagonal block, select(col <= row, L, -1e30))
//   m' = max(m, max<1>(S) * scale)     row reduction of the fragment: registers + 2 quad shuffles
//   S := P = exp2(L - broadcast<1>(m'))   in S's own registers
//   l  = l * exp2(m - m') + sum<1>(P)
//   O  = O * broadcast<1>(exp2(m - m')) + P V   P straight from S's registers as wgmma's A
//
// m, m' and l are row-vector accumulators (accumulator<f32>(shape(64_c))): each thread holds the
// two rows of the D fragment it owns, so the broadcasts read its own registers and nothing but
// the two shuffles of a row reduction moves between lanes. The exponentials are exp2 of
// log2(e)-prescaled logits, the shared implementation (stagecraft/ir/math.hpp).
//
// Causal: query row r sees keys k <= r. The consumer whose 64 rows start at key block `diag`
// computes the blocks below it unmasked in its loop, then the diagonal block, masked by iota,
// compare and select with a static triangle (rows and keys start at the same offset there), and
// skips the block above it (every P would be 0); it still waits for and releases that stage, so
// its barrier phases stay in step with the producer's. The producer stops at the CTA's last
// visible block.
//
// BK = 128: 128-key blocks, S a (64, 128) accumulator from m64n128k16 wgmmas and P V over 128
// keys. Causal, both consumers' diagonal is the query tile's own block: consumer 1's rows start
// 64 keys into it (its triangle is key <= row + 64), and no consumer skips a block.
//
// BK = 176 (FA3's non-causal block at D = 128): m64n176k16 wgmmas for S, P V over eleven k16
// steps, and per block the row bookkeeping, barrier waits and releases of 176 keys. Two stages of
// K and V are 176 KB at D = 128, beside Q's 32 KB. Not causal: 176 keys do not tile the 128-row
// query tiles, so a diagonal block would straddle two of them (FA3 too takes 128 when causal).
// overlap = 1 too: P's packed bf16 copy is 44 registers beside S's 88.
//
// D = 128 is two 64-column chunks (one swizzle row each): S sums two wgmmas, O is two (64, 64)
// accumulators fed by the same P; D = 256 four (O0..O3: 128 registers per consumer thread, and
// 192 KB of SMEM for Q and the two K and V stages). O / l is O times 1 / l, the reciprocal taken
// once per row.
//
// Any S: a slice is its own TMA dimension, so the last query tile and key block may overhang it
// and TMA fills what lies past S with zeros, never the next slice's rows. The keys past S in the
// last block are masked (select(key < S, L, -1e30): a zero-filled key would score 0, not -inf);
// causal needs no extra mask (those keys lie after every row). O goes out through the consumer's
// Q slice in SMEM (free once its last wgmma is waited for) by a TMA store, which drops the rows
// past S. A consumer whose 64 rows lie wholly past S (the second of the last tile) loads the last
// Q block instead, computes rows nobody stores, and stores nothing.
//
// pingpong = 1 (FlashAttention-3's warpgroup ping-pong): the consumers take turns issuing their
// GEMM groups, so one's softmax runs while the other's wgmmas hold the tensor core. As in FA3 the
// turns are named barriers over both consumers' 256 threads: consumer h syncs on barrier h
// before each group (S, then P V), which completes once the other consumer has arrived on it,
// and once its group is committed, but before waiting for it, arrives on the other's barrier
// (bar.arrive: no wait, no SMEM, no parity to track). Consumer 1 grants the first turn. The
// alternation keeps a barrier from ever seeing two arrivals of one consumer in one phase. Both
// must take the same number of turns: in the causal kernel consumer 1 computes one block more
// than consumer 0 (its diagonal, above consumer 0's), so consumer 0 takes and passes both its
// turns on that block, issuing nothing; dropping that hand-off deadlocks consumer 1
// (zoo_pingpong_skipped_turn shows it with mbarrier turns). FA3 also puts two GEMMs in a turn
// (S of block j + 1 with P V of block j): that is overlap = 1.
//
// overlap = 1 (FlashAttention-3's intra-warpgroup overlap): a consumer keeps two GEMM groups in
// flight. For block j > 0 it issues S(j), rescales O by block j - 1's alpha, issues P V(j - 1)
// (one turn with ping-pong), and wgmma_wait(1) completes only S(j): the softmax of block j runs
// while P V(j - 1) is on the tensor core. P(j - 1) lives in its own accumulator P, copied out
// of S's registers once P V(j - 2) completed, since S(j) overwrites them: bf16 pairs packed two
// to a register, which P V takes as its A registers unchanged (with an f32 copy, S, P and O did
// not fit a consumer's 240 registers at BK = 128 with D = 128, BK = 176, or D = 256 causal). The first block's S and
// the last block's P V are peeled off the loop; the masked block is the step after the loop.
#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "attention_common.hpp"

namespace stagecraft::examples {
namespace {

constexpr long long BQ = 128, STAGES = 2;

// A key block without a mask: the softmax after a mask tells the two apart by this type.
struct no_mask_t {
  auto operator()() const { return seq(); }
};

// BKV: keys per block, 64, 128 or 176 (FA3's n128 / n176 S wgmmas and k128 / k176 P V; half the row
// bookkeeping, barrier waits and releases per key, or less). S % BKV != 0 (non-causal only): the last key block is
// peeled off the loop and masked. The two forms are the arms of an if_ on constants (the keys
// of the last block against BKV), not a template parameter: the generated C++ drops the arm not
// taken, so a whole last block still adds no code to the kernel, and the 44 instantiations of
// this function are not 66 (this translation unit's compile time).
template <class T, long long D, long long BKV, bool Causal, bool PingPong, bool Overlap>
auto attention_hopper(std::int64_t B, size_expr S) {
  constexpr bool fp8 = std::is_same_v<T, e4m3>;
  static_assert(!fp8 || BKV <= 128, "attention_hopper: an fp8 V^T stage row is BK bytes, one swizzle row of at most 128");
  constexpr long long DC = D / 64;  // 64-column chunks of the head dimension
  constexpr long long KB = BQ / BKV;  // key blocks per query tile: 2 or 1 (causal only: BKV 64 or 128)
  static_assert(!Causal || BQ % BKV == 0, "attention_hopper: a causal kernel's key blocks tile its 128-row query tiles");
  // S is a size (expr/size.hpp): compiled in, or with --dynamic S a launch argument; then these
  // are computed in the kernel, and both arms of by_tail are generated, chosen at run time.
  const size_expr q_tiles = ceil_div(S, BQ), kv_blocks = ceil_div(S, BKV);
  const size_expr tail = S - (kv_blocks - 1) * BKV;  // keys in the last block: 1 to BKV
  // Non-causal: `whole` when BKV divides S, else `partial`, whose last block is masked.
  auto by_tail = [=](auto const& whole, auto const& partial) { return if_(as_index(tail) == int_c<BKV>, whole, partial); };
  const float scale = attention_scale(D);
  auto tile = shape(64_c, 64_c);           // a consumer's (rows, 64 columns) of O
  auto s_tile = shape(64_c, int_c<BKV>);   // its (rows, keys) of S and P
  // os: where O goes out (bf16), each consumer's Q slice, or with fp8 (Q's slice is half its size) its own buffer.
  // lse: (B, S) f32, each row's natural log-sum-exp of its scaled scores (FA3's softmax_lse,
  // what a backward pass recomputes P from).
  auto body = [=](auto q, auto k, auto v, auto o, auto lse, auto qs, auto ks, auto vs, auto q_full, auto k_full, auto v_full, auto k_free, auto v_free,
                  auto Sacc, auto O0, auto O1, auto O2, auto O3, auto m, auto mn, auto l, auto alpha_acc, auto P_acc, auto os, auto... descales) {
    auto O = [&](auto c) {
      constexpr long long i = decltype(c)::value;
      if constexpr (i == 0) return O0;
      else if constexpr (i == 1) return O1;
      else if constexpr (i == 2) return O2;
      else return O3;
    };
    auto cta = program_id(0_c);
    auto q_tile = cta % q_tiles;                          // which 128 rows of the slice
    auto slice = cta / q_tiles;                           // which of the B slices
    // fp8: descales = (c, q_descale, k_descale, v_descale): the scores' scale c (a (64) row
    // vector, every row |dq dk| log2(e) / sqrt(D)) and the three (B) f32 descales of the slices.
    // The slice's descale, a one-element tile.
    auto descale = [&](auto i) { return load(std::get<decltype(i)::value>(std::make_tuple(descales...)).tile(shape(1_c), slice)); };
    // (A template, so that the bf16 kernels, whose pack is empty, never instantiate its body.)
    auto c_acc = [&]<int I = 0>() { return std::get<I>(std::make_tuple(descales...)); };
    // Causal: the CTA's rows end in key block KB q_tile + KB - 1; the blocks after it are not loaded.
    auto needed = [&](auto j, auto const& what) {
      if constexpr (Causal) return if_(j < q_tile * int_c<KB> + int_c<KB>, what);
      else return what;
    };

    // This consumer's 64-row block of Q (a wholly outside one: the last).
    auto q_block = [&](auto h) { return min(q_tile * 2_c + h, ceil_div(S, 64) - 1); };
    auto producer = seq(each<2>([&](auto h) { return each<DC>([&](auto c) { return copy_gmem_to_smem(q.block(slice, q_block(h), c), qs[h][c], q_full[0_c]); }); }),
                        for_(range(kv_blocks), [&](auto j) {
                          auto s = stage<STAGES>(j);
                          return needed(j, seq(if_(j >= int_c<STAGES>, barrier_wait(k_free[s])),
                                               each<DC>([&](auto c) { return copy_gmem_to_smem(k.block(slice, j, c), ks[s][c], k_full[s]); }),
                                               if_(j >= int_c<STAGES>, barrier_wait(v_free[s])),
                                               each<DC>([&](auto c) {
                                                 if constexpr (fp8) return copy_gmem_to_smem(v.block(slice, c, j), vs[s][c], v_full[s]);  // V^T: (1, d, key)
                                                 else return copy_gmem_to_smem(v.block(slice, j, c), vs[s][c], v_full[s]);
                                               })));
                        }));

    auto consumer = [&](auto h) {
      // The key block holding this consumer's first row (with BKV = 64 it starts there; with 128
      // consumer 1's rows start 64 keys into it).
      auto diag = [&] {
        if constexpr (KB == 2) return q_tile * 2_c + h;
        else return q_tile;
      }();
      // A mask keeps the scores of the keys a row sees and puts -1e30 in the others. fp8: it also
      // applies the descaled scale c to the kept ones, and the softmax after it scales by 1: so a
      // masked key stays out of the softmax whatever c is (-1e30 c is no longer -1e30 when c is
      // tiny, or 0 with a zero descale), at one multiply per element in masked blocks only.
      auto kept = [&] {
        if constexpr (fp8) return load(Sacc) * broadcast<1>(load(c_acc()), s_tile);
        else return load(Sacc);
      };
      // Key c of the diagonal block is visible to row r of this consumer when c <= r + offset.
      auto triangle = [&] {
        constexpr long long offset = 64 * decltype(h)::value % BKV;
        if constexpr (offset == 0) return store(Sacc, select(iota<1>(s_tile) <= iota<0>(s_tile), kept(), -1e30f));
        else return store(Sacc, select(iota<1>(s_tile) <= iota<0>(s_tile) + static_cast<int>(offset), kept(), -1e30f));
      };
      // The keys past S in a partial last block.
      auto tail_mask = [&] { return store(Sacc, select(iota<1>(s_tile) < tail, kept(), -1e30f)); };
      auto no_mask = no_mask_t{};
      // Ping-pong: consumer h issues a GEMM group only holding the turn (a completion of
      // turn[h]) and passes it on (arrives on turn[other]) once the group is issued, not done,
      // so the other's GEMM queues behind its own on the tensor core while it runs its softmax.
      constexpr long long other = 1 - decltype(h)::value;
      auto in_turn = [&](auto const& issue) {
        if constexpr (PingPong) {
          return seq(named_barrier_sync(h, 256_c), issue, named_barrier_arrive(int_c<other>, 256_c));
        } else {
          return issue;
        }
      };
      // A stage this consumer does not compute: waited for and released, so that the phases of its
      // barriers stay in step with the producer's.
      auto release_unused = [&](auto s) { return seq(barrier_wait(k_full[s]), barrier_arrive(k_free[s]), barrier_wait(v_full[s]), barrier_arrive(v_free[s])); };
      // S = Q K^T for stage s, issued and committed (Sacc zeroed before).
      auto issue_s = [&](auto s) { return seq(each<DC>([&](auto c) { return wgmma(Sacc, qs[h][c][0_c], transpose(ks[s][c][0_c])); }), wgmma_commit()); };
      // S = Q K^T for stage s, waited for; K released.
      auto scores = [&](auto s) {
        return seq(store(Sacc, 0.0f), in_turn(issue_s(s)), wgmma_wait(0_c), barrier_arrive(k_free[s]));  // K is free once S is complete
      };
      // The online softmax (attention_common.hpp) on the raw scores in Sacc, or with fp8 after a
      // mask on scores it has scaled (`mask`: the block's mask, no_mask_t when it has none).
      auto softmax = [&](auto const& mask) {
        if constexpr (!fp8) return online_softmax(Sacc, m, mn, l, alpha_acc, scale, s_tile);
        else if constexpr (std::is_same_v<std::decay_t<decltype(mask)>, no_mask_t>) return online_softmax(Sacc, m, mn, l, alpha_acc, c_acc(), s_tile);
        else return online_softmax(Sacc, m, mn, l, alpha_acc, 1.0f, s_tile);
      };
      // O = O * alpha + P V for stage s, issued and committed; P from `P` (S's registers, or P_acc).
      auto issue_pv = [&](auto s, auto const& P) {
        return seq(each<DC>([&](auto c) { return store(O(c), load(O(c)) * broadcast<1>(load(alpha_acc), tile)); }),
                   each<DC>([&](auto c) {
                     // fp8: P rounded to e4m3 (A from registers, gathered from the quad), V^T's stage K-major
                     if constexpr (fp8) return wgmma(O(c), cast<e4m3>(P), transpose(vs[s][c][0_c]));
                     else return wgmma(O(c), cast<bf16>(P), vs[s][c][0_c]);
                   }),
                   wgmma_commit());
      };
      // overlap = 0: the softmax, then O += P V from S's registers, waited for.
      auto update = [&](auto s, auto const& mask) { return seq(softmax(mask), barrier_wait(v_full[s]), in_turn(issue_pv(s, load(Sacc))), wgmma_wait(0_c)); };
      // One key block; `mask` rewrites the raw scores before the softmax (nothing, the causal
      // triangle, or the keys past S of the last block).
      auto block_with = [&](auto j, auto const& mask) {
        auto s = stage<STAGES>(j);
        return seq(barrier_wait(k_full[s]), scores(s), mask(), update(s, mask), barrier_arrive(v_free[s]));
      };
      auto block = [&](auto j) { return block_with(j, no_mask); };
      auto blocks = [&] {
        if constexpr (Causal) {
          // The diagonal block after the loop, so the triangle (a constant of lane and register)
          // is not hoisted out of the loop into 32 live registers (-1e30 * scale still underflows
          // exp2 to 0). With 64-key blocks consumer 0 then releases the block after it, all
          // masked. Keys past S lie after every row: the triangle masks them too. With S % 128 in
          // (0, 64] and 64-key blocks, the last tile has no block after consumer 0's diagonal,
          // and consumer 1's rows lie wholly past S: its loop takes every block, and it has no
          // diagonal. With 128-key blocks both consumers' diagonal is the tile's own block.
          auto diagonal = block_with(diag, triangle);
          auto below = for_(range(kv_blocks), [&](auto j) { return if_(j < diag, block(j)); });
          if constexpr (KB == 2 && decltype(h)::value == 0) {
            auto sn = stage<STAGES>(diag + 1_c);
            // Ping-pong: consumer 1 computes this block, so consumer 0 still takes and passes
            // both of its turns (S and P V), issuing nothing, or consumer 1 waits forever.
            return seq(below, diagonal, if_(diag + 1_c < kv_blocks, seq(release_unused(sn), in_turn(seq()), in_turn(seq()))));
          } else {
            return seq(below, if_(diag < kv_blocks, diagonal));
          }
        } else {
          // Keys past S in the last block (TMA's zero fill) would score 0: mask them to -1e30.
          auto last = block_with(kv_blocks - 1, tail_mask);
          return by_tail(for_(range(kv_blocks), [&](auto j) { return block(j); }),
                         seq(for_(range(kv_blocks - 1), [&](auto j) { return block(j); }), last));
        }
      };
      // ---- overlap = 1: FlashAttention-3's intra-warpgroup overlap ----
      // S of block j is issued before O += P V of block j - 1, the two in one turn; the softmax of
      // block j then runs while P V(j - 1) is still on the tensor core: wgmma_wait(1) completes
      // only the older group, S(j). P(j - 1) was moved out of S's registers (P_acc) once P V(j - 2)
      // completed, and O is rescaled by alpha(j - 1) between the two issues, when no wgmma writes
      // it. K is released as soon as its S is complete, V once its P V is. The softmax and P V
      // are overlap = 0's, in the same order per element: the outputs are bit for bit equal.
      // P into P_acc, rounded as the P V's A is (cast<bf16>, or cast<e4m3> with fp8), so the
      // outputs stay bit for bit overlap = 0's: bf16 pairs packed in 32 registers (of a 64-key
      // block) where f32 would take 64, or e4m3 fours in 16, already in the order the quad's
      // gather into wgmma's 8-bit A wants; the P V then takes P_acc's registers as they are.
      auto keep_p = [&] {
        if constexpr (!Overlap) return store(P_acc, load(Sacc));  // (overlap = 0 never runs it: P stays f32 there, its code unchanged)
        else return store(P_acc, cast<T>(load(Sacc)));
      };
      // The first block: S alone in its turn.
      auto first = [&](auto const& mask) {
        auto s = stage<STAGES>(0_c);
        return seq(barrier_wait(k_full[s]), store(Sacc, 0.0f), in_turn(issue_s(s)), wgmma_wait(0_c), barrier_arrive(k_free[s]), mask(), softmax(mask),
                   keep_p());
      };
      // Block j > 0: S(j) and P V(j - 1) in one turn.
      auto step = [&](auto j, auto const& mask) {
        auto s = stage<STAGES>(j), sp = stage<STAGES>(j - 1_c);
        return seq(barrier_wait(k_full[s]), barrier_wait(v_full[sp]), store(Sacc, 0.0f), in_turn(seq(issue_s(s), issue_pv(sp, load(P_acc)))), wgmma_wait(1_c),
                   barrier_arrive(k_free[s]), mask(), softmax(mask), wgmma_wait(0_c), barrier_arrive(v_free[sp]), keep_p());
      };
      // After the last block j: P V(j) alone in its turn.
      auto last_pv = [&](auto j) {
        auto s = stage<STAGES>(j);
        return seq(barrier_wait(v_full[s]), in_turn(issue_pv(s, load(P_acc))), wgmma_wait(0_c), barrier_arrive(v_free[s]));
      };
      auto overlapped = [&] {
        if constexpr (Causal) {
          // Blocks 0 .. last, the last masked by the triangle (outside the loop, as above). A
          // consumer whose rows lie wholly past S (the second of the last tile, S % 128 in
          // (0, 64]) takes every block, the last one masked too: rows nobody stores.
          auto last = min(diag, kv_blocks - 1);
          auto computed = seq(if_(last == 0_c, first(triangle),
                                  seq(first(no_mask), for_(range(1_c, last), [&](auto j) { return step(j, no_mask); }), step(last, triangle))),
                              last_pv(last));
          if constexpr (KB == 2 && decltype(h)::value == 0) {
            // Consumer 1 computes the block after this consumer's diagonal: one more turn.
            return seq(computed, if_(diag + 1_c < kv_blocks, seq(release_unused(stage<STAGES>(diag + 1_c)), in_turn(seq()))));
          } else {
            return computed;
          }
        } else {
          // (with a partial last block kv_blocks >= 2: S >= BKV)
          const size_expr middle = max(kv_blocks - 2, 0);
          return seq(first(no_mask),
                     by_tail(for_(range(kv_blocks - 1), [&](auto j) { return step(j + 1_c, no_mask); }),
                             seq(for_(range(middle), [&](auto j) { return step(j + 1_c, no_mask); }), step(as_index(kv_blocks - 1), tail_mask))),
                     last_pv(as_index(kv_blocks - 1)));
        }
      };
      auto schedule = [&] {
        if constexpr (Overlap) return overlapped();
        else return blocks();
      };
      // Ping-pong: consumer 0 takes the first turn, which consumer 1 grants before its first wait.
      auto first_turn = [&] {
        if constexpr (PingPong && other == 0) return named_barrier_arrive(0_c, 256_c);  // consumer 1
        else return seq();
      };
      // fp8: the scores' scale, once per consumer (the magnitude: attention_common.hpp says why).
      auto set_scale = [&] {
        if constexpr (fp8) return store(c_acc(), full(shape(64_c), abs(descale(1_c) * descale(2_c)) * scale));
        else return seq();
      };
      // 1 / l, or with fp8 v_descale / l: once per row, then a multiply per element.
      auto out_scale = [&] {
        if constexpr (fp8) return full(shape(64_c), descale(3_c)) / load(l);
        else return 1.0f / load(l);
      };
      return seq(barrier_wait(q_full[0_c]), set_scale(), store(m, -1e30f), store(mn, -1e30f), store(l, 0.0f),
                 each<DC>([&](auto c) { return store(O(c), 0.0f); }), first_turn(), schedule(),
                 // LSE = ln(sum exp(scaled scores)) = m ln 2 + ln l (m: the row max of the scores
                 // in base 2, l: the sum of exp2 below it), a generic store: TMA would need S * 4
                 // bytes a multiple of 16. The masked tile drops the rows past S; a consumer
                 // whose 64 rows all are (q_block repeats the last block for it) stores none.
                 if_(q_tile * 2_c + h < ceil_div(S, 64),
                     store(lse.tile(shape(1_c, 64_c), masked(), slice, q_tile * 2_c + h),
                           reshape(load(m) * 0.6931471805599453f + log(load(l)), shape(1_c, 64_c)))),
                 // O / l through this consumer's Q slice (its wgmmas are all waited for) and out
                 // by TMA, which drops the rows past S: store_tile per 64-column chunk, each chunk
                 // its own buffer (pending DC: none of them waits for another's store).
                 store(l, out_scale()),
                 each<DC>([&](auto c) {
                   return store_tile(os[h][c], cast<bf16>(load(O(c)) * broadcast<1>(load(l), tile)), o.block(slice, q_tile * 2_c + h, c), int_c<DC>);
                 }),
                 wait_smem_to_gmem(0_c, read_only));
    };
    return if_(thread_id() == 0_c, producer, seq(if_(thread_id() == 1_c, consumer(0_c)), if_(thread_id() == 2_c, consumer(1_c))));
  };
  auto rows = shape(B, S, int_c<D>);  // (slice, position, d)
  constexpr long long row_bytes = 64 * (fp8 ? 1 : 2);  // a 64-column chunk's row: one swizzle row of 128 (bf16) or 64 (e4m3) bytes
  // V: (slice, position, d), or with fp8 V^T (slice, d, position): an 8-bit B operand is K-major only.
  auto v = [&] {
    if constexpr (fp8) return gmem<e4m3>("Vt", shape(B, int_c<D>, S));
    else return gmem<bf16>("V", rows);
  }();
  auto vs = [&] {
    if constexpr (fp8) return smem<e4m3>(shape(int_c<STAGES>, int_c<DC>, 1_c, 64_c, int_c<BKV>), swizzle(int_c<BKV>));  // (stage, chunk, 1, d, key)
    else return smem<bf16>(shape(int_c<STAGES>, int_c<DC>, 1_c, int_c<BKV>, 64_c), swizzle(128_c));                    // (stage, chunk, 1, key, d)
  }();
  // bf16: O goes out through the consumer's Q slice; fp8: through its own (consumer, chunk, 1, row, d) buffer.
  // descale_params: none, or with fp8 the slices' f32 descales after O (the tuple's elements).
  auto declare = [&](auto descale_params, auto&&... out_and_body) {
    return std::apply([&](auto const&... ds) {
    return kernel<sm_90a>("attention_hopper", grid(B * q_tiles), threads(3_c), gmem<T>("Q", rows), gmem<T>("K", rows), v, gmem<bf16>("O", rows), ds...,
                      gmem<f32>("LSE", shape(B, S)),
                      // (the unit dimension is the slice of a (1, rows, 64) TMA box)
                      smem<T>(shape(2_c, int_c<DC>, 1_c, 64_c, 64_c), swizzle(int_c<row_bytes>)),               // qs: (consumer, chunk, 1, row, d)
                      smem<T>(shape(int_c<STAGES>, int_c<DC>, 1_c, int_c<BKV>, 64_c), swizzle(int_c<row_bytes>)),  // ks: (stage, chunk, 1, key, d)
                      vs,
                      barrier(arrivals(int_c<2 * DC>), count(1_c)),                          // both Q slices landed
                      barrier(arrivals(int_c<DC>), count(int_c<STAGES>)),                    // k_full[stage]
                      barrier(arrivals(int_c<DC>), count(int_c<STAGES>)),                    // v_full[stage]
                      barrier(arrivals(2_c), count(int_c<STAGES>)),                        // k_free[stage]: both consumers' S of it are complete
                      barrier(arrivals(2_c), count(int_c<STAGES>)),                        // v_free[stage]: both consumers' P V of it are complete
                      accumulator<f32>("S", s_tile), accumulator<f32>("O0", tile),
                      accumulator<f32>("O1", tile),  // columns 64..127 of O when D >= 128; untouched (no registers) at D = 64
                      accumulator<f32>("O2", tile), accumulator<f32>("O3", tile),  // columns 128..255 when D = 256
                      accumulator<f32>("m", shape(64_c)), accumulator<f32>("m_new", shape(64_c)), accumulator<f32>("l", shape(64_c)),
                      accumulator<f32>("alpha", shape(64_c)),  // the rescale of O, from the softmax to the P V (overlap = 1: the next one)
                      accumulator<std::conditional_t<!Overlap, f32, std::conditional_t<fp8, e4m3, bf16>>>("P", s_tile),  // overlap = 1: P of the block whose P V is next (S's registers hold the newer)
                      out_and_body...);
    }, descale_params);
  };
  if constexpr (fp8)
    // q_descale, k_descale, v_descale: (B) f32, one per slice (FA3's descale_q/k/v); then os and
    // the scores' scale c, which the body takes last with the descales.
    return declare(std::make_tuple(gmem<f32>("q_descale", shape(B)), gmem<f32>("k_descale", shape(B)), gmem<f32>("v_descale", shape(B))),
                   smem<bf16>(shape(2_c, int_c<DC>, 1_c, 64_c, 64_c), swizzle(128_c)), accumulator<f32>("c", shape(64_c)),
                   [=](auto q, auto k, auto vg, auto o, auto dq, auto dk, auto dv, auto lse, auto... rest) { return body(q, k, vg, o, lse, rest..., dq, dk, dv); });
  else
    return declare(std::tuple<>{}, [=](auto q, auto k, auto vg, auto o, auto lse, auto qs, auto... rest) { return body(q, k, vg, o, lse, qs, rest..., qs); });
}

// Each row of each slice: its S keys, in the kernel's BK-key blocks (attention_common.hpp).
void attention_reference(std::vector<host_tensor>& t, param_values const& p) {
  const std::int64_t B = p.at("B"), S = p.at("S"), D = p.at("D"), BKV = p.at("BK");
  const bool fp8 = p.at("fp8") != 0;
  for (std::int64_t b = 0; b < B; ++b) {
    // fp8: t[4], t[5], t[6] are the slices' q, k and v descales; LSE comes last.
    const attention_descales d = fp8 ? attention_descales{t[4].get(b), t[5].get(b), t[6].get(b)} : attention_descales{};
    for (std::int64_t r = 0; r < S; ++r)
      attention_row_reference(t[0], t[1], t[2], t[3], b * S + r, b * S, S, r, p.at("causal") != 0, D, BKV, fp8 ? attention_p::e4m3 : attention_p::bf16,
                              fp8 ? S : 0, fp8 ? &d : nullptr, &t.back());
  }
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "attention_hopper",
    .summary = "O = softmax(Q K^T / sqrt(D) + mask) V (bf16, (B*S, D)) and each row's log-sum-exp LSE (f32, (B, S)): Q resident, K/V through a 2-stage TMA ring from a producer warpgroup, "
               "2 consumer warpgroups with online softmax in registers and P V from registers",
    .params = {{.name = "B", .default_value = 1, .help = "batch x heads", .min = 1},
               {.name = "S", .default_value = 256, .help = "sequence length (any; --dynamic S: a launch argument)", .min = 64, .run_time = true},
               {.name = "D", .default_value = 64, .help = "head dimension", .allowed = {64, 128, 256}},
               {.name = "causal", .default_value = 0, .help = "1: query r sees keys <= r", .allowed = {0, 1}, .min = 0},
               {.name = "pingpong",
                .default_value = 0,
                .help = "1: the consumers take turns issuing their GEMMs (one's softmax under the other's wgmmas)",
                .allowed = {0, 1},
                .min = 0},
               {.name = "BK",
                .default_value = 64,
                .help = "keys per block: 64, 128 (n128 S and k128 P V wgmmas, half the per-key row bookkeeping) or 176 (not causal, D <= 128)",
                .allowed = {64, 128, 176}},
               {.name = "overlap",
                .default_value = 0,
                .help = "1: FA3's intra-warpgroup overlap: S of block j + 1 issued with P V of block j, the softmax under P V",
                .allowed = {0, 1},
                .min = 0},
               {.name = "fp8",
                .default_value = 0,
                .help = "1: e4m3 Q, K and V given as V^T (B, D, S) (fp8 wgmma reads B K-major) with f32 descales q_descale, k_descale and "
                        "v_descale (B) after O: O = softmax(|dq dk| Q K^T / sqrt(D) + mask) V dv; P rounded to e4m3 for P V, O bf16; BK=128 (or 64 "
                        "at D=256), overlap=1 with BK=128 at D=64 and 128 and with BK=64 at D=256, S a multiple of 16 (D=256 with BK=128: causal=0 and S a compiled-in multiple of 128)",
                .allowed = {0, 1},
                .min = 0}},
    .build =
        [](param_values const& p) {
          if (p.at("S") < p.at("BK"))
            throw usage_error("attention_hopper: S=" + std::to_string(p.at("S")) + " must be at least BK=" + std::to_string(p.at("BK")) +
                              " (a TMA box of K may overhang S, not exceed it)");
          if (p.at("fp8") == 1) {
            // (not instantiated: compile time.)
            // BK=64 at D=256 only, where BK=128 spills (below): at D=64 and 128 BK=128 runs every
            // case BK=64 would, faster, and 12 more instantiations would cost 13 s of compile.
            if ((p.at("overlap") == 1 && (p.at("D") == 256 ? p.at("BK") != 64 : p.at("BK") != 128)) || (p.at("D") == 256 ? p.at("BK") == 176 : p.at("BK") != 128))
              throw usage_error("attention_hopper: fp8=1 is offered with BK=128 (D=64, 128 or 256; overlap=1 at D=64 and 128) or BK=64 (D=256, overlap=1 too), but got BK=" +
                                std::to_string(p.at("BK")) + ", D=" + std::to_string(p.at("D")) + ", overlap=" + std::to_string(p.at("overlap")));
            if (p.at("S") % 16 != 0)
              throw usage_error("attention_hopper: fp8=1 needs S a multiple of 16, but S=" + std::to_string(p.at("S")) +
                                ": a row of V^T is S bytes, and TMA steps between rows in 16-byte units");
            // D=256 with BK=128 (230,400 B of SMEM, 0 spills) only where no block is masked: a
            // masked block's arm (a partial last block, which --dynamic S always generates, or
            // causal's diagonal) spills 1,024 to 1,040 bytes in ptxas. BK=64 (164,864 B) has
            // none to spill: S is half the registers.
            if (p.at("D") == 256 && p.at("BK") == 128 && (p.at("causal") == 1 || p.at("S") % 128 != 0 || is_dynamic(p, "S")))
              throw usage_error("attention_hopper: fp8=1 with D=256 and BK=128 is offered for causal=0 and a compiled-in S that is a multiple of 128, but "
                                "got causal=" + std::to_string(p.at("causal")) + ", S=" + std::to_string(p.at("S")) + (is_dynamic(p, "S") ? " (--dynamic S)" : "") +
                                ": the masked blocks' code spills 1024 bytes in ptxas at D=256; use BK=64");
            return dispatch<64, 128, 256>(p.at("D"), [&](auto D) {
              return dispatch<64, 128>(p.at("BK"), [&](auto K) {
                return dispatch<0, 1>(p.at("causal"), [&](auto C) {
                  return dispatch<0, 1>(p.at("pingpong"), [&](auto P) -> ir::Kernel {
                    constexpr long long d = decltype(D)::value, bk = decltype(K)::value;
                    constexpr bool causal = decltype(C)::value == 1;
                    if constexpr ((d == 256 && bk == 128 && causal) || (d != 256 && bk == 64))
                      throw usage_error("attention_hopper: fp8=1 with D=" + std::to_string(d) + ", BK=" + std::to_string(bk));  // refused above
                    else if constexpr (d == 256 ? bk == 64 : bk == 128)
                      return p.at("overlap") == 1 ? lower(attention_hopper<e4m3, d, bk, causal, decltype(P)::value == 1, true>(p.at("B"), size_param(p, "S")))
                                                  : lower(attention_hopper<e4m3, d, bk, causal, decltype(P)::value == 1, false>(p.at("B"), size_param(p, "S")));
                    else return lower(attention_hopper<e4m3, d, bk, causal, decltype(P)::value == 1, false>(p.at("B"), size_param(p, "S")));
                  });
                });
              });
            });
          }
          return dispatch<64, 128, 256>(p.at("D"), [&](auto D) {
           return dispatch<64, 128, 176>(p.at("BK"), [&](auto K) {
            return dispatch<0, 1>(p.at("causal"), [&](auto C) {
              return dispatch<0, 1>(p.at("pingpong"), [&](auto P) {
                return dispatch<0, 1>(p.at("overlap"), [&](auto X) -> ir::Kernel {
                  constexpr long long d = decltype(D)::value, bk = decltype(K)::value;
                  constexpr bool causal = decltype(C)::value == 1, pingpong = decltype(P)::value == 1, overlap = decltype(X)::value == 1;
                  if constexpr (d == 256 && bk >= 128) {
                    throw usage_error("attention_hopper: D=256 with BK=" + std::to_string(bk) + " needs " + std::to_string((2 * 64 + 4 * bk) * 256 * 2 / 1024) +
                                      " KB of SMEM for Q and two K and V stages (an SM has 227 KB): use BK=64 at D=256");
                  } else if constexpr (bk == 176 && causal) {
                    throw usage_error("attention_hopper: BK=176 with causal=1 is not offered: 176-key blocks do not tile the 128-row query tiles, so the "
                                      "diagonal block would straddle two of them; use BK=128 when causal (as FA3 does)");
                  } else {
                    return lower(attention_hopper<bf16, d, bk, causal, pingpong, overlap>(p.at("B"), size_param(p, "S")));
                  }
                });
              });
            });
            });
          });
        },
    .reference = attention_reference,
});

}  // namespace
}  // namespace stagecraft::examples
