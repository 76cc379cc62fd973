// expect: Barriers are not arrays
// The output parameter shaped like the barrier declaration instead of the SMEM buffer it mirrors.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  auto buf = smem<f32>(shape(128_c, 64_c));
  auto done = barrier(arrivals(1_c), count(1_c));
#ifdef STAGECRAFT_KO
  auto out = gmem_like("y", done);
#else
  auto out = gmem_like("y", buf);
#endif
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", shape(128, 64)), out, buf, done,
                        [](auto x, auto y, auto b, auto bar) {
                          return seq(copy_gmem_to_smem(x.block(0, 0), b, bar), barrier_wait(bar),
                                     copy_smem_to_gmem(b, y.block(0, 0)), commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                        });
}
int main() { (void)lower(make()); }
