// expect: SMEM offset is out of bounds: offset = 5, but the dimension has 4 elements
// A stage index past the end of a 4-stage SMEM ring.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 64)),
                        smem<f32>(shape(4_c, 128_c, 64_c)), barrier(arrivals(1_c), count(4_c)),
                        [](auto x, auto buf, auto full) {
#ifdef STAGECRAFT_KO
                          auto last = buf[5_c];
#else
                          auto last = buf[3_c];
#endif
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0), last, full[3_c]), barrier_wait(full[3_c]));
                        });
}
int main() { (void)lower(make()); }
