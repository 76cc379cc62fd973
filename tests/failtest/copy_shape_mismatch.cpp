// expect: Expected shapes to match, but src had shape \(64, 64\) and dst had shape \(128, 64\)
// A GMEM tile of 64 rows copied into a stage buffer of 128 rows.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 64)),
                        smem<f32>(shape(2_c, 128_c, 64_c)), barrier(arrivals(1_c), count(2_c)),
                        [](auto x, auto buf, auto full) {
                          return for_(range(2_c), [&](auto s) {
#ifdef STAGECRAFT_KO
                            auto src = x.tile(shape(64_c, 64_c), program_id() * 2_c + s, 0_c);
#else
                            auto src = x.tile(shape(128_c, 64_c), program_id() * 2_c + s, 0_c);
#endif
                            return seq(copy_gmem_to_smem(src, buf[s], full[s]), barrier_wait(full[s]));
                          });
                        });
}
int main() { (void)lower(make()); }
