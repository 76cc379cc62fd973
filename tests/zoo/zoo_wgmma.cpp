// The bug zoo's tensor-core exhibits (zoo.hpp): the mistakes of asynchronous wgmma. Each is a
// one-warpgroup C = A * B^T (bf16 in, f32 out, 128-byte swizzled K-major stages, as in
// gemm_small), and its fixed twin differs by exactly the line the comment names.
#include <stagecraft/stagecraft.hpp>

#include "zoo.hpp"

namespace stagecraft::zoo {
namespace {

template <template <bool> class Make>
ir::Kernel build(variant v) {
  return v == variant::buggy ? Make<true>{}() : Make<false>{}();
}

// The GEMM every exhibit builds on: a (64, K) and b (64, K) bf16, c (64, 64) f32, one stage of
// A and B refilled step by step, the accumulator stored through SMEM with TMA. `body(j)` is one
// K step after its stage has landed; `epilogue` follows the loop.
template <class Body, class Epilogue>
ir::Kernel gemm(const char* name, std::int64_t K, std::int64_t ctas, Body body, Epilogue epilogue) {
  return lower(kernel<sm_90a>(
      name, grid(ctas), threads(1_c),
      gmem<bf16>("a", shape(64_c, K)),                // (m, k)
      gmem<bf16>("b", shape(64_c, K)),                // (n, k)
      gmem<f32>("c", shape(64_c, 64_c)),              // (m, n)
      smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),  // as: (m, k)
      smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),  // bs: (n, k)
      smem<f32>(shape(64_c, 64_c)),                   // cs: the epilogue's staging tile
      barrier(arrivals(2_c)),                         // loaded: A and B of one step
      accumulator<f32>(shape(64_c, 64_c)),            // acc
      [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto acc) {
        auto load_step = [&](auto j) {
          return seq(copy_gmem_to_smem(a.block(0_c, j), as, loaded), copy_gmem_to_smem(b.block(0_c, j), bs, loaded));
        };
        auto store_c = seq(store(cs, load(acc)), commit_smem(), copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(),
                           wait_smem_to_gmem(0_c));
        auto loop = for_(range(K / 64), [&](auto j) {
          return body(j, as, bs, acc, loaded, [&](auto next) { return if_(next < K / 64, load_step(next)); });
        });
        return seq(store(acc, 0.0f), load_step(0_c), loop, epilogue(acc, store_c));
      }));
}

// Two K steps through one stage.
// MISTAKE: the refill of the stage for step j + 1 is issued right after wgmma_commit(), before
// wgmma_wait(0): the tensor core may still be reading A and B when TMA overwrites them (the
// same mistake as a consumer releasing its stage before its wait).
// FIX: wgmma_wait(0_c) first, then refill.
template <bool Bug>
struct make_refill_under_wgmma {
  ir::Kernel operator()() const {
    return gemm(
        "zoo_refill_under_wgmma", 128, 1,
        [](auto j, auto as, auto bs, auto acc, auto loaded, auto refill) {
          auto mma = seq(barrier_wait(loaded), wgmma(acc, as, transpose(bs)), wgmma_commit());
          if constexpr (Bug) return seq(mma, refill(j + 1_c), wgmma_wait(0_c));
          else return seq(mma, wgmma_wait(0_c), refill(j + 1_c));
        },
        [](auto, auto store_c) { return store_c; });
  }
};

// One K step.
// MISTAKE: the epilogue reads the accumulator (store(cs, load(acc))) before the wgmma_wait
// that covers the last group: it may read partial sums.
// FIX: wgmma_wait(0_c) before reading acc.
template <bool Bug>
struct make_acc_before_wait {
  ir::Kernel operator()() const {
    return gemm(
        "zoo_acc_before_wait", 64, 1,
        [](auto, auto as, auto bs, auto acc, auto loaded, auto) {
          auto mma = seq(barrier_wait(loaded), wgmma(acc, as, transpose(bs)), wgmma_commit());
          if constexpr (Bug) return mma;
          else return seq(mma, wgmma_wait(0_c));
        },
        [](auto, auto store_c) {
          if constexpr (Bug) return seq(store_c, wgmma_wait(0_c));
          else return store_c;
        });
  }
};

