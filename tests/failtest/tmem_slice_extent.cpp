// expect: slice<1>\(tmem, start, 8\): the extent is a multiple of 16 columns \(a tcgen05.ld moves 16 or 32\)
// A subtile of TMEM columns is what tcgen05.ld moves: 16 or 32 32-bit columns at a time.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long W = 8;
#else
constexpr long long W = 16;
#endif

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), gmem<f32>("y", shape(128, 64)), tmem<f32>(shape(2_c, 128_c, 64_c)), [](auto y, auto d) {
    return seq(store(y.tile(shape(128_c, int_c<W>), 0_c, 0_c), async_load_tmem(slice<1>(d[1_c], 0_c, int_c<W>))), tmem_dealloc(d));
  });
}
int main() { (void)make(); }
