// expect: Attempting to operate on barrier without indexing, but num_barriers = 2
// A barrier made double-buffered (count(2_c)) but still waited on unindexed, as when it was count(1_c).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c),
#ifdef STAGECRAFT_KO
                        barrier(arrivals(1_c), count(2_c)),
#else
                        barrier(arrivals(1_c), count(1_c)),
#endif
                        [](auto done) { return seq(barrier_arrive(done[0_c]), barrier_wait(done)); });
}
int main() { (void)lower(make()); }
