// expect: max<0>\(t\) reduces a tile of rank at least 2 \(the result is a tile, not a single element\), but t has shape \(64\)
// Reducing the row maxima once more, to a single element.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<i32>("xi", s), gmem<f32>("v", shape(64_c)), [s](auto x, auto xi, auto v) {
    auto X = load(x.tile(s, 0_c, 0_c));
    auto I = load(xi.tile(s, 0_c, 0_c));
    (void)I;
#ifdef STAGECRAFT_KO
    return store(v.tile(shape(64_c), 0_c), broadcast<0>(max<0>(max<1>(X)), shape(64_c)));
#else
    return store(v.tile(shape(64_c), 0_c), max<1>(X));
#endif
  });
}
int main() { (void)lower(make()); }
