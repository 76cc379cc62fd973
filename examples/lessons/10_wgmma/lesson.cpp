// Lesson 10: wgmma pipelines.
//
// C = A * B^T on a 64 x 64 tile, K = 384 in six 64-wide steps. Warpgroup 0 (the producer) loads
// A and B K slices with TMA into a two-stage ring; warpgroup 1 (the consumer) waits for a stage,
// issues one wgmma over it (four k16 instructions on the tensor core, asynchronous), closes the
// group with wgmma_commit and keeps it in flight: wgmma_wait(1) returns once every group but the
// newest is done, i.e. the *previous* step's. Only then is that previous stage free, and the
// consumer releases it on empty[]. After the loop wgmma_wait(0) drains the last group; only then
// may the accumulator be read.
//
// Three facts carry the lesson: a wgmma reads its SMEM operands and writes its registers some
// time after it is issued; wgmma_wait(n) waits only for committed groups; and the stage a group
// reads is busy until a wait covers that group.
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

#include "../../gemm_reference.hpp"

namespace stagecraft::lessons {
namespace {

enum class mistake { none, acc_before_wait, release_under_wait1, no_commit };

template <mistake Bug>
ir::Kernel wgmma_pipeline() {
  const std::int64_t K = 384, steps = K / 64;
  return lower(kernel<sm_90a>(
      "lesson10_wgmma", grid(1), threads(2_c),
      gmem<bf16>("a", shape(64_c, K)),                     // (m, k)
      gmem<bf16>("b", shape(64_c, K)),                     // (n, k): C = A * B^T
      gmem<f32>("c", shape(64_c, 64_c)),                   // (m, n)
      smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)),  // as: (stage, m, k), K-major
      smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)),  // bs: (stage, n, k), K-major
      smem<f32>(shape(64_c, 64_c)),                        // cs: the epilogue's staging tile
      barrier(arrivals(2_c), count(2_c)),                  // full[stage]: A and B landed
      barrier(arrivals(1_c), count(2_c)),                  // empty[stage]: the wgmma reading it is done
      accumulator<f32>(shape(64_c, 64_c)),                 // acc: (m, n) in the consumer's registers
      [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto empty, auto acc) {
        auto producer = for_(range(steps), [&](auto j) {
          auto s = stage<2>(j);
          return seq(if_(j >= 2_c, barrier_wait(empty[s])), copy_gmem_to_smem(a.block(0_c, j), as[s], full[s]),
                     copy_gmem_to_smem(b.block(0_c, j), bs[s], full[s]));
        });
        auto k_step = for_(range(steps), [&](auto j) {
          auto s = stage<2>(j);
          auto issue = [&] {
            if constexpr (Bug == mistake::no_commit) return seq(barrier_wait(full[s]), wgmma(acc, as[s], transpose(bs[s])));  // MISTAKE: no commit
            else return seq(barrier_wait(full[s]), wgmma(acc, as[s], transpose(bs[s])), wgmma_commit());
          }();
          if constexpr (Bug == mistake::release_under_wait1)
            return seq(issue, wgmma_wait(1_c), barrier_arrive(empty[s]));  // MISTAKE: this step's group may still read stage s
          else
            return seq(issue, wgmma_wait(1_c), if_(j > 0_c, barrier_arrive(empty[s.advance(1_c)])));  // step j - 1's stage
        });
        auto epilogue = seq(store(cs, load(acc)), commit_smem(), copy_smem_to_gmem(cs, c.block(0_c, 0_c)), commit_smem_to_gmem_group(),
                            wait_smem_to_gmem(0_c));
        auto drain = wgmma_wait(0_c);  // the last group, and with it every wgmma, is done
        auto consumer = [&] {
          if constexpr (Bug == mistake::acc_before_wait) return seq(store(acc, 0.0f), k_step, epilogue, drain);  // MISTAKE: reads first
          else return seq(store(acc, 0.0f), k_step, drain, epilogue);
        }();
        return if_(thread_id() == 0_c, producer, consumer);
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 10,
    .slug = "wgmma",
    .title = "wgmma pipelines: groups, commits and waits",
    .summary = "A wgmma runs after it is issued. wgmma_commit closes a group, wgmma_wait(n) waits until at most n "
               "committed groups are in flight; a stage is free, and the accumulator readable, only once a wait covers "
               "the group that uses it.",
    .build = wgmma_pipeline<mistake::none>,
    .reference = examples::gemm_abt_reference_of_shapes,
    .twins = {{.name = "acc_before_wait",
               .mistake = "the epilogue reads the accumulator before the final wgmma_wait(0)",
               .expect = "data-race",
               .policy = "lazy",
               .hardware = "the last group may still be adding into the registers the epilogue reads: C misses the last "
                           "K slice (or part of it) in some elements, depending on how far the tensor core got",
               .fix = "wgmma_wait(0) after the loop, before load(acc)",
               .build = wgmma_pipeline<mistake::acc_before_wait>},
              {.name = "release_under_wait1",
               .mistake = "after wgmma_wait(1) the consumer releases the stage it has just issued the wgmma for",
               .expect = "data-race",
               .policy = "lazy",
               .hardware = "wgmma_wait(1) leaves this step's group running, still reading A and B from the stage; the "
                           "producer's refill lands under it and the tensor core multiplies the next K slice's values "
                           "into some products: wrong C, only under some timings",
               .fix = "after wgmma_wait(1) release the previous step's stage (empty[s - 1]), and the last one after "
                      "wgmma_wait(0)",
               .build = wgmma_pipeline<mistake::release_under_wait1>},
              {.name = "no_commit",
               .mistake = "the consumer issues each wgmma without wgmma_commit",
               .expect = "data-race",
               .policy = "lazy",
               .hardware = "wgmma_wait(n) counts committed groups only, so it returns at once: stages are released and "
                           "the accumulator read while every wgmma may still be running (a kernel that exits with them "
                           "uncommitted is undefined behaviour)",
               .fix = "wgmma_commit() after each step's wgmma",
               .build = wgmma_pipeline<mistake::no_commit>}},
});

}  // namespace
}  // namespace stagecraft::lessons
