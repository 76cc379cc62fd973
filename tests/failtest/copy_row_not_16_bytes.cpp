// expect: TMA copies move a multiple of 16 bytes in total and per row, but the view \(4, 3\) of f32 has 48 bytes and rows of 12 bytes
// 48 bytes in all, a multiple of 16, but rows of 12 bytes: TMA's 16-byte rule is per row too
// (copy_not_16_bytes fails both parts, so it cannot tell whether the row part is checked).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 12)),
#ifdef STAGECRAFT_KO
                        smem<f32>(shape(4_c, 3_c)),
#else
                        smem<f32>(shape(4_c, 4_c)),
#endif
                        barrier(arrivals(1_c), count(1_c)), [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
