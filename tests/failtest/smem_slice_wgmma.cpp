// expect: wgmma: B is the sub-view \(64, 64\) of \(128, 64\) \(swizzle 128 B, starting on 512-byte boundaries\): a wgmma descriptor describes only whole rows of a swizzled 2-D view that start on a swizzle pattern
// B's K rows 4..67 start inside a swizzle pattern, which no descriptor can start at; K rows 64..127 can.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f16>("a", shape(64_c, 64_c)), smem<f16>(shape(64_c, 64_c), swizzle(128_c)),
                        smem<f16>(shape(128_c, 64_c), swizzle(128_c)), accumulator<f32>(shape(64_c, 64_c)), [](auto, auto a, auto b, auto acc) {
#ifdef STAGECRAFT_KO
                          auto k_rows = slice<0>(b, 4_c, 64_c);
#else
                          auto k_rows = slice<0>(b, 64_c, 64_c);
#endif
                          return seq(wgmma(acc, a, k_rows), wgmma_commit(), wgmma_wait(0_c));
                        });
}
int main() { (void)lower(make()); }
