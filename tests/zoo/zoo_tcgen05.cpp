// The bug zoo's Blackwell exhibits (zoo.hpp): the mistakes of tcgen05's asynchrony. Each is a
// warp-specialized C = A * B^T (bf16 in, f32 out) on sm_100a: warpgroup 0 loads A (128, 64) and
// B (64, 64) K slices with TMA into one stage, warpgroup 1 issues tcgen05_mma into a (128, 64)
// TMEM accumulator, warpgroup 2 is the epilogue reading TMEM (async_load_tmem) and storing C
// through SMEM with TMA. Its fixed twin differs by exactly the line the comment names.
#include <stagecraft/stagecraft.hpp>

#include "../../examples/gemm_blackwell_mx.hpp"
#include "zoo.hpp"

namespace stagecraft::zoo {
namespace {

// The knobs are the mistakes: how the MMA thread frees the stage and signals the epilogue,
// whether it waits for the epilogue to be done with D before the next tile, how many arrivals
// `done` expects, and who frees D.
struct knobs {
  bool commit_release = true;   // empty: tcgen05_commit_arrive (false: barrier_arrive right after the MMA)
  bool commit_done = true;      // done: tcgen05_commit_arrive (false: barrier_arrive)
  bool wait_tmem_empty = true;  // before tile t > 0, wait until the epilogue has read D
  bool mma_frees = false;       // the MMA warpgroup frees D after its last commit (true), or the epilogue after its last read
  bool ring = false;            // D is a ring of two accumulators, tile t in d[t % 2], with done and tmem_empty per stage
};

template <knobs Kn, long long DoneArrivals>
ir::Kernel ws_gemm(const char* name, std::int64_t K, std::int64_t tiles, std::int64_t ctas) {
  const std::int64_t steps = K / 64, N = 64 * tiles;
  constexpr auto per_stage = int_c<Kn.ring ? 2 : 1>;
  auto accumulators = [] {
    if constexpr (Kn.ring) return tmem<f32>(shape(2_c, 128_c, 64_c));  // d: (stage, m, n)
    else return tmem<f32>(shape(128_c, 64_c));                        // d: (m, n)
  }();
  return lower(kernel<sm_100a>(
      name, grid(ctas), threads(3_c),
      gmem<bf16>("a", shape(128_c, K)),                     // (m, k)
      gmem<bf16>("b", shape(N, K)),                         // (n, k)
      gmem<f32>("c", shape(128_c, N)),                      // (m, n)
      smem<bf16>(shape(128_c, 64_c), swizzle(128_c)),       // as
      smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),        // bs
      smem<f32>(shape(128_c, 64_c)),                        // cs: the epilogue's staging tile
      barrier(arrivals(2_c)),                               // full: A and B landed
      barrier(arrivals(1_c), orders_tensor_core),           // empty: the MMA reading the stage completed
      barrier(arrivals(int_c<DoneArrivals>), count(per_stage), orders_tensor_core),  // done[stage]: D of a tile is complete
      barrier(arrivals(1_c), count(per_stage)),             // tmem_empty[stage]: the epilogue has read D
      accumulators,
      [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto empty, auto done_ring, auto tmem_empty_ring, auto d_ring) {
        // Tile t's accumulator and its two barriers: the one D, or stage t % 2 of the ring.
        auto d = [&](auto t) {
          if constexpr (Kn.ring) return d_ring[stage<2>(t)];
          else return d_ring;
        };
        auto done = [&](auto t) {
          if constexpr (Kn.ring) return done_ring[stage<2>(t)];
          else return done_ring[0_c];
        };
        auto tmem_empty = [&](auto t) {
          if constexpr (Kn.ring) return tmem_empty_ring[stage<2>(t)];
          else return tmem_empty_ring[0_c];
        };
        auto producer = for_(range(tiles), [&](auto t) {
          return for_(range(steps), [&](auto j) {
            return seq(if_(t * steps + j > 0_c, barrier_wait(empty)), copy_gmem_to_smem(a.block(0_c, j), as, full),
                       copy_gmem_to_smem(b.block(t, j), bs, full));
          });
        });
        auto mma = for_(range(tiles), [&](auto t) {
          auto k_loop = for_(range(steps), [&](auto j) {
            auto issue = seq(barrier_wait(full), tcgen05_mma(d(t), as, transpose(bs), j > 0_c));
            if constexpr (Kn.commit_release) return seq(issue, tcgen05_commit_arrive(empty));
            else return seq(issue, barrier_arrive(empty));
          });
          auto signal = [&] {
            if constexpr (Kn.commit_done) return tcgen05_commit_arrive(done(t));
            else return barrier_arrive(done(t));
          }();
          // The epilogue has read tile t - 1 (the ring: t - 2) out of this accumulator.
          if constexpr (Kn.wait_tmem_empty) return seq(if_(t >= per_stage, barrier_wait(tmem_empty(t))), k_loop, signal);
          else return seq(k_loop, signal);
        });
        auto epilogue = for_(range(tiles), [&](auto t) {
          auto rest = seq(store(cs, async_load_tmem(d(t))), barrier_arrive(tmem_empty(t)), commit_smem(), copy_smem_to_gmem(cs, c.block(0_c, t)),
                          commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
          return seq(barrier_wait(done(t)), if_(program_id() < 1_c, rest));
        });
        // The epilogue frees D once it has read the last tile (every MMA into it completed before `done`).
        if constexpr (Kn.mma_frees) return if_(thread_id() == 0_c, producer, if_(thread_id() == 1_c, seq(mma, tmem_dealloc(d_ring)), epilogue));
        else return if_(thread_id() == 0_c, producer, if_(thread_id() == 1_c, mma, seq(epilogue, tmem_dealloc(d_ring))));
      }));
}

// TMEM's lifetime, in two warpgroups: warpgroup 0 loads one K slice of A and B per tile and
// issues the tile's MMA into D; warpgroup 1 reads D, arrives on `read` (the MMA warpgroup waits
// for it before the next tile's MMA into D) and stores the tile. Every CTA computes the same
// C; each stores its own copy. The knobs: after which tile the epilogue frees D, and whether
// only CTA 0 frees it.
struct lifetime_knobs {
  long long free_after_tile = 1;
  bool only_cta0_frees = false;
};

template <lifetime_knobs Kn>
ir::Kernel tmem_lifetime_gemm(const char* name, std::int64_t ctas) {
  return lower(kernel<sm_100a>(
      name, grid(ctas), threads(2_c),
      gmem<bf16>("a", shape(128_c, 64_c)),                  // (m, k)
      gmem<bf16>("b", shape(128_c, 64_c)),                  // (n, k): two tiles of 64 rows
      gmem<f32>("c", shape(128 * ctas, 128)),               // (m, n) per CTA
      smem<bf16>(shape(128_c, 64_c), swizzle(128_c)),       // as
      smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),        // bs
      smem<f32>(shape(128_c, 64_c)),                        // cs
      barrier(arrivals(2_c)),                               // loaded
      barrier(arrivals(1_c), orders_tensor_core),           // done: the tile's MMA completed
      barrier(arrivals(1_c)),                               // read: the epilogue has read D (and freed what it frees)
      tmem<f32>(shape(128_c, 64_c)),                        // d
      [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto loaded, auto done, auto read, auto d) {
        auto mma = for_(range(2_c), [&](auto t) {
          return seq(if_(t > 0_c, barrier_wait(read)), copy_gmem_to_smem(a.block(0_c, 0_c), as, loaded),
                     copy_gmem_to_smem(b.block(t, 0_c), bs, loaded), barrier_wait(loaded), tcgen05_mma(d, as, transpose(bs), false),
                     tcgen05_commit_arrive(done));
        });
        auto frees = [&](auto t) {
          if constexpr (Kn.only_cta0_frees) return (t == int_c<Kn.free_after_tile>) && (program_id() == 0_c);
          else return t == int_c<Kn.free_after_tile>;
        };
        auto epilogue = for_(range(2_c), [&](auto t) {
          return seq(barrier_wait(done), store(cs, async_load_tmem(d)), if_(frees(t), tmem_dealloc(d)), barrier_arrive(read), commit_smem(),
                     copy_smem_to_gmem(cs, c.block(program_id(), t)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
        });
        return if_(thread_id() == 0_c, mma, epilogue);
      }));
}

// MISTAKE: the MMA thread frees the stage with a plain barrier_arrive(empty) right after issuing
// the MMA: the producer's refill may land while the tensor core still reads A and B.
// FIX: tcgen05_commit_arrive(empty), which arrives once the MMA has completed.
ir::Kernel build_refill_before_commit(variant v) {
  if (v == variant::buggy) return ws_gemm<knobs{.commit_release = false}, 1>("zoo_refill_before_commit", 128, 1, 1);
  return ws_gemm<knobs{}, 1>("zoo_refill_before_commit", 128, 1, 1);
}

// MISTAKE: the MMA thread tells the epilogue that D is ready with a plain barrier_arrive(done)
// after issuing the last MMA: the epilogue's async_load_tmem reads TMEM the MMAs still write.
// FIX: tcgen05_commit_arrive(done).
ir::Kernel build_tmem_read_before_commit(variant v) {
  if (v == variant::buggy) return ws_gemm<knobs{.commit_done = false}, 1>("zoo_tmem_read_before_commit", 64, 1, 1);
  return ws_gemm<knobs{}, 1>("zoo_tmem_read_before_commit", 64, 1, 1);
}

// Two tiles of C per CTA through one TMEM accumulator.
// MISTAKE: the MMA thread starts the second tile without waiting for the epilogue to have read
// the first one's D: its MMA overwrites TMEM under the epilogue's async_load_tmem.
// FIX: barrier_wait(tmem_empty) before every tile but the first.
ir::Kernel build_mma_over_tmem_load(variant v) {
  if (v == variant::buggy) return ws_gemm<knobs{.wait_tmem_empty = false}, 1>("zoo_mma_over_tmem_load", 64, 2, 1);
  return ws_gemm<knobs{}, 1>("zoo_mma_over_tmem_load", 64, 2, 1);
}

// Three tiles of C per CTA through a ring of two TMEM accumulators (gemm_blackwell's pipeline:
// the MMAs fill one while the epilogue reads the other).
// MISTAKE: the MMA thread takes the ring's stages in turn without waiting for the epilogue to
// hand a stage back: tile 2's MMA overwrites d[0] under the epilogue's read of tile 0.
// FIX: barrier_wait(tmem_empty[t % 2]) before every tile from the third on (t >= 2).
ir::Kernel build_acc_ring_overrun(variant v) {
  if (v == variant::buggy) return ws_gemm<knobs{.wait_tmem_empty = false, .ring = true}, 1>("zoo_acc_ring_overrun", 64, 3, 1);
  return ws_gemm<knobs{.ring = true}, 1>("zoo_acc_ring_overrun", 64, 3, 1);
}

// MISTAKE: `done` is declared with arrivals(2) (one per K step, as if every MMA committed to
// it), but one tcgen05_commit_arrive follows the whole K loop: the epilogue waits forever.
// FIX: arrivals(1_c).
ir::Kernel build_commit_count(variant v) {
  if (v == variant::buggy) return ws_gemm<knobs{}, 2>("zoo_commit_count", 128, 1, 1);
  return ws_gemm<knobs{}, 1>("zoo_commit_count", 128, 1, 1);
}

// MISTAKE: the MMA warpgroup frees D as soon as it has issued its last MMA and the commit: the
// tensor core may still be writing it (and the epilogue has not read it yet). A commit arrives
// for whoever waits on its barrier; the issuer itself has not waited.
// FIX: the epilogue frees D after reading it, ordered after the MMAs by its wait on `done`.
ir::Kernel build_tmem_dealloc_pending(variant v) {
  if (v == variant::buggy) return ws_gemm<knobs{.mma_frees = true}, 1>("zoo_tmem_dealloc_pending", 64, 1, 1);
  return ws_gemm<knobs{}, 1>("zoo_tmem_dealloc_pending", 64, 1, 1);
}

// MISTAKE: the epilogue frees D after reading the first tile, but the MMA warpgroup computes the
// second tile into it: its tcgen05_mma, ordered after the dealloc through `read`, uses freed TMEM.
// FIX: free D after the last tile (if_(t == 1_c, tmem_dealloc(d))).
ir::Kernel build_tmem_use_after_dealloc(variant v) {
  if (v == variant::buggy) return tmem_lifetime_gemm<lifetime_knobs{.free_after_tile = 0}>("zoo_tmem_use_after_dealloc", 1);
  return tmem_lifetime_gemm<lifetime_knobs{}>("zoo_tmem_use_after_dealloc", 1);
}

// Two CTAs, each computing and storing its own copy of C.
// MISTAKE: the epilogue frees D only in CTA 0 (program_id() == 0 in the dealloc's condition):
// CTA 1 exits with its TMEM still allocated, which the hardware forbids.
// FIX: every CTA frees D.
ir::Kernel build_tmem_not_freed(variant v) {
  if (v == variant::buggy) return tmem_lifetime_gemm<lifetime_knobs{.only_cta0_frees = true}>("zoo_tmem_not_freed", 2);
  return tmem_lifetime_gemm<lifetime_knobs{}>("zoo_tmem_not_freed", 2);
}

// Two CTA pairs in a cluster of (2, 2) share A: C (256, 128) = A (256, K) * B (128, K)^T, each
// pair a 256 x 64 tile (pair y: C's columns 64y..64y + 63), one stage of (128, 64) A rows and
// (32, 64) B rows per CTA. Each CTA loads 64 of its 128 A rows and multicasts them into the CTA
// at its place in the other pair (collective_axes(1_c)), so its refill of the stage writes the
// other pair's SMEM too. Roles as in gemm_blackwell_2cta: producer, relay + MMA (even CTA), epilogue.
// MISTAKE: each pair's commit frees the stage only in its own two CTAs, and empty counts one
// arrival: a CTA refills once its own pair's MMA is done, and its multicast lands in the other
// pair's SMEM while that pair's MMA may still read it.
// FIX: tcgen05_commit_arrive_2cta(empty, collective_axes(1_c)) arrives in all four CTAs, and
// empty counts both pairs (arrivals(2_c)).
template <bool PeerCommit, long long arrivals_per_stage = PeerCommit ? 2 : 1>
ir::Kernel multicast_pair_gemm(const char* name, std::int64_t K) {
  const std::int64_t steps = K / 64;
  return lower(kernel<sm_100a>(
      name, grid(2_c, 2_c), threads(3_c), cluster(2_c, 2_c),
      gmem<bf16>("a", shape(256_c, K)),                      // (m, k)
      gmem<bf16>("b", shape(128_c, K)),                      // (n, k)
      gmem<f32>("c", shape(256_c, 128_c)),                   // (m, n)
      smem<bf16>(shape(128_c, 64_c), swizzle(128_c)),        // as: this CTA's 128 rows, half of them from the other pair's CTA
      smem<bf16>(shape(32_c, 64_c), swizzle(128_c)),         // bs: this CTA's half of its pair's 64 B rows
      smem<f32>(shape(128_c, 64_c)),                         // cs
      barrier(arrivals(2_c)),                                // full: A (both shares) and B landed here
      cluster_barrier(collective_axes(0_c), arrivals(1_c)),  // pair_full: both CTAs of the pair are full
      barrier(arrivals(int_c<arrivals_per_stage>), orders_tensor_core),  // empty: the MMAs reading this CTA's stage completed
      barrier(arrivals(1_c), orders_tensor_core),            // done: this CTA's rows of D
      tmem<f32>(shape(128_c, 64_c)),                         // d
      [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto pair_full, auto empty, auto done, auto d) {
        auto m = program_id(0_c);
        auto n = program_id(1_c);
        auto half = cluster_idx(0_c);
        auto producer = for_(range(steps), [&](auto j) {
          return seq(if_(j > 0_c, barrier_wait(empty)), copy_gmem_to_smem(a.block(m, j), as, full, collective_axes(1_c)),
                     copy_gmem_to_smem(b.block(n * 2_c + half, j), bs, full));
        });
        auto release = [&] {
          if constexpr (PeerCommit) return tcgen05_commit_arrive_2cta(empty, collective_axes(1_c));
          else return tcgen05_commit_arrive_2cta(empty);
        }();
        auto relay = for_(range(steps), [&](auto j) {
          return seq(barrier_wait(full), barrier_arrive(pair_full),
                     if_(half == 0_c, seq(barrier_wait(pair_full), tcgen05_mma_2cta(d, as, transpose(bs), j > 0_c), release)));
        });
        auto mma = seq(relay, if_(half == 0_c, tcgen05_commit_arrive_2cta(done)));
        auto epilogue = seq(barrier_wait(done), store(cs, async_load_tmem(d)), tmem_dealloc(d), commit_smem(), copy_smem_to_gmem(cs, c.block(m, n)),
                            commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
        return if_(thread_id() == 0_c, producer, if_(thread_id() == 1_c, mma, epilogue));
      }));
}

ir::Kernel build_multicast_refill_before_peer_commit(variant v) {
  if (v == variant::buggy) return multicast_pair_gemm<false>("zoo_multicast_refill_before_peer_commit", 192);
  return multicast_pair_gemm<true>("zoo_multicast_refill_before_peer_commit", 192);
}

// c (256, 128) = a (256, K) * b (128, K)^T.
void ref_gemm_256(std::vector<host_tensor>& t) {
  const std::int64_t K = t[0].shape[1];
  auto c = t[2].as<float>();
  for (std::int64_t i = 0; i < 256; ++i)
    for (std::int64_t j = 0; j < 128; ++j) {
      double s = 0;
      for (std::int64_t k = 0; k < K; ++k) s += t[0].get(i * K + k) * t[1].get(j * K + k);
      c[i * 128 + j] = static_cast<float>(s);
    }
}

// A from TMEM (gemm_blackwell_ts's protocol, on one tile): C (128, 64) = A (128, 128) * B^T in two
// K slices through a 2-stage ring. Warpgroup 2 copies each A slice from SMEM into TMEM `at` with
// store_tmem and arrives on a_full; warpgroup 1 waits on a_full, issues tcgen05_mma(d, at, ...)
// and commits to a_free, which warpgroup 2 waits on before it overwrites `at` with the next slice.
struct ts_knobs {
  bool wait_a_free = true;  // the converter waits for the MMA reading `at` before storing the next slice
  bool wait_a_full = true;  // the MMA issuer waits for the store into `at` before reading it
};
template <ts_knobs Kn>
ir::Kernel ts_gemm(const char* name) {
  constexpr long long K = 128, steps = K / 64;
  return lower(kernel<sm_100a>(
      name, grid(1), threads(3_c),
      gmem<bf16>("a", shape(128_c, int_c<K>)),                // (m, k)
      gmem<bf16>("b", shape(64_c, int_c<K>)),                 // (n, k)
      gmem<f32>("c", shape(128_c, 64_c)),                     // (m, n)
      smem<bf16>(shape(2_c, 128_c, 64_c), swizzle(128_c)),    // as: (stage, m, k)
      smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)),     // bs: (stage, n, k)
      smem<f32>(shape(128_c, 64_c)),                          // cs
      barrier(arrivals(2_c), count(2_c)),                     // full[stage]
      barrier(arrivals(1_c), orders_tensor_core),             // a_free: the MMA reading `at` completed
      barrier(arrivals(1_c)),                                 // a_full: `at` holds the slice
      barrier(arrivals(1_c), orders_tensor_core),             // done
      tmem<f32>(shape(128_c, 64_c)),                          // d
      tmem<bf16>(shape(128_c, 64_c)),                         // at: A's K slice, 32 columns
      [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto a_free, auto a_full, auto done, auto d, auto at) {
        // Two stages for two slices: the producer never waits, so only a_free orders the converter.
        auto producer = for_(range(int_c<steps>), [&](auto j) {
          return seq(copy_gmem_to_smem(a.block(0_c, j), as[j], full[j]), copy_gmem_to_smem(b.block(0_c, j), bs[j], full[j]));
        });
        auto mma = seq(for_(range(int_c<steps>),
                            [&](auto j) {
                              if constexpr (Kn.wait_a_full)
                                return seq(barrier_wait(full[j]), barrier_wait(a_full), tcgen05_mma(d, at, transpose(bs[j]), j > 0_c),
                                           tcgen05_commit_arrive(a_free));
                              else
                                return seq(barrier_wait(full[j]), tcgen05_mma(d, at, transpose(bs[j]), j > 0_c), tcgen05_commit_arrive(a_free));
                            }),
                       tcgen05_commit_arrive(done));
        auto convert = for_(range(int_c<steps>), [&](auto j) {
          if constexpr (Kn.wait_a_free)
            return seq(barrier_wait(full[j]), if_(j > 0_c, barrier_wait(a_free)), store_tmem(at, load(as[j])), barrier_arrive(a_full));
          else
            return seq(barrier_wait(full[j]), store_tmem(at, load(as[j])), barrier_arrive(a_full));
        });
        auto epilogue = seq(barrier_wait(done), store(cs, async_load_tmem(d)), tmem_dealloc(d), tmem_dealloc(at), commit_smem(),
                            copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
        return if_(thread_id() == 0_c, producer, if_(thread_id() == 1_c, mma, seq(convert, epilogue)));
      }));
}

// MISTAKE: the converter stores the second K slice into `at` as soon as its stage lands, while
// the first slice's MMA may still be reading those TMEM columns.
// FIX: wait on a_free (the commit after that MMA) before store_tmem.
ir::Kernel build_tmem_a_store_race(variant v) {
  if (v == variant::buggy) return ts_gemm<ts_knobs{.wait_a_free = false}>("zoo_tmem_a_store_race");
  return ts_gemm<ts_knobs{}>("zoo_tmem_a_store_race");
}

// MISTAKE: the MMA issuer waits only for B's stage, not for a_full: its MMA may read `at` before
// (or while) the converter's store_tmem writes it.
// FIX: barrier_wait(a_full) before the tcgen05_mma.
ir::Kernel build_tmem_a_mma_before_store(variant v) {
  if (v == variant::buggy) return ts_gemm<ts_knobs{.wait_a_full = false}>("zoo_tmem_a_mma_before_store");
  return ts_gemm<ts_knobs{}>("zoo_tmem_a_mma_before_store");
}

// Block scaling (gemm_blackwell_mx's copies, on one tile): C (128, 128) = (A * SFA)(B * SFB)^T,
// e4m3 A and B (128, 128), one K slice. Warp 1 loads A, B and their two 512-byte scale blocks;
// warp 2 waits for them, copies both scale blocks into TMEM (tcgen05_copy_scales) and commits to
// scales_in, which arrives once the copies have completed; warp 3 waits for the operands and the
// scales, issues the block-scaled MMA and commits to done for the epilogue.
template <bool WaitScales>
ir::Kernel mx_split_copy(const char* name) {
  return lower(kernel<sm_100a>(
      name, grid(1), threads(warpgroup, warp, warp, warp),
      gmem<e4m3>("a", shape(128_c, 128_c)),                   // (m, k)
      gmem<e4m3>("b", shape(128_c, 128_c)),                   // (n, k)
      gmem<u8>("sfa", shape(1_c, 1_c, 32_c, 16_c)),           // A's scales, one 128 x 4 block (ue8m0)
      gmem<u8>("sfb", shape(1_c, 1_c, 32_c, 16_c)),           // B's
      gmem<f32>("c", shape(128_c, 128_c)),                    // (m, n)
      smem<e4m3>(shape(128_c, 128_c), swizzle(128_c)),        // as
      smem<e4m3>(shape(128_c, 128_c), swizzle(128_c)),        // bs
      smem<u8>(shape(1_c, 1_c, 32_c, 16_c)),                  // sfas
      smem<u8>(shape(1_c, 1_c, 32_c, 16_c)),                  // sfbs
      smem<f32>(shape(128_c, 128_c)),                         // cs
      barrier(arrivals(4_c)),                                 // full: A, B and the scales landed
      barrier(arrivals(1_c), orders_tensor_core),             // scales_in: the copies into TMEM completed
      barrier(arrivals(1_c), orders_tensor_core),             // done: the MMA completed
      tmem<f32>(shape(128_c, 128_c)),                         // d
      tmem<u8>(shape(128_c, 128_c)),                          // sfa_t: 32 columns, the first 4 used
      tmem<u8>(shape(128_c, 128_c)),                          // sfb_t
      [](auto a, auto b, auto sfa, auto sfb, auto c, auto as, auto bs, auto sfas, auto sfbs, auto cs, auto full, auto scales_in, auto done, auto d,
         auto sfa_t, auto sfb_t) {
        auto producer = seq(copy_gmem_to_smem(a.block(0_c, 0_c), as, full), copy_gmem_to_smem(b.block(0_c, 0_c), bs, full),
                            copy_gmem_to_smem(sfa.block(0_c, 0_c, 0_c, 0_c), sfas, full), copy_gmem_to_smem(sfb.block(0_c, 0_c, 0_c, 0_c), sfbs, full));
        auto copier = seq(barrier_wait(full), tcgen05_copy_scales(sfas, sfa_t), tcgen05_copy_scales(sfbs, sfb_t), tcgen05_commit_arrive(scales_in));
        auto scales = [&] {
          if constexpr (WaitScales) return barrier_wait(scales_in);
          else return seq();
        };
        auto mma = seq(barrier_wait(full), scales(), tcgen05_mma(d, as, transpose(bs), block_scale(sfa_t, sfb_t), false), tcgen05_commit_arrive(done));
        auto epilogue = seq(barrier_wait(done), store(cs, async_load_tmem(d)), tmem_dealloc(d), tmem_dealloc(sfa_t), tmem_dealloc(sfb_t), commit_smem(),
                            copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
        return if_(thread_id() == 1_c, producer, if_(thread_id() == 2_c, copier, if_(thread_id() == 3_c, mma, epilogue)));
      }));
}

// MISTAKE: the MMA issuer waits for the SMEM operands (full) but not for the copies of the scales
// into TMEM, which another thread issued: its MMA may read the scale columns before (or while)
// the copies write them. (Issued by the MMA's own thread, a copy would need no wait: the two
// execute in issue order.)
// FIX: barrier_wait(scales_in), the copier's commit, before the tcgen05_mma.
ir::Kernel build_scales_not_waited(variant v) {
  if (v == variant::buggy) return mx_split_copy<false>("zoo_scales_not_waited");
  return mx_split_copy<true>("zoo_scales_not_waited");
}

const param_values mx_params{{"M", 128}, {"N", 128}, {"K", 128}};
void ref_mx(std::vector<host_tensor>& t) { examples::mx::reference(t, mx_params); }
void inputs_mx(std::vector<host_tensor>& t) { examples::mx::inputs(t, mx_params); }

// C (128 ctas, 128) = A (128, 64) * B^T for every CTA's block of rows.
void ref_lifetime(std::vector<host_tensor>& t) {
  const std::int64_t rows = t[2].shape[0];
  auto c = t[2].as<float>();
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < 128; ++j) {
      double s = 0;
      for (std::int64_t k = 0; k < 64; ++k) s += t[0].get(i % 128 * 64 + k) * t[1].get(j * 64 + k);
      c[i * 128 + j] = static_cast<float>(s);
    }
}

void ref_gemm(std::vector<host_tensor>& t) {  // a (128, K), b (N, K), c = a * b^T
  const std::int64_t K = t[0].shape[1], N = t[1].shape[0];
  auto c = t[2].as<float>();
  for (std::int64_t i = 0; i < 128; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (std::int64_t k = 0; k < K; ++k) s += t[0].get(i * K + k) * t[1].get(j * K + k);
      c[i * N + j] = static_cast<float>(s);
    }
}

}  // namespace

ir::Kernel refill_before_commit(variant v) { return build_refill_before_commit(v); }
ir::Kernel tmem_read_before_commit(variant v) { return build_tmem_read_before_commit(v); }
ir::Kernel mma_over_tmem_load(variant v) { return build_mma_over_tmem_load(v); }
ir::Kernel acc_ring_overrun(variant v) { return build_acc_ring_overrun(v); }
ir::Kernel commit_count(variant v) { return build_commit_count(v); }
ir::Kernel tmem_dealloc_pending(variant v) { return build_tmem_dealloc_pending(v); }
ir::Kernel tmem_use_after_dealloc(variant v) { return build_tmem_use_after_dealloc(v); }
ir::Kernel tmem_not_freed(variant v) { return build_tmem_not_freed(v); }
ir::Kernel multicast_refill_before_peer_commit(variant v) { return build_multicast_refill_before_peer_commit(v); }
ir::Kernel multicast_peer_commit_one_arrival() { return multicast_pair_gemm<true, 1>("zoo_multicast_peer_commit_one_arrival", 192); }
ir::Kernel tmem_a_store_race(variant v) { return build_tmem_a_store_race(v); }
ir::Kernel tmem_a_mma_before_store(variant v) { return build_tmem_a_mma_before_store(v); }
ir::Kernel scales_not_waited(variant v) { return build_scales_not_waited(v); }

std::vector<entry> const& tcgen05_all() {
  using interp::check;
  static const std::vector<entry> zoo{
      {"zoo_refill_before_commit", check::data_race, refill_before_commit, ref_gemm},
      {"zoo_tmem_read_before_commit", check::data_race, tmem_read_before_commit, ref_gemm},
      {"zoo_mma_over_tmem_load", check::data_race, mma_over_tmem_load, ref_gemm},
      {"zoo_acc_ring_overrun", check::data_race, acc_ring_overrun, ref_gemm},
      {"zoo_commit_count", check::deadlock, commit_count, ref_gemm},
      {"zoo_tmem_dealloc_pending", check::tcgen05_pending_at_dealloc, tmem_dealloc_pending, ref_gemm},
      {"zoo_tmem_use_after_dealloc", check::tmem_use_after_dealloc, tmem_use_after_dealloc, ref_lifetime},
      {"zoo_tmem_not_freed", check::tmem_not_freed, tmem_not_freed, ref_lifetime},
      {"zoo_multicast_refill_before_peer_commit", check::data_race, multicast_refill_before_peer_commit, ref_gemm_256},
      {"zoo_tmem_a_store_race", check::data_race, tmem_a_store_race, ref_gemm},
      {"zoo_tmem_a_mma_before_store", check::data_race, tmem_a_mma_before_store, ref_gemm},
      {"zoo_scales_not_waited", check::data_race, scales_not_waited, ref_mx, inputs_mx},
  };
  return zoo;
}

}  // namespace stagecraft::zoo
