// expect: reshape\(t, shape\): t has shape \(64, 32\) \(2048 elements\), but the shape \(16, 64\) has 1024
// A reshape that would drop half the elements: it only rearranges them.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<f32>("y", s), [s](auto x, auto y) {
    auto X = load(x.tile(s, 0_c, 0_c));
#ifdef STAGECRAFT_KO
    return store(y.tile(s, 0_c, 0_c), reshape(reshape(X, shape(16_c, 64_c)), s));
#else
    return store(y.tile(s, 0_c, 0_c), reshape(reshape(X, shape(16_c, 128_c)), s));
#endif
  });
}
int main() { (void)lower(make()); }
