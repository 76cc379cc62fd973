// expect: full<T>\(shape, value\): the shape \(\?, \?\) is not static
// A fill whose shape was written with run-time integers.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<i32>("xi", s), gmem<f32>("v", shape(64_c)), [s](auto x, auto xi, auto v) {
    auto X = load(x.tile(s, 0_c, 0_c));
    auto I = load(xi.tile(s, 0_c, 0_c));
    (void)I;
#ifdef STAGECRAFT_KO
    return store(x.tile(s, 0_c, 0_c), X * full<f32>(shape(64, 32), 0.5f));
#else
    return store(x.tile(s, 0_c, 0_c), X * full<f32>(shape(64_c, 32_c), 0.5f));
#endif
  });
}
int main() { (void)lower(make()); }
