// expect: permute<P>\(t\): \(1, 1\) is not a permutation of the axes 0 to 1 \(each axis of t exactly once\)
// An axis named twice: a permutation reorders axes, it cannot duplicate one (broadcast<Axis> does).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<f32>("y", shape(32_c, 64_c)), [s](auto x, auto y) {
    auto X = load(x.tile(s, 0_c, 0_c));
#ifdef STAGECRAFT_KO
    return store(y.tile(shape(32_c, 64_c), 0_c, 0_c), permute<1, 1>(X));
#else
    return store(y.tile(shape(32_c, 64_c), 0_c, 0_c), permute<1, 0>(X));
#endif
  });
}
int main() { (void)lower(make()); }
