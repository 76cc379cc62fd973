// expect: transpose\(t\) swaps the axes of a rank-2 tile, but t has shape \(32\)
// Transposing a vector (a reduction result): it has one axis, nothing to swap.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<f32>("y", s), [s](auto x, auto y) {
    auto X = load(x.tile(s, 0_c, 0_c));
#ifdef STAGECRAFT_KO
    return store(y.tile(s, 0_c, 0_c), broadcast<0>(transpose(sum<0>(X)), X));
#else
    return store(y.tile(s, 0_c, 0_c), broadcast<0>(sum<0>(X), X));
#endif
  });
}
int main() { (void)lower(make()); }
