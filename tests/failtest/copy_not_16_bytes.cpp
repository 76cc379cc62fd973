// expect: TMA copies move a multiple of 16 bytes in total and per row, but the view \(2, 3\) of f32 has 24 bytes and rows of 12 bytes
// A TMA box whose rows are 3 f32 = 12 bytes wide: TMA moves 16-byte units.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 12)),
#ifdef STAGECRAFT_KO
                        smem<f32>(shape(2_c, 3_c)),
#else
                        smem<f32>(shape(2_c, 4_c)),
#endif
                        barrier(arrivals(1_c), count(1_c)), [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
