// expect: slice<2>\(t, start, extent\): axis 2 is out of range for t of shape \(64, 32\)
// A slice along an axis the tile does not have.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<f32>("y", shape(64_c, 16_c)), [s](auto x, auto y) {
    auto X = load(x.tile(s, 0_c, 0_c));
#ifdef STAGECRAFT_KO
    return store(y.tile(shape(64_c, 16_c), 0_c, 0_c), slice<2>(X, 0_c, 16_c));
#else
    return store(y.tile(shape(64_c, 16_c), 0_c, 0_c), slice<1>(X, 0_c, 16_c));
#endif
  });
}
int main() { (void)lower(make()); }
