// expect: Barriers are required for TMA GMEM -> SMEM copies
// A TMA load issued without the barrier that tells the consumer when the bytes have landed.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 64)),
                        smem<f32>(shape(128_c, 64_c)), barrier(arrivals(1_c), count(1_c)),
                        [](auto x, auto buf, auto full) {
#ifdef STAGECRAFT_KO
                          auto fetch = copy_gmem_to_smem(x.block(program_id(), 0), buf);
#else
                          auto fetch = copy_gmem_to_smem(x.block(program_id(), 0), buf, full);
#endif
                          return seq(fetch, barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
