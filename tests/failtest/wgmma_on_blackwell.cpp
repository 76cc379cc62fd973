// expect: wgmma is a Hopper instruction: it needs a kernel<sm_90a>, but this kernel targets sm_100a
// A Hopper wgmma kernel retargeted to Blackwell without moving it to tcgen05_mma.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using target_t = sm_100a;
#else
using target_t = sm_90a;
#endif

auto make() {
  return kernel<target_t>("k", grid(4), threads(1_c), accumulator<f32>(shape(64_c, 128_c)),
                          smem<f16>(shape(64_c, 64_c), swizzle(128_c)), smem<f16>(shape(128_c, 64_c), swizzle(128_c)),
                          [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
}
int main() { (void)lower(make()); }
