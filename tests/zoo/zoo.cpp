// The bug zoo (see zoo.hpp). Each exhibit is a template on `Bug`: the buggy kernel and its fixed
// twin share every line but the one the comment names, so the fix is exactly the difference.
#include "zoo.hpp"

#include <stagecraft/stagecraft.hpp>

namespace stagecraft::zoo {
namespace {

template <template <bool> class Make>
ir::Kernel build(variant v) {
  return v == variant::buggy ? Make<true>{}() : Make<false>{}();
}

// ---- references for the fixed twins (element-wise over row-major buffers) --------------------
void ref_add_one(std::vector<host_tensor>& t) {  // x, y: y = x + 1
  auto x = t[0].as<float>();
  auto y = t[1].as<float>();
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] + 1.0f;
}
void ref_workspace(std::vector<host_tensor>& t) {  // x, t, y: t = x + 1, y = 2t
  auto x = t[0].as<float>();
  auto w = t[1].as<float>();
  auto y = t[2].as<float>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    w[i] = x[i] + 1.0f;
    y[i] = w[i] * 2.0f;
  }
}
void ref_serial_halves(std::vector<host_tensor>& t) {  // x, y, turn: y += x's two 64-column halves, in that order (i32, wrapping)
  auto x = t[0].as<std::int32_t>();
  auto y = t[1].as<std::int32_t>();
  for (std::int64_t r = 0; r < 64; ++r)
    for (std::int64_t c = 0; c < 64; ++c)
      y[r * 64 + c] = static_cast<std::int32_t>(static_cast<std::uint32_t>(y[r * 64 + c]) + static_cast<std::uint32_t>(x[r * 128 + c]) +
                                                static_cast<std::uint32_t>(x[r * 128 + 64 + c]));
}
void ref_fanout(std::vector<host_tensor>& t) {  // x, y, z: y = x + 1, z = 2x
  auto x = t[0].as<float>();
  auto y = t[1].as<float>();
  auto z = t[2].as<float>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    y[i] = x[i] + 1.0f;
    z[i] = x[i] * 2.0f;
  }
}
void ref_handoff(std::vector<host_tensor>& t) {  // x, z, y: y = 2x + z
  auto x = t[0].as<float>();
  auto z = t[1].as<float>();
  auto y = t[2].as<float>();
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * 2.0f + z[i];
}
void ref_double_plus_one(std::vector<host_tensor>& t) {  // x, y: y = 2x + 1
  for (std::int64_t i = 0; i < t[0].elements(); ++i) t[1].set(i, static_cast<float>(t[0].get(i)) * 2.0f + 1.0f);
}
void ref_add_two(std::vector<host_tensor>& t) {  // x, z, y: y = x + z
  auto x = t[0].as<float>();
  auto z = t[1].as<float>();
  auto y = t[2].as<float>();
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] + z[i];
}
// x (M, K), y (M, 64), partials (not read): y = (sum of the first K/2 columns' 64-blocks) +
// (sum of the others), each half summed block by block from 0, as the two CTAs do.
void ref_splitk(std::vector<host_tensor>& t) {
  auto x = t[0].as<float>();
  auto y = t[1].as<float>();
  const std::int64_t M = t[0].shape[0], K = t[0].shape[1], per_cta = K / 64 / 2;
  for (std::int64_t r = 0; r < M; ++r)
    for (std::int64_t c = 0; c < 64; ++c) {
      float p[2] = {0.0f, 0.0f};
      for (int s = 0; s < 2; ++s)
        for (std::int64_t j = 0; j < per_cta; ++j) p[s] = p[s] + x[r * K + (s * per_cta + j) * 64 + c];
      y[r * 64 + c] = p[0] + p[1];
    }
}
// x (64, K) i32, y (64, 64) i32 [, z (2 * 64, 64) i32]: y += the sum of x's 64-column blocks
// (wrapping); z, when there, holds each of the two CTAs' partials (rows 64 s ..).
void ref_reduce_halves(std::vector<host_tensor>& t) {
  auto x = t[0].as<std::int32_t>();
  auto y = t[1].as<std::int32_t>();
  const std::int64_t K = t[0].shape[1], half = K / 2;
  for (std::int64_t r = 0; r < 64; ++r)
    for (std::int64_t c = 0; c < 64; ++c) {
      std::uint32_t p[2] = {0, 0};
      for (int s = 0; s < 2; ++s)
        for (std::int64_t k = s * half + c; k < (s + 1) * half; k += 64) p[s] += static_cast<std::uint32_t>(x[r * K + k]);
      y[r * 64 + c] = static_cast<std::int32_t>(static_cast<std::uint32_t>(y[r * 64 + c]) + p[0] + p[1]);
      if (t.size() > 2)
        for (int s = 0; s < 2; ++s) t[2].as<std::int32_t>()[(s * 64 + r) * 64 + c] = static_cast<std::int32_t>(p[s]);
    }
}
void ref_scale(std::vector<host_tensor>& t) {  // x, w (128x64), y: y = x * w tiled over x
  auto x = t[0].as<float>();
  auto w = t[1].as<float>();
  auto y = t[2].as<float>();
  const std::int64_t N = t[0].shape[1];
  for (std::int64_t r = 0; r < t[0].shape[0]; ++r)
    for (std::int64_t c = 0; c < N; ++c) y[r * N + c] = x[r * N + c] * w[(r % 128) * 64 + c % 64];
}
void ref_square(std::vector<host_tensor>& t) {  // x, y: y = x * x
  auto x = t[0].as<float>();
  auto y = t[1].as<float>();
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * x[i];
}
void ref_square_bias(std::vector<host_tensor>& t) {  // x (B, S, 64), bias (B * 64), y: y[b][r][c] = x^2 + bias[b][c]
  auto x = t[0].as<float>();
  auto bias = t[1].as<float>();
  auto y = t[2].as<float>();
  const std::size_t slices = bias.size() / 64, rows = x.size() / 64 / slices;
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * x[i] + bias[i / 64 / rows * 64 + i % 64];
}
void ref_double_segments(std::vector<host_tensor>& t) {  // x (rows, 64), segment table, y: y = 2 x (the segments cover every row)
  auto x = t[0].as<float>();
  auto y = t[2].as<float>();
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0f * x[i];
}
void ref_copy(std::vector<host_tensor>& t) {  // x, y: y = x
  t[1].bytes = t[0].bytes;
}
void ref_copy_narrow(std::vector<host_tensor>& t) {  // x (M, N + 64), y (M, N): y = x[:, :N]
  auto x = t[0].as<float>();
  auto y = t[1].as<float>();
  const std::int64_t M = t[1].shape[0], N = t[1].shape[1];
  for (std::int64_t r = 0; r < M; ++r)
    for (std::int64_t c = 0; c < N; ++c) y[r * N + c] = x[r * (N + 64) + c];
}
void ref_prev_sum(std::vector<host_tensor>& t) {  // x, y (M, N): block j of y = block j + block j-1 of x (64 columns)
  auto x = t[0].as<float>();
  auto y = t[1].as<float>();
  const std::int64_t M = t[0].shape[0], N = t[0].shape[1];
  for (std::int64_t r = 0; r < M; ++r)
    for (std::int64_t c = 0; c < N; ++c) y[r * N + c] = x[r * N + c] + (c >= 64 ? x[r * N + c - 64] : x[r * N + c]);
}
void ref_colsum(std::vector<host_tensor>& t) {  // x (M, N), y (M, 64): y[r][c] = sum_j x[r][64j + c], in step order
  auto x = t[0].as<float>();
  auto y = t[1].as<float>();
  const std::int64_t M = t[0].shape[0], N = t[0].shape[1];
  for (std::int64_t r = 0; r < M; ++r)
    for (std::int64_t c = 0; c < 64; ++c) {
      float acc = 0.0f;
      for (std::int64_t j = 0; j < N / 64; ++j) acc = acc + x[r * N + j * 64 + c];
      y[r * 64 + c] = acc;
    }
}

// =============================================================================================
// deadlock
// =============================================================================================

// Two warpgroups consume every stage of a 2-deep ring (warpgroup 0 writes y = x + 1, warpgroup 1
// writes z = 2x); warpgroup 0 is also the producer and refills a stage once both have released
// it on consumed[s], declared arrivals(2_c).
// MISTAKE: the release barrier_arrive(consumed[s]) was written inside the producer's
// if_(thread_id() == 0_c, ...) next to the refill, so only one of the two expected arrivals ever
// comes: the producer waits on consumed[0] forever (arrivals 1/2) and warpgroup 1 waits for a
// refill of full[0] that never comes.
// FIX: both warpgroups arrive, outside the branch; only the wait + refill is the producer's.
template <bool Bug>
struct make_release_in_branch {
  ir::Kernel operator()() const {
    const std::int64_t M = 128, N = 256, steps = N / 64;  // 4 steps: stages are reused
    return lower(kernel<sm_90a>(
        "zoo_release_in_branch", grid(M / 64), threads(2_c),
        gmem<f32>("x", shape(M, N)),          // (row, col)
        gmem<f32>("y", shape(M, N)),          // (row, col), warpgroup 0's output
        gmem<f32>("z", shape(M, N)),          // (row, col), warpgroup 1's output
        smem<f32>(shape(2_c, 64_c, 64_c)),    // buf: (stage, row, col)
        barrier(arrivals(1_c), count(2_c)),   // full[stage]: the stage's block has landed
        barrier(arrivals(2_c), count(2_c)),   // consumed[stage]: both warpgroups are done reading it
        [&](auto x, auto y, auto z, auto buf, auto full, auto consumed) {
          auto row = program_id();
          auto producer = thread_id() == 0_c;
          auto prologue = if_(producer, for_(range(2_c), [&](auto j) {
                                auto s = stage<2>(j);
                                return copy_gmem_to_smem(x.block(row, j), buf[s], full[s]);
                              }));
          auto main_loop = for_(range(steps), [&](auto j) {
            auto s = stage<2>(j);
            auto next = s.advance(2_c);
            auto refill = seq(barrier_wait(consumed[s]), copy_gmem_to_smem(x.block(row, next.step), buf[s], full[s]));
            auto compute = if_(producer, store(y.tile(shape(64_c, 64_c), row, j), load(buf[s]) + 1.0f),
                               store(z.tile(shape(64_c, 64_c), row, j), load(buf[s]) * 2.0f));
            if constexpr (Bug)
              return seq(barrier_wait(full[s]), compute,
                         if_(producer, seq(barrier_arrive(consumed[s]), if_(next.step < steps, refill))));
            else
              return seq(barrier_wait(full[s]), compute, barrier_arrive(consumed[s]), if_(producer && next.step < steps, refill));
          });
          return seq(prologue, main_loop);
        }));
  }
};

