// expect: tmem_dealloc: expected a TMEM allocation, but got a SMEM reference
// Freeing the SMEM staging tile instead of the TMEM accumulator: only TMEM is freed by the kernel.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<f32>(shape(128_c, 128_c)), smem<f32>(shape(128_c, 128_c)),
                         smem<f16>(shape(128_c, 64_c), swizzle(128_c)), smem<f16>(shape(128_c, 64_c), swizzle(128_c)),
                         barrier(arrivals(1_c), orders_tensor_core), [](auto acc, auto c, auto a, auto b, auto done) {
#ifdef STAGECRAFT_KO
                           auto free = tmem_dealloc(c);
#else
                           auto free = tmem_dealloc(acc);
#endif
                           return seq(tcgen05_mma(acc, a, transpose(b), done, false), barrier_wait(done), store(c, async_load_tmem(acc)), free);
                         });
}
int main() { (void)lower(make()); }
