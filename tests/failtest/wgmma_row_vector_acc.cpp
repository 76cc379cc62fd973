// expect: wgmma: MMA operands are 2-D views, but got A .64, 64., B .64, 64., D .64.
// A row-vector accumulator holds per-row state (running max, sum); wgmma writes a 2-D D fragment.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                        smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#else
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                        smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#endif
}
int main() { (void)lower(make()); }
