// expect: store_tmem writes 16- or 32-bit elements \(two or one to a 32-bit TMEM column\), but the TMEM allocation is e4m3
// fp8 values written into TMEM: store_tmem packs 16- and 32-bit elements only.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using T = e4m3;
#else
using T = bf16;
#endif

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<T>(shape(128_c, 128_c)), smem<T>(shape(128_c, 128_c)),
                         [](auto at, auto as) { return seq(store_tmem(at, load(as)), tmem_dealloc(at)); });
}
int main() { (void)lower(make()); }
