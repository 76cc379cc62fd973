// Lesson 11: tcgen05 and TMEM (Blackwell).
//
// C = A * B^T on a 128 x 64 tile, K = 256 in four steps, by three warpgroups with one job each.
// Warpgroup 0 loads A (128, 64) and B (64, 64) K slices with TMA into one stage. Warpgroup 1 is
// the single MMA issuer: it waits for the stage, issues tcgen05_mma into the accumulator D, which
// lives in tensor memory (TMEM), not in registers, and frees the stage with
// tcgen05_commit_arrive(empty): a commit arrives on its barrier only once every MMA issued
// before it has completed. After the last step one more commit arrives on `done`. Warpgroup 2,
// the epilogue, waits on `done`, reads D out of TMEM (async_load_tmem), stores C, and frees TMEM
// with tmem_dealloc.
//
// On Blackwell nothing waits for an MMA but a commit: there is no wgmma_wait. A plain
// barrier_arrive after tcgen05_mma says "issued", not "done".
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

#include "../../gemm_reference.hpp"

namespace stagecraft::lessons {
namespace {

enum class mistake { none, read_before_commit, dealloc_pending };

template <mistake Bug>
ir::Kernel tcgen05_pipeline() {
  const std::int64_t K = 256, steps = K / 64;
  return lower(kernel<sm_100a>(
      "lesson11_tcgen05", grid(1), threads(3_c),
      gmem<bf16>("a", shape(128_c, K)),                // (m, k)
      gmem<bf16>("b", shape(64_c, K)),                 // (n, k): C = A * B^T
      gmem<f32>("c", shape(128_c, 64_c)),              // (m, n)
      smem<bf16>(shape(128_c, 64_c), swizzle(128_c)),  // as: (m, k), K-major
      smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),   // bs: (n, k), K-major
      smem<f32>(shape(128_c, 64_c)),                   // cs: the epilogue's staging tile
      barrier(arrivals(2_c)),                          // full: A and B landed
      barrier(arrivals(1_c), orders_tensor_core),      // empty: the MMA reading the stage completed
      barrier(arrivals(1_c), orders_tensor_core),      // done: every MMA into D completed
      tmem<f32>(shape(128_c, 64_c)),                   // d: (m, n) in tensor memory
      [&](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto empty, auto done, auto d) {
        auto producer = for_(range(steps), [&](auto j) {
          return seq(if_(j > 0_c, barrier_wait(empty)), copy_gmem_to_smem(a.block(0_c, j), as, full), copy_gmem_to_smem(b.block(0_c, j), bs, full));
        });
        auto k_loop = for_(range(steps), [&](auto j) {
          return seq(barrier_wait(full), tcgen05_mma(d, as, transpose(bs), j > 0_c),  // j = 0 overwrites D, later steps add
                     tcgen05_commit_arrive(empty));                                     // the stage is free once this MMA is done
        });
        auto mma = [&] {
          if constexpr (Bug == mistake::read_before_commit) return seq(k_loop, barrier_arrive(done));  // MISTAKE: "issued", not "done"
          else if constexpr (Bug == mistake::dealloc_pending) return seq(k_loop, tcgen05_commit_arrive(done), tmem_dealloc(d));  // MISTAKE
          else return seq(k_loop, tcgen05_commit_arrive(done));
        }();
        auto epilogue = seq(barrier_wait(done), store(cs, async_load_tmem(d)), commit_smem(), copy_smem_to_gmem(cs, c.block(0_c, 0_c)),
                            commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
        if constexpr (Bug == mistake::dealloc_pending) return if_(thread_id() == 0_c, producer, if_(thread_id() == 1_c, mma, epilogue));
        else return if_(thread_id() == 0_c, producer, if_(thread_id() == 1_c, mma, seq(epilogue, tmem_dealloc(d))));
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 11,
    .slug = "tcgen05",
    .title = "tcgen05 and TMEM: one issuer, commits, dealloc",
    .summary = "One thread issues tcgen05 MMAs into tensor memory; only tcgen05_commit_arrive tells anyone they are done. "
               "Read TMEM after a commit's barrier, free a stage after the commit of the MMA that read it, and free TMEM "
               "only after its last reader.",
    .build = tcgen05_pipeline<mistake::none>,
    .reference = examples::gemm_abt_reference_of_shapes,
    .twins = {{.name = "read_before_commit",
               .mistake = "the MMA warpgroup signals done with barrier_arrive instead of tcgen05_commit_arrive",
               .expect = "data-race",
               .policy = "lazy",
               .hardware = "the arrival means the MMAs were issued, not finished: the epilogue reads TMEM while the tensor "
                           "core still writes it, and C misses the last K steps in some elements",
               .fix = "tcgen05_commit_arrive(done): it arrives once every MMA issued before it has completed",
               .build = tcgen05_pipeline<mistake::read_before_commit>},
              {.name = "dealloc_pending",
               .mistake = "the MMA warpgroup frees D (tmem_dealloc) right after its last commit",
               .expect = "tcgen05-pending-at-dealloc",
               .policy = "lazy",
               .hardware = "the commit only promises a later arrival: the MMAs may still be writing D when its columns are "
                           "freed, and whatever allocates them next (another CTA on the SM) gets its TMEM overwritten, "
                           "while the epilogue reads columns that are no longer this CTA's",
               .fix = "free TMEM in the epilogue, after its last async_load_tmem of D",
               .build = tcgen05_pipeline<mistake::dealloc_pending>}},
});

}  // namespace
}  // namespace stagecraft::lessons
