// expect: wgmma: an 8-bit integer operand pairs only with an 8-bit integer one \(i8 or u8\), but A is u8 and B is f16
// Unsigned activations against f16 weights: integer wgmma multiplies s8/u8 by s8/u8 only (the
// ok twin: u8 A against s8 B, .s32.u8.s8).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using B = f16;
constexpr long long BK = 64;
#else
using B = i8;
constexpr long long BK = 128;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<i32>(shape(64_c, 64_c)), smem<u8>(shape(64_c, 128_c), swizzle(128_c)),
                        smem<B>(shape(64_c, int_c<BK>), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(store(acc, 0), wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
}
int main() { (void)lower(make()); }
