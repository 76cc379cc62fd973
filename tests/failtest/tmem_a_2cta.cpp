// expect: tcgen05_mma_2cta: A from TMEM is modelled for cta_group::1 only \(tcgen05_mma\): keep A in SMEM for the pair MMA
// The pair MMA with its A in TMEM: only the single-CTA MMA takes A from TMEM here.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(2), threads(1_c), cluster(2_c), tmem<f32>(shape(128_c, 128_c)), tmem<bf16>(shape(128_c, 64_c)),
                         smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)), smem<f32>(shape(128_c, 128_c)),
                         barrier(arrivals(1_c), orders_tensor_core), [](auto acc, auto at, auto a, auto b, auto c, auto done) {
#ifdef STAGECRAFT_KO
                           auto mma = tcgen05_mma_2cta(acc, at, transpose(b), done, false);
#else
                           auto mma = tcgen05_mma_2cta(acc, a, transpose(b), done, false);
#endif
                           return seq(if_(cluster_idx(0_c) == 0_c, mma), barrier_wait(done), store(c, async_load_tmem(acc)), tmem_dealloc(acc),
                                      tmem_dealloc(at));
                         });
}
int main() { (void)lower(make()); }
