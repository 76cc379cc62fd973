// expect: copy_gmem_to_smem: TMA needs the SMEM view to start on a 1024-byte boundary \(a swizzle pattern spans 8 rows of the swizzle width: a view may not start inside one\), but views \(32, 64\) of this array start only on 512-byte boundaries
// Rows 4..35 of a 128-byte swizzled stage start inside a swizzle pattern; rows 8..39 do not.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f16>("x", shape(64_c, 64_c)), smem<f16>(shape(64_c, 64_c), swizzle(128_c)),
                        barrier(arrivals(1_c), count(1_c)), [](auto x, auto buf, auto full) {
#ifdef STAGECRAFT_KO
                          auto rows = slice<0>(buf, 4_c, 32_c);
#else
                          auto rows = slice<0>(buf, 8_c, 32_c);
#endif
                          return seq(copy_gmem_to_smem(x.block(0_c, 0_c), rows, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