// add_one (K = 3): a ring prefetched in a prologue, refilled one step after each store.
// MISTAKE: the prologue prefetches K - 1 stages ("keep one stage free for the refill"), but the
// refill at step j loads step j - D + K, so step K - 1 is never loaded: its barrier_wait on
// full[2] waits for a completion nobody will produce.
// FIX: prefetch all K stages: for_(range(int_c<K>), ...).
template <bool Bug>
struct make_short_prologue {
  ir::Kernel operator()() const {
    constexpr long long K = 3, D = 1;
    const std::int64_t M = 256, N = 512, splits = 2, steps = N / 64 / splits;  // 4 steps per CTA
    return lower(kernel<sm_90a>(
        "zoo_short_prologue", grid(M / 128, splits), threads(1_c),
        gmem<f32>("x", shape(M, N)),               // (row, col)
        gmem<f32>("y", shape(M, N)),               // (row, col)
        smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // (stage, row, col)
        barrier(arrivals(1_c), count(int_c<K>)),   // full[stage]
        [&](auto x, auto y, auto buf, auto full) {
          auto row = program_id(0_c);
          auto col = [&](auto j) { return program_id(1_c) * steps + j; };
          auto prefetched = [&] {
            if constexpr (Bug) return int_c<K - 1>;
            else return int_c<K>;
          }();
          auto prologue = for_(range(prefetched), [&](auto j) {
            auto s = stage<K>(j);
            return if_(j < steps, copy_gmem_to_smem(x.block(row, col(j)), buf[s], full[s]));
          });
          auto main_loop = for_(range(steps), [&](auto j) {
            auto s = stage<K>(j);
            auto refill = s.advance(int_c<K - D>);
            return seq(barrier_wait(full[s]), store(buf[s], load(buf[s]) + 1.0f), commit_smem(),
                       copy_smem_to_gmem(buf[s], y.block(row, col(j))), commit_smem_to_gmem_group(),
                       if_(j >= int_c<D> && refill.step < steps,
                           seq(wait_smem_to_gmem(int_c<D>, read_only),
                               copy_gmem_to_smem(x.block(row, col(refill.step)), buf[refill], full[refill]))));
          });
          return seq(prologue, main_loop, wait_smem_to_gmem(0_c));
        }));
  }
};

// handoff: a producer warpgroup hands 64x64 tiles to a consumer; ready[s] has two arrivals, the
// producer's barrier_arrive and the TMA load of the z block.
// MISTAKE: the consumer waits on ready[s] once per arrival ("one wait for twice[s], one for
// zs[s]"). A phase completes once per step, after both arrivals; the second wait asks for the
// next step's completion of that stage, which needs the consumer's own release first.
// FIX: one barrier_wait per phase, however many arrivals complete it.
template <bool Bug>
struct make_double_wait {
  ir::Kernel operator()() const {
    const std::int64_t M = 128, N = 256, steps = N / 64;
    return lower(kernel<sm_90a>(
        "zoo_double_wait", grid(M / 64), threads(2_c),
        gmem<f32>("x", shape(M, N)),          // (row, col)
        gmem<f32>("z", shape(M, N)),          // (row, col)
        gmem<f32>("y", shape(M, N)),          // (row, col)
        // Named, so that the deadlock report says ready[0] and consumed[0], not b3[0] and b4[0].
        smem<f32>("twice", shape(2_c, 64_c, 64_c)),          // (stage, row, col)
        smem<f32>("zs", shape(2_c, 64_c, 64_c)),             // (stage, row, col)
        smem<f32>("out", shape(2_c, 64_c, 64_c)),            // (stage, row, col)
        barrier("ready", arrivals(2_c), count(2_c)),         // producer's arrive + the TMA load's
        barrier("consumed", arrivals(1_c), count(2_c)),
        [&](auto x, auto z, auto y, auto twice, auto zs, auto out, auto ready, auto consumed) {
          auto row = program_id();
          auto producer = for_(range(steps), [&](auto j) {
            auto s = stage<2>(j);
            return seq(if_(j >= 2_c, barrier_wait(consumed[s])), copy_gmem_to_smem(z.block(row, j), zs[s], ready[s]),
                       store(twice[s], load(x.tile(shape(64_c, 64_c), row, j)) * 2.0f), barrier_arrive(ready[s]));
          });
          auto consumer = for_(range(steps), [&](auto j) {
            auto s = stage<2>(j);
            auto wait_ready = [&] {
              if constexpr (Bug) return seq(barrier_wait(ready[s]), barrier_wait(ready[s]));
              else return barrier_wait(ready[s]);
            }();
            return seq(wait_ready, wait_smem_to_gmem(1_c, read_only), store(out[s], load(twice[s]) + load(zs[s])),
                       barrier_arrive(consumed[s]), commit_smem(), copy_smem_to_gmem(out[s], y.block(row, j)),
                       commit_smem_to_gmem_group());
          });
          return if_(thread_id() == 0_c, producer, seq(consumer, wait_smem_to_gmem(0_c)));
        }));
  }
};

// A FlashAttention-3-style hand-off through one SMEM tile with named barriers instead of
// mbarriers: warpgroup 0 writes buf = 2x for each 64-column block, warpgroup 1 writes
// y = buf + 1. Named barrier 0 says "buf is full" (producer arrives, consumer syncs), named
// barrier 1 says "buf is empty" (consumer arrives, producer syncs), both counting 256 threads.
// MISTAKE: nobody says "empty" before the first block: the producer's first
// named_barrier_sync(1) waits for the consumer, which waits on barrier 0 for a block that is
// never written. Each barrier has 128 of its 256 threads.
// FIX: the consumer arrives on barrier 1 once before its loop (FA3's consumers do this at
// start-up), so the producer's first sync completes.
template <bool Bug>
struct make_named_no_initial_arrive {
  ir::Kernel operator()() const {
    const std::int64_t M = 128, N = 256, steps = N / 64;  // 4 blocks per CTA: buf is reused
    return lower(kernel<sm_90a>(
        "zoo_named_no_initial_arrive", grid(M / 64), threads(2_c),
        gmem<f32>("x", shape(M, N)),   // (row, col)
        gmem<f32>("y", shape(M, N)),   // (row, col)
        smem<f32>(shape(64_c, 64_c)),  // buf: (row, col), one block in flight
        [&](auto x, auto y, auto buf) {
          auto row = program_id();
          auto full = 0_c;   // named barrier: buf holds a block
          auto empty = 1_c;  // named barrier: buf may be overwritten
          auto produce = for_(range(steps), [&](auto j) {
            return seq(named_barrier_sync(empty, 256_c), store(buf, load(x.tile(shape(64_c, 64_c), row, j)) * 2.0f),
                       named_barrier_arrive(full, 256_c));
          });
          auto consume_loop = for_(range(steps), [&](auto j) {
            return seq(named_barrier_sync(full, 256_c), store(y.tile(shape(64_c, 64_c), row, j), load(buf) + 1.0f),
                       named_barrier_arrive(empty, 256_c));
          });
          if constexpr (Bug) return if_(thread_id() == 0_c, produce, consume_loop);
          else return if_(thread_id() == 0_c, produce, seq(named_barrier_arrive(empty, 256_c), consume_loop));
        }));
  }
};

// Two single warps hand a block over on a named barrier (threads(warpgroup, warp, warp), the
// Blackwell GEMMs' layout): warp 4 (role 1) loads a block of x with TMA and, once it landed,
// arrives on named barrier 0; warp 5 (role 2) syncs there and stores the block to y with TMA.
// MISTAKE: the barrier counts 128 threads, as a warpgroup's would; bar.sync counts threads, and
// two warps bring 64, so the phase never completes: warp 5 waits forever, and the CTA never
// ends.
// FIX: count what arrives, 64 (two warps of 32).
template <bool Bug>
struct make_warp_named_count {
  ir::Kernel operator()() const {
    const std::int64_t M = 128, N = 128;
    constexpr long long counted = Bug ? 128 : 64;  // the named barrier's threads
    return lower(kernel<sm_100a>(
        "zoo_warp_named_count", grid(M / 64, N / 64), threads(warpgroup, warp, warp),
        gmem<f32>("x", shape(M, N)),          // (row, col)
        gmem<f32>("y", shape(M, N)),          // (row, col)
        smem<f32>(shape(64_c, 64_c)),         // buf: (row, col)
        barrier(arrivals(1_c), count(1_c)),   // landed: buf holds x's block
        [&](auto x, auto y, auto buf, auto landed) {
          auto [i, j] = program_ids();
          auto load = seq(copy_gmem_to_smem(x.block(i, j), buf, landed), barrier_wait(landed), named_barrier_arrive(0_c, int_c<counted>));
          auto store = seq(named_barrier_sync(0_c, int_c<counted>), copy_smem_to_gmem(buf, y.block(i, j)), commit_smem_to_gmem_group(),
                           wait_smem_to_gmem(0_c));
          return if_(thread_id() == 1_c, load, if_(thread_id() == 2_c, store));
        }));
  }
};

// =============================================================================================
// missed phase
// =============================================================================================

// add_one (K = 2) with one barrier for the whole ring.
// MISTAKE: `barrier(arrivals(1_c), count(1_c))` shared by every stage ("the loads complete in
// order anyway"). Each load completes its own phase, so by the first wait the barrier has
// completed twice (both prologue loads): the waiter has skipped a completion and on hardware
// its parity aliases with a later one.
// FIX: one barrier per stage, count(int_c<K>), indexed with the stage cursor like the buffer.
template <bool Bug>
struct make_one_ring_barrier {
  ir::Kernel operator()() const {
    constexpr long long K = 2, D = 1;
    const std::int64_t M = 256, N = 512, splits = 2, steps = N / 64 / splits;
    auto full_decl = [] {
      if constexpr (Bug) return barrier(arrivals(1_c), count(1_c));
      else return barrier(arrivals(1_c), count(int_c<K>));
    }();
    return lower(kernel<sm_90a>(
        "zoo_one_ring_barrier", grid(M / 128, splits), threads(1_c),
        gmem<f32>("x", shape(M, N)),               // (row, col)
        gmem<f32>("y", shape(M, N)),               // (row, col)
        smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // (stage, row, col)
        full_decl,                                 // full: one per ring (bug) or full[stage] (fix)
        [&](auto x, auto y, auto buf, auto full) {
          auto bar = [&](auto s) {
            if constexpr (Bug) return full;
            else return full[s];
          };
          auto row = program_id(0_c);
          auto col = [&](auto j) { return program_id(1_c) * steps + j; };
          auto prologue = for_(range(int_c<K>), [&](auto j) {
            auto s = stage<K>(j);
            return if_(j < steps, copy_gmem_to_smem(x.block(row, col(j)), buf[s], bar(s)));
          });
          auto main_loop = for_(range(steps), [&](auto j) {
            auto s = stage<K>(j);
            auto refill = s.advance(int_c<K - D>);
            return seq(barrier_wait(bar(s)), store(buf[s], load(buf[s]) + 1.0f), commit_smem(),
                       copy_smem_to_gmem(buf[s], y.block(row, col(j))), commit_smem_to_gmem_group(),
                       if_(j >= int_c<D> && refill.step < steps,
                           seq(wait_smem_to_gmem(int_c<D>, read_only),
                               copy_gmem_to_smem(x.block(row, col(refill.step)), buf[refill], bar(refill)))));
          });
          return seq(prologue, main_loop, wait_smem_to_gmem(0_c));
        }));
  }
};

