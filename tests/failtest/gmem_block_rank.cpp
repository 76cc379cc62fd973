// expect: a GMEM block of an array of shape \(\?, \?\) needs 2 coordinates, but got 1
// A block of a 2-D GMEM array addressed with a row coordinate only.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 64)), smem<f32>(shape(128_c, 64_c)),
                        barrier(arrivals(1_c), count(1_c)), [](auto x, auto buf, auto full) {
#ifdef STAGECRAFT_KO
                          auto src = x.block(program_id());
#else
                          auto src = x.block(program_id(), 0);
#endif
                          return seq(copy_gmem_to_smem(src, buf, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
