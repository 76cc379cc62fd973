// expect: copy_gmem_to_smem: the box \(64, 64\) with its element strides is larger than the GMEM array \(96, 64\)
// A strided block traverses its footprint (shape * strides): 64 rows at stride 2 span 128 rows, more than the
// array's 96. The twin's 192 rows are one and a half footprints: the second block overhangs, which TMA fills.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long rows = 96;
#else
constexpr long long rows = 192;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", shape(int_c<rows>, 64_c)), smem<f32>(shape(64_c, 64_c)),
                        barrier(arrivals(1_c)), [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(strides(2_c, 1_c), 1_c, 0_c), buf, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
