// The bug zoo's attention exhibits (zoo.hpp): the synchronisation mistakes of a FlashAttention-
// style forward pass, each cut down to the few ops that make it. Two warpgroups share SMEM
// scratch (the running row max, the halves of a row reduction), a V ring or the turn of
// ping-pong scheduling; each fixed twin differs from its buggy one by exactly the line its
// comment names.
#include <cmath>
#include <limits>

#include <stagecraft/ir/math.hpp>
#include <stagecraft/stagecraft.hpp>

#include "../../examples/attention_blackwell.hpp"
#include "../../examples/attention_hopper_bwd.hpp"
#include "zoo.hpp"

namespace stagecraft::zoo {
namespace {

template <template <bool> class Make>
ir::Kernel build(variant v) {
  return v == variant::buggy ? Make<true>{}() : Make<false>{}();
}

constexpr float minus_infinity = -std::numeric_limits<float>::infinity();

// Online softmax split over two warpgroups, as FA3 splits it: warpgroup 0 keeps the running row
// max m of the score blocks x[:, 64j : 64j + 64] in SMEM scratch, warpgroup 1 rescales with it
// (y_j = exp(x_j - m_j)). `m_ready` says m is up to date for block j, `m_free` that warpgroup 1
// has read it and warpgroup 0 may move it on.
// MISTAKE: warpgroup 1 waits for `m_ready` once, before its loop, as if m were written once:
// from block 1 on it reads m while warpgroup 0 is updating it.
// FIX: barrier_wait(m_ready) inside the loop, once per block.
template <bool Bug>
struct make_running_max_race {
  ir::Kernel operator()() const {
    constexpr std::int64_t blocks = 2;
    return lower(kernel<sm_90a>(
        "zoo_running_max_race", grid(1), threads(2_c),
        gmem<f32>("x", shape(64_c, int_c<64 * blocks>)),  // (row, key): the scores
        gmem<f32>("y", shape(64_c, int_c<64 * blocks>)),  // exp(x - running max)
        smem<f32>(shape(64_c)),                            // m: the running row max
        barrier(arrivals(1_c)),                            // m_ready
        barrier(arrivals(1_c)),                            // m_free
        [&](auto x, auto y, auto m, auto m_ready, auto m_free) {
          auto block = [&](auto j) { return load(x.tile(shape(64_c, 64_c), 0_c, j)); };
          auto statistics = seq(store(m, minus_infinity), for_(range(blocks), [&](auto j) {
                                  return seq(if_(j > 0_c, barrier_wait(m_free)), store(m, max(load(m), max<1>(block(j)))),
                                             barrier_arrive(m_ready));
                                }));
          auto rescale = [&](auto j) {
            return seq(store(y.tile(shape(64_c, 64_c), 0_c, j), exp(block(j) - broadcast<1>(load(m), block(j)))), barrier_arrive(m_free));
          };
          auto consumer = [&] {
            if constexpr (Bug) return seq(barrier_wait(m_ready), for_(range(blocks), rescale));
            else return for_(range(blocks), [&](auto j) { return seq(barrier_wait(m_ready), rescale(j)); });
          };
          return if_(thread_id() == 0_c, statistics, consumer());
        }));
  }
};

// P * V with P from registers, V streamed by a warp-specialized producer through a two-stage
// ring (`full`: P and V of a step landed, `empty`: the consumer is done with the stage), as in
// attention's second GEMM. P is read into registers when the wgmma issues; V is read by the
// tensor core while the group runs.
// MISTAKE: the consumer releases the stage (barrier_arrive(empty[s])) right after
// wgmma_commit(), reasoning that P is already in registers: V is still being read, and the
// producer's refill of that stage lands under the tensor core.
// FIX: wgmma_wait(0_c), then release.
template <bool Bug>
struct make_v_released_before_wait {
  ir::Kernel operator()() const {
    constexpr std::int64_t kv = 256, steps = kv / 64;
    return lower(kernel<sm_90a>(
        "zoo_v_released_before_wait", grid(1), threads(2_c),
        gmem<bf16>("p", shape(64_c, int_c<kv>)),             // (query, key): the probabilities
        gmem<bf16>("v", shape(int_c<kv>, 64_c)),             // (key, d)
        gmem<f32>("o", shape(64_c, 64_c)),                   // (query, d)
        smem<bf16>(shape(2_c, 64_c, 64_c)),                  // ps: (stage, query, key), read into registers
        smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)),  // vs: (stage, key, d), B MN-major
        smem<f32>(shape(64_c, 64_c)),                        // os: the epilogue's staging tile
        barrier(arrivals(2_c), count(2_c)),                  // full[stage]
        barrier(arrivals(1_c), count(2_c)),                  // empty[stage]
        accumulator<f32>(shape(64_c, 64_c)),                 // acc: O
        [&](auto p, auto v, auto o, auto ps, auto vs, auto os, auto full, auto empty, auto acc) {
          auto producer = for_(range(steps), [&](auto j) {
            auto s = stage<2>(j);
            return seq(if_(j >= 2_c, barrier_wait(empty[s])), copy_gmem_to_smem(p.block(0_c, j), ps[s], full[s]),
                       copy_gmem_to_smem(v.block(j, 0_c), vs[s], full[s]));
          });
          auto consumer_step = for_(range(steps), [&](auto j) {
            auto s = stage<2>(j);
            auto mma = seq(barrier_wait(full[s]), wgmma(acc, load(ps[s]), vs[s]), wgmma_commit());
            if constexpr (Bug) return seq(mma, barrier_arrive(empty[s]), wgmma_wait(0_c));
            else return seq(mma, wgmma_wait(0_c), barrier_arrive(empty[s]));
          });
          auto consumer = seq(store(acc, 0.0f), consumer_step, store(os, load(acc)), commit_smem(), copy_smem_to_gmem(os, o.block(0_c, 0_c)),
                              commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
          return if_(thread_id() == 0_c, producer, consumer);
        }));
  }
};

// A softmax over rows of 128 split between two warpgroups, each owning 64 columns: each folds
// its half of every row into `part_max[w]`, the halves are exchanged through SMEM (`exchanged`,
// one arrival per warpgroup), and each normalises its own columns with the whole row's max and
// sum (the same exchange, for the sums, through `part_sum` and `summed`).
// MISTAKE: after arriving on `exchanged`, each warpgroup reads the other's partial max before
// barrier_wait(exchanged): the other may not have written it yet.
// FIX: barrier_wait(exchanged) between the arrival and the read.
template <bool Bug>
struct make_exchange_before_barrier {
  ir::Kernel operator()() const {
    return lower(kernel<sm_90a>(
        "zoo_exchange_before_barrier", grid(1), threads(2_c),
        gmem<f32>("x", shape(64_c, 128_c)),  // (row, col)
        gmem<f32>("y", shape(64_c, 128_c)),  // softmax along the row
        smem<f32>(shape(2_c, 64_c)),         // part_max: (warpgroup, row)
        smem<f32>(shape(2_c, 64_c)),         // part_sum: (warpgroup, row)
        barrier(arrivals(2_c)),              // exchanged: both partial maxima written
        barrier(arrivals(2_c)),              // summed: both partial sums written
        [&](auto x, auto y, auto part_max, auto part_sum, auto exchanged, auto summed) {
          auto half = [&](auto w) {
            auto X = load(x.tile(shape(64_c, 64_c), 0_c, w));
            auto row_max = max(load(part_max[0_c]), load(part_max[1_c]));
            auto shifted = X - broadcast<1>(row_max, X);
            auto row_sum = load(part_sum[0_c]) + load(part_sum[1_c]);
            auto exchange = [&] {
              if constexpr (Bug) return seq(barrier_arrive(exchanged), store(part_sum[w], sum<1>(exp(shifted))), barrier_wait(exchanged));
              else return seq(barrier_arrive(exchanged), barrier_wait(exchanged), store(part_sum[w], sum<1>(exp(shifted))));
            };
            return seq(store(part_max[w], max<1>(X)), exchange(), barrier_arrive(summed), barrier_wait(summed),
                       store(y.tile(shape(64_c, 64_c), 0_c, w), exp(shifted) / broadcast<1>(row_sum, X)));
          };
          return if_(thread_id() == 0_c, half(0_c), half(1_c));
        }));
  }
};

// Ping-pong scheduling (attention_hopper pingpong=1) cut down to the causal score blocks
// S[h][j] = Q_h K_j^T of two consumers: consumer h owns query block h and sees key blocks
// j <= h, so consumer 0 skips block 1. Each GEMM is issued holding the turn: wait turn[h], issue,
// arrive on turn[other]; consumer 1 grants consumer 0 the first turn. Consumer 0 loads Q and K.
// MISTAKE: consumer 0 skips block 1 outright, hand-off included, reasoning that it has no GEMM
// to issue there: consumer 1's turn for its block 1 never comes (deadlock on turn[1]).
// FIX: on a skipped block, still take the turn and pass it on: barrier_wait(turn[0]),
// barrier_arrive(turn[1]).
template <bool Bug>
struct make_pingpong_skipped_turn {
  ir::Kernel operator()() const {
    return lower(kernel<sm_90a>(
        "zoo_pingpong_skipped_turn", grid(1), threads(2_c),
        gmem<bf16>("q", shape(128_c, 64_c)),                 // (query, d): block h is consumer h's
        gmem<bf16>("k", shape(128_c, 64_c)),                 // (key, d): two 64-key blocks
        gmem<f32>("s", shape(128_c, 128_c)),                 // (query, key): the visible score blocks
        smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)),  // qs: (consumer, query, d)
        smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)),  // ks: (block, key, d)
        barrier(arrivals(4_c)),                              // loaded: both Q and both K blocks
        barrier("turn", arrivals(1_c), count(2_c)),          // turn[h]: consumer h may issue
        accumulator<f32>(shape(64_c, 64_c)),                 // acc: one score block
        [&](auto q, auto k, auto s, auto qs, auto ks, auto loaded, auto turn, auto acc) {
          auto consumer = [&](auto h) {
            constexpr long long other = 1 - decltype(h)::value;
            auto visible = [&](auto j) {
              return seq(barrier_wait(turn[h]), store(acc, 0.0f), wgmma(acc, qs[h], transpose(ks[j])), wgmma_commit(), barrier_arrive(turn[int_c<other>]),
                         wgmma_wait(0_c), store(s.tile(shape(64_c, 64_c), h, j), load(acc)));
            };
            auto skipped = [&] {
              if constexpr (Bug) return seq();
              else return seq(barrier_wait(turn[h]), barrier_arrive(turn[int_c<other>]));
            };
            return seq(barrier_wait(loaded), for_(range(2), [&](auto j) { return if_(j <= h, visible(j), skipped()); }));
          };
          auto loads = seq(copy_gmem_to_smem(q.block(0_c, 0_c), qs[0_c], loaded), copy_gmem_to_smem(q.block(1_c, 0_c), qs[1_c], loaded),
                           copy_gmem_to_smem(k.block(0_c, 0_c), ks[0_c], loaded), copy_gmem_to_smem(k.block(1_c, 0_c), ks[1_c], loaded));
          return if_(thread_id() == 0_c, seq(loads, consumer(0_c)), seq(barrier_arrive(turn[0_c]), consumer(1_c)));
        }));
  }
};

