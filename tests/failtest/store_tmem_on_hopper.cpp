// expect: tcgen05 instructions \(tcgen05_mma, tcgen05_commit_arrive, async_load_tmem, store_tmem\) need a kernel<sm_100a>, but this kernel targets sm_90a
// store_tmem (tcgen05.st) in a kernel declared for Hopper, which has no tensor memory.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using target_t = sm_90a;
#else
using target_t = sm_100a;
#endif

auto make() {
  return kernel<target_t>("k", grid(1), threads(1_c), tmem<bf16>(shape(128_c, 64_c)), smem<bf16>(shape(128_c, 64_c)),
                          [](auto at, auto as) { return seq(store_tmem(at, load(as)), tmem_dealloc(at)); });
}
int main() { (void)lower(make()); }
