// expect: iota<2>\(shape\): axis 2 is out of range for the shape \(64, 32\)
// Column indices asked for with a 1-based axis.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<i32>("xi", s), gmem<f32>("v", shape(64_c)), [s](auto x, auto xi, auto v) {
    auto X = load(x.tile(s, 0_c, 0_c));
    auto I = load(xi.tile(s, 0_c, 0_c));
    (void)I;
#ifdef STAGECRAFT_KO
    return store(xi.tile(s, 0_c, 0_c), iota<2>(s));
#else
    return store(xi.tile(s, 0_c, 0_c), iota<1>(s));
#endif
  });
}
int main() { (void)lower(make()); }
