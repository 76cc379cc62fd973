// expect: a pair MMA \(tcgen05_mma_2cta / tcgen05_commit_arrive_2cta: cta_group::2\) runs on the two CTAs of a pair, cluster ranks 2p and 2p \+ 1 along axis 0, but the cluster of this kernel has extent 1 there
// A pair MMA in a kernel without a cluster: cta_group::2 needs the CTA pair a cluster of 2 provides.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto body = [](auto d, auto a, auto b, auto done) {
    return seq(if_(cluster_idx(0_c) == 0_c, tcgen05_mma_2cta(d, a, transpose(b), done, false)), barrier_wait(done));
  };
#ifdef STAGECRAFT_KO
  return kernel<sm_100a>("k", grid(2), threads(1_c), tmem<f32>(shape(128_c, 128_c)), smem<bf16>(shape(128_c, 64_c), swizzle(128_c)),
                         smem<bf16>(shape(64_c, 64_c), swizzle(128_c)), barrier(arrivals(1_c), orders_tensor_core), body);
#else
  return kernel<sm_100a>("k", grid(2), threads(1_c), cluster(2_c), tmem<f32>(shape(128_c, 128_c)),
                         smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                         barrier(arrivals(1_c), orders_tensor_core), body);
#endif
}
int main() { (void)lower(make()); }
