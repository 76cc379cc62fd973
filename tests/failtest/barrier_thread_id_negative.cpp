// expect: Barrier offset is out of bounds: an index derived from thread_id\(\) can be negative \(its range starts at -1\); an if_ condition does not narrow the range
// Each warpgroup but the first signals its predecessor. The guard makes the index safe, but an
// if_ condition does not narrow index ranges: the fix is runtime_index (checked by the interpreter).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(2_c), barrier(arrivals(1_c), count(2_c)), [](auto bar) {
#ifdef STAGECRAFT_KO
    auto prev = thread_id() - 1_c;
#else
    auto prev = runtime_index(thread_id() - 1_c);
#endif
    return if_(thread_id() > 0_c, barrier_arrive(bar[prev]));
  });
}
int main() { (void)lower(make()); }
