// expect: store_tile\(buf, value, dst, pending\): pending must be a static integer
// The epilogue's staged store: how many newer bulk stores may still be reading their buffers is
// part of the kernel's structure (the number of staging buffers less one), so it is a static int.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("y", shape(128, 64)), smem<f32>(shape(2_c, 64_c, 64_c)), [](auto y, auto cs) {
    auto tile = full<f32>(shape(64_c, 64_c), 1.0f);
#ifdef STAGECRAFT_KO
    const int pending = 1;
#else
    constexpr auto pending = 1_c;
#endif
    return seq(store_tile(cs[0_c], tile, y.block(0_c, 0_c), pending), store_tile(cs[1_c], tile, y.block(1_c, 0_c), pending), wait_smem_to_gmem(0_c));
  });
}
int main() { (void)make(); }
