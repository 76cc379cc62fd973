// expect: broadcast<2>\(v, like\): axis 2 is not an axis of the shape \(64, 32\) of rank at least 2
// A broadcast to a new trailing axis the target does not have.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<i32>("xi", s), gmem<f32>("v", shape(64_c)), [s](auto x, auto xi, auto v) {
    auto X = load(x.tile(s, 0_c, 0_c));
    auto I = load(xi.tile(s, 0_c, 0_c));
    (void)I;
#ifdef STAGECRAFT_KO
    return store(x.tile(s, 0_c, 0_c), X - broadcast<2>(sum<1>(X), X));
#else
    return store(x.tile(s, 0_c, 0_c), X - broadcast<1>(sum<1>(X), X));
#endif
  });
}
int main() { (void)lower(make()); }
