// expect: cluster launch control \(try_cancel: clusterlaunchcontrol.try_cancel\) is a Blackwell instruction: it needs a kernel<sm_100a>, but this kernel targets sm_90a
// A dynamic tile schedule written for Hopper, which has no cluster launch control.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using target_t = sm_90a;
#else
using target_t = sm_100a;
#endif

auto make() {
  return kernel<target_t>("k", grid(4), threads(1_c), smem<u32>(shape(2_c, 4_c)), barrier(arrivals(1_c), count(2_c)),
                          [](auto resp, auto landed) { return seq(try_cancel(resp[0_c], landed[0_c]), barrier_wait(landed[0_c])); });
}
int main() { (void)lower(make()); }
