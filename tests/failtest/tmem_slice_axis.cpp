// expect: slice<0>\(tmem, start, extent\) of a TMEM view of shape \(128, 64\): TMEM views are cut along their columns only
// An epilogue reads an accumulator a subtile of columns at a time (slice<1>); its lanes are the
// tile's rows, which one tcgen05.ld of the warpgroup reads all of.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), gmem<f32>("y", shape(128, 64)), tmem<f32>(shape(128_c, 64_c)), [](auto y, auto d) {
#ifdef STAGECRAFT_KO
    auto half = async_load_tmem(slice<0>(d, 0_c, 64_c));
    return seq(store(y.tile(shape(64_c, 64_c), 0_c, 0_c), half), tmem_dealloc(d));
#else
    auto half = async_load_tmem(slice<1>(d, 32_c, 32_c));
    return seq(store(y.tile(shape(128_c, 32_c), 0_c, 1_c), half), tmem_dealloc(d));
#endif
  });
}
int main() { (void)make(); }
