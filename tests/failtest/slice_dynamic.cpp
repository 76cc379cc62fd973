// expect: slice<Axis>\(t, start, extent\): start and extent are static integers \(16_c\), as tile shapes are
// A run-time start: a slice of a register tile picks registers, so where it starts is fixed at compile time.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<f32>("y", shape(64_c, 16_c)), [s](auto x, auto y) {
    auto X = load(x.tile(s, 0_c, 0_c));
#ifdef STAGECRAFT_KO
    return store(y.tile(shape(64_c, 16_c), 0_c, 0_c), slice<1>(X, 16, 16_c));
#else
    return store(y.tile(shape(64_c, 16_c), 0_c, 0_c), slice<1>(X, 16_c, 16_c));
#endif
  });
}
int main() { (void)lower(make()); }
