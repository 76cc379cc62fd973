// expect: threads\(...\): role 1 is a warpgroup but starts at warp 1: a warpgroup role starts on a warpgroup boundary
// A single warp declared before a warpgroup: the warpgroup would take warps 1-4, straddling two
// hardware warpgroups.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_100a>("k", grid(1), threads(warp, warpgroup), [](auto...) { return commit_smem(); });
#else
  return kernel<sm_100a>("k", grid(1), threads(warpgroup, warp), [](auto...) { return commit_smem(); });
#endif
}
int main() { (void)lower(make()); }
