// expect: SMEM allocations need static shapes, but the shape \(\?, 128, 64\) has a run-time extent
// A ring depth passed at run time: one error at the declaration, none from the stage cursors
// that index the ring later (they used to add "cannot index a dimension of -1 stages").
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make(int depth) {
#ifdef STAGECRAFT_KO
  auto ring = smem<f32>(shape(depth, 128_c, 64_c));
#else
  (void)depth;
  auto ring = smem<f32>(shape(2_c, 128_c, 64_c));
#endif
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 128)), ring, barrier(arrivals(1_c), count(2_c)),
                        [](auto x, auto buf, auto full) {
                          return for_(range(2_c), [&](auto j) {
                            auto s = stage<2>(j);
                            return seq(copy_gmem_to_smem(x.block(program_id(), j), buf[s], full[s]), barrier_wait(full[s]),
                                       store(buf[s], load(buf[s]) + 1.0f), store(buf[1_c], load(buf[0_c])));
                          });
                        });
}
int main() { (void)lower(make(2)); }
