// expect: x\.block\(strides\(\.\.\.\), \.\.\.\): TMA does not stride the innermost dimension \(the driver ignores it\), but the strides \(2, 2\) end in 2
// With interleave NONE the driver ignores the innermost element stride: asking for one is an error, not a silent dense copy.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
const auto every = strides(2_c, 2_c);
#else
const auto every = strides(2_c, 1_c);
#endif

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(1024_c, 64_c)), smem<f32>(shape(128_c, 64_c)),
                        barrier(arrivals(1_c)), [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(every, program_id(), 0_c), buf, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
