// expect: tcgen05_mma_2cta: the accumulator must be a TMEM reference, but got a SMEM reference
// The pair MMA accumulating into shared memory: as for one CTA, D lives in TMEM (each CTA's rows in its own).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(2), threads(1_c), cluster(2_c), tmem<f32>(shape(128_c, 128_c)), smem<f32>(shape(128_c, 128_c)),
                         smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                         barrier(arrivals(1_c), orders_tensor_core), [](auto acc, auto c, auto a, auto b, auto done) {
#ifdef STAGECRAFT_KO
                           auto mma = tcgen05_mma_2cta(c, a, transpose(b), done, false);
#else
                           auto mma = tcgen05_mma_2cta(acc, a, transpose(b), done, false);
#endif
                           return seq(if_(cluster_idx(0_c) == 0_c, mma), barrier_wait(done), store(c, async_load_tmem(acc)));
                         });
}
int main() { (void)lower(make()); }
