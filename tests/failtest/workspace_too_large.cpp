// expect: workspace<T>\(name, shape\): a workspace of shape \(1024, 1024, 512\) and dtype f32 exceeds max_workspace_bytes=1073741824 \(it is zero-filled on every launch\)
// A static workspace shape is checked where it is declared: 1 GiB is the limit (exactly 1 GiB is fine).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  auto w = workspace<f32>("w", shape(1024_c, 1024_c, 512_c));
#else
  auto w = workspace<f32>("w", shape(1024_c, 1024_c, 256_c));
#endif
  return kernel<sm_90a>("k", grid(1), threads(1_c), w, [](auto) { return seq(); });
}
int main() { (void)make(); }
