// expect: num_threads must be between 1 and 8 warpgroups \(128 to 1024 CUDA threads\), but got 9
// One producer plus 8 consumer warpgroups: 9 x 128 threads exceed the 1024 threads of a CTA.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4),
#ifdef STAGECRAFT_KO
                        threads(9_c),
#else
                        threads(8_c),
#endif
                        barrier(arrivals(1_c), count(8_c)),
                        [](auto ready) { return seq(barrier_arrive(ready[thread_id()]), barrier_wait(ready[thread_id()])); });
}
int main() { (void)lower(make()); }
