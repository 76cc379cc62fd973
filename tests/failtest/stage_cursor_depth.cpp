// expect: Barrier: a stage cursor of depth 3 cannot index a dimension of 4 stages
// The ring depth changed in one declaration only: a 3-stage cursor indexes a 4-deep barrier array.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 1024)),
                        smem<f32>(shape(3_c, 128_c, 64_c)),
#ifdef STAGECRAFT_KO
                        barrier(arrivals(1_c), count(4_c)),
#else
                        barrier(arrivals(1_c), count(3_c)),
#endif
                        [](auto x, auto buf, auto full) {
                          return for_(range(16_c), [&](auto j) {
                            auto s = stage<3>(j);
                            return seq(copy_gmem_to_smem(x.block(program_id(), j), buf[s], full[s]), barrier_wait(full[s]));
                          });
                        });
}
int main() { (void)lower(make()); }
