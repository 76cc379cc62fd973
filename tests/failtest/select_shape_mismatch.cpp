// expect: select\(mask, a, b\): the mask has shape \(64\), but the values have shape \(64, 32\)
// A row mask applied to the whole tile without broadcasting it.
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
    return store(x.tile(s, 0_c, 0_c), select(max<1>(X) > 0.0f, X, 0.0f));
#else
    return store(x.tile(s, 0_c, 0_c), select(broadcast<1>(max<1>(X), X) > 0.0f, X, 0.0f));
#endif
  });
}
int main() { (void)lower(make()); }
