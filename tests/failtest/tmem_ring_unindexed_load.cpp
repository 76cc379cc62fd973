// expect: async_load_tmem reads a \(lanes, columns\) TMEM view, but this one has shape \(2, 128, 64\): index a stage of the ring, d\[s\]
// A ring (stages, 128, columns) is read one stage at a time: tcgen05.ld moves the warpgroup's
// 128 lanes of one accumulator.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), gmem<f32>("y", shape(128, 64)), tmem<f32>(shape(2_c, 128_c, 64_c)), [](auto y, auto d) {
#ifdef STAGECRAFT_KO
    auto read = async_load_tmem(d);
#else
    auto read = async_load_tmem(d[stage<2>(1_c)]);
#endif
    return seq(store(y.tile(shape(128_c, 64_c), 0_c, 0_c), read), tmem_dealloc(d));
  });
}
int main() { (void)make(); }