void ref_running_max(std::vector<host_tensor>& t) {  // x (64, 64 * blocks) -> y
  const std::int64_t cols = t[0].shape[1];
  auto x = t[0].as<float>();
  auto y = t[1].as<float>();
  for (std::int64_t r = 0; r < 64; ++r) {
    float m = minus_infinity;
    for (std::int64_t b = 0; b < cols / 64; ++b) {
      for (std::int64_t c = 64 * b; c < 64 * b + 64; ++c) m = std::fmax(m, x[r * cols + c]);
      for (std::int64_t c = 64 * b; c < 64 * b + 64; ++c) y[r * cols + c] = ir::math_exp(x[r * cols + c] - m);
    }
  }
}

void ref_pv(std::vector<host_tensor>& t) {  // p (64, kv), v (kv, 64), o = p * v
  const std::int64_t kv = t[0].shape[1];
  auto o = t[2].as<float>();
  for (std::int64_t i = 0; i < 64; ++i)
    for (std::int64_t n = 0; n < 64; ++n) {
      double s = 0;
      for (std::int64_t k = 0; k < kv; ++k) s += t[0].get(i * kv + k) * t[1].get(k * 64 + n);
      o[i * 64 + n] = static_cast<float>(s);
    }
}

// The kernel's order: each half folded from its first column, the halves' maxima and sums
// combined as (half 0) op (half 1).
void ref_causal_scores(std::vector<host_tensor>& t) {  // q (128, 64), k (128, 64) -> s (128, 128), blocks j <= h
  auto s = t[2].as<float>();
  for (std::int64_t i = 0; i < 128; ++i)
    for (std::int64_t j = 0; j < 128; ++j) {
      if (j / 64 > i / 64) continue;  // above the diagonal: never written
      double d = 0;
      for (std::int64_t c = 0; c < 64; ++c) d += t[0].get(i * 64 + c) * t[1].get(j * 64 + c);
      s[i * 128 + j] = static_cast<float>(d);
    }
}

