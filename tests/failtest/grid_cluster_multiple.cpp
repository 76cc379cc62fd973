// expect: grid dimension 0 \(6\) must be a multiple of the cluster dimension \(4\)
// A static grid that is not a whole number of clusters: 8 CTAs in clusters of 4 compile, 6 do
// not (a run-time grid gets the same words from the verifier, as a usage error).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  auto g = grid(6_c);
#else
  auto g = grid(8_c);
#endif
  return kernel<sm_90a>("k", g, threads(1_c), cluster(4_c), cluster_barrier(collective_axes(0_c), arrivals(1_c)),
                        [](auto peers) { return seq(barrier_arrive(peers), barrier_wait(peers)); });
}
int main() { (void)lower(make()); }
