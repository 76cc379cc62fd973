// expect: wgmma: B \(f32 \(32, 32\), swizzle 128 B, tiling \(\)\): an operand layout wgmma cannot describe: MN-major MMA operands
// tf32 B given as a (K, N) buffer: MN-major, which only 16-bit types have; transpose() of an (N, K) buffer is K-major.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 32_c)), smem<f32>(shape(64_c, 32_c), swizzle(128_c)),
                        smem<f32>(shape(32_c, 32_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, b), wgmma_commit(), wgmma_wait(0_c)); });
#else
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 32_c)), smem<f32>(shape(64_c, 32_c), swizzle(128_c)),
                        smem<f32>(shape(32_c, 32_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#endif
}
int main() { (void)lower(make()); }
