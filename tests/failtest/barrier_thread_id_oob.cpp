// expect: Barrier offset is out of bounds: the kernel has num_threads = 4 warpgroups, but an index derived from thread_id\(\) stays in bounds only for up to 2
// One barrier per warpgroup, but the kernel launches more warpgroups than there are barriers.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4),
#ifdef STAGECRAFT_KO
                        threads(4_c),
#else
                        threads(2_c),
#endif
                        barrier(arrivals(1_c), count(2_c)),
                        [](auto ready) { return seq(barrier_arrive(ready[thread_id()]), barrier_wait(ready[thread_id()])); });
}
int main() { (void)lower(make()); }