// One K step, A doubled in place before the MMA (a prologue that scales an operand).
// MISTAKE: no commit_smem() between the ordinary stores into `as` and the wgmma that reads it:
// the tensor core reads SMEM through the async proxy and may see the bytes TMA left there.
// FIX: commit_smem() (fence.proxy.async) before the wgmma.
template <bool Bug>
struct make_wgmma_no_fence {
  ir::Kernel operator()() const {
    return gemm(
        "zoo_wgmma_no_fence", 64, 1,
        [](auto, auto as, auto bs, auto acc, auto loaded, auto) {
          auto scale = seq(barrier_wait(loaded), store(as, load(as) + load(as)));
          auto mma = seq(wgmma(acc, as, transpose(bs)), wgmma_commit(), wgmma_wait(0_c));
          if constexpr (Bug) return seq(scale, mma);
          else return seq(scale, commit_smem(), mma);
        },
        [](auto, auto store_c) { return store_c; });
  }
};

// Two CTAs compute the same block; only CTA 0 has a C block to store (a grid rounded up to an
// even size: CTA 1 is padding).
// MISTAKE: the last wgmma_wait lives inside the epilogue's branch, so the padding CTA exits
// with its wgmma group still in flight.
// FIX: wgmma_wait(0_c) before the branch.
template <bool Bug>
struct make_wgmma_exit_pending {
  ir::Kernel operator()() const {
    return gemm(
        "zoo_wgmma_exit_pending", 64, 2,
        [](auto, auto as, auto bs, auto acc, auto loaded, auto) {
          return seq(barrier_wait(loaded), wgmma(acc, as, transpose(bs)), wgmma_commit());
        },
        [](auto, auto store_c) {
          if constexpr (Bug) return if_(program_id() < 1_c, seq(wgmma_wait(0_c), store_c));
          else return seq(wgmma_wait(0_c), if_(program_id() < 1_c, store_c));
        });
  }
};

// Warp-specialized: warpgroup 0 produces A and B stages, warpgroup 1 consumes them with
// wgmma; one stage, `full` (the two copies) and `empty` (the consumer's release).
// MISTAKE: the consumer releases the stage (barrier_arrive(empty)) right after
// wgmma_commit(), before its wgmma_wait: the producer's refill lands on A and B while the
// tensor core may still be reading them.
// FIX: wgmma_wait(0_c), then release.
template <bool Bug>
struct make_release_before_wgmma_wait {
  ir::Kernel operator()() const {
    const std::int64_t K = 192, steps = K / 64;
    return lower(kernel<sm_90a>(
        "zoo_release_before_wgmma_wait", grid(1), threads(2_c),
        gmem<bf16>("a", shape(64_c, K)),                // (m, k)
        gmem<bf16>("b", shape(64_c, K)),                // (n, k)
        gmem<f32>("c", shape(64_c, 64_c)),              // (m, n)
        smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),  // as
        smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),  // bs
        smem<f32>(shape(64_c, 64_c)),                   // cs
        barrier(arrivals(2_c)),                         // full: A and B landed
        barrier(arrivals(1_c)),                         // empty: the consumer is done with the stage
        accumulator<f32>(shape(64_c, 64_c)),            // acc (the consumer's)
        [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto empty, auto acc) {
          auto producer = for_(range(steps), [&](auto j) {
            return seq(if_(j > 0_c, barrier_wait(empty)), copy_gmem_to_smem(a.block(0_c, j), as, full),
                       copy_gmem_to_smem(b.block(0_c, j), bs, full));
          });
          auto consumer_step = for_(range(steps), [&](auto) {
            auto mma = seq(barrier_wait(full), wgmma(acc, as, transpose(bs)), wgmma_commit());
            if constexpr (Bug) return seq(mma, barrier_arrive(empty), wgmma_wait(0_c));
            else return seq(mma, wgmma_wait(0_c), barrier_arrive(empty));
          });
          auto consumer = seq(store(acc, 0.0f), consumer_step, store(cs, load(acc)), commit_smem(), copy_smem_to_gmem(cs, c.block(0_c, 0_c)),
                              commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
          return if_(thread_id() == 0_c, producer, consumer);
        }));
  }
};

