// expect: Barrier offset is out of bounds: offset = 4, but the dimension has 4 elements
// Off by one: the last barrier of a 4-deep ring is full[3_c], not full[4_c].
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 64)),
                        smem<f32>(shape(4_c, 128_c, 64_c)), barrier(arrivals(1_c), count(4_c)),
                        [](auto x, auto buf, auto full) {
#ifdef STAGECRAFT_KO
                          auto last = full[4_c];
#else
                          auto last = full[3_c];
#endif
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf[3_c], last), barrier_wait(last));
                        });
}
int main() { (void)lower(make()); }
