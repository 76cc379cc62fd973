// expect: wgmma: A from registers must have a 16-bit or 8-bit type \(f16, bf16, e4m3, e5m2, i8 or u8\), but it is f32
// A from registers as f32 (tf32): only 16-bit and 8-bit A operands live in registers.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<f32>(shape(64_c, 32_c), swizzle(128_c)),
                        smem<f32>(shape(64_c, 32_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, load(a), transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#else
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                        smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, load(a), transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#endif
}
int main() { (void)lower(make()); }
