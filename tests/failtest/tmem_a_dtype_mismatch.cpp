// expect: tcgen05_mma: Expected dtypes to match but A had type f16 and B had type bf16
// A written into TMEM as f16 while B is bf16: kind::f16 takes one 16-bit type for both operands.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using TA = f16;
#else
using TA = bf16;
#endif

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<f32>(shape(128_c, 64_c)), tmem<TA>(shape(128_c, 64_c)),
                         smem<bf16>(shape(64_c, 64_c), swizzle(128_c)), smem<f32>(shape(128_c, 64_c)),
                         barrier(arrivals(1_c), orders_tensor_core), [](auto d, auto at, auto b, auto c, auto done) {
                           return seq(tcgen05_mma(d, at, transpose(b), done, false), barrier_wait(done), store(c, async_load_tmem(d)),
                                      tmem_dealloc(d), tmem_dealloc(at));
                         });
}
int main() { (void)lower(make()); }
