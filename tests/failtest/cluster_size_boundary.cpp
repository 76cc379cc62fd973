// expect: a cluster of 9 CTAs exceeds the limit of 8 \(up to 16 with cluster_nonportable\(\.\.\.\)\)
// The portable cluster limit to the CTA: 2 x 4 = 8 CTAs compile, 3 x 3 = 9 do not.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(6, 12), threads(1_c),
#ifdef STAGECRAFT_KO
                        cluster(3_c, 3_c),
#else
                        cluster(2_c, 4_c),
#endif
                        cluster_barrier(collective_axes(0_c, 1_c), arrivals(1_c)),
                        [](auto peers) { return seq(barrier_arrive(peers), barrier_wait(peers)); });
}
int main() { (void)lower(make()); }
