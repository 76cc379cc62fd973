// expect: cluster launch control: the response is one row of 4 u32 of an unswizzled SMEM allocation
// A try_cancel response given 8 words: the hardware writes 16 bytes, a row of 4 u32.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long words = 8;
#else
constexpr long long words = 4;
#endif

auto make() {
  return kernel<sm_100a>("k", grid(4), threads(1_c), smem<u32>(shape(2_c, int_c<words>)), barrier(arrivals(1_c), count(2_c)),
                         [](auto resp, auto landed) { return seq(try_cancel(resp[0_c], landed[0_c]), barrier_wait(landed[0_c])); });
}
int main() { (void)lower(make()); }
