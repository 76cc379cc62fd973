// expect: copy_gmem_to_smem\(\.\.\., pair_leader\) completes on its barrier in the even CTA of the CTA pair, cluster ranks 2p and 2p \+ 1 along axis 0, but the cluster of this kernel has extent 1 there
// A TMA load to the pair leader's barrier in a kernel without a pair: .cta_group::2 needs the
// two CTAs a cluster of 2 along axis 0 provides.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto body = [](auto x, auto xs, auto full) {
    return seq(copy_gmem_to_smem(x.block(program_id(0_c), 0_c), xs, full, pair_leader), if_(cluster_idx(0_c) == 0_c, barrier_wait(full)));
  };
#ifdef STAGECRAFT_KO
  return kernel<sm_100a>("k", grid(2), threads(1_c), gmem<bf16>("x", shape(256_c, 64_c)), smem<bf16>(shape(128_c, 64_c), swizzle(128_c)),
                         barrier(arrivals(2_c)), body);
#else
  return kernel<sm_100a>("k", grid(2), threads(1_c), cluster(2_c), gmem<bf16>("x", shape(256_c, 64_c)),
                         smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), barrier(arrivals(2_c)), body);
#endif
}
int main() { (void)lower(make()); }
