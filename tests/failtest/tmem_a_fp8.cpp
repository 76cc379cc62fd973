// expect: tcgen05_mma: A from TMEM is modelled for kind::f16 \(f16, bf16\) and kind::tf32 only, but A is e4m3 \(kind::f8f6f4\): keep A in SMEM
// An fp8 A kept in TMEM: the [a_tmem] form is modelled for 16-bit and tf32 operands only.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using T = e4m3;
#else
using T = bf16;
#endif
constexpr long long KT = 128 / (T::bits / 8);  // one 128-byte row of K

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<f32>(shape(128_c, 64_c)), tmem<T>(shape(128_c, int_c<KT>)),
                         smem<T>(shape(64_c, int_c<KT>), swizzle(128_c)), smem<f32>(shape(128_c, 64_c)),
                         barrier(arrivals(1_c), orders_tensor_core), [](auto d, auto at, auto b, auto c, auto done) {
                           return seq(tcgen05_mma(d, at, transpose(b), done, false), barrier_wait(done), store(c, async_load_tmem(d)),
                                      tmem_dealloc(d), tmem_dealloc(at));
                         });
}
int main() { (void)lower(make()); }
