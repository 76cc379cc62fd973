// expect: copy_smem_to_gmem: TMA element strides \(2, 1\) are for loads \(copy_gmem_to_smem\): a TMA store writes a dense block
// Element strides are documented for what TMA loads; a strided TMA store is refused, not guessed.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("y", shape(1024_c, 64_c)), smem<f32>(shape(128_c, 64_c)),
                        [](auto y, auto buf) {
#ifdef STAGECRAFT_KO
                          auto put = copy_smem_to_gmem(buf, y.block(strides(2_c, 1_c), program_id(), 0_c));
#else
                          auto put = copy_smem_to_gmem(buf, y.block(program_id(), 0_c));
#endif
                          return seq(store(buf, load(buf) * 0.0f), commit_smem(), put, commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                        });
}
int main() { (void)lower(make()); }
