// expect: Barriers are not arrays
// Converting the stage's barrier instead of the loaded stage: cast<f16>(full[s]) for cast<f16>(load(buf[s])).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 64)),
                        smem<f32>(shape(2_c, 128_c, 64_c)), smem<f16>(shape(128_c, 64_c)),
                        barrier(arrivals(1_c), count(2_c)), [](auto x, auto buf, auto out, auto full) {
                          return for_(range(2_c), [&](auto s) {
#ifdef STAGECRAFT_KO
                            auto h = cast<f16>(full[s]);
#else
                            auto h = cast<f16>(load(buf[s]));
#endif
                            return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf[s], full[s]), barrier_wait(full[s]),
                                       store(out, h));
                          });
                        });
}
int main() { (void)lower(make()); }
