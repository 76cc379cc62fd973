// expect: Cluster barriers are not arrays
// Loading the cluster barrier that signals the peer's data instead of the data buffer itself.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), cluster(2_c), smem<f32>(shape(128_c, 64_c)),
                        cluster_barrier(collective_axes(0_c), arrivals(2_c)), [](auto buf, auto peers) {
#ifdef STAGECRAFT_KO
                          auto t = load(peers);
#else
                          auto t = load(buf);
#endif
                          return seq(barrier_arrive(peers), barrier_wait(peers), store(buf, t * 2.0f));
                        });
}
int main() { (void)lower(make()); }
