// expect: store_tmem: expected a TMEM reference, but got a SMEM reference
// store_tmem aimed at the SMEM staging buffer instead of the TMEM allocation.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<bf16>(shape(128_c, 64_c)), smem<bf16>(shape(128_c, 64_c)), smem<bf16>(shape(128_c, 64_c)),
                         [](auto at, auto as, auto ys) {
#ifdef STAGECRAFT_KO
                           auto st = store_tmem(ys, load(as));
#else
                           auto st = store_tmem(at, load(as));
#endif
                           return seq(st, tmem_dealloc(at));
                         });
}
int main() { (void)lower(make()); }
