// expect: load: expected a SMEM, GMEM or accumulator view, but got a semaphore \(signal and wait on it: semaphore_signal, semaphore_wait\)
// A semaphore array is only signalled and waited on: nothing loads its counters (they change
// under atomics, and their zero at launch is the launcher's, not an input).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(2), threads(1_c), gmem<i32>("y", shape(64_c)), semaphores("turn", shape(64_c)), [](auto y, auto turn) {
#ifdef STAGECRAFT_KO
    return store(y.tile(shape(1_c), 0_c), load(turn(0_c)));
#else
    return seq(store(y.tile(shape(1_c), 0_c), 1), semaphore_signal(turn(0_c)));
#endif
  });
}
int main() { (void)lower(make()); }
