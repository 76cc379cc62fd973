// expect: store_tmem: Expected shapes to match, but the tile had shape \(128, 32\) and the TMEM allocation shape \(128, 64\) \(row i of the tile is lane i\)
// Half of A's K slice stored into a TMEM allocation sized for all of it.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long KS = 32;
#else
constexpr long long KS = 64;
#endif

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<bf16>(shape(128_c, 64_c)), smem<bf16>(shape(128_c, int_c<KS>)),
                         [](auto at, auto as) { return seq(store_tmem(at, load(as)), tmem_dealloc(at)); });
}
int main() { (void)lower(make()); }
