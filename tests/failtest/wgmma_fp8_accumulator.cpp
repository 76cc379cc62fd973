// expect: wgmma: e4m3 inputs accumulate in f32 or f16, but the accumulator is bf16
// fp8 products accumulate in f32 or f16 (.f32/.f16 D); there is no bf16 D.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<bf16>(shape(64_c, 64_c)), smem<e4m3>(shape(64_c, 64_c), swizzle(64_c)),
                        smem<e4m3>(shape(64_c, 64_c), swizzle(64_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#else
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f16>(shape(64_c, 64_c)), smem<e4m3>(shape(64_c, 64_c), swizzle(64_c)),
                        smem<e4m3>(shape(64_c, 64_c), swizzle(64_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#endif
}
int main() { (void)lower(make()); }
