// expect: semaphore_signal/semaphore_wait take one counter: index the semaphore array, sem\(i, j\)
// A semaphore array is many counters: a wait must name one of them.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(2), threads(1_c), semaphores("turn", shape(2_c, 4_c)), [](auto turn) {
#ifdef STAGECRAFT_KO
    return semaphore_wait(turn);
#else
    return semaphore_wait(turn(program_id(), 0_c));
#endif
  });
}
int main() { (void)lower(make()); }
