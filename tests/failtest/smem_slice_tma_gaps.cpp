// expect: copy_smem_to_gmem: a TMA box is dense in SMEM, but the sub-view \(128, 32\) of the SMEM view \(128, 64\) leaves gaps between its rows
// Columns 0..31 of every row are not one run of bytes: TMA cannot store them as a box. Rows are.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", shape(128_c, 64_c)), gmem<f32>("y", shape(128_c, 64_c)),
                        smem<f32>(shape(128_c, 64_c)), [](auto x, auto y, auto buf) {
#ifdef STAGECRAFT_KO
                          auto part = slice<1>(buf, 0_c, 32_c);
#else
                          auto part = slice<0>(buf, 64_c, 64_c);
#endif
                          return seq(store(buf, load(x.tile(shape(128_c, 64_c), 0_c, 0_c))), commit_smem(),
                                     copy_smem_to_gmem(part, y.block(0_c, 0_c)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                        });
}
int main() { (void)lower(make()); }
