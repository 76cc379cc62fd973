// expect: select\(mask, a, b\): the mask is a pred tile \(what a comparison gives\)
// A float tile used as the condition instead of a comparison of it.
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
    return store(x.tile(s, 0_c, 0_c), select(X, X, 0.0f));
#else
    return store(x.tile(s, 0_c, 0_c), select(X > 0.0f, X, 0.0f));
#endif
  });
}
int main() { (void)lower(make()); }
