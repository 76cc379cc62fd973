// expect: copy_gmem_to_smem: the destination must be a SMEM reference, but got a GMEM reference
// A GMEM -> GMEM copy attempted with the TMA load (it only writes shared memory).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 64)), gmem<f32>("y", shape(512, 64)),
                        smem<f32>(shape(128_c, 64_c)), barrier(arrivals(1_c), count(1_c)),
                        [](auto x, auto y, auto buf, auto full) {
#ifdef STAGECRAFT_KO
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0), y.block(program_id(), 0), full), barrier_wait(full));
#else
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf, full), barrier_wait(full),
                                     copy_smem_to_gmem(buf, y.block(program_id(), 0)), commit_smem_to_gmem_group(),
                                     wait_smem_to_gmem(0_c));
#endif
                        });
}
int main() { (void)lower(make()); }
