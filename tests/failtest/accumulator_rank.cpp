// expect: a wgmma accumulator is 2-D .or a 1-D row vector, shape.m.. with static extents
// A 3-D accumulator: neither a D fragment nor the row vector of one.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c, 8_c, 8_c)), [](auto acc) { return store(acc, 0.0f); });
#else
  return kernel<sm_90a>("k", grid(1), threads(1_c), accumulator<f32>(shape(64_c)), [](auto acc) { return store(acc, 0.0f); });
#endif
}
int main() { (void)lower(make()); }