void ref_split_softmax(std::vector<host_tensor>& t) {
  auto x = t[0].as<float>();
  auto y = t[1].as<float>();
  for (std::int64_t r = 0; r < 64; ++r) {
    const float* xr = &x[r * 128];
    float half_max[2], half_sum[2];
    for (int w = 0; w < 2; ++w) {
      half_max[w] = xr[64 * w];
      for (int c = 1; c < 64; ++c) half_max[w] = std::fmax(half_max[w], xr[64 * w + c]);
    }
    const float m = std::fmax(half_max[0], half_max[1]);
    for (int w = 0; w < 2; ++w) {
      half_sum[w] = ir::math_exp(xr[64 * w] - m);
      for (int c = 1; c < 64; ++c) half_sum[w] += ir::math_exp(xr[64 * w + c] - m);
    }
    const float s = half_sum[0] + half_sum[1];
    for (int c = 0; c < 128; ++c) y[r * 128 + c] = ir::math_exp(xr[c] - m) / s;
  }
}

}  // namespace

ir::Kernel running_max_race(variant v) { return build<make_running_max_race>(v); }
ir::Kernel v_released_before_wait(variant v) { return build<make_v_released_before_wait>(v); }
ir::Kernel exchange_before_barrier(variant v) { return build<make_exchange_before_barrier>(v); }
ir::Kernel pingpong_skipped_turn(variant v) { return build<make_pingpong_skipped_turn>(v); }

