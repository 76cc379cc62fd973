// expect: Attempting to operate on barrier without indexing, but num_barriers = 3
// A 2x3 barrier array indexed along the first dimension only: bar[i] is still a row of 3 barriers.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), barrier(arrivals(1_c), count(2_c, 3_c)), [](auto bar) {
    return for_(range(2_c), [&](auto i) {
#ifdef STAGECRAFT_KO
      return seq(barrier_arrive(bar[i][0_c]), barrier_wait(bar[i]));
#else
      return seq(barrier_arrive(bar[i][0_c]), barrier_wait(bar[i][0_c]));
#endif
    });
  });
}
int main() { (void)lower(make()); }