// handoff with one `consumed` barrier for both stages.
// MISTAKE: `consumed` declared count(1_c) ("the consumer releases stages in order, so one barrier
// is enough"). Its k-th completion is indeed the release of step k-1, but nothing stops the
// consumer from releasing two steps before the producer's next wait: the producer then waits for
// a completion that was followed by another one, and on hardware its parity aliases.
// FIX: one release barrier per stage, consumed[s], like handoff: a stage's releases are then
// separated by its refill, which the producer issues only after its wait.
template <bool Bug>
struct make_single_release {
  ir::Kernel operator()() const {
    const std::int64_t M = 128, N = 512, steps = N / 64;
    auto consumed_decl = [] {
      if constexpr (Bug) return barrier(arrivals(1_c), count(1_c));
      else return barrier(arrivals(1_c), count(2_c));
    }();
    return lower(kernel<sm_90a>(
        "zoo_single_release", grid(M / 64), threads(2_c),
        gmem<f32>("x", shape(M, N)),          // (row, col)
        gmem<f32>("z", shape(M, N)),          // (row, col)
        gmem<f32>("y", shape(M, N)),          // (row, col)
        smem<f32>(shape(2_c, 64_c, 64_c)),    // twice: (stage, row, col)
        smem<f32>(shape(2_c, 64_c, 64_c)),    // zs:    (stage, row, col)
        smem<f32>(shape(2_c, 64_c, 64_c)),    // out:   (stage, row, col)
        barrier(arrivals(2_c), count(2_c)),   // ready[stage]
        consumed_decl,                        // consumed (bug) / consumed[stage] (fix)
        [&](auto x, auto z, auto y, auto twice, auto zs, auto out, auto ready, auto consumed) {
          auto released = [&](auto s) {
            if constexpr (Bug) return consumed;
            else return consumed[s];
          };
          auto row = program_id();
          auto producer = for_(range(steps), [&](auto j) {
            auto s = stage<2>(j);
            return seq(if_(j >= 2_c, barrier_wait(released(s))), copy_gmem_to_smem(z.block(row, j), zs[s], ready[s]),
                       store(twice[s], load(x.tile(shape(64_c, 64_c), row, j)) * 2.0f), barrier_arrive(ready[s]));
          });
          auto consumer = for_(range(steps), [&](auto j) {
            auto s = stage<2>(j);
            return seq(barrier_wait(ready[s]), wait_smem_to_gmem(1_c, read_only), store(out[s], load(twice[s]) + load(zs[s])),
                       barrier_arrive(released(s)), commit_smem(), copy_smem_to_gmem(out[s], y.block(row, j)),
                       commit_smem_to_gmem_group());
          });
          return if_(thread_id() == 0_c, producer, seq(consumer, wait_smem_to_gmem(0_c)));
        }));
  }
};

// =============================================================================================
// over-arrival
// =============================================================================================

// y = x + z: each step's x and z blocks are loaded by TMA into a 2-deep ring and both complete
// on full[s].
// MISTAKE: full declared arrivals(1_c), as in add_one, although two copies arrive on it per step.
// The first copy's arrival already satisfies the phase's arrival count; the second arrives while
// the phase still waits for bytes, with no arrival left to take.
// FIX: arrivals(2_c): each copy_gmem_to_smem is one arrival (its bytes are added to the phase's
// expect_tx on top).
template <bool Bug>
struct make_shared_barrier {
  ir::Kernel operator()() const {
    const std::int64_t M = 128, N = 256, steps = N / 64;
    auto full_decl = [] {
      if constexpr (Bug) return barrier(arrivals(1_c), count(2_c));
      else return barrier(arrivals(2_c), count(2_c));
    }();
    return lower(kernel<sm_90a>(
        "zoo_shared_barrier", grid(M / 64), threads(1_c),
        gmem<f32>("x", shape(M, N)),          // (row, col)
        gmem<f32>("z", shape(M, N)),          // (row, col)
        gmem<f32>("y", shape(M, N)),          // (row, col)
        smem<f32>(shape(2_c, 64_c, 64_c)),    // xs: (stage, row, col)
        smem<f32>(shape(2_c, 64_c, 64_c)),    // zs: (stage, row, col)
        full_decl,                            // full[stage]: both blocks of the stage have landed
        [&](auto x, auto z, auto y, auto xs, auto zs, auto full) {
          auto row = program_id();
          auto fetch = [&](auto cursor) {
            return seq(copy_gmem_to_smem(x.block(row, cursor.step), xs[cursor], full[cursor]),
                       copy_gmem_to_smem(z.block(row, cursor.step), zs[cursor], full[cursor]));
          };
          auto prologue = for_(range(2_c), [&](auto j) { return if_(j < steps, fetch(stage<2>(j))); });
          auto main_loop = for_(range(steps), [&](auto j) {
            auto s = stage<2>(j);
            auto next = s.advance(2_c);
            return seq(barrier_wait(full[s]), store(y.tile(shape(64_c, 64_c), row, j), load(xs[s]) + load(zs[s])),
                       if_(next.step < steps, fetch(next)));
          });
          return seq(prologue, main_loop);
        }));
  }
};

// =============================================================================================
// tx underflow
// =============================================================================================

// y = x * w with w, one 128x64 tile, shared by the two CTAs of a cluster: a multicast TMA load
// puts it into both CTAs' SMEM. The interpreter models multicast as on hardware: every CTA of the
// collective group issues the copy for its share of the rows, every destination receives every
// share, and each issuing CTA's barrier expects the whole tile.
// MISTAKE: only the cluster leader issues the multicast ("it is broadcast to the cluster
// anyway"); the follower just arrives on its own barrier to make up the arrival count. The
// leader's half lands on the follower's barrier, which never expected any bytes: 16384 more
// bytes complete there than were expected (and the leader waits for the half nobody sends).
// FIX: every CTA of the cluster issues the same multicast copy.
template <bool Bug>
struct make_leader_only_multicast {
  ir::Kernel operator()() const {
    const std::int64_t M = 512, N = 128, steps = N / 64;  // grid 4 = two clusters of 2
    return lower(kernel<sm_90a>(
        "zoo_leader_only_multicast", grid(M / 128), threads(1_c), cluster(2_c),
        gmem<f32>("x", shape(M, N)),           // (row, col)
        gmem<f32>("w", shape(128_c, 64_c)),    // (row, col)
        gmem<f32>("y", shape(M, N)),           // (row, col)
        smem<f32>(shape(128_c, 64_c)),         // ws: w, resident
        barrier(arrivals(1_c), count(1_c)),    // w_loaded
        [&](auto x, auto w, auto y, auto ws, auto w_loaded) {
          auto row = program_id();
          auto load_w = copy_gmem_to_smem(w.block(0_c, 0_c), ws, w_loaded, collective_axes(0_c));
          auto get_w = [&] {
            if constexpr (Bug) return if_(cluster_idx(0_c) == 0_c, load_w, barrier_arrive(w_loaded));
            else return load_w;
          }();
          return seq(get_w, barrier_wait(w_loaded), for_(range(steps), [&](auto j) {
                       return store(y.tile(shape(128_c, 64_c), row, j), load(x.tile(shape(128_c, 64_c), row, j)) * load(ws));
                     }));
        }));
  }
};

// =============================================================================================
// index out of range
// =============================================================================================

// add_one (K = 2), main loop.
// MISTAKE: the ring is indexed with the step number, full[runtime_index(j)] / buf[runtime_index(j)]
// (buf[j] did not compile, so the user opted out of the static check): steps 0 and 1 happen to
// hit the right stage, step 2 indexes a 2-element barrier array with 2.
// FIX: index with the stage cursor, full[s] / buf[s] with s = stage<K>(j): the slot is j % K by
// construction and needs no run-time check.
template <bool Bug>
struct make_ring_indexed_by_step {
  ir::Kernel operator()() const {
    constexpr long long K = 2, D = 1;
    const std::int64_t M = 256, N = 512, splits = 2, steps = N / 64 / splits;
    return lower(kernel<sm_90a>(
        "zoo_ring_indexed_by_step", grid(M / 128, splits), threads(1_c),
        gmem<f32>("x", shape(M, N)),               // (row, col)
        gmem<f32>("y", shape(M, N)),               // (row, col)
        smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // (stage, row, col)
        barrier(arrivals(1_c), count(int_c<K>)),   // full[stage]
        [&](auto x, auto y, auto buf, auto full) {
          auto row = program_id(0_c);
          auto col = [&](auto j) { return program_id(1_c) * steps + j; };
          auto prologue = for_(range(int_c<K>), [&](auto j) {
            auto s = stage<K>(j);
            return if_(j < steps, copy_gmem_to_smem(x.block(row, col(j)), buf[s], full[s]));
          });
          auto main_loop = for_(range(steps), [&](auto j) {
            auto cur = stage<K>(j);
            auto s = [&] {
              if constexpr (Bug) return runtime_index(j);
              else return cur;
            }();
            auto refill = cur.advance(int_c<K - D>);
            return seq(barrier_wait(full[s]), store(buf[s], load(buf[s]) + 1.0f), commit_smem(),
                       copy_smem_to_gmem(buf[s], y.block(row, col(j))), commit_smem_to_gmem_group(),
                       if_(j >= int_c<D> && refill.step < steps,
                           seq(wait_smem_to_gmem(int_c<D>, read_only),
                               copy_gmem_to_smem(x.block(row, col(refill.step)), buf[refill], full[refill]))));
          });
          return seq(prologue, main_loop, wait_smem_to_gmem(0_c));
        }));
  }
};

// batched_square: the next batch element is fetched while this one is squared.
// MISTAKE: the prefetch lost its guard if_(next.step < B, ...): at the last batch element it
// fetches element B, one block past the end of x.
// FIX: keep the guard (every prefetch of step `next` needs next.step < steps).
template <bool Bug>
struct make_prefetch_past_end {
  ir::Kernel operator()() const {
    const std::int64_t B = 4, M = 128;
    return lower(kernel<sm_90a>(
        "zoo_prefetch_past_end", grid(M / 64), threads(1_c),
        gmem<f32>("x", shape(B, M, 128_c)),              // (batch, row, col)
        gmem<f32>("y", shape(B, M, 128_c)),              // (batch, row, col)
        smem<f32>(shape(2_c, 2_c, 1_c, 64_c, 64_c)),      // (slot, half, 1, row, col)
        barrier(arrivals(1_c), count(2_c, 2_c)),          // ready(slot, half)
        [&](auto x, auto y, auto buf, auto ready) {
          auto row = program_id();
          auto fetch = [&](auto cursor) {
            return for_(range(2_c), [&](auto q) {
              return copy_gmem_to_smem(x.block(cursor.step, row, q), buf[cursor][q], ready(cursor, q));
            });
          };
          return seq(fetch(stage<2>(0_c)), for_(range(B), [&](auto b) {
                       auto cur = stage<2>(b);
                       auto next = cur.advance(1_c);
                       auto prefetch = [&] {
                         if constexpr (Bug) return fetch(next);
                         else return if_(next.step < B, fetch(next));
                       }();
                       return seq(prefetch, for_(range(2_c), [&](auto q) {
                                    auto v = load(buf[cur][q]);  // (1, 64, 64)
                                    return seq(barrier_wait(ready(cur, q)), store(y.tile(shape(1_c, 64_c, 64_c), b, row, q), v * v));
                                  }));
                     }));
        }));
  }
};