// attention_hopper_bwd itself (examples/attention_hopper_bwd.hpp) on one slice of 128 keys and
// queries: two CTAs, 64 keys each, and each adds its keys' share of every query row's dQ.
// MISTAKE: dQ's chunks go out by a plain TMA store, as dK and dV do: but dK and dV rows belong to
// one CTA, while every CTA writes every dQ row, so the two CTAs' stores overwrite each other (on
// hardware dQ holds one CTA's share, whichever stored last).
// FIX: copy_smem_to_gmem(..., reduce_add), a TMA reduce: the shares add up in GMEM.
ir::Kernel dq_plain_store(variant v) {
  const auto S = compiled_in(128);
  return v == variant::buggy ? lower(examples::bwd::attention_hopper_bwd<64, false, true>(1, S, "zoo_dq_plain_store"))
                             : lower(examples::bwd::attention_hopper_bwd<64, false, false>(1, S, "zoo_dq_plain_store"));
}

const param_values bwd_params{{"B", 1}, {"S", 128}, {"D", 64}, {"causal", 0}};
void ref_bwd(std::vector<host_tensor>& t) { examples::bwd::reference(t, bwd_params); }
void inputs_bwd(std::vector<host_tensor>& t) { examples::bwd::inputs(t, bwd_params); }

// attention_blackwell itself (examples/attention_blackwell.hpp) on one slice of 256 rows: two
// key blocks per query tile, so the correction rescales O once per tile.
// MISTAKE: the correction rescales O (tcgen05.ld, multiply, tcgen05.st) as soon as the softmax
// has handed it alpha, without waiting for the P V of the previous block, which the tensor core
// may still be adding into those TMEM columns.
// FIX: barrier_wait(p_free) before the rescale: the commit after P V(j - 1) arrives on it.
ir::Kernel rescale_before_pv(variant v) {
  const auto S = compiled_in(256);
  return v == variant::buggy ? lower(examples::fa4::attention_blackwell<64, false, false>(1, S, "zoo_rescale_before_pv"))
                             : lower(examples::fa4::attention_blackwell<64, false, true>(1, S, "zoo_rescale_before_pv"));
}
const param_values fa4_params{{"B", 1}, {"S", 256}, {"D", 64}, {"causal", 0}};
void ref_fa4(std::vector<host_tensor>& t) { examples::fa4::reference(t, fa4_params); }

std::vector<entry> const& attention_all() {
  using interp::check;
  static const std::vector<entry> zoo{
      {"zoo_running_max_race", check::data_race, running_max_race, ref_running_max},
      {"zoo_v_released_before_wait", check::data_race, v_released_before_wait, ref_pv},
      {"zoo_exchange_before_barrier", check::data_race, exchange_before_barrier, ref_split_softmax},
      {"zoo_pingpong_skipped_turn", check::deadlock, pingpong_skipped_turn, ref_causal_scores},
      {"zoo_dq_plain_store", check::data_race, dq_plain_store, ref_bwd, inputs_bwd},
      {"zoo_rescale_before_pv", check::data_race, rescale_before_pv, ref_fa4},
  };
  return zoo;
}

}  // namespace stagecraft::zoo
