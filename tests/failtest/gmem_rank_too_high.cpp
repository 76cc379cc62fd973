// expect: gmem<T>\(name, shape\): GMEM parameters have 1 to 8 dimensions, but the shape \(\?, \?, \?, \?, \?, \?, \?, \?, \?\) has 9
// Rank 6 to 8 parameters work with plain loads and stores (TMA stops at 5); rank 9 is rejected
// where it is declared instead of in lower().
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  auto x = gmem<f32>("x", shape(2, 2, 2, 2, 2, 2, 2, 2, 2));
#else
  auto x = gmem<f32>("x", shape(2, 2, 2, 2, 2, 2, 2, 2));
#endif
  return kernel<sm_90a>("k", grid(1), threads(1_c), x, [](auto) { return seq(); });
}
int main() { (void)lower(make()); }
