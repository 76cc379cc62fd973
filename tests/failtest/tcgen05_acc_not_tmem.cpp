// expect: tcgen05_mma: the accumulator must be a TMEM reference, but got a SMEM reference
// A tcgen05 MMA accumulating into shared memory, as wgmma-era code might: tcgen05 accumulates in TMEM.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(4), threads(1_c), tmem<f32>(shape(128_c, 128_c)), smem<f32>(shape(128_c, 128_c)),
                         smem<f16>(shape(128_c, 64_c), swizzle(128_c)), smem<f16>(shape(128_c, 64_c), swizzle(128_c)),
                         barrier(arrivals(1_c), count(1_c), orders_tensor_core), [](auto acc, auto c, auto a, auto b, auto done) {
#ifdef STAGECRAFT_KO
                           auto mma = tcgen05_mma(c, a, transpose(b), done, false);
#else
                           auto mma = tcgen05_mma(acc, a, transpose(b), done, false);
#endif
                           return seq(mma, barrier_wait(done), store(c, async_load_tmem(acc)));
                         });
}
int main() { (void)lower(make()); }
