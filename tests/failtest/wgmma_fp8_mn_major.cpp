// expect: wgmma: B \(e5m2 \(32, 64\), swizzle 64 B, tiling \(\)\): an operand layout wgmma cannot describe: MN-major MMA operands
// An fp8 B given as a (K, N) buffer is MN-major, which only 16-bit types have: store it (N, K), read transpose(b).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<e4m3>(shape(64_c, 32_c), swizzle(32_c)),
                        smem<e5m2>(shape(32_c, 64_c), swizzle(64_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, b), wgmma_commit(), wgmma_wait(0_c)); });
#else
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<e4m3>(shape(64_c, 32_c), swizzle(32_c)),
                        smem<e5m2>(shape(64_c, 32_c), swizzle(32_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#endif
}
int main() { (void)lower(make()); }
