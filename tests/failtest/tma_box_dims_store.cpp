// expect: copy_smem_to_gmem: a TMA box has at most 256 elements per dimension, but the view \(2, 260\) has 260 in dimension 1
// The same limit on a TMA store and an inner dimension: 256 f32 columns compile, 260 do not.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long cols = 260;
#else
constexpr long long cols = 256;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(8_c, int_c<cols>)), gmem<f32>("y", shape(8_c, int_c<cols>)),
                        smem<f32>(shape(2_c, int_c<cols>)), [](auto x, auto y, auto buf) {
                          return seq(store(buf, load(x.tile(shape(2_c, int_c<cols>), program_id(), 0_c))), commit_smem(), copy_smem_to_gmem(buf, y.block(program_id(), 0_c)),
                                     commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                        });
}
int main() { (void)lower(make()); }
