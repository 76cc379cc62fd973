// expect: load/store of GMEM: a strided block \(x.block\(strides\(...\), ...\)\) is a TMA traversal, only copy_gmem_to_smem takes it
// A warpgroup's plain load cannot take a TMA-strided block: only the TMA engine traverses one.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(1024_c, 64_c)), smem<f32>(shape(128_c, 64_c)),
                        [](auto x, auto buf) {
#ifdef STAGECRAFT_KO
                          return store(buf, load(x.block(strides(2_c, 1_c), program_id(), 0_c)));
#else
                          return store(buf, load(x.tile(shape(128_c, 64_c), program_id(), 0_c)));
#endif
                        });
}
int main() { (void)lower(make()); }
