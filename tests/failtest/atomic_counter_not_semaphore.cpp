// expect: an atomic takes a counter of a semaphore array \(semaphores\(name, shape\), then sem\(i, j\)\)
// The counter of an atomic is a semaphore element: kernel-owned, zero at every launch, touched by
// nothing but atomics and semaphore ops. A GMEM tile of an output is not one.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(2), threads(1_c), gmem<i32>("y", shape(2_c, 32_c)), semaphores("next", shape(1_c)), smem<i32>(shape(1_c)),
                        [](auto y, auto next, auto slot) {
#ifdef STAGECRAFT_KO
                          auto counter = y.tile(shape(1_c, 1_c), 0_c, 0_c);
#else
                          auto counter = next(0_c);
#endif
                          return seq(fetch_add(counter, 1_c, slot),
                                     store(y.tile(shape(1_c, 32_c), program_id(0_c), 0_c), full<i32>(shape(1_c, 32_c), 0) + fetched(slot)));
                        });
}
int main() { (void)lower(make()); }
