// expect: named_barrier_sync: the thread count must be a positive multiple of 32, but got 48
// A named barrier counting 48 threads: bar.sync counts 32 per warp, and no set of whole warps
// arrives with 48.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(warpgroup, warp, warp), [](auto...) {
#ifdef STAGECRAFT_KO
    return if_(thread_id() >= 1_c, named_barrier_sync(0_c, 48_c));
#else
    return if_(thread_id() >= 1_c, named_barrier_sync(0_c, 64_c));
#endif
  });
}
int main() { (void)lower(make()); }
