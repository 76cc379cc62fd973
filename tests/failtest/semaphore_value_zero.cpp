// expect: semaphore_signal: the value must be 1 to 2\^31 - 1, but got 0
// A signal of 0 would release nothing to nobody, and a wait for 0 would not wait: a static value
// must be positive.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(2), threads(1_c), semaphores("turn", shape(2_c)), [](auto turn) {
#ifdef STAGECRAFT_KO
    return semaphore_signal(turn(1_c), 0_c);
#else
    return semaphore_signal(turn(1_c), 1_c);
#endif
  });
}
int main() { (void)lower(make()); }
