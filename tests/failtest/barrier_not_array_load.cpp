// expect: Barriers are not arrays
// Loading the stage's barrier instead of its buffer: full[s] where buf[s] was meant.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 64)),
                        smem<f32>(shape(2_c, 128_c, 64_c)), barrier(arrivals(1_c), count(2_c)),
                        [](auto x, auto buf, auto full) {
                          return for_(range(2_c), [&](auto s) {
#ifdef STAGECRAFT_KO
                            auto t = load(full[s]);
#else
                            auto t = load(buf[s]);
#endif
                            return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf[s], full[s]), barrier_wait(full[s]),
                                       store(buf[s], t + 1.0f));
                          });
                        });
}
int main() { (void)lower(make()); }
