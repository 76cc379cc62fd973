// expect: swizzle = 128 bytes with dtype f16 needs a trailing dimension of 64 elements \(swizzle\*8/bits\), but got 32
// 128-byte swizzle on f16 rows of only 32 elements (64 bytes): the rows must be as wide as the swizzle.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f16>("x", shape(256, 32)),
#ifdef STAGECRAFT_KO
                        smem<f16>(shape(64_c, 32_c), swizzle(128_c)),
#else
                        smem<f16>(shape(64_c, 32_c), swizzle(64_c)),
#endif
                        barrier(arrivals(1_c), count(1_c)), [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
