// expect: wgmma: A \(bf16 \(64, 64\), swizzle 0 B, tiling \(\)\): an operand layout wgmma cannot describe: an unswizzled MMA operand must be tiled in core matrices
// A plain row-major A: its rows are 128 bytes apart, but without a swizzle wgmma reads 16-byte core-matrix rows.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<bf16>(shape(64_c, 64_c)),
                        smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#else
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 64_c)), smem<bf16>(shape(64_c, 64_c), tiling(8_c, 8_c)),
                        smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
#endif
}
int main() { (void)lower(make()); }
