// expect: x.block\(strides\(...\), ...\): TMA element strides are 1 to 8, but the strides \(9, 1\) have 9 in dimension 0
// TMA element strides (cuTensorMapEncodeTiled elementStrides) are 1 to 8: 8 compiles, 9 does not.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
const auto every = strides(9_c, 1_c);
#else
const auto every = strides(8_c, 1_c);
#endif

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(1024_c, 64_c)), smem<f32>(shape(32_c, 64_c)),
                        barrier(arrivals(1_c)), [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(every, program_id(), 0_c), buf, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
