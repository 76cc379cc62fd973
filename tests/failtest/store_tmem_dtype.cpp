// expect: store_tmem: Expected dtypes to match but the tile had type f32 and the TMEM allocation type bf16 \(convert with cast<T>\(...\)\)
// An f32 result stored into a bf16 TMEM operand without the rounding cast.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<bf16>(shape(128_c, 64_c)), smem<f32>(shape(128_c, 64_c)), [](auto at, auto xs) {
#ifdef STAGECRAFT_KO
    auto st = store_tmem(at, load(xs) * 2.0f);
#else
    auto st = store_tmem(at, cast<bf16>(load(xs) * 2.0f));
#endif
    return seq(st, tmem_dealloc(at));
  });
}
int main() { (void)lower(make()); }
