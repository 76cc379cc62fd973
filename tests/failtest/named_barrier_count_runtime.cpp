// expect: named barrier: the thread count must be a compile-time constant \(256_c, not 256\)
// A thread count given as a run-time int: the rules on it (multiple of 128, the kernel's
// threads) are compile-time rules, so it must be a constant.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(2_c), [](auto...) {
#ifdef STAGECRAFT_KO
    return named_barrier_sync(1_c, 256);
#else
    return named_barrier_sync(1_c, 256_c);
#endif
  });
}
int main() { (void)lower(make()); }
