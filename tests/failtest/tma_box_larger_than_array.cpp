// expect: copy_smem_to_gmem: the box \(128, 64\) is larger than the GMEM array \(100, 64\)
// A block may overhang the array's end (the twin's 200 rows: the second block's last 56 rows are dropped
// by the store), but a TMA box may not be larger than the array it moves.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long rows = 100;
#else
constexpr long long rows = 200;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("y", shape(int_c<rows>, 64_c)), smem<f32>(shape(128_c, 64_c)),
                        [](auto y, auto buf) {
                          return seq(store(buf, 1.0f), commit_smem(), copy_smem_to_gmem(buf, y.block(1_c, 0_c)),
                                     commit_smem_to_gmem_group(), wait_smem_to_gmem(0_c));
                        });
}
int main() { (void)lower(make()); }
