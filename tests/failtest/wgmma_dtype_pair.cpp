// expect: wgmma: Expected dtypes to match but A had type bf16 and B had type f16
// A in bf16 and B in f16: no wgmma instruction mixes them.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                        smem<f16>(shape(64_c, 64_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#else
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<f16>(shape(64_c, 64_c), swizzle(128_c)),
                        smem<f16>(shape(64_c, 64_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#endif
}
int main() { (void)lower(make()); }
