// Lesson 06: SMEM -> GMEM stores and bulk groups.
//
// A TMA store reads its SMEM stage some time after it is issued. Each step's store is closed
// into a bulk group (commit_smem_to_gmem_group); wait_smem_to_gmem(n, read_only) waits until at
// most n groups are still reading their SMEM. With K output stages, the stage about to be
// rewritten was last stored K steps ago, so at most K-1 newer groups may still be pending. At
// exit, every store must have finished (wait_smem_to_gmem(0)): a CTA's SMEM is gone when it ends.
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::lessons {
namespace {

enum class mistake { none, wait_too_lenient, no_final_wait };

template <mistake Bug>
ir::Kernel bulk_groups() {
  constexpr long long K = 2;
  constexpr long long pending = Bug == mistake::wait_too_lenient ? K : K - 1;  // MISTAKE: K
  const std::int64_t M = 256, N = 512, steps = N / 64;
  return lower(kernel<sm_90a>(
      "lesson06_bulk_groups", grid(M / 128), threads(1_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)),  // (row, col)
      smem<f32>(shape(int_c<K>, 128_c, 64_c)),                    // out: (stage, row, col)
      [&](auto x, auto y, auto out) {
        auto row = program_id();
        auto loop = for_(range(steps), [&](auto j) {
          auto s = stage<K>(j);
          return seq(wait_smem_to_gmem(int_c<pending>, read_only),
                     store(out[s], load(x.tile(shape(128_c, 64_c), row, j)) - 1.0f),
                     commit_smem(),
                     copy_smem_to_gmem(out[s], y.block(row, j)),
                     commit_smem_to_gmem_group());
        });
        if constexpr (Bug == mistake::no_final_wait) return loop;  // MISTAKE: exits with stores in flight
        else return seq(loop, wait_smem_to_gmem(0_c));
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 6,
    .slug = "bulk_groups",
    .title = "SMEM to GMEM: bulk groups",
    .summary = "TMA stores read SMEM asynchronously; bulk groups and wait_smem_to_gmem(n, read_only) say when a "
               "stage may be rewritten, and wait_smem_to_gmem(0) when the kernel may exit.",
    .build = bulk_groups<mistake::none>,
    .reference =
        [](std::vector<host_tensor>& t) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] - 1.0f;
        },
    .twins = {{.name = "wait_too_lenient",
               .mistake = "wait_smem_to_gmem(K) instead of K-1 before rewriting a stage",
               .expect = "data-race",
               .policy = "lazy",
               .hardware = "the store issued K steps ago may still be reading the stage while the generic stores "
                           "overwrite it: y's block gets a mix of two steps' values",
               .fix = "wait_smem_to_gmem(K - 1, read_only): the stage's last store is done reading",
               .build = bulk_groups<mistake::wait_too_lenient>},
              {.name = "no_final_wait",
               .mistake = "the kernel ends without wait_smem_to_gmem(0)",
               .expect = "store-pending-at-exit",
               .policy = "lazy",
               .hardware = "the CTA exits while its last stores still read SMEM that the next CTA on the SM may "
                           "already be writing: the last blocks of y are sometimes wrong",
               .fix = "wait_smem_to_gmem(0_c) after the loop",
               .build = bulk_groups<mistake::no_final_wait>}},
});

}  // namespace
}  // namespace stagecraft::lessons
