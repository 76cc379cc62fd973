// expect: copy_gmem_to_smem: the block \(64, 64\) with element strides \(2, 1\) has a footprint that does not divide the shape of the GMEM array \(192, 64\)
// A strided block addresses whole footprints (shape * strides): 64 rows at stride 2 tile 256 rows, not 192 (which 64 divides).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long rows = 192;
#else
constexpr long long rows = 256;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", shape(int_c<rows>, 64_c)), smem<f32>(shape(64_c, 64_c)),
                        barrier(arrivals(1_c)), [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(strides(2_c, 1_c), 0_c, 0_c), buf, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
