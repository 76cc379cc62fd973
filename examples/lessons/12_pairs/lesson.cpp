// Lesson 12: 2-CTA pairs and multicast commits (Blackwell).
//
// C (256, 128) = A (256, K) * B (128, K)^T on a cluster of (2, 2): two CTA pairs side by side.
// A pair (the two CTAs along cluster axis 0) computes a 256 x 64 tile with one
// tcgen05_mma_2cta: the even CTA issues it, each CTA holds its half of A (128 rows) and of B
// (32 rows) at the same SMEM offsets, and each CTA's TMEM receives its 128 rows of D. Both pairs
// need the same A rows, so each CTA loads half of its A stage and the TMA multicasts it into the
// CTA at its place in the other pair (collective_axes(1_c)): a CTA's stage fills from two CTAs'
// loads, and its refill writes into the other pair's SMEM too.
//
// Roles, one warpgroup each, in every CTA: the producer (TMA into this CTA's stage), the relay
// (waits for its stage, arrives on pair_full, a cluster barrier of the pair; the even CTA's relay
// then issues the pair's MMA and commits), the epilogue (waits for done, reads its rows of D).
// The stage may be refilled only when *both* pairs' MMAs have read it: each pair's commit
// arrives on empty in all four CTAs, and empty counts two arrivals.
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

#include "../../gemm_reference.hpp"

namespace stagecraft::lessons {
namespace {

enum class mistake { none, own_pair_commit, odd_issues };

template <mistake Bug>
ir::Kernel pairs() {
  const std::int64_t K = 192, steps = K / 64;
  constexpr long long per_stage = Bug == mistake::own_pair_commit ? 1 : 2;  // empty: one arrival per pair whose MMA reads the stage
  return lower(kernel<sm_100a>(
      "lesson12_pairs", grid(2_c, 2_c), threads(3_c), cluster(2_c, 2_c),
      gmem<bf16>("a", shape(256_c, K)),                      // (m, k)
      gmem<bf16>("b", shape(128_c, K)),                      // (n, k): C = A * B^T
      gmem<f32>("c", shape(256_c, 128_c)),                   // (m, n)
      smem<bf16>(shape(128_c, 64_c), swizzle(128_c)),        // as: this CTA's 128 A rows, 64 of them from the other pair
      smem<bf16>(shape(32_c, 64_c), swizzle(128_c)),         // bs: this CTA's half of its pair's 64 B rows
      smem<f32>(shape(128_c, 64_c)),                         // cs: the epilogue's staging tile
      barrier(arrivals(2_c)),                                // full: A (both shares) and B landed here
      cluster_barrier(collective_axes(0_c), arrivals(1_c)),  // pair_full: both CTAs of the pair are full
      barrier(arrivals(int_c<per_stage>), orders_tensor_core),  // empty: the MMAs reading this CTA's stage completed
      barrier(arrivals(1_c), orders_tensor_core),            // done: this CTA's rows of D are complete
      tmem<f32>(shape(128_c, 64_c)),                         // d: this CTA's 128 rows of the pair's D
      [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto pair_full, auto empty, auto done, auto d) {
        auto m = program_id(0_c);
        auto n = program_id(1_c);
        auto half = cluster_idx(0_c);  // 0: the even CTA of the pair, which issues its MMAs
        auto producer = for_(range(steps), [&](auto j) {
          return seq(if_(j > 0_c, barrier_wait(empty)), copy_gmem_to_smem(a.block(m, j), as, full, collective_axes(1_c)),
                     copy_gmem_to_smem(b.block(n * 2_c + half, j), bs, full));
        });
        auto release = [&] {
          if constexpr (Bug == mistake::own_pair_commit) return tcgen05_commit_arrive_2cta(empty);  // MISTAKE: only this pair's CTAs
          else return tcgen05_commit_arrive_2cta(empty, collective_axes(1_c));                    // all four CTAs
        }();
        constexpr long long issuer = Bug == mistake::odd_issues ? 1 : 0;  // MISTAKE (odd_issues): the odd CTA issues
        auto relay = for_(range(steps), [&](auto j) {
          return seq(barrier_wait(full), barrier_arrive(pair_full),
                     if_(half == int_c<issuer>, seq(barrier_wait(pair_full), tcgen05_mma_2cta(d, as, transpose(bs), j > 0_c), release)));
        });
        auto mma = seq(relay, if_(half == int_c<issuer>, tcgen05_commit_arrive_2cta(done)));
        auto epilogue = seq(barrier_wait(done), store(cs, async_load_tmem(d)), tmem_dealloc(d), commit_smem(), copy_smem_to_gmem(cs, c.block(m, n)),
                            commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
        return if_(thread_id() == 0_c, producer, if_(thread_id() == 1_c, mma, epilogue));
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 12,
    .slug = "pairs",
    .title = "2-CTA pairs and multicast commits",
    .summary = "A CTA pair shares one MMA that the even CTA issues; a multicast load writes into other CTAs' SMEM, so a "
               "stage is free only when every MMA reading any copy of it has committed: the commit must reach every "
               "CTA whose load refills it.",
    .build = pairs<mistake::none>,
    .reference = examples::gemm_abt_reference_of_shapes,
    .twins = {{.name = "own_pair_commit",
               .mistake = "each pair's commit frees the stage only in its own two CTAs, and empty counts one arrival",
               .expect = "data-race",
               .policy = "lazy",
               .hardware = "a CTA refills as soon as its own pair's MMA is done, but half of that refill is multicast "
                           "into the other pair's stage, whose MMA may still be reading it: that pair multiplies the next "
                           "K slice's A rows into some products, only under some timings",
               .fix = "tcgen05_commit_arrive_2cta(empty, collective_axes(1_c)) arrives in all four CTAs, and empty "
                      "counts one arrival per pair (arrivals(2_c))",
               .build = pairs<mistake::own_pair_commit>},
              {.name = "odd_issues",
               .mistake = "the odd CTA of each pair issues the pair's MMAs",
               .expect = "tcgen05-pair-issuer",
               .policy = "eager",
               .hardware = "a cta_group::2 MMA must be issued by the even CTA of its pair (its rank with the low bit "
                           "clear): from the odd one the instruction is undefined, and the peer's operands and TMEM are "
                           "addressed from the wrong CTA",
               .fix = "issue from the even CTA (cluster_idx(0) == 0), as its SMEM holds the first halves",
               .build = pairs<mistake::odd_issues>}},
});

}  // namespace
}  // namespace stagecraft::lessons
