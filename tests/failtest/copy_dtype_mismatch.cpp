// expect: Expected dtypes to match but src had type f16 and dst had type f32
// An f16 input loaded by TMA into an f32 staging buffer (TMA copies bytes, it does not convert).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f16>("x", shape(512, 64)),
#ifdef STAGECRAFT_KO
                        smem<f32>(shape(2_c, 128_c, 64_c)),
#else
                        smem<f16>(shape(2_c, 128_c, 64_c)),
#endif
                        barrier(arrivals(1_c), count(2_c)), [](auto x, auto buf, auto full) {
                          return for_(range(4_c), [&](auto j) {
                            auto s = stage<2>(j);
                            return seq(copy_gmem_to_smem(x.block(j, 0), buf[s], full[s]), barrier_wait(full[s]));
                          });
                        });
}
int main() { (void)lower(make()); }
