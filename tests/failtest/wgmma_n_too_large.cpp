// expect: wgmma: shape not supported: M = 64 must be a multiple of 64, N = 264 a multiple of 8 up to 256
// An accumulator wider than the 256 columns one wgmma instruction produces.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 264_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                        smem<bf16>(shape(264_c, 64_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#else
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 256_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                        smem<bf16>(shape(256_c, 64_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#endif
}
int main() { (void)lower(make()); }
