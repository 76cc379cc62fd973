// expect: a cluster barrier, multicast copy or pair commit uses cluster axis 1, but the cluster of the kernel has 1 dimensions
// Other pairs to commit to need a cluster axis beyond the pair's: cluster(2_c, P), not cluster(2_c).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
#define PAIRS cluster(2_c)
#define GRID grid(2)
#else
#define PAIRS cluster(2_c, 2_c)
#define GRID grid(2, 2)
#endif

auto make() {
  return kernel<sm_100a>("k", GRID, threads(1_c), PAIRS, tmem<f32>(shape(128_c, 128_c)),
                         smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                         barrier(arrivals(2_c), orders_tensor_core), barrier(arrivals(1_c), orders_tensor_core),
                         [](auto d, auto a, auto b, auto empty, auto done) {
                           return seq(if_(cluster_idx(0_c) == 0_c, seq(tcgen05_mma_2cta(d, a, transpose(b), false),
                                                                       tcgen05_commit_arrive_2cta(empty, collective_axes(1_c)),
                                                                       tcgen05_commit_arrive_2cta(done))),
                                      barrier_wait(done), barrier_wait(empty));
                         });
}
int main() { (void)lower(make()); }
