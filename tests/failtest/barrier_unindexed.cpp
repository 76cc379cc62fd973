// expect: Attempting to operate on barrier without indexing, but num_barriers = 4
// A K-deep ring's barrier array used without a stage index: the first seed error, at compile time.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 64)),
                        smem<f32>(shape(4_c, 128_c, 64_c)), barrier(arrivals(1_c), count(4_c)),
                        [](auto x, auto buf, auto full) {
                          return for_(range(4_c), [&](auto j) {
#ifdef STAGECRAFT_KO
                            return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf[j], full[j]), barrier_wait(full));
#else
                            return seq(copy_gmem_to_smem(x.block(program_id(), 0), buf[j], full[j]), barrier_wait(full[j]));
#endif
                          });
                        });
}
int main() { (void)lower(make()); }
