// expect: wgmma: shape not supported: N = 40 for i8 inputs must be 8, 16, 24 or a multiple of 16
// An s8 tile of 40 columns: a multiple of 8 is enough for the float kinds, but the integer
// wgmma has N = 8, 16, 24, then multiples of 16 only.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long N = 40;
#else
constexpr long long N = 48;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<i32>(shape(64_c, int_c<N>)), smem<i8>(shape(64_c, 128_c), swizzle(128_c)),
                        smem<i8>(shape(int_c<N>, 128_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) { return seq(store(acc, 0), wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)); });
}
int main() { (void)lower(make()); }