// Warp-specialized with a two-stage ring, and the consumer keeps one wgmma group in flight as
// gemm_hopper's do: issue the step's wgmma, commit, wgmma_wait(1) -- which only promises that
// the *previous* step's group is done.
// MISTAKE: after wgmma_wait(1) the consumer releases the stage it has just issued the wgmma
// for (empty[s]), as it would after wgmma_wait(0): that group may still be reading it while
// the producer's refill lands there.
// FIX: release the previous step's stage (empty[s - 1]) after wgmma_wait(1), and the last
// step's after the final wgmma_wait(0).
template <bool Bug>
struct make_release_under_wait1 {
  ir::Kernel operator()() const {
    const std::int64_t K = 384, steps = K / 64;
    return lower(kernel<sm_90a>(
        "zoo_release_under_wait1", grid(1), threads(2_c),
        gmem<bf16>("a", shape(64_c, K)),                       // (m, k)
        gmem<bf16>("b", shape(64_c, K)),                       // (n, k)
        gmem<f32>("c", shape(64_c, 64_c)),                     // (m, n)
        smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)),    // as: (stage, m, k)
        smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)),    // bs: (stage, n, k)
        smem<f32>(shape(64_c, 64_c)),                          // cs
        barrier(arrivals(2_c), count(2_c)),                    // full[stage]: A and B landed
        barrier(arrivals(1_c), count(2_c)),                    // empty[stage]: the consumer is done with it
        accumulator<f32>(shape(64_c, 64_c)),                   // acc (the consumer's)
        [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto empty, auto acc) {
          auto producer = for_(range(steps), [&](auto j) {
            auto s = stage<2>(j);
            return seq(if_(j >= 2_c, barrier_wait(empty[s])), copy_gmem_to_smem(a.block(0_c, j), as[s], full[s]),
                       copy_gmem_to_smem(b.block(0_c, j), bs[s], full[s]));
          });
          auto consumer_step = for_(range(steps), [&](auto j) {
            auto s = stage<2>(j);
            auto mma = seq(barrier_wait(full[s]), wgmma(acc, as[s], transpose(bs[s])), wgmma_commit(), wgmma_wait(1_c));
            if constexpr (Bug) return seq(mma, barrier_arrive(empty[s]));
            else return seq(mma, if_(j > 0_c, barrier_arrive(empty[s.advance(1_c)])));  // the stage of step j - 1
          });
          auto drain = [&] {
            if constexpr (Bug) return wgmma_wait(0_c);
            else return seq(wgmma_wait(0_c), barrier_arrive(empty[stage<2>(as_index(steps - 1))]));
          };
          auto consumer = seq(store(acc, 0.0f), consumer_step, drain(), store(cs, load(acc)), commit_smem(),
                              copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
          return if_(thread_id() == 0_c, producer, consumer);
        }));
  }
};

// gemm_fp8_blockwise in small: e4m3 a (64, K) and b (64, K), A scaled per row and 128 of K (sa:
// (K / 128, 64)), B per 128 of K (sb: (1, K / 128)); warpgroup 0 streams each 128-wide K slice
// of A, B and A's scales through a 2-stage ring, warpgroup 1 sums it with wgmma into `part` and
// promotes it into `acc` with the stage's row scales.
// MISTAKE: the consumer releases the stage (ManualRelease) as soon as its wgmma_wait says the
// tensor core is done with A and B, forgetting that the promotion still reads the stage's A
// scales: the producer's refill of the stage (two steps on) lands on them.
// FIX: promote, then release.
template <bool Bug>
struct make_scales_read_after_release {
  ir::Kernel operator()() const {
    const std::int64_t K = 384, KB = K / 128;
    return lower(kernel<sm_90a>(
        "zoo_scales_read_after_release", grid(1), threads(2_c),
        gmem<e4m3>("a", shape(64_c, K)),                         // (m, k)
        gmem<e4m3>("b", shape(64_c, K)),                         // (n, k)
        gmem<f32>("sa", shape(KB, 64_c)),                        // (k block, m)
        gmem<f32>("sb", shape(1_c, KB)),                         // (n block, k block)
        gmem<f32>("c", shape(64_c, 64_c)),                       // (m, n)
        smem<e4m3>(shape(2_c, 64_c, 128_c), swizzle(128_c)),     // as: (stage, m, k)
        smem<e4m3>(shape(2_c, 64_c, 128_c), swizzle(128_c)),     // bs: (stage, n, k)
        smem<f32>(shape(2_c, 1_c, 64_c)),                        // ss: (stage, 1, m), A's scales
        barrier(arrivals(3_c), count(2_c)),                      // ready[stage]
        barrier(arrivals(1_c), count(2_c)),                      // consumed[stage]
        accumulator<f32>(shape(64_c, 64_c)),                     // acc
        accumulator<f32>(shape(64_c, 64_c)),                     // part
        [&](auto a, auto b, auto sa, auto sb, auto c, auto as, auto bs, auto ss, auto ready, auto consumed, auto acc, auto part) {
          return emit_pipeline_warp_specialized<2, 1, true>(
              KB, ready, consumed,
              ins(in(a, as, [&](auto k) { return a.block(0_c, k); }), in(b, bs, [&](auto k) { return b.block(0_c, k); }),
                  in(sa, ss, [&](auto k) { return sa.block(k, 0_c); })),
              [&](auto k, auto, auto a_k, auto b_k, auto s_k, auto release) {
                auto scale = load(s_k[0_c]) * full(shape(64_c), load(sb.tile(shape(1_c, 1_c), 0_c, k)));
                auto mma = seq(store(part, 0.0f), wgmma(part, a_k, transpose(b_k)), wgmma_commit(), wgmma_wait(0_c));
                auto promote = store(acc, fma(load(part), broadcast<1>(scale, shape(64_c, 64_c)), load(acc)));
                if constexpr (Bug) return seq(mma, barrier_arrive(release), promote);
                else return seq(mma, promote, barrier_arrive(release));
              },
              [&](auto) { return store(acc, 0.0f); }, [&](auto) { return store(c.tile(shape(64_c, 64_c), 0_c, 0_c), load(acc)); });
        }));
  }
};

