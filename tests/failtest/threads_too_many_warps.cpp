// expect: threads\(...\): the roles take 33 warps, but a CTA has at most 32 \(1024 threads\)
// Eight warpgroups and one more warp: 1056 threads.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(warpgroup, warpgroup, warpgroup, warpgroup, warpgroup, warpgroup, warpgroup, warpgroup, warp),
                        [](auto...) { return commit_smem(); });
#else
  return kernel<sm_90a>("k", grid(1), threads(warpgroup, warpgroup, warpgroup, warpgroup, warpgroup, warpgroup, warpgroup, warp),
                        [](auto...) { return commit_smem(); });
#endif
}
int main() { (void)lower(make()); }
