// expect: a cluster barrier, multicast copy or pair commit uses cluster axis 0, but the cluster of the kernel has 0 dimensions
// A cluster barrier in a kernel launched without cluster(...): there are no peer CTAs to arrive.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c),
#ifndef STAGECRAFT_KO
                        cluster(2_c),
#endif
                        cluster_barrier(collective_axes(0_c), arrivals(2_c)),
                        [](auto peers) { return seq(barrier_arrive(peers), barrier_wait(peers)); });
}
int main() { (void)lower(make()); }
