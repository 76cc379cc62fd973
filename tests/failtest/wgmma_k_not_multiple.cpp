// expect: wgmma: shape not supported: .* K = 8 a multiple of 16 for bf16
// A K of 8 bf16 elements: half of one k16 instruction (operands tiled in core matrices).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<bf16>(shape(64_c, 8_c), tiling(8_c, 8_c)),
                        smem<bf16>(shape(64_c, 8_c), tiling(8_c, 8_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#else
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<bf16>(shape(64_c, 16_c), tiling(8_c, 8_c)),
                        smem<bf16>(shape(64_c, 16_c), tiling(8_c, 8_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#endif
}
int main() { (void)lower(make()); }
