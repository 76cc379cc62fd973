// expect: x.tile\(shape, \.\.\.\): the tile shape \(96\) does not divide the shape of the array \(512\)
// Tiles of a static array must tile it exactly (the verifier would reject it in lower()).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512_c)), [](auto x) {
#ifdef STAGECRAFT_KO
    auto t = x.tile(shape(96_c), program_id());
#else
    auto t = x.tile(shape(128_c), program_id());
#endif
    return store(t, load(t) * 2.0f);
  });
}
int main() { (void)lower(make()); }
