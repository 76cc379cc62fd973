// expect: copy_gmem_to_smem: a TMA box has at most 256 elements per dimension, but the view \(257, 4\) has 257 in dimension 0
// A TMA box of 256 rows compiles, 257 do not: cuTensorMapEncodeTiled takes at most 256
// elements per box dimension.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long rows = 257;
#else
constexpr long long rows = 256;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(int_c<rows * 4>, 4_c)), smem<f32>(shape(int_c<rows>, 4_c)),
                        barrier(arrivals(1_c)), [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0_c), buf, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
