// expect: wgmma: shape not supported: .* K = 48 a multiple of 32 for e4m3
// fp8 instructions are k32 (32 bytes of K): a K of 48 is one and a half of them.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<e4m3>(shape(64_c, 48_c)),
                        smem<e4m3>(shape(64_c, 48_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#else
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<e4m3>(shape(64_c, 64_c), swizzle(64_c)),
                        smem<e4m3>(shape(64_c, 64_c), swizzle(64_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#endif
}
int main() { (void)lower(make()); }