void ref_scaled_gemm(std::vector<host_tensor>& t) {  // c = sum over k blocks of sa sb (a b^T over the block)
  const std::int64_t K = t[0].shape[1], KB = K / 128;
  for (std::int64_t i = 0; i < 64; ++i)
    for (std::int64_t j = 0; j < 64; ++j) {
      double s = 0;
      for (std::int64_t kb = 0; kb < KB; ++kb) {
        double block = 0;
        for (std::int64_t k = kb * 128; k < kb * 128 + 128; ++k) block += t[0].get(i * K + k) * t[1].get(j * K + k);
        s += block * t[2].get(kb * 64 + i) * t[3].get(kb);
      }
      t[4].set(i * 64 + j, s);
    }
}

void ref_gemm(std::vector<host_tensor>& t, double scale_a) {  // a (64, K), b (64, K), c = a * b^T
  const std::int64_t K = t[0].shape[1];
  auto c = t[2].as<float>();
  for (std::int64_t i = 0; i < 64; ++i)
    for (std::int64_t j = 0; j < 64; ++j) {
      double s = 0;
      for (std::int64_t k = 0; k < K; ++k) s += scale_a * t[0].get(i * K + k) * t[1].get(j * K + k);
      c[i * 64 + j] = static_cast<float>(s);
    }
}
void ref_gemm1(std::vector<host_tensor>& t) { ref_gemm(t, 1.0); }
void ref_gemm2(std::vector<host_tensor>& t) { ref_gemm(t, 2.0); }

}  // namespace

ir::Kernel refill_under_wgmma(variant v) { return build<make_refill_under_wgmma>(v); }
ir::Kernel acc_before_wait(variant v) { return build<make_acc_before_wait>(v); }
ir::Kernel wgmma_no_fence(variant v) { return build<make_wgmma_no_fence>(v); }
ir::Kernel wgmma_exit_pending(variant v) { return build<make_wgmma_exit_pending>(v); }
ir::Kernel release_before_wgmma_wait(variant v) { return build<make_release_before_wgmma_wait>(v); }
ir::Kernel release_under_wait1(variant v) { return build<make_release_under_wait1>(v); }
ir::Kernel scales_read_after_release(variant v) { return build<make_scales_read_after_release>(v); }

std::vector<entry> const& mma_all() {
  using interp::check;
  static const std::vector<entry> zoo{
      {"zoo_refill_under_wgmma", check::data_race, refill_under_wgmma, ref_gemm1},
      {"zoo_acc_before_wait", check::data_race, acc_before_wait, ref_gemm1},
      {"zoo_wgmma_no_fence", check::missing_fence, wgmma_no_fence, ref_gemm2},
      {"zoo_wgmma_exit_pending", check::wgmma_pending_at_exit, wgmma_exit_pending, ref_gemm1},
      {"zoo_release_before_wgmma_wait", check::data_race, release_before_wgmma_wait, ref_gemm1},
      {"zoo_release_under_wait1", check::data_race, release_under_wait1, ref_gemm1},
      {"zoo_scales_read_after_release", check::data_race, scales_read_after_release, ref_scaled_gemm},
  };
  return zoo;
}

}  // namespace stagecraft::zoo
