// expect: slice<2>\(view, start, extent\): axis 2 is out of range for an SMEM view of shape \(128, 64\)
// A 2-D stage has axes 0 and 1.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("y", shape(128_c, 32_c)), smem<f32>(shape(2_c, 128_c, 64_c)), [](auto y, auto buf) {
#ifdef STAGECRAFT_KO
    auto v = slice<2>(buf[0_c], 0_c, 32_c);
#else
    auto v = slice<1>(buf[0_c], 0_c, 32_c);
#endif
    return store(y.tile(shape(128_c, 32_c), 0_c, 0_c), load(v));
  });
}
int main() { (void)lower(make()); }
