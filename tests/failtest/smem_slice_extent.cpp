// expect: slice<Axis>\(view, start, extent\) of an SMEM view: the extent is a static integer \(16_c\), as SMEM shapes are
// The extent decides the view's type (its shape): it cannot be a run-time value.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("y", shape(128_c, 32_c)), smem<f32>(shape(128_c, 64_c)), [](auto y, auto buf) {
#ifdef STAGECRAFT_KO
    return store(y.tile(shape(128_c, 32_c), 0_c, 0_c), load(slice<1>(buf, 0_c, 32)));
#else
    return store(y.tile(shape(128_c, 32_c), 0_c, 0_c), load(slice<1>(buf, 0_c, 32_c)));
#endif
  });
}
int main() { (void)lower(make()); }
