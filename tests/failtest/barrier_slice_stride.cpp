// expect: Barrier does not support slice with .stride != 1.
// Taking every other barrier of a ring with a strided slice (barrier slices must be contiguous).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), barrier(arrivals(1_c), count(4_c)), [](auto bar) {
#ifdef STAGECRAFT_KO
    auto half = bar.slice(0_c, 2_c, 2_c);
#else
    auto half = bar.slice(0_c, 2_c);
#endif
    return for_(range(2_c), [&](auto i) { return seq(barrier_arrive(half[i]), barrier_wait(half[i])); });
  });
}
int main() { (void)lower(make()); }
