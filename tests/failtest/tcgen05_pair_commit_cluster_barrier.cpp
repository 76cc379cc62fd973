// expect: tcgen05_commit_arrive_2cta: a pair commit arrives on a barrier\(...\) of each CTA of the pair, not on a cluster_barrier
// The pair's commit multicasts to the same barrier in both CTAs already: a cluster barrier would count each arrival twice.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(2), threads(1_c), cluster(2_c), tmem<f32>(shape(128_c, 128_c)),
                         smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                         barrier(arrivals(1_c), orders_tensor_core), cluster_barrier(collective_axes(0_c), arrivals(1_c), orders_tensor_core),
                         [](auto d, auto a, auto b, auto done, auto cluster_done) {
#ifdef STAGECRAFT_KO
                           auto commit = tcgen05_commit_arrive_2cta(cluster_done);
#else
                           auto commit = seq(tcgen05_commit_arrive_2cta(done), barrier_arrive(cluster_done));
#endif
                           return seq(if_(cluster_idx(0_c) == 0_c, seq(tcgen05_mma_2cta(d, a, transpose(b), false), commit)), barrier_wait(done));
                         });
}
int main() { (void)lower(make()); }
