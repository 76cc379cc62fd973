// expect: load: e2m1x2 is a storage type \(packed FP4, FP6 or NVFP4 scale codes\): TMA and tcgen05_copy_scales move it, tcgen05_mma reads it; it is not loaded into or stored from a tile
// A byte of two e2m1 codes is no number a tile can compute with: read as u8 it would be its
// codes, a silent wrong answer. Packed FP4 reaches the tensor core by TMA only.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using T = e2m1x2;
#else
using T = u8;
#endif

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(warpgroup), gmem<T>("x", shape(64_c, 64_c)), gmem<u8>("y", shape(64_c, 64_c)),
                         [](auto x, auto y) { return store(y.tile(shape(64_c, 64_c), 0_c, 0_c), load(x.tile(shape(64_c, 64_c), 0_c, 0_c))); });
}
int main() { (void)lower(make()); }
