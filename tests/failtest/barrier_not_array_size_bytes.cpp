// expect: Barriers are not arrays
// Sizing the per-step byte budget from the barrier instead of the stage buffer it guards.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 64)),
                        smem<f32>(shape(2_c, 128_c, 64_c)), barrier(arrivals(1_c), count(2_c)),
                        [](auto x, auto buf, auto full) {
#ifdef STAGECRAFT_KO
                          const long long steps = 65536 / size_bytes(full[0_c]);
#else
                          const long long steps = 65536 / size_bytes(buf[0_c]);
#endif
                          return for_(range(steps), [&](auto j) {
                            auto s = stage<2>(j);
                            return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf[s], full[s]), barrier_wait(full[s]));
                          });
                        });
}
int main() { (void)lower(make()); }
