// expect: Offset is out of bounds: a barrier or SMEM index derived from program_id\(0\) stays in bounds only for up to 4 CTAs along grid axis 0, but that extent is a run-time value: give grid\(\.\.\.\) a static extent
// A run-time grid says nothing about program_id's range: make the grid static or check the index
// at run time.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make(int ctas) {
  return kernel<sm_90a>("k", grid(ctas), threads(1_c), barrier(arrivals(1_c), count(4_c)), [](auto bar) {
#ifdef STAGECRAFT_KO
    auto i = program_id(0_c);
#else
    auto i = runtime_index(program_id(0_c));
#endif
    return seq(barrier_arrive(bar[i]), barrier_wait(bar[i]));
  });
}
int main() { (void)lower(make(4)); }
