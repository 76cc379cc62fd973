// expect: copy_smem_to_gmem: the SMEM array is swizzled \(128 B\), and TMA moves whole swizzled rows, but the sub-view \(1, 32\) of \(8, 64\) cuts its rows inside a swizzle atom
// Half of one swizzled row: its bytes are one run, but TMA swizzles whole rows of the box.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f16>("y", shape(8_c, 64_c)), smem<f16>(shape(8_c, 64_c), swizzle(128_c)), [](auto y, auto buf) {
#ifdef STAGECRAFT_KO
    auto part = slice<1>(slice<0>(buf, 0_c, 1_c), 0_c, 32_c);
    auto dst = y.block(0_c, 0_c);
#else
    auto part = slice<0>(buf, 0_c, 8_c);
    auto dst = y.block(0_c, 0_c);
#endif
    return seq(store(buf, full<f16>(shape(8_c, 64_c), 1.0f)), commit_smem(), copy_smem_to_gmem(part, dst), commit_smem_to_gmem_group(),
               wait_smem_to_gmem(0_c));
  });
}
int main() { (void)lower(make()); }