// scale_store (K = 2): products go out through a ring of output stages.
// MISTAKE: the output stage is chosen with out[runtime_index(j)] instead of the stage cursor;
// step 2 indexes the 2-stage ring with 2.
// FIX: out[s] with s = stage<K>(j).
template <bool Bug>
struct make_out_ring_indexed_by_step {
  ir::Kernel operator()() const {
    constexpr long long K = 2;
    const std::int64_t M = 256, N = 256, steps = N / 64;
    return lower(kernel<sm_90a>(
        "zoo_out_ring_indexed_by_step", grid(M / 128), threads(1_c),
        gmem<f32>("x", shape(M, N)),               // (row, col)
        gmem<f32>("w", shape(128_c, 64_c)),        // (row, col)
        gmem<f32>("y", shape(M, N)),               // (row, col)
        smem<f32>(shape(128_c, 64_c)),             // ws: w, resident
        smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // out: (stage, row, col)
        barrier(arrivals(1_c), count(1_c)),        // w_loaded
        [&](auto x, auto w, auto y, auto ws, auto out, auto w_loaded) {
          auto row = program_id();
          return seq(copy_gmem_to_smem(w.block(0_c, 0_c), ws, w_loaded), barrier_wait(w_loaded),
                     for_(range(steps),
                          [&](auto j) {
                            auto s = [&] {
                              if constexpr (Bug) return runtime_index(j);
                              else return stage<K>(j);
                            }();
                            return seq(wait_smem_to_gmem(int_c<K - 1>, read_only),
                                       store(out[s], load(x.tile(shape(128_c, 64_c), row, j)) * load(ws)), commit_smem(),
                                       copy_smem_to_gmem(out[s], y.block(row, j)), commit_smem_to_gmem_group());
                          }),
                     wait_smem_to_gmem(0_c));
        }));
  }
};

// =============================================================================================
// data race
// =============================================================================================

// add_one (K = 2): stage s is stored back with TMA at step j and refilled at step j + 1.
// MISTAKE: the wait_smem_to_gmem(D, read_only) before the refill was dropped ("the store was
// issued first, so it reads first"): the TMA load may overwrite the stage while the TMA store of
// step j is still reading it.
// FIX: wait until at most D store groups are pending (read side) before refilling.
template <bool Bug>
struct make_refill_while_storing {
  ir::Kernel operator()() const {
    constexpr long long K = 2, D = 1;
    const std::int64_t M = 256, N = 512, splits = 2, steps = N / 64 / splits;
    return lower(kernel<sm_90a>(
        "zoo_refill_while_storing", grid(M / 128, splits), threads(1_c),
        gmem<f32>("x", shape(M, N)),               // (row, col)
        gmem<f32>("y", shape(M, N)),               // (row, col)
        smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // (stage, row, col)
        barrier(arrivals(1_c), count(int_c<K>)),   // full[stage]
        [&](auto x, auto y, auto buf, auto full) {
          auto row = program_id(0_c);
          auto col = [&](auto j) { return program_id(1_c) * steps + j; };
          auto prologue = for_(range(int_c<K>), [&](auto j) {
            auto s = stage<K>(j);
            return if_(j < steps, copy_gmem_to_smem(x.block(row, col(j)), buf[s], full[s]));
          });
          auto main_loop = for_(range(steps), [&](auto j) {
            auto s = stage<K>(j);
            auto refill = s.advance(int_c<K - D>);
            auto load_next = copy_gmem_to_smem(x.block(row, col(refill.step)), buf[refill], full[refill]);
            auto refill_op = [&] {
              if constexpr (Bug) return load_next;
              else return seq(wait_smem_to_gmem(int_c<D>, read_only), load_next);
            }();
            return seq(barrier_wait(full[s]), store(buf[s], load(buf[s]) + 1.0f), commit_smem(),
                       copy_smem_to_gmem(buf[s], y.block(row, col(j))), commit_smem_to_gmem_group(),
                       if_(j >= int_c<D> && refill.step < steps, refill_op));
          });
          return seq(prologue, main_loop, wait_smem_to_gmem(0_c));
        }));
  }
};

// scale_store (K = 2), written first for a single CTA.
// MISTAKE: the output block kept the prototype's row 0, y.block(0_c, j) instead of
// y.block(program_id(), j): every CTA writes the same GMEM blocks, with nothing ordering them.
// FIX: each CTA writes its own row strip, y.block(program_id(), j).
template <bool Bug>
struct make_same_block_two_ctas {
  ir::Kernel operator()() const {
    constexpr long long K = 2;
    const std::int64_t M = 256, N = 256, steps = N / 64;
    return lower(kernel<sm_90a>(
        "zoo_same_block_two_ctas", grid(M / 128), threads(1_c),
        gmem<f32>("x", shape(M, N)),               // (row, col)
        gmem<f32>("w", shape(128_c, 64_c)),        // (row, col)
        gmem<f32>("y", shape(M, N)),               // (row, col)
        smem<f32>(shape(128_c, 64_c)),             // ws: w, resident
        smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // out: (stage, row, col)
        barrier(arrivals(1_c), count(1_c)),        // w_loaded
        [&](auto x, auto w, auto y, auto ws, auto out, auto w_loaded) {
          auto row = program_id();
          auto out_row = [&] {
            if constexpr (Bug) return as_index(0_c);
            else return row;
          }();
          return seq(copy_gmem_to_smem(w.block(0_c, 0_c), ws, w_loaded), barrier_wait(w_loaded),
                     for_(range(steps),
                          [&](auto j) {
                            auto s = stage<K>(j);
                            return seq(wait_smem_to_gmem(int_c<K - 1>, read_only),
                                       store(out[s], load(x.tile(shape(128_c, 64_c), row, j)) * load(ws)), commit_smem(),
                                       copy_smem_to_gmem(out[s], y.block(out_row, j)), commit_smem_to_gmem_group());
                          }),
                     wait_smem_to_gmem(0_c));
        }));
  }
};

// y = x * x + bias[b] over B = 2 slices of S = 96 rows each (bias: one 64-vector per slice),
// 64-row blocks, one CTA per slice (issue 25: real shapes). A slice's last block overhangs it.
// MISTAKE: the slices are declared packed, (B * S, 64), and a slice's blocks are numbered from
// its first row, b * S / 64 + j. S is no multiple of 64: slice 1 starts inside block 1, and the
// tail block of slice 0 is block 1 too. Its bound is the packed array's, not the slice's, so
// both CTAs store rows 64..127, each with its own bias: whichever lands last is wrong for the
// other slice's half.
// FIX: declare (B, S, 64): each slice is its own TMA dimension, and the tail block's overhang is
// dropped at the slice's end.
template <bool Bug>
struct make_blocks_cross_slices {
  ir::Kernel operator()() const {
    const std::int64_t B = 2, S = 96, blocks = (S + 63) / 64;
    auto body = [&](auto x, auto bias, auto y, auto in, auto out, auto full) {
      auto b = program_id();
      auto block = [&](auto g, auto j) {
        if constexpr (Bug) return g.block(b * S / 64 + j, 0_c);
        else return g.block(b, j, 0_c);
      };
      auto rows = [](auto v) {  // the (64, 64) tile: the fixed twin's stages have the slice's unit dimension
        if constexpr (Bug) return v;
        else return v[0_c];
      };
      auto X = load(rows(in));
      return seq(for_(range(blocks),
                      [&](auto j) {
                        auto s = stage<1>(j);
                        return seq(copy_gmem_to_smem(block(x, j), in, full[s]), barrier_wait(full[s]), wait_smem_to_gmem(0_c, read_only),
                                   store(rows(out), X * X + broadcast<0>(load(bias.tile(shape(64_c), b)), X)), commit_smem(),
                                   copy_smem_to_gmem(out, block(y, j)), commit_smem_to_gmem_group());
                      }),
                 wait_smem_to_gmem(0_c));
    };
    if constexpr (Bug)
      return lower(kernel<sm_90a>("zoo_blocks_cross_slices", grid(B), threads(1_c), gmem<f32>("x", shape(B * S, 64_c)), gmem<f32>("bias", shape(B * 64)),
                                  gmem<f32>("y", shape(B * S, 64_c)), smem<f32>(shape(64_c, 64_c)), smem<f32>(shape(64_c, 64_c)),
                                  barrier(arrivals(1_c), count(1_c)), body));
    else
      return lower(kernel<sm_90a>("zoo_blocks_cross_slices", grid(B), threads(1_c), gmem<f32>("x", shape(B, S, 64_c)), gmem<f32>("bias", shape(B * 64)),
                                  gmem<f32>("y", shape(B, S, 64_c)), smem<f32>(shape(1_c, 64_c, 64_c)), smem<f32>(shape(1_c, 64_c, 64_c)),
                                  barrier(arrivals(1_c), count(1_c)), body));
  }
};

