// expect: every tcgen05 MMA and commit of a kernel uses one CTA group \(PTX: one .cta_group per kernel\): this kernel mixes the pair ops \(tcgen05_mma_2cta, tcgen05_commit_arrive_2cta\) with single-CTA ones
// A pair MMA committed with the single-CTA commit, which would track nothing of the pair's work.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(2), threads(1_c), cluster(2_c), tmem<f32>(shape(128_c, 128_c)),
                         smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                         barrier(arrivals(1_c), orders_tensor_core), [](auto d, auto a, auto b, auto done) {
#ifdef STAGECRAFT_KO
                           auto commit = tcgen05_commit_arrive(done);
#else
                           auto commit = tcgen05_commit_arrive_2cta(done);
#endif
                           return seq(if_(cluster_idx(0_c) == 0_c, seq(tcgen05_mma_2cta(d, a, transpose(b), false), commit)), barrier_wait(done));
                         });
}
int main() { (void)lower(make()); }
