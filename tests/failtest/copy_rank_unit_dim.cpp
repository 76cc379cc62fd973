// expect: copy_gmem_to_smem: the GMEM array has shape \(2, 64, 64\) but the SMEM view has shape \(64, 64\): a block needs one extent per dimension \(give the SMEM array a unit dimension for each extra dimension of the block, e.g. shape\(..., 1_c, 64_c, 64_c\)
// A (1, 64, 64) block of a 3-D array (a batch of matrices) copied into a 2-D stage: the message says
// how to write the stage. The twin declares the unit dimension and copies into the (1, 64, 64) view.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  auto stages = smem<f32>(shape(2_c, 64_c, 64_c));
#else
  auto stages = smem<f32>(shape(2_c, 1_c, 64_c, 64_c));
#endif
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", shape(2_c, 64_c, 64_c)), stages, barrier(arrivals(1_c)),
                        [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(1_c, 0_c, 0_c), buf[0_c], full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
