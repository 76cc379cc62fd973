// expect: Barriers are not arrays
// TMA load with its last two arguments swapped: the barrier given as the SMEM destination.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 64)),
                        smem<f32>(shape(2_c, 128_c, 64_c)), barrier(arrivals(1_c), count(2_c)),
                        [](auto x, auto buf, auto full) {
                          return for_(range(2_c), [&](auto s) {
#ifdef STAGECRAFT_KO
                            auto load_stage = copy_gmem_to_smem(x.block(program_id(), 0), full[s], buf[s]);
#else
                            auto load_stage = copy_gmem_to_smem(x.block(program_id(), 0), buf[s], full[s]);
#endif
                            return seq(load_stage, barrier_wait(full[s]));
                          });
                        });
}
int main() { (void)lower(make()); }
