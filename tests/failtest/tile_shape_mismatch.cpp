// expect: operator\+: Expected shapes to match, but lhs had shape \(128, 64\) and rhs had shape \(64, 64\)
// Adding a bias tile loaded from the wrong (64-row) buffer to a 128-row tile.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), smem<f32>(shape(128_c, 64_c)), smem<f32>(shape(64_c, 64_c)),
                        smem<f32>(shape(128_c, 64_c)), [](auto acc, auto small, auto bias) {
#ifdef STAGECRAFT_KO
                          auto b = load(small);
#else
                          auto b = load(bias);
#endif
                          return seq(store(acc, load(acc) + b), store(small, load(small) * 0.5f));
                        });
}
int main() { (void)lower(make()); }
