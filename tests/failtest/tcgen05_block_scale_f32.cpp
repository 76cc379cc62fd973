// expect: block_scale\(sfa, sfb\): the scales are ue8m0 codes in u8 TMEM or ue4m3 codes in ue4m3 TMEM, but got f32
// A block-scaled MMA's scales are one ue8m0 byte per 32 of K for each row: u8 TMEM, not f32
// (kind::mxf8f6f4.block_scale reads them a byte at a time from 32-bit TMEM cells).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using TS = f32;
#else
using TS = u8;
#endif

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<f32>(shape(128_c, 128_c)), tmem<TS>(shape(128_c, int_c<32 * 32 / TS::bits>)),
                         smem<e4m3>(shape(128_c, 128_c), swizzle(128_c)), smem<e4m3>(shape(128_c, 128_c), swizzle(128_c)),
                         barrier(arrivals(1_c), orders_tensor_core), [](auto d, auto sf, auto a, auto b, auto done) {
                           return seq(tcgen05_mma(d, a, transpose(b), block_scale(sf, sf), done, false), barrier_wait(done), tmem_dealloc(d),
                                      tmem_dealloc(sf));
                         });
}
int main() { (void)lower(make()); }
