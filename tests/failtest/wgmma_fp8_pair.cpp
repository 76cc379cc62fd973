// expect: wgmma: an fp8 operand pairs only with an fp8 one \(e4m3 or e5m2\), but A is e4m3 and B is bf16
// e4m3 A against a bf16 B: no wgmma kind mixes an 8-bit with a 16-bit type; e4m3 with e5m2 is one.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<e4m3>(shape(64_c, 32_c), swizzle(32_c)),
                        smem<bf16>(shape(64_c, 32_c), swizzle(64_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#else
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<e4m3>(shape(64_c, 32_c), swizzle(32_c)),
                        smem<e5m2>(shape(64_c, 32_c), swizzle(32_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#endif
}
int main() { (void)lower(make()); }
