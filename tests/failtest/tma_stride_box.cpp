// expect: copy_gmem_to_smem: a strided TMA box traverses extent \* stride elements, at most 256 per dimension, but the view \(86, 4\) with element strides \(3, 1\) traverses 258 in dimension 0
// TMA traverses extent * stride elements of a strided dimension (boxDim), at most 256: 85 rows at stride 3 compile (255), 86 do not (258).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long rows = 86;
#else
constexpr long long rows = 85;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(int_c<rows * 3 * 4>, 4_c)), smem<f32>(shape(int_c<rows>, 4_c)),
                        barrier(arrivals(1_c)), [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(strides(3_c, 1_c), program_id(), 0_c), buf, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
