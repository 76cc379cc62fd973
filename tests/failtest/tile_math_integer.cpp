// expect: exp2\(x\) needs a floating-point tile, but got i32
// exp2 of the integer tile where the float one was meant.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<i32>("xi", s), gmem<f32>("v", shape(64_c)), [s](auto x, auto xi, auto v) {
    auto X = load(x.tile(s, 0_c, 0_c));
    auto I = load(xi.tile(s, 0_c, 0_c));
    (void)I;
#ifdef STAGECRAFT_KO
    return store(xi.tile(s, 0_c, 0_c), exp2(I));
#else
    return store(x.tile(s, 0_c, 0_c), exp2(X));
#endif
  });
}
int main() { (void)lower(make()); }
