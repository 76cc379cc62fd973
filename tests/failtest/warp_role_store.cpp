// expect: store in role 2 \(thread_id\(\) == 2\), which is one warp \(32 threads\): tile math spreads a tile over the 128 threads of a warpgroup
// Tile math left in the else branch of a role test, which the single warps reach too: role 1 is
// excluded by the condition, role 2 (a warp) is not.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(warpgroup, warp, warp), gmem<f32>("y", shape(128_c, 64_c)),
                        smem<f32>(shape(128_c, 64_c)), [](auto y, auto s) {
#ifdef STAGECRAFT_KO
                          return if_(thread_id() == 1_c, commit_smem(), store(s, full<f32>(shape(128_c, 64_c), 1.0f)));
#else
                          return if_(thread_id() >= 1_c, commit_smem(), store(s, full<f32>(shape(128_c, 64_c), 1.0f)));
#endif
                        });
}
int main() { (void)lower(make()); }
