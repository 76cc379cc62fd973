// expect: sum<2>\(t\): axis 2 is out of range for t of shape \(64, 32\) \(axes are 0 to 1\)
// A row sum written with the axis counted from 1.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<i32>("xi", s), gmem<f32>("v", shape(64_c)), [s](auto x, auto xi, auto v) {
    auto X = load(x.tile(s, 0_c, 0_c));
    auto I = load(xi.tile(s, 0_c, 0_c));
    (void)I;
#ifdef STAGECRAFT_KO
    return store(v.tile(shape(64_c), 0_c), sum<2>(X));
#else
    return store(v.tile(shape(64_c), 0_c), sum<1>(X));
#endif
  });
}
int main() { (void)lower(make()); }
