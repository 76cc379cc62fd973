// expect: copy_gmem_to_smem: TMA needs the SMEM view to start on a 1024-byte boundary \(a swizzle pattern spans 8 rows of the swizzle width: a view may not start inside one\), but views \(4, 64\) of this array start only on 512-byte boundaries
// A ring of 4-row stages of a 128-byte swizzled array: every other stage starts in the middle of
// a 1024-byte swizzle pattern.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  auto ring = smem<f16>(shape(2_c, 4_c, 64_c), swizzle(128_c));
#else
  auto ring = smem<f16>(shape(2_c, 8_c, 64_c), swizzle(128_c));
#endif
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f16>("x", shape(512, 64)), ring, barrier(arrivals(1_c), count(2_c)),
                        [](auto x, auto buf, auto full) {
                          return for_(range(2_c), [&](auto j) {
                            auto s = stage<2>(j);
                            return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf[s], full[s]), barrier_wait(full[s]));
                          });
                        });
}
int main() { (void)lower(make()); }
