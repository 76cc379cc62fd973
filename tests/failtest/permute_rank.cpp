// expect: permute<P>\(t\): t has shape \(64, 32\) of rank 2, but the permutation \(1, 0, 2\) names 3 axes
// A rank-3 permutation of a rank-2 tile (the leading stage axis of an SMEM ring is not part of a loaded tile).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto s = shape(64_c, 32_c);
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", s), gmem<f32>("y", shape(32_c, 64_c)), [s](auto x, auto y) {
    auto X = load(x.tile(s, 0_c, 0_c));
#ifdef STAGECRAFT_KO
    return store(y.tile(shape(32_c, 64_c), 0_c, 0_c), permute<1, 0, 2>(X));
#else
    return store(y.tile(shape(32_c, 64_c), 0_c, 0_c), permute<1, 0>(X));
#endif
  });
}
int main() { (void)lower(make()); }
