// expect: Attempting to operate on barrier without indexing, but num_barriers = 4
// Lesson 02, compile-time mistake 1 (the first seed error): a 4-deep ring's barrier array waited
// on without a stage index. Pallas reports it when the kernel runs; here it does not compile.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("lesson02_unindexed", grid(2), threads(1_c), gmem<f32>("x", shape(256, 64)),
                        smem<f32>(shape(4_c, 128_c, 64_c)), barrier(arrivals(1_c), count(4_c)),
                        [](auto x, auto buf, auto full) {
#ifdef STAGECRAFT_KO
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0_c), buf[0_c], full[0_c]), barrier_wait(full));
#else
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0_c), buf[0_c], full[0_c]), barrier_wait(full[0_c]));
#endif
                        });
}
int main() { (void)lower(make()); }
