// expect: Barrier can only be indexed with integers or slices
// A barrier indexed with a floating-point number (a stage computed as j / 2.0 instead of j / 2_c).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), barrier(arrivals(1_c), count(2_c)), [](auto bar) {
#ifdef STAGECRAFT_KO
    auto b = bar[1.5f];
#else
    auto b = bar[1_c];
#endif
    return seq(barrier_arrive(b), barrier_wait(b));
  });
}
int main() { (void)lower(make()); }
