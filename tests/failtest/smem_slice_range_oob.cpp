// expect: SMEM offset is out of bounds: slice<0>\(view, start, 32\) with a start ranging over \[0, 113\) reaches past axis 0 of the SMEM view \(128, 64\)
// A start whose range is known: rows j * 16 .. j * 16 + 31 leave the view for the last j.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("y", shape(256_c, 64_c)), smem<f32>(shape(128_c, 64_c)), [](auto y, auto buf) {
#ifdef STAGECRAFT_KO
    return for_(range(8_c), [&](auto j) { return store(y.tile(shape(32_c, 64_c), j, 0_c), load(slice<0>(buf, j * 16_c, 32_c))); });
#else
    return for_(range(7_c), [&](auto j) { return store(y.tile(shape(32_c, 64_c), j, 0_c), load(slice<0>(buf, j * 16_c, 32_c))); });
#endif
  });
}
int main() { (void)lower(make()); }
