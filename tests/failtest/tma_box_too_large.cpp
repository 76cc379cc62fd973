// expect: copy_gmem_to_smem: a TMA box has at most 256 elements per dimension, but the view \(512, 16\) has 512 in dimension 0
// cuTensorMapEncodeTiled takes boxes of up to 256 elements per dimension: a 512-row block used to
// pass every check and fail only at launch.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  auto buf = smem<f32>(shape(512_c, 16_c));
#else
  auto buf = smem<f32>(shape(256_c, 16_c));
#endif
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(2048, 16)), buf, barrier(arrivals(1_c)),
                        [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
