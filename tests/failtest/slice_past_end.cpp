// expect: slice<1>\(t, 24, 16\): elements 24 to 39 do not lie in axis 1 of t, which has extent 32 \(shape \(64, 32\)\)
// A slice that runs past the last column.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<f32>("y", shape(64_c, 16_c)), [s](auto x, auto y) {
    auto X = load(x.tile(s, 0_c, 0_c));
#ifdef STAGECRAFT_KO
    return store(y.tile(shape(64_c, 16_c), 0_c, 0_c), slice<1>(X, 24_c, 16_c));
#else
    return store(y.tile(shape(64_c, 16_c), 0_c, 0_c), slice<1>(X, 16_c, 16_c));
#endif
  });
}
int main() { (void)lower(make()); }
