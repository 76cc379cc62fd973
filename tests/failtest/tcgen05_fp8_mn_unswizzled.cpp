// expect: tcgen05_mma: B \(e5m2 \(128, 64\), swizzle 0 B, tiling \(\)\): an operand layout tcgen05 cannot describe: an unswizzled MMA operand must be tiled in core matrices
// kind::f8f6f4 reads an e5m2 B stored (K, N) MN-major (the ok twin: K-rows of 64 bytes in a
// 64-byte swizzle), but not as a plain array, whose rows are not 16 bytes apart.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
#define B_LAYOUT
#else
#define B_LAYOUT , swizzle(64_c)
#endif

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<f32>(shape(128_c, 64_c)), smem<e4m3>(shape(128_c, 128_c), swizzle(128_c)),
                         smem<e5m2>(shape(128_c, 64_c) B_LAYOUT), barrier(arrivals(1_c), orders_tensor_core), [](auto d, auto a, auto b, auto done) {
                           return seq(tcgen05_mma(d, a, b, done, false), barrier_wait(done), tmem_dealloc(d));
                         });
}
int main() { (void)lower(make()); }
