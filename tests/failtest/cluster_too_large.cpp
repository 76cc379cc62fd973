// expect: a cluster of 16 CTAs exceeds the limit of 8 \(up to 16 with cluster_nonportable\(\.\.\.\)\)
// A 16-CTA cluster requested with the portable cluster(...), which allows at most 8.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(32), threads(1_c),
#ifdef STAGECRAFT_KO
                        cluster(16_c),
#else
                        cluster_nonportable(16_c),
#endif
                        cluster_barrier(collective_axes(0_c), arrivals(16_c)),
                        [](auto peers) { return seq(barrier_arrive(peers), barrier_wait(peers)); });
}
int main() { (void)lower(make()); }
