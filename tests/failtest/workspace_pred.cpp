// expect: workspace<T>\(name, shape\): a workspace cannot hold pred, a register mask with no memory layout
// Masks live in registers; a workspace for them holds their casts.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  auto w = workspace<pred>("w", shape(64_c));
#else
  auto w = workspace<i32>("w", shape(64_c));
#endif
  return kernel<sm_90a>("k", grid(1), threads(1_c), w, [](auto) { return seq(); });
}
int main() { (void)lower(make()); }
