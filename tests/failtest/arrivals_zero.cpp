// expect: Num arrivals must be at least 1, but got 0
// A barrier declared with zero expected arrivals (its phase could never be waited for meaningfully).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(2_c),
#ifdef STAGECRAFT_KO
                        barrier(arrivals(0_c), count(2_c)),
#else
                        barrier(arrivals(2_c), count(2_c)),
#endif
                        [](auto ready) {
                          return for_(range(2_c), [&](auto s) { return seq(barrier_arrive(ready[s]), barrier_wait(ready[s])); });
                        });
}
int main() { (void)lower(make()); }
