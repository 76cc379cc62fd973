// expect: tiling \(48, 64\) does not divide the trailing dimensions of the SMEM array \(128, 64\)
// An SMEM tiling whose row count (48) does not divide the array's 128 rows.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f16>("x", shape(512, 64)),
#ifdef STAGECRAFT_KO
                        smem<f16>(shape(128_c, 64_c), tiling(48_c, 64_c), swizzle(128_c)),
#else
                        smem<f16>(shape(128_c, 64_c), tiling(64_c, 64_c), swizzle(128_c)),
#endif
                        barrier(arrivals(1_c), count(1_c)), [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
