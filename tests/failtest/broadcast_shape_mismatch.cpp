// expect: broadcast<1>\(v, like\): v has shape \(32\), but the shape \(64, 32\) without axis 1 is \(64\)
// Column sums broadcast along the axis of the rows.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<i32>("xi", s), gmem<f32>("v", shape(64_c)), [s](auto x, auto xi, auto v) {
    auto X = load(x.tile(s, 0_c, 0_c));
    auto I = load(xi.tile(s, 0_c, 0_c));
    (void)I;
#ifdef STAGECRAFT_KO
    return store(x.tile(s, 0_c, 0_c), X - broadcast<1>(sum<0>(X), X));
#else
    return store(x.tile(s, 0_c, 0_c), X - broadcast<0>(sum<0>(X), X));
#endif
  });
}
int main() { (void)lower(make()); }
