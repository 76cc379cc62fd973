// expect: copy_smem_to_gmem: TMA needs the SMEM view to start on a 128-byte boundary, but views \(2, 4\) of this array start only on 32-byte boundaries
// Views of 32 bytes: TMA addresses SMEM in 128-byte aligned units (the code generator used to
// find this only when generating CUDA).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  auto ring = smem<f32>(shape(4_c, 2_c, 4_c));
#else
  auto ring = smem<f32>(shape(4_c, 8_c, 4_c));
#endif
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("y", shape(512, 4)), ring, [](auto y, auto buf) {
    return seq(store(buf[1_c], load(buf[0_c])), commit_smem(), copy_smem_to_gmem(buf[1_c], y.block(program_id(), 0)),
               commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
  });
}
int main() { (void)lower(make()); }
