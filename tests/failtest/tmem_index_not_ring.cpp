// expect: only a TMEM ring, tmem<T>\(shape\(stages, 128, columns\)\), is indexed: d\[s\] is its stage s
// d[s] picks stage s of a ring of accumulators; a (lanes, columns) allocation has no stages (its
// rows are lanes, which a tcgen05.ld of the warpgroup reads all of).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
auto accumulators() { return tmem<f32>(shape(128_c, 64_c)); }
#else
auto accumulators() { return tmem<f32>(shape(2_c, 128_c, 64_c)); }
#endif

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), gmem<f32>("y", shape(128, 64)), accumulators(),
                         [](auto y, auto d) { return seq(store(y.tile(shape(128_c, 64_c), 0_c, 0_c), async_load_tmem(d[0_c])), tmem_dealloc(d)); });
}
int main() { (void)make(); }
