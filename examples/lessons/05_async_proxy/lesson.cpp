// Lesson 05: the async proxy and commit_smem().
//
// Ordinary loads and stores go through the "generic proxy"; TMA (and the tensor cores) read and
// write SMEM through the "async proxy". Program order alone does not make a generic store
// visible to the async proxy: commit_smem() (fence.proxy.async) does. So between writing a
// stage with ordinary stores and handing it to a TMA store, a kernel commits.
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::lessons {
namespace {

template <bool Bug>
ir::Kernel async_proxy() {
  const std::int64_t M = 256, N = 256, steps = N / 64;
  return lower(kernel<sm_90a>(
      "lesson05_async_proxy", grid(M / 128), threads(1_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)),  // (row, col)
      smem<f32>(shape(128_c, 64_c)),                              // out: written generically, stored by TMA
      [&](auto x, auto y, auto out) {
        auto row = program_id();
        return seq(for_(range(steps), [&](auto j) {
                     auto compute = seq(wait_smem_to_gmem(0_c, read_only),  // the last store has read `out`
                                        store(out, load(x.tile(shape(128_c, 64_c), row, j)) * 0.5f));
                     auto hand_over = seq(copy_smem_to_gmem(out, y.block(row, j)), commit_smem_to_gmem_group());
                     if constexpr (Bug) return seq(compute, hand_over);  // MISTAKE: no commit_smem()
                     else return seq(compute, commit_smem(), hand_over);
                   }),
                   wait_smem_to_gmem(0_c));
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 5,
    .slug = "async_proxy",
    .title = "The async proxy and commit_smem",
    .summary = "Generic SMEM writes become visible to TMA and the tensor cores only after commit_smem() "
               "(fence.proxy.async); program order is not enough.",
    .build = async_proxy<false>,
    .reference =
        [](std::vector<host_tensor>& t) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * 0.5f;
        },
    .twins = {{.name = "no_commit",
               .mistake = "the TMA store is issued right after the generic stores, without commit_smem()",
               .expect = "missing-fence",
               .policy = "eager",
               .hardware = "the TMA engine may read the stage before the generic stores are visible to it: y gets "
                           "some of the previous step's values, rarely and unreproducibly (it works in most runs)",
               .fix = "commit_smem() between the last generic store and copy_smem_to_gmem",
               .build = async_proxy<true>}},
});

}  // namespace
}  // namespace stagecraft::lessons
