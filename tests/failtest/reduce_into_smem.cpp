// expect: a reduction goes to GMEM only
// A CTA's partial summed into its own SMEM tile with reduce_add: SMEM has no atomics to offer
// here (one warpgroup owns the tile); the reduction belongs on the store to GMEM.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto t = shape(64_c, 64_c);
  return kernel<sm_90a>("k", grid(2), threads(1_c), gmem<f32>("x", shape(64, 128)), gmem<f32>("y", shape(64, 64)), smem<f32>(t),
                        [t](auto x, auto y, auto sum) {
#ifdef STAGECRAFT_KO
                          return seq(store(sum, load(x.tile(t, 0_c, program_id())), reduce_add), store(y.tile(t, 0_c, 0_c), load(sum), reduce_add));
#else
                          return seq(store(sum, load(x.tile(t, 0_c, program_id()))), store(y.tile(t, 0_c, 0_c), load(sum), reduce_add));
#endif
                        });
}
int main() { (void)lower(make()); }
