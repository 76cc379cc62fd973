// expect: tcgen05_mma: e2m1x2 \(packed FP4\) operands are read by the block-scaled MMA only \(kind::mxf4, kind::mxf4nvf4\): give tcgen05_mma a block_scale\(sfa, sfb\)
// Packed FP4 has no unscaled tcgen05 kind here (kind::f8f6f4 reads E2M1 one a byte, not two):
// an e2m1x2 MMA names its scales, ue8m0 (u8) per 32 of K or ue4m3 per 16.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<f32>(shape(128_c, 128_c)), tmem<u8>(shape(128_c, 128_c)),
                         smem<e2m1x2>(shape(128_c, 64_c), swizzle(64_c)), smem<e2m1x2>(shape(128_c, 64_c), swizzle(64_c)),
                         barrier(arrivals(1_c), orders_tensor_core), [](auto d, auto sf, auto a, auto b, auto done) {
#ifdef STAGECRAFT_KO
                           auto mma = tcgen05_mma(d, a, transpose(b), done, false);
#else
                           auto mma = tcgen05_mma(d, a, transpose(b), block_scale(sf, sf), done, false);
#endif
                           return seq(mma, barrier_wait(done), tmem_dealloc(d), tmem_dealloc(sf));
                         });
}
int main() { (void)lower(make()); }
