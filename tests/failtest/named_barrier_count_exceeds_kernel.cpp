// expect: a named barrier counts 384 threads, but the kernel has num_threads = 2 warpgroups \(256 threads\)
// A named barrier waiting for three warpgroups in a kernel of two: its phase could never complete.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(2_c), [](auto...) {
#ifdef STAGECRAFT_KO
    return named_barrier_sync(1_c, 384_c);
#else
    return named_barrier_sync(1_c, 256_c);
#endif
  });
}
int main() { (void)lower(make()); }
