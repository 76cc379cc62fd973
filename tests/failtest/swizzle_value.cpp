// expect: swizzle must be 32, 64 or 128 bytes, but got 96
// A swizzle width that TMA does not support (only 32, 64 and 128-byte patterns exist).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f16>("x", shape(256, 64)),
#ifdef STAGECRAFT_KO
                        smem<f16>(shape(64_c, 64_c), swizzle(96_c)),
#else
                        smem<f16>(shape(64_c, 64_c), swizzle(128_c)),
#endif
                        barrier(arrivals(1_c), count(1_c)), [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
