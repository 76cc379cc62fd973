// expect: tcgen05_mma: B \(f32 \(32, 32\), swizzle 128 B, tiling \(\)\): an operand layout tcgen05 cannot describe: MN-major MMA operands
// An f32 B stored (K, N), read MN-major: kind::tf32 transposes only with the 128-byte swizzle of
// 32-byte atoms, a layout nothing here declares, so its operands are K-major: pass transpose(b)
// of an (N, K) buffer.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<f32>(shape(128_c, 32_c)), smem<f32>(shape(128_c, 32_c), swizzle(128_c)),
                         smem<f32>(shape(32_c, 32_c), swizzle(128_c)), barrier(arrivals(1_c), orders_tensor_core),
                         [](auto d, auto a, auto b, auto done) {
#ifdef STAGECRAFT_KO
                           auto mma = tcgen05_mma(d, a, b, done, false);
#else
                           auto mma = tcgen05_mma(d, a, transpose(b), done, false);
#endif
                           return seq(mma, barrier_wait(done), tmem_dealloc(d));
                         });
}
int main() { (void)lower(make()); }
