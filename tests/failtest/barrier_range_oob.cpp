// expect: Barrier offset is out of bounds: the index ranges over \[0, 8\), but the dimension has 4 elements
// A loop over 8 steps indexes a 4-deep barrier ring with the raw step instead of the slot j % 4.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 512)),
                        smem<f32>(shape(4_c, 128_c, 64_c)), barrier(arrivals(1_c), count(4_c)),
                        [](auto x, auto buf, auto full) {
                          return for_(range(8_c), [&](auto j) {
#ifdef STAGECRAFT_KO
                            auto s = j;
#else
                            auto s = j % 4_c;
#endif
                            return seq(copy_gmem_to_smem(x.block(program_id(), j), buf[j % 4_c], full[s]), barrier_wait(full[s]));
                          });
                        });
}
int main() { (void)lower(make()); }
