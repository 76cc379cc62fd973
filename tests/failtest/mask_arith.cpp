// expect: operator\+: a pred tile is a mask, not a number \(select\(mask, a, b\) uses it, cast<i32>\(mask\) counts it\)
// Counting a mask by adding it up directly.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<i32>("xi", s), gmem<f32>("v", shape(64_c)), [s](auto x, auto xi, auto v) {
    auto X = load(x.tile(s, 0_c, 0_c));
    auto I = load(xi.tile(s, 0_c, 0_c));
    (void)I;
    (void)v;
#ifdef STAGECRAFT_KO
    return store(xi.tile(s, 0_c, 0_c), (X > 0.0f) + (X < 1.0f));
#else
    return store(xi.tile(s, 0_c, 0_c), cast<i32>(X > 0.0f) + cast<i32>(X < 1.0f));
#endif
  });
}
int main() { (void)lower(make()); }
