// expect: Offset is out of bounds: a barrier or SMEM index derived from program_id\(0\) stays in bounds only for up to 4 CTAs along grid axis 0, but the grid has 8
// One barrier per CTA of a static grid: program_id(0) ranges over the grid, so a grid of 4 CTAs
// may index a 4-element array directly, and a grid of 8 may not.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  auto g = grid(8_c);
#else
  auto g = grid(4_c);
#endif
  return kernel<sm_90a>("k", g, threads(1_c), barrier(arrivals(1_c), count(4_c)),
                        [](auto bar) { return seq(barrier_arrive(bar[program_id(0_c)]), barrier_wait(bar[program_id(0_c)])); });
}
int main() { (void)lower(make()); }
