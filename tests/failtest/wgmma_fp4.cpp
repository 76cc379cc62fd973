// expect: wgmma: MMA inputs are f16, bf16, f32 \(as tf32\), i8 or u8, but got e2m1x2
// Hopper's wgmma has no FP4: packed e2m1 is Blackwell's block-scaled tcgen05_mma only (its bytes
// read as any wgmma type would be a silent wrong answer).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using T = e2m1x2;
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
