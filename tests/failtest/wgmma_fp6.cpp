// expect: wgmma: MMA inputs are f16, bf16, f32 \(as tf32\), i8 or u8, but got e2m3
// Hopper's wgmma has no FP6: e2m3 and e3m2 are Blackwell's tcgen05 kind::f8f6f4 operands, whose
// SMEM units (16 elements packed in 12 of 16 bytes) no wgmma type reads.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using T = e2m3;
#else
using T = e4m3;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(warpgroup), accumulator<f32>(shape(64_c, 64_c)), smem<T>(shape(64_c, 64_c), swizzle(64_c)),
                        smem<T>(shape(64_c, 64_c), swizzle(64_c)), [](auto acc, auto a, auto b) {
                          return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c));
                        });
}
int main() { (void)lower(make()); }