// y = x * x over x (100, 64), one 64-row block per CTA through SMEM; the second block overhangs
// (its rows 100..127 are TMA's fill, and the store drops them).
// MISTAKE: the tail block computes only the rows its author counted as valid, with the bound
// typed as 32 instead of 100 - 64 = 36: rows 96..99 of `out` are never written, and the TMA
// store copies them into y (they are inside the array).
// FIX: compute the tail's 36 rows. (Rows 100..127 of `out` are never written either, in both
// twins: the store drops them, so they are no poison read.)
template <bool Bug>
struct make_tail_rows_unwritten {
  ir::Kernel operator()() const {
    constexpr long long tail = Bug ? 32 : 36;
    return lower(kernel<sm_90a>(
        "zoo_tail_rows_unwritten", grid(2), threads(1_c), gmem<f32>("x", shape(100_c, 64_c)), gmem<f32>("y", shape(100_c, 64_c)),
        smem<f32>(shape(64_c, 64_c)), smem<f32>(shape(64_c, 64_c)), barrier(arrivals(1_c)), [&](auto x, auto y, auto in, auto out, auto full) {
          auto b = program_id();
          auto rows = [&](auto v) { return slice<0>(v, 0_c, int_c<tail>); };
          return seq(copy_gmem_to_smem(x.block(b, 0_c), in, full), barrier_wait(full),
                     if_(b == 1_c, store(rows(out), load(rows(in)) * load(rows(in))), store(out, load(in) * load(in))), commit_smem(),
                     copy_smem_to_gmem(out, y.block(b, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
        }));
  }
};

// y = 2 x over a packed ragged batch: segment g of a segment table is rows [t[g], t[g + 1]) of
// x and y (300 rows, 4 segments of random sizes, empty ones too), one CTA per segment walking
// its 64-row masked tiles through windows of rows (issue 25: ragged batches).
// MISTAKE: the output window ends where the segment's last tile ends, clamped to the array
// (min(lo + 64 * tiles, rows)), not at the segment's end: the last tile's masked store writes on
// into the next segment's rows, which that segment's CTA writes too.
// FIX: y.rows(lo, hi), hi = t.at(g + 1): the tile's rows past the segment are padding, dropped.
template <bool Bug>
struct make_window_past_segment {
  ir::Kernel operator()() const {
    constexpr long long rows = 300;
    auto tile = shape(64_c, 64_c);
    return lower(kernel<sm_90a>(
        "zoo_window_past_segment", grid(4), threads(1_c), gmem<f32>("x", shape(int_c<rows>, 64_c)), segment_offsets("t", 4_c, rows),
        gmem<f32>("y", shape(int_c<rows>, 64_c)), [&](auto x, auto t, auto y) {
          auto g = program_id();
          auto lo = t.at(g), hi = t.at(g + 1_c);
          auto tiles = (hi - lo + 63_c) / 64_c;
          auto out = [&] {
            if constexpr (Bug) return y.rows(lo, min(lo + tiles * 64_c, int_c<rows>));
            else return y.rows(lo, hi);
          }();
          return for_(range(tiles), [&](auto j) {
            return store(out.tile(tile, masked(), j, 0_c), load(x.rows(lo, hi).tile(tile, masked(), j, 0_c)) * 2.0f);
          });
        }));
  }
};

// add_one (K = 2).
// MISTAKE: the barrier_wait(full[s]) was moved below the computation ("wait before the store
// back"): the stage is read while its TMA load may still be landing.
// FIX: wait on the stage's barrier before the first access to the stage.
template <bool Bug>
struct make_read_before_wait {
  ir::Kernel operator()() const {
    constexpr long long K = 2, D = 1;
    const std::int64_t M = 256, N = 512, splits = 2, steps = N / 64 / splits;
    return lower(kernel<sm_90a>(
        "zoo_read_before_wait", grid(M / 128, splits), threads(1_c),
        gmem<f32>("x", shape(M, N)),               // (row, col)
        gmem<f32>("y", shape(M, N)),               // (row, col)
        smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // (stage, row, col)
        barrier(arrivals(1_c), count(int_c<K>)),   // full[stage]
        [&](auto x, auto y, auto buf, auto full) {
          auto row = program_id(0_c);
          auto col = [&](auto j) { return program_id(1_c) * steps + j; };
          auto prologue = for_(range(int_c<K>), [&](auto j) {
            auto s = stage<K>(j);
            return if_(j < steps, copy_gmem_to_smem(x.block(row, col(j)), buf[s], full[s]));
          });
          auto main_loop = for_(range(steps), [&](auto j) {
            auto s = stage<K>(j);
            auto refill = s.advance(int_c<K - D>);
            auto compute = store(buf[s], load(buf[s]) + 1.0f);
            auto wait_then_compute = [&] {
              if constexpr (Bug) return seq(compute, barrier_wait(full[s]));
              else return seq(barrier_wait(full[s]), compute);
            }();
            return seq(wait_then_compute, commit_smem(), copy_smem_to_gmem(buf[s], y.block(row, col(j))),
                       commit_smem_to_gmem_group(),
                       if_(j >= int_c<D> && refill.step < steps,
                           seq(wait_smem_to_gmem(int_c<D>, read_only),
                               copy_gmem_to_smem(x.block(row, col(refill.step)), buf[refill], full[refill]))));
          });
          return seq(prologue, main_loop, wait_smem_to_gmem(0_c));
        }));
  }
};

// scale_store with a single output stage (K = 1).
// MISTAKE: the wait_smem_to_gmem(int_c<K - 1>, read_only) at the top of each step was removed
// ("with K = 1 it waits for 0 groups, it does nothing"); it is in fact the only thing that keeps
// step j + 1 from rewriting the stage while step j's TMA store still reads it.
// FIX: keep the read_only wait: with K = 1, wait_smem_to_gmem(0_c, read_only).
template <bool Bug>
struct make_output_reuse_no_wait {
  ir::Kernel operator()() const {
    constexpr long long K = 1;
    const std::int64_t M = 256, N = 256, steps = N / 64;
    return lower(kernel<sm_90a>(
        "zoo_output_reuse_no_wait", grid(M / 128), threads(1_c),
        gmem<f32>("x", shape(M, N)),               // (row, col)
        gmem<f32>("w", shape(128_c, 64_c)),        // (row, col)
        gmem<f32>("y", shape(M, N)),               // (row, col)
        smem<f32>(shape(128_c, 64_c)),             // ws: w, resident
        smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // out: (stage, row, col)
        barrier(arrivals(1_c), count(1_c)),        // w_loaded
        [&](auto x, auto w, auto y, auto ws, auto out, auto w_loaded) {
          auto row = program_id();
          return seq(copy_gmem_to_smem(w.block(0_c, 0_c), ws, w_loaded), barrier_wait(w_loaded),
                     for_(range(steps),
                          [&](auto j) {
                            auto s = stage<K>(j);
                            auto body = seq(store(out[s], load(x.tile(shape(128_c, 64_c), row, j)) * load(ws)), commit_smem(),
                                            copy_smem_to_gmem(out[s], y.block(row, j)), commit_smem_to_gmem_group());
                            if constexpr (Bug) return body;
                            else return seq(wait_smem_to_gmem(int_c<K - 1>, read_only), body);
                          }),
                     wait_smem_to_gmem(0_c));
        }));
  }
};

// Warp-specialised: warpgroup 0 produces a 2-deep ring of x blocks, warpgroups 1 and 2 both
// consume every stage (1 writes y = x + 1, 2 writes z = 2x).
// MISTAKE: only consumer 1 releases the stage ("it is the one that finishes the step"), with
// consumed[s] declared arrivals(1_c) to match. The producer's refill is then ordered after
// consumer 1's reads but not after consumer 2's: the TMA load may overwrite the stage while
// consumer 2 still reads it.
// FIX: both consumers arrive on consumed[s], declared arrivals(2_c).
template <bool Bug>
struct make_one_consumer_releases {
  ir::Kernel operator()() const {
    const std::int64_t M = 128, N = 256, steps = N / 64;
    auto consumed_decl = [] {
      if constexpr (Bug) return barrier(arrivals(1_c), count(2_c));
      else return barrier(arrivals(2_c), count(2_c));
    }();
    return lower(kernel<sm_90a>(
        "zoo_one_consumer_releases", grid(M / 64), threads(3_c),
        gmem<f32>("x", shape(M, N)),          // (row, col)
        gmem<f32>("y", shape(M, N)),          // (row, col), consumer 1's output
        gmem<f32>("z", shape(M, N)),          // (row, col), consumer 2's output
        smem<f32>(shape(2_c, 64_c, 64_c)),    // buf: (stage, row, col)
        barrier(arrivals(1_c), count(2_c)),   // full[stage]
        consumed_decl,                        // consumed[stage]: the consumers are done reading it
        [&](auto x, auto y, auto z, auto buf, auto full, auto consumed) {
          auto row = program_id();
          auto producer = for_(range(steps), [&](auto j) {
            auto s = stage<2>(j);
            return seq(if_(j >= 2_c, barrier_wait(consumed[s])), copy_gmem_to_smem(x.block(row, j), buf[s], full[s]));
          });
          auto consumers = for_(range(steps), [&](auto j) {
            auto s = stage<2>(j);
            auto compute = if_(thread_id() == 1_c, store(y.tile(shape(64_c, 64_c), row, j), load(buf[s]) + 1.0f),
                               store(z.tile(shape(64_c, 64_c), row, j), load(buf[s]) * 2.0f));
            auto release = [&] {
              if constexpr (Bug) return if_(thread_id() == 1_c, barrier_arrive(consumed[s]));
              else return barrier_arrive(consumed[s]);
            }();
            return seq(barrier_wait(full[s]), compute, release);
          });
          return if_(thread_id() == 0_c, producer, consumers);
        }));
  }
};

// =============================================================================================
// missing fence
// =============================================================================================

// add_one (K = 2).
// MISTAKE: no commit_smem() between the generic store into the stage and the TMA store that
// reads it: the async proxy may read the stage's old contents.
// FIX: commit_smem() (fence.proxy.async) right before copy_smem_to_gmem.
template <bool Bug>
struct make_no_proxy_fence {
  ir::Kernel operator()() const {
    constexpr long long K = 2, D = 1;
    const std::int64_t M = 256, N = 512, splits = 2, steps = N / 64 / splits;
    return lower(kernel<sm_90a>(
        "zoo_no_proxy_fence", grid(M / 128, splits), threads(1_c),
        gmem<f32>("x", shape(M, N)),               // (row, col)
        gmem<f32>("y", shape(M, N)),               // (row, col)
        smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // (stage, row, col)
        barrier(arrivals(1_c), count(int_c<K>)),   // full[stage]
        [&](auto x, auto y, auto buf, auto full) {
          auto row = program_id(0_c);
          auto col = [&](auto j) { return program_id(1_c) * steps + j; };
          auto prologue = for_(range(int_c<K>), [&](auto j) {
            auto s = stage<K>(j);
            return if_(j < steps, copy_gmem_to_smem(x.block(row, col(j)), buf[s], full[s]));
          });
          auto main_loop = for_(range(steps), [&](auto j) {
            auto s = stage<K>(j);
            auto refill = s.advance(int_c<K - D>);
            auto compute = store(buf[s], load(buf[s]) + 1.0f);
            auto compute_fenced = [&] {
              if constexpr (Bug) return compute;
              else return seq(compute, commit_smem());
            }();
            return seq(barrier_wait(full[s]), compute_fenced, copy_smem_to_gmem(buf[s], y.block(row, col(j))),
                       commit_smem_to_gmem_group(),
                       if_(j >= int_c<D> && refill.step < steps,
                           seq(wait_smem_to_gmem(int_c<D>, read_only),
                               copy_gmem_to_smem(x.block(row, col(refill.step)), buf[refill], full[refill]))));
          });
          return seq(prologue, main_loop, wait_smem_to_gmem(0_c));
        }));
  }
};

// Two passes through a GMEM workspace: each step stages t = x + 1 with ordinary stores, reads
// the block back with TMA and sends y = 2t with a TMA store (a split into passes as a fused
// kernel's first draft has it, before the workspace is cut out).
// MISTAKE: no commit_smem() between the ordinary stores into t and the TMA load of t: the async
// proxy may read t's old contents (the generated code had only bar.sync between them).
// FIX: commit_smem() after the store; in a kernel whose TMA reads GMEM that it also writes with
// ordinary stores, it is the unqualified fence.proxy.async, covering GMEM as well as SMEM.
template <bool Bug>
struct make_workspace_no_fence {
  ir::Kernel operator()() const {
    const std::int64_t M = 256, N = 256, steps = N / 64;
    return lower(kernel<sm_90a>(
        "zoo_workspace_no_fence", grid(M / 128), threads(1_c),
        gmem<f32>("x", shape(M, N)),               // (row, col)
        gmem<f32>("t", shape(M, N)),               // (row, col): the workspace, t = x + 1
        gmem<f32>("y", shape(M, N)),               // (row, col): y = 2t
        smem<f32>(shape(128_c, 64_c)),             // buf: t's block, then y's
        barrier(arrivals(1_c), count(1_c)),        // loaded: buf holds t's block
        [&](auto x, auto t, auto y, auto buf, auto loaded) {
          auto row = program_id();
          return seq(for_(range(steps),
                          [&](auto j) {
                            auto stage_t = store(t.tile(shape(128_c, 64_c), row, j), load(x.tile(shape(128_c, 64_c), row, j)) + 1.0f);
                            auto staged = [&] {
                              if constexpr (Bug) return stage_t;
                              else return seq(stage_t, commit_smem());
                            }();
                            return seq(staged, copy_gmem_to_smem(t.block(row, j), buf, loaded), barrier_wait(loaded),
                                       store(buf, load(buf) * 2.0f), commit_smem(), copy_smem_to_gmem(buf, y.block(row, j)),
                                       commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c, read_only));
                          }),
                     wait_smem_to_gmem(0_c));
        }));
  }
};

// splitk_cluster with a cluster of 2: each CTA sums its half of x's column blocks into its
// partial in a kernel-owned workspace and arrives on a cluster barrier; rank 0 adds both
// partials into y.
// MISTAKE: rank 0 adds the partials before its barrier_wait ("my own partial is done, and the
// peer was launched with me"): nothing orders the peer's stores before rank 0's loads.
// FIX: barrier_wait before the sum; the wait acquires what the peer's arrive released.
template <bool Bug>
struct make_splitk_early_read {
  ir::Kernel operator()() const {
    const std::int64_t M = 128, K = 256, row_blocks = M / 64, per_cta = K / 64 / 2;
    auto t = shape(64_c, 64_c);
    return lower(kernel<sm_90a>(
        "zoo_splitk_early_read", grid(2_c, row_blocks), threads(1_c), cluster(2_c),
        gmem<f32>("x", shape(M, K)),                      // (row, col)
        gmem<f32>("y", shape(M, 64_c)),                   // (row, col)
        workspace<f32>("partials", shape(2 * M, 64_c)),   // (rank * M + row, col)
        cluster_barrier("summed", collective_axes(0_c), arrivals(1_c)),
        [&](auto x, auto y, auto partials, auto summed) {
          auto rank = cluster_idx(0_c);
          auto rb = program_id(1_c);
          auto mine = partials.tile(t, rank * row_blocks + rb, 0_c);
          auto accumulate = for_(range(per_cta), [&](auto j) { return store(mine, load(mine) + load(x.tile(t, rb, rank * per_cta + j))); });
          auto sum = if_(rank == 0_c, store(y.tile(t, rb, 0_c), load(partials.tile(t, rb, 0_c)) + load(partials.tile(t, rb + row_blocks, 0_c))));
          if constexpr (Bug) return seq(accumulate, barrier_arrive(summed), sum, barrier_wait(summed));
          else return seq(accumulate, barrier_arrive(summed), barrier_wait(summed), sum);
        }));
  }
};

// zoo_splitk_early_read's kernel with the partials sent out by TMA store (splitk_cluster tma=1):
// each CTA sums its half in SMEM, stores it into its workspace partial with one bulk group,
// waits, and arrives; rank 0 reads both partials with generic loads after the cluster wait.
// A TMA store's completion carries an implicit generic-async proxy fence (PTX ISA, "Async
// Proxy"), so the crossing from the async proxy to rank 0's generic loads needs no
// fence.proxy.async: it needs the store to be complete before the arrive releases.
// MISTAKE: wait_smem_to_gmem(0_c, read_only) before the arrive ("the SMEM is free, so the store
// is done"): .read only says the SMEM was read; the GMEM write may land after the release, and
// rank 0 may add a partial that is not there yet.
// FIX: the full wait, wait_smem_to_gmem(0_c), before barrier_arrive.
template <bool Bug>
struct make_tma_store_then_generic_read {
  ir::Kernel operator()() const {
    const std::int64_t M = 128, K = 256, row_blocks = M / 64, per_cta = K / 64 / 2;
    auto t = shape(64_c, 64_c);
    return lower(kernel<sm_90a>(
        "zoo_tma_store_then_generic_read", grid(2_c, row_blocks), threads(1_c), cluster(2_c),
        gmem<f32>("x", shape(M, K)),                      // (row, col)
        gmem<f32>("y", shape(M, 64_c)),                   // (row, col)
        workspace<f32>("partials", shape(2 * M, 64_c)),   // (rank * M + row, col)
        smem<f32>(shape(64_c, 64_c)),                     // sum: (row, col), this CTA's partial
        cluster_barrier("summed", collective_axes(0_c), arrivals(1_c)),
        [&](auto x, auto y, auto partials, auto sum, auto summed) {
          auto rank = cluster_idx(0_c);
          auto rb = program_id(1_c);
          auto accumulate = for_(range(per_cta), [&](auto j) { return store(sum, load(sum) + load(x.tile(t, rb, rank * per_cta + j))); });
          auto send = seq(store(sum, 0.0f), accumulate, commit_smem(), copy_smem_to_gmem(sum, partials.block(rank * row_blocks + rb, 0_c)),
                          commit_smem_to_gmem_group());
          auto done = [&] {
            if constexpr (Bug) return wait_smem_to_gmem(0_c, read_only);
            else return wait_smem_to_gmem(0_c);
          }();
          // The peer's partial first (a + b == b + a in IEEE arithmetic): the crossing between CTAs
          // is the one this exhibit is for.
          auto add = if_(rank == 0_c, store(y.tile(t, rb, 0_c), load(partials.tile(t, rb + row_blocks, 0_c)) + load(partials.tile(t, rb, 0_c))));
          return seq(send, done, barrier_arrive(summed), barrier_wait(summed), add);
        }));
  }
};

// The other direction: each CTA sums its half into its workspace partial with ordinary stores
// (as zoo_splitk_early_read), arrives, and rank 0 brings both partials into SMEM by TMA after
// the cluster wait. Generic writes read by the async proxy need fence.proxy.async between them
// (PTX ISA, "Async Proxy": accessing a location across proxies needs a cross-proxy fence), and
// the barrier's release/acquire orders generic accesses only.
// MISTAKE: no commit_smem() after the partial's stores ("the cluster barrier publishes them").
// FIX: commit_smem() before barrier_arrive: in a kernel whose TMA reads GMEM that ordinary
// stores write, it is the unqualified fence.proxy.async, which covers GMEM.
template <bool Bug>
struct make_generic_store_then_tma_read {
  ir::Kernel operator()() const {
    const std::int64_t M = 128, K = 256, row_blocks = M / 64, per_cta = K / 64 / 2;
    auto t = shape(64_c, 64_c);
    return lower(kernel<sm_90a>(
        "zoo_generic_store_then_tma_read", grid(2_c, row_blocks), threads(1_c), cluster(2_c),
        gmem<f32>("x", shape(M, K)),                      // (row, col)
        gmem<f32>("y", shape(M, 64_c)),                   // (row, col)
        workspace<f32>("partials", shape(2 * M, 64_c)),   // (rank * M + row, col)
        smem<f32>(shape(2_c, 64_c, 64_c)),                // both: (rank, row, col), rank 0's copy of the partials
        barrier(arrivals(2_c), count(1_c)),               // loaded: both partials landed
        cluster_barrier("summed", collective_axes(0_c), arrivals(1_c)),
        [&](auto x, auto y, auto partials, auto both, auto loaded, auto summed) {
          auto rank = cluster_idx(0_c);
          auto rb = program_id(1_c);
          auto mine = partials.tile(t, rank * row_blocks + rb, 0_c);
          auto accumulate = for_(range(per_cta), [&](auto j) { return store(mine, load(mine) + load(x.tile(t, rb, rank * per_cta + j))); });
          auto published = [&] {
            if constexpr (Bug) return accumulate;
            else return seq(accumulate, commit_smem());
          }();
          // The peer's partial first: the crossing between CTAs is the one this exhibit is for.
          auto add = if_(rank == 0_c, seq(copy_gmem_to_smem(partials.block(rb + row_blocks, 0_c), both[1_c], loaded),
                                          copy_gmem_to_smem(partials.block(rb, 0_c), both[0_c], loaded), barrier_wait(loaded),
                                          store(y.tile(t, rb, 0_c), load(both[0_c]) + load(both[1_c]))));
          return seq(published, barrier_arrive(summed), barrier_wait(summed), add);
        }));
  }
};

// add_one (K = 2) computing in place: each stage gets x + 1 written over it, y is written from
// the stage with ordinary stores, and the stage is refilled with step j + 2.
// MISTAKE: no commit_smem() between the in-place stores and the refill's TMA load into the same
// bytes: on hardware the generic stores may land after the TMA write and clobber the next
// step's input.
// FIX: commit_smem() before the refill.
template <bool Bug>
struct make_refill_over_generic_store {
  ir::Kernel operator()() const {
    constexpr long long K = 2;
    const std::int64_t M = 256, N = 512, steps = N / 64;
    return lower(kernel<sm_90a>(
        "zoo_refill_over_generic_store", grid(M / 128), threads(1_c),
        gmem<f32>("x", shape(M, N)),               // (row, col)
        gmem<f32>("y", shape(M, N)),               // (row, col)
        smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // (stage, row, col)
        barrier(arrivals(1_c), count(int_c<K>)),   // full[stage]
        [&](auto x, auto y, auto buf, auto full) {
          auto row = program_id();
          auto prologue = for_(range(int_c<K>), [&](auto j) {
            auto s = stage<K>(j);
            return copy_gmem_to_smem(x.block(row, j), buf[s], full[s]);
          });
          auto main_loop = for_(range(steps), [&](auto j) {
            auto s = stage<K>(j);
            auto next = s.advance(int_c<K>);
            auto compute = seq(store(buf[s], load(buf[s]) + 1.0f), store(y.tile(shape(128_c, 64_c), row, j), load(buf[s])));
            auto fenced = [&] {
              if constexpr (Bug) return compute;
              else return seq(compute, commit_smem());
            }();
            return seq(barrier_wait(full[s]), fenced, if_(next.step < steps, copy_gmem_to_smem(x.block(row, next.step), buf[s], full[s])));
          });
          return seq(prologue, main_loop);
        }));
  }
};

// =============================================================================================
// store pending at exit
// =============================================================================================

// add_one (K = 2).
// MISTAKE: the kernel ends without the final wait_smem_to_gmem(0_c) ("the stores finish on
// their own"): the CTA may exit, and its SMEM be reused, while the last stores still read it.
// FIX: end with wait_smem_to_gmem(0_c).
template <bool Bug>
struct make_no_final_wait {
  ir::Kernel operator()() const {
    constexpr long long K = 2, D = 1;
    const std::int64_t M = 256, N = 512, splits = 2, steps = N / 64 / splits;
    return lower(kernel<sm_90a>(
        "zoo_no_final_wait", grid(M / 128, splits), threads(1_c),
        gmem<f32>("x", shape(M, N)),               // (row, col)
        gmem<f32>("y", shape(M, N)),               // (row, col)
        smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // (stage, row, col)
        barrier(arrivals(1_c), count(int_c<K>)),   // full[stage]
        [&](auto x, auto y, auto buf, auto full) {
          auto row = program_id(0_c);
          auto col = [&](auto j) { return program_id(1_c) * steps + j; };
          auto prologue = for_(range(int_c<K>), [&](auto j) {
            auto s = stage<K>(j);
            return if_(j < steps, copy_gmem_to_smem(x.block(row, col(j)), buf[s], full[s]));
          });
          auto main_loop = for_(range(steps), [&](auto j) {
            auto s = stage<K>(j);
            auto refill = s.advance(int_c<K - D>);
            return seq(barrier_wait(full[s]), store(buf[s], load(buf[s]) + 1.0f), commit_smem(),
                       copy_smem_to_gmem(buf[s], y.block(row, col(j))), commit_smem_to_gmem_group(),
                       if_(j >= int_c<D> && refill.step < steps,
                           seq(wait_smem_to_gmem(int_c<D>, read_only),
                               copy_gmem_to_smem(x.block(row, col(refill.step)), buf[refill], full[refill]))));
          });
          if constexpr (Bug) return seq(prologue, main_loop);
          else return seq(prologue, main_loop, wait_smem_to_gmem(0_c));
        }));
  }
};

// y = x + 1, one 128x64 block per CTA.
// MISTAKE: no commit_smem_to_gmem_group() after the TMA store. The store stays outside every
// bulk group, so the final wait_smem_to_gmem(0_c) has no group to wait for and the CTA exits
// with the store unobserved.
// FIX: commit_smem_to_gmem_group() after the copy, then wait_smem_to_gmem(0_c).
template <bool Bug>
struct make_store_never_committed {
  ir::Kernel operator()() const {
    const std::int64_t M = 256, N = 128;
    return lower(kernel<sm_90a>(
        "zoo_store_never_committed", grid(M / 128, N / 64), threads(1_c),
        gmem<f32>("x", shape(M, N)),          // (row, col)
        gmem<f32>("y", shape(M, N)),          // (row, col)
        smem<f32>(shape(128_c, 64_c)),        // buf
        barrier(arrivals(1_c), count(1_c)),   // loaded
        [&](auto x, auto y, auto buf, auto loaded) {
          auto blk = [&](auto g) { return g.block(program_id(0_c), program_id(1_c)); };
          auto store_back = [&] {
            if constexpr (Bug) return copy_smem_to_gmem(buf, blk(y));
            else return seq(copy_smem_to_gmem(buf, blk(y)), commit_smem_to_gmem_group());
          }();
          return seq(copy_gmem_to_smem(blk(x), buf, loaded), barrier_wait(loaded), store(buf, load(buf) + 1.0f), commit_smem(),
                     store_back, wait_smem_to_gmem(0_c));
        }));
  }
};

// =============================================================================================
// poison read
// =============================================================================================

// y[r][c] = sum over column blocks j of x[r][64j + c]: a 2-deep TMA ring feeds an SMEM
// accumulator, stored with TMA at the end.
// MISTAKE: the accumulator is never zeroed, so the first step's load(acc) reads SMEM nothing has
// written (SMEM is not zero-initialised on the GPU).
// FIX: store(acc, 0.0f) before the loop.
template <bool Bug>
struct make_unzeroed_accumulator {
  ir::Kernel operator()() const {
    const std::int64_t M = 256, N = 256, steps = N / 64;
    return lower(kernel<sm_90a>(
        "zoo_unzeroed_accumulator", grid(M / 128), threads(1_c),
        gmem<f32>("x", shape(M, N)),           // (row, col)
        gmem<f32>("y", shape(M, 64_c)),        // (row, col)
        smem<f32>(shape(2_c, 128_c, 64_c)),    // buf: (stage, row, col)
        smem<f32>(shape(128_c, 64_c)),         // acc
        barrier(arrivals(1_c), count(2_c)),    // full[stage]
        [&](auto x, auto y, auto buf, auto acc, auto full) {
          auto row = program_id();
          auto prologue = for_(range(2_c), [&](auto j) {
            auto s = stage<2>(j);
            return if_(j < steps, copy_gmem_to_smem(x.block(row, j), buf[s], full[s]));
          });
          auto main_loop = for_(range(steps), [&](auto j) {
            auto s = stage<2>(j);
            auto next = s.advance(2_c);
            return seq(barrier_wait(full[s]), store(acc, load(acc) + load(buf[s])),
                       if_(next.step < steps, copy_gmem_to_smem(x.block(row, next.step), buf[s], full[s])));
          });
          auto epilogue = seq(commit_smem(), copy_smem_to_gmem(acc, y.block(row, 0_c)), commit_smem_to_gmem_group(),
                              wait_smem_to_gmem(0_c));
          if constexpr (Bug) return seq(prologue, main_loop, epilogue);
          else return seq(prologue, store(acc, 0.0f), main_loop, epilogue);
        }));
  }
};

// scale_store (K = 2).
// MISTAKE: the product is written into the stage of the next step, out[s.advance(1_c)], while
// the TMA store sends out[s] (a half-finished edit from a version that computed one step ahead):
// step 0's store reads a stage nothing has written.
// FIX: compute into and store from the same stage, out[s].
template <bool Bug>
struct make_stored_wrong_stage {
  ir::Kernel operator()() const {
    constexpr long long K = 2;
    const std::int64_t M = 256, N = 256, steps = N / 64;
    return lower(kernel<sm_90a>(
        "zoo_stored_wrong_stage", grid(M / 128), threads(1_c),
        gmem<f32>("x", shape(M, N)),               // (row, col)
        gmem<f32>("w", shape(128_c, 64_c)),        // (row, col)
        gmem<f32>("y", shape(M, N)),               // (row, col)
        smem<f32>(shape(128_c, 64_c)),             // ws: w, resident
        smem<f32>(shape(int_c<K>, 128_c, 64_c)),   // out: (stage, row, col)
        barrier(arrivals(1_c), count(1_c)),        // w_loaded
        [&](auto x, auto w, auto y, auto ws, auto out, auto w_loaded) {
          auto row = program_id();
          return seq(copy_gmem_to_smem(w.block(0_c, 0_c), ws, w_loaded), barrier_wait(w_loaded),
                     for_(range(steps),
                          [&](auto j) {
                            auto s = stage<K>(j);
                            auto dst = [&] {
                              if constexpr (Bug) return s.advance(1_c);
                              else return s;
                            }();
                            return seq(wait_smem_to_gmem(int_c<K - 1>, read_only),
                                       store(out[dst], load(x.tile(shape(128_c, 64_c), row, j)) * load(ws)), commit_smem(),
                                       copy_smem_to_gmem(out[s], y.block(row, j)), commit_smem_to_gmem_group());
                          }),
                     wait_smem_to_gmem(0_c));
        }));
  }
};

// The two reduction exhibits' first half: CTA s sums its half of x's (64, 256) column blocks
// into its SMEM tile `sum`.
template <class X, class Sum>
auto sum_half(X const& x, Sum const& sum) {
  constexpr std::int64_t per_cta = 256 / 64 / 2;
  auto s = program_id();
  return seq(store(sum, 0), for_(range(per_cta), [&](auto j) { return store(sum, load(sum) + load(x.tile(shape(64_c, 64_c), 0_c, s * per_cta + j))); }));
}

// splitk_reduce with two CTAs, written before reductions existed: each CTA sums its half of K
// in SMEM, then adds its partial to y.
// MISTAKE: y += partial as a plain load and store ("each CTA adds its own part"): the two CTAs'
// read-modify-writes interleave, and one overwrites the other's sum (on the GPU: a lost
// update; attention backward's dQ accumulated this way loses key blocks).
// FIX: store(y.tile(...), load(sum), reduce_add): red.global.add combines atomically.
template <bool Bug>
struct make_plain_store_accumulate {
  ir::Kernel operator()() const {
    auto t = shape(64_c, 64_c);
    return lower(kernel<sm_90a>(
        "zoo_plain_store_accumulate", grid(2_c), threads(1_c),
        gmem<i32>("x", shape(64_c, 256_c)),  // (row, col)
        gmem<i32>("y", shape(64_c, 64_c)),   // (row, col): y += both halves' sums
        smem<i32>(shape(64_c, 64_c)),        // sum: this CTA's partial
        [&](auto x, auto y, auto sum) {
          auto partial = sum_half(x, sum);
          auto add = [&] {
            if constexpr (Bug) return store(y.tile(t, 0_c, 0_c), load(y.tile(t, 0_c, 0_c)) + load(sum));
            else return store(y.tile(t, 0_c, 0_c), load(sum), reduce_add);
          }();
          return seq(partial, add);
        }));
  }
};

// The TMA form, with a second output: each CTA also records what it contributed.
// MISTAKE: it records y after its reduce has completed (wait_smem_to_gmem(0)), thinking that y
// now holds "its" sum: another CTA's reduce into y is unordered with that read, so the value is
// whatever the other CTA has added by then (a race the interpreter reports, not a wrong sum).
// FIX: record the partial itself, load(sum), which is this CTA's own SMEM.
template <bool Bug>
struct make_read_after_reduce {
  ir::Kernel operator()() const {
    auto t = shape(64_c, 64_c);
    return lower(kernel<sm_90a>(
        "zoo_read_after_reduce", grid(2_c), threads(1_c),
        gmem<i32>("x", shape(64_c, 256_c)),   // (row, col)
        gmem<i32>("y", shape(64_c, 64_c)),    // (row, col): y += both halves' sums
        gmem<i32>("z", shape(128_c, 64_c)),   // (cta * 64 + row, col): each CTA's partial
        smem<i32>(shape(64_c, 64_c)),         // sum: this CTA's partial
        [&](auto x, auto y, auto z, auto sum) {
          auto s = program_id();
          auto partial = sum_half(x, sum);
          auto record = [&] {
            if constexpr (Bug) return store(z.tile(t, s, 0_c), load(y.tile(t, 0_c, 0_c)));
            else return store(z.tile(t, s, 0_c), load(sum));
          }();
          return seq(partial, commit_smem(), copy_smem_to_gmem(sum, y.block(0_c, 0_c), reduce_add), commit_smem_to_gmem_group(),
                     wait_smem_to_gmem(0_c), record);
        }));
  }
};

// Serial split-K (splitk_serial, cut to two slices of one row block): slice s waits until
// turn(s) says it may go, adds its half of x into y with a plain load and store, and lets the
// next slice go.
enum class serial_mistake { none, signals_own_turn, no_wait };
template <serial_mistake Mistake>
ir::Kernel serial_halves(const char* name) {
  auto t = shape(64_c, 64_c);
  return lower(kernel<sm_90a>(
      name, grid(2_c), threads(1_c),
      gmem<i32>("x", shape(64_c, 128_c)),  // (row, col): two 64-column halves, one per slice
      gmem<i32>("y", shape(64_c, 64_c)),   // (row, col): y += both halves, slice 0's first
      semaphores("turn", shape(2_c)),      // (slice): 1 once slice s may add
      [&](auto x, auto y, auto turn) {
        auto s = program_id();
        auto yt = y.tile(t, 0_c, 0_c);
        auto next = [&] {
          if constexpr (Mistake == serial_mistake::signals_own_turn) return turn(s);
          else return turn(s + 1_c);
        }();
        auto add = store(yt, load(yt) + load(x.tile(t, 0_c, s)));
        auto go_on = if_(s < 1_c, semaphore_signal(next));
        if constexpr (Mistake == serial_mistake::no_wait) return seq(add, go_on);
        else return seq(if_(s > 0_c, semaphore_wait(turn(s))), add, go_on);
      }));
}

// MISTAKE: each slice signals the counter it waits on itself, turn(s), not the next slice's:
// slice 1 waits on turn(1), which nothing but slice 1 would ever signal. On the GPU it spins for
// ever; the interpreter reports the deadlock and names the semaphore, its count and the wait's.
// FIX: signal turn(s + 1).
template <bool Bug>
struct make_semaphore_never_signalled {
  ir::Kernel operator()() const {
    return serial_halves<Bug ? serial_mistake::signals_own_turn : serial_mistake::none>("zoo_semaphore_never_signalled");
  }
};

// MISTAKE: the slices signal in turn but never wait: slice 1 reads and rewrites y while slice 0
// may still be adding into it (a lost update on the GPU, a race here across the two CTAs).
// FIX: semaphore_wait(turn(s)) before the add, which acquires slice 0's y.
template <bool Bug>
struct make_serial_without_wait {
  ir::Kernel operator()() const { return serial_halves<Bug ? serial_mistake::no_wait : serial_mistake::none>("zoo_serial_without_wait"); }
};


// MISTAKE: a producer warpgroup takes tile tickets from a counter the CTAs share (fetch_add)
// into a ring of two slots, and a consumer warpgroup does the tiles (y = 2x + 1 per row) - but
// reads its ticket before waiting for the slot to be full: it may read the slot before the
// producer's atomic wrote it (SMEM starts undefined) or while it does, and do the wrong tile.
// FIX: barrier_wait(full[s]) before fetched(slots[s]) is read.
template <bool Bug>
struct make_ticket_read_before_wait {
  ir::Kernel operator()() const {
    constexpr long long T = 6;  // tiles: one row of 64 each
    auto row = shape(1_c, 64_c);
    return lower(kernel<sm_90a>(
        "zoo_ticket_read_before_wait", grid(2), threads(2_c), gmem<f32>("x", shape(int_c<T>, 64_c)), gmem<f32>("y", shape(int_c<T>, 64_c)),
        semaphores("next", shape(1_c)),                  // the next ticket
        smem<i32>("slots", shape(2_c, 1_c)),             // (stage, 1): a ticket in flight
        barrier("full", arrivals(1_c), count(2_c)),      // [stage]: the ticket is in its slot
        barrier("empty", arrivals(1_c), count(2_c)),     // [stage]: the consumer is done with it
        [&](auto x, auto y, auto next, auto slots, auto full_, auto empty) {
          auto rounds = range(int_c<T + 1>);  // a CTA that takes every tile, then the ticket past them
          auto producer = for_(rounds, [&](auto i) {
            auto s = stage<2>(i);
            return seq(if_(i >= 2_c, barrier_wait(empty[s])), fetch_add(next(0_c), 1_c, slots[s]), barrier_arrive(full_[s]),
                       break_if(fetched(slots[s]) >= int_c<T>));
          });
          auto consumer = for_(rounds, [&](auto i) {
            auto s = stage<2>(i);
            auto t = fetched(slots[s]);
            auto work = if_(t < int_c<T>, store(y.tile(row, t, 0_c), load(x.tile(row, t, 0_c)) * 2.0f + 1.0f));
            if constexpr (Bug) return seq(work, barrier_wait(full_[s]), break_if(t >= int_c<T>), barrier_arrive(empty[s]));
            else return seq(barrier_wait(full_[s]), work, break_if(t >= int_c<T>), barrier_arrive(empty[s]));
          });
          return if_(thread_id() == 0_c, producer, consumer);
        }));
  }
};

}  // namespace

ir::Kernel semaphore_never_signalled(variant v) { return build<make_semaphore_never_signalled>(v); }
ir::Kernel serial_without_wait(variant v) { return build<make_serial_without_wait>(v); }
ir::Kernel ticket_read_before_wait(variant v) { return build<make_ticket_read_before_wait>(v); }
ir::Kernel plain_store_accumulate(variant v) { return build<make_plain_store_accumulate>(v); }
ir::Kernel read_after_reduce(variant v) { return build<make_read_after_reduce>(v); }
ir::Kernel release_in_branch(variant v) { return build<make_release_in_branch>(v); }
ir::Kernel short_prologue(variant v) { return build<make_short_prologue>(v); }
ir::Kernel double_wait(variant v) { return build<make_double_wait>(v); }
ir::Kernel named_no_initial_arrive(variant v) { return build<make_named_no_initial_arrive>(v); }
ir::Kernel warp_named_count(variant v) { return build<make_warp_named_count>(v); }
ir::Kernel one_ring_barrier(variant v) { return build<make_one_ring_barrier>(v); }
ir::Kernel single_release(variant v) { return build<make_single_release>(v); }
ir::Kernel shared_barrier(variant v) { return build<make_shared_barrier>(v); }
ir::Kernel leader_only_multicast(variant v) { return build<make_leader_only_multicast>(v); }
ir::Kernel ring_indexed_by_step(variant v) { return build<make_ring_indexed_by_step>(v); }
ir::Kernel prefetch_past_end(variant v) { return build<make_prefetch_past_end>(v); }
ir::Kernel blocks_cross_slices(variant v) { return build<make_blocks_cross_slices>(v); }
ir::Kernel tail_rows_unwritten(variant v) { return build<make_tail_rows_unwritten>(v); }
ir::Kernel out_ring_indexed_by_step(variant v) { return build<make_out_ring_indexed_by_step>(v); }
ir::Kernel refill_while_storing(variant v) { return build<make_refill_while_storing>(v); }
ir::Kernel same_block_two_ctas(variant v) { return build<make_same_block_two_ctas>(v); }
ir::Kernel read_before_wait(variant v) { return build<make_read_before_wait>(v); }
ir::Kernel output_reuse_no_wait(variant v) { return build<make_output_reuse_no_wait>(v); }
ir::Kernel no_proxy_fence(variant v) { return build<make_no_proxy_fence>(v); }
ir::Kernel workspace_no_fence(variant v) { return build<make_workspace_no_fence>(v); }
ir::Kernel splitk_early_read(variant v) { return build<make_splitk_early_read>(v); }
ir::Kernel tma_store_then_generic_read(variant v) { return build<make_tma_store_then_generic_read>(v); }
ir::Kernel generic_store_then_tma_read(variant v) { return build<make_generic_store_then_tma_read>(v); }
ir::Kernel refill_over_generic_store(variant v) { return build<make_refill_over_generic_store>(v); }
ir::Kernel no_final_wait(variant v) { return build<make_no_final_wait>(v); }
ir::Kernel store_never_committed(variant v) { return build<make_store_never_committed>(v); }
ir::Kernel one_consumer_releases(variant v) { return build<make_one_consumer_releases>(v); }
ir::Kernel unzeroed_accumulator(variant v) { return build<make_unzeroed_accumulator>(v); }
ir::Kernel stored_wrong_stage(variant v) { return build<make_stored_wrong_stage>(v); }
ir::Kernel window_past_segment(variant v) { return build<make_window_past_segment>(v); }

std::vector<entry> const& all() {
  using interp::check;
  static const std::vector<entry> zoo{
      {"zoo_release_in_branch", check::deadlock, release_in_branch, ref_fanout},
      {"zoo_short_prologue", check::deadlock, short_prologue, ref_add_one},
      {"zoo_double_wait", check::deadlock, double_wait, ref_handoff},
      {"zoo_named_no_initial_arrive", check::deadlock, named_no_initial_arrive, ref_double_plus_one},
      {"zoo_warp_named_count", check::deadlock, warp_named_count, ref_copy},
      {"zoo_one_ring_barrier", check::missed_phase, one_ring_barrier, ref_add_one},
      {"zoo_single_release", check::missed_phase, single_release, ref_handoff},
      {"zoo_shared_barrier", check::over_arrival, shared_barrier, ref_add_two},
      {"zoo_leader_only_multicast", check::tx_underflow, leader_only_multicast, ref_scale},
      {"zoo_ring_indexed_by_step", check::index_out_of_range, ring_indexed_by_step, ref_add_one},
      {"zoo_prefetch_past_end", check::index_out_of_range, prefetch_past_end, ref_square},
      {"zoo_out_ring_indexed_by_step", check::index_out_of_range, out_ring_indexed_by_step, ref_scale},
      {"zoo_refill_while_storing", check::data_race, refill_while_storing, ref_add_one},
      {"zoo_same_block_two_ctas", check::data_race, same_block_two_ctas, ref_scale},
      {"zoo_blocks_cross_slices", check::data_race, blocks_cross_slices, ref_square_bias},
      {"zoo_window_past_segment", check::data_race, window_past_segment, ref_double_segments},
      {"zoo_read_before_wait", check::data_race, read_before_wait, ref_add_one},
      {"zoo_output_reuse_no_wait", check::data_race, output_reuse_no_wait, ref_scale},
      {"zoo_one_consumer_releases", check::data_race, one_consumer_releases, ref_fanout},
      {"zoo_splitk_early_read", check::data_race, splitk_early_read, ref_splitk},
      {"zoo_tma_store_then_generic_read", check::data_race, tma_store_then_generic_read, ref_splitk},
      {"zoo_plain_store_accumulate", check::data_race, plain_store_accumulate, ref_reduce_halves},
      {"zoo_read_after_reduce", check::data_race, read_after_reduce, ref_reduce_halves},
      {"zoo_serial_without_wait", check::data_race, serial_without_wait, ref_serial_halves},
      {"zoo_ticket_read_before_wait", check::poison_read, ticket_read_before_wait, ref_double_plus_one},
      {"zoo_semaphore_never_signalled", check::deadlock, semaphore_never_signalled, ref_serial_halves},
      {"zoo_no_proxy_fence", check::missing_fence, no_proxy_fence, ref_add_one},
      {"zoo_workspace_no_fence", check::missing_fence, workspace_no_fence, ref_workspace},
      {"zoo_generic_store_then_tma_read", check::missing_fence, generic_store_then_tma_read, ref_splitk},
      {"zoo_refill_over_generic_store", check::missing_fence, refill_over_generic_store, ref_add_one},
      {"zoo_no_final_wait", check::store_pending_at_exit, no_final_wait, ref_add_one},
      {"zoo_store_never_committed", check::store_pending_at_exit, store_never_committed, ref_add_one},
      {"zoo_early_release", check::data_race, early_release, ref_copy},
      {"zoo_refill_released_too_early", check::data_race, refill_released_too_early, ref_prev_sum},
      {"zoo_producer_no_drain", check::load_pending_at_exit, producer_no_drain, ref_copy_narrow},
      {"zoo_unzeroed_accumulator", check::poison_read, unzeroed_accumulator, ref_colsum},
      {"zoo_stored_wrong_stage", check::poison_read, stored_wrong_stage, ref_scale},
      {"zoo_tail_rows_unwritten", check::poison_read, tail_rows_unwritten, ref_square},
  };
  return zoo;
}

}  // namespace stagecraft::zoo
