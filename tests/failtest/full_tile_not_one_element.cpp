// expect: full\(shape, t\): t is the one-element tile whose value fills the shape, but it has shape \(1, 2\)
// A run-time factor spread over a tile, read as a (1, 2) tile instead of one element.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<f32>("scale", shape(4_c)), [s](auto x, auto scale) {
    auto X = load(x.tile(s, 0_c, 0_c));
#ifdef STAGECRAFT_KO
    return store(x.tile(s, 0_c, 0_c), X * full(s, reshape(load(scale.tile(shape(2_c), 1_c)), shape(1_c, 2_c))));
#else
    return store(x.tile(s, 0_c, 0_c), X * full(s, load(scale.tile(shape(1_c), 3_c))));
#endif
  });
}
int main() { (void)lower(make()); }
