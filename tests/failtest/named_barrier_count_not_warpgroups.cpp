// expect: a named barrier counts 96 threads, but every role of this kernel is a warpgroup, which arrives with 128
// A named barrier counting 96 threads: bar.sync counts 32 per warp, but every warpgroup's four
// warps run the statement, so no set of warpgroups arrives with exactly 96.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(2_c), [](auto...) {
#ifdef STAGECRAFT_KO
    return named_barrier_sync(0_c, 96_c);
#else
    return named_barrier_sync(0_c, 256_c);
#endif
  });
}
int main() { (void)lower(make()); }
