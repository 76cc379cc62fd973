// expect: program_ids<N>..: N is 1, 2 or 3
// Four coordinates asked of a three-axis grid.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(2, 2), threads(1_c), gmem<f32>("x", shape(128_c, 64_c)), [](auto x) {
#ifdef STAGECRAFT_KO
    (void)program_ids<4>();
#endif
    auto [m, n] = program_ids<2>();
    return store(x.tile(shape(64_c, 32_c), m, n), load(x.tile(shape(64_c, 32_c), m, n)) + 1.0f);
  });
}
int main() { (void)lower(make()); }
