// expect: tcgen05_mma: FP6 and FP4 operands of kind::f8f6f4 \(e2m3, e3m2, e2m1\) are read K-major only, from SMEM: A stored \(M, K\) as it is, B stored \(N, K\) as transpose\(b\), but A is e3m2 and B e2m3
// kind::f8f6f4 reads FP6 (unscaled here, e3m2 x e2m3: any two of its formats pair) from SMEM's
// 16-byte units along K; B stored (K, N) would be read N-major, which is not modelled for FP6.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<f32>(shape(128_c, 128_c)), smem<e3m2>(shape(128_c, 128_c), swizzle(128_c)),
#ifdef STAGECRAFT_KO
                         smem<e2m3>(shape(128_c, 128_c), swizzle(128_c)), barrier(arrivals(1_c), orders_tensor_core),
                         [](auto d, auto a, auto b, auto done) {
                           return seq(tcgen05_mma(d, a, b, done, false), barrier_wait(done), tmem_dealloc(d));
                         });
#else
                         smem<e2m3>(shape(128_c, 128_c), swizzle(128_c)), barrier(arrivals(1_c), orders_tensor_core),
                         [](auto d, auto a, auto b, auto done) {
                           return seq(tcgen05_mma(d, a, transpose(b), done, false), barrier_wait(done), tmem_dealloc(d));
                         });
#endif
}
int main() { (void)lower(make()); }
