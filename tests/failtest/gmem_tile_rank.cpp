// expect: x.tile\(shape, \.\.\.\): the tile shape \(\) needs one extent per dimension of the array \(\?\) \(1\)
// A rank-0 tile of a 1-D array used to compile and then throw in lower().
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512)), [](auto x) {
#ifdef STAGECRAFT_KO
    auto t = x.tile(shape(), program_id());
#else
    auto t = x.tile(shape(128_c), program_id());
#endif
    return store(t, load(t) * 2.0f);
  });
}
int main() { (void)lower(make()); }
