// expect: tcgen05_mma: an fp8 operand pairs only with an fp8 one \(e4m3 or e5m2; tcgen05 also e2m3, e3m2 or e2m1\), but A is e4m3 and B is bf16
// e4m3 A against a bf16 B: kind::f8f6f4 takes e4m3 and e5m2 in any pairing, kind::f16 no 8-bit type.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using TB = bf16;
#define BK 64_c  // one 128-byte swizzled row of bf16
#else
using TB = e5m2;
#define BK 128_c
#endif

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<f32>(shape(128_c, 64_c)), smem<e4m3>(shape(128_c, 128_c), swizzle(128_c)),
                         smem<TB>(shape(64_c, BK), swizzle(128_c)), barrier(arrivals(1_c), orders_tensor_core),
                         [](auto d, auto a, auto b, auto done) {
                           return seq(tcgen05_mma(d, a, transpose(b), done, false), barrier_wait(done), tmem_dealloc(d));
                         });
}
int main() { (void)lower(make()); }
