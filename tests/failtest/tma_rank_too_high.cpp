// expect: copy_gmem_to_smem: TMA copies are 1- to 5-dimensional, but got rank 6
// A rank-6 parameter is fine for load/store, but not for a TMA copy.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  auto x = gmem<f32>("x", shape(2, 2, 2, 2, 8, 32));
  auto buf = smem<f32>(shape(1_c, 1_c, 1_c, 1_c, 8_c, 32_c));
#else
  auto x = gmem<f32>("x", shape(2, 2, 2, 8, 32));
  auto buf = smem<f32>(shape(1_c, 1_c, 1_c, 8_c, 32_c));
#endif
  return kernel<sm_90a>("k", grid(1), threads(1_c), x, buf, barrier(arrivals(1_c)), [](auto x, auto buf, auto bar) {
#ifdef STAGECRAFT_KO
    auto src = x.block(0, 0, 0, 0, 0, 0);
#else
    auto src = x.block(0, 0, 0, 0, 0);
#endif
    return seq(copy_gmem_to_smem(src, buf, bar), barrier_wait(bar));
  });
}
int main() { (void)lower(make()); }
