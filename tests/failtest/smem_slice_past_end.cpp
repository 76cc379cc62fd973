// expect: SMEM offset is out of bounds: slice<0>\(view, 96, 64\): elements 96 to 159 do not lie in axis 0 of the SMEM view \(128, 64\)
// A sub-view of rows that runs past the last row of the stage.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("y", shape(64_c, 64_c)), smem<f32>(shape(2_c, 128_c, 64_c)), [](auto y, auto buf) {
#ifdef STAGECRAFT_KO
    auto half = slice<0>(buf[1_c], 96_c, 64_c);
#else
    auto half = slice<0>(buf[1_c], 64_c, 64_c);
#endif
    return store(y.tile(shape(64_c, 64_c), 0_c, 0_c), load(half));
  });
}
int main() { (void)lower(make()); }
