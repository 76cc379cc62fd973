// expect: x.block\(strides\(...\), ...\): the strides \(2\) need one element stride per dimension of the array \(1024, 64\) \(2\)
// A strided block takes one element stride per dimension of its array.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
const auto every = strides(2_c);
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
