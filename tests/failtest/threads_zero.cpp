// expect: num_threads must be between 1 and 8 warpgroups \(128 to 1024 CUDA threads\), but got 0
// The lower thread limit: one warpgroup compiles, none does not (threads_too_many has the upper one).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4),
#ifdef STAGECRAFT_KO
                        threads(0_c),
#else
                        threads(1_c),
#endif
                        barrier(arrivals(1_c)), [](auto ready) { return seq(barrier_arrive(ready), barrier_wait(ready)); });
}
int main() { (void)lower(make()); }
