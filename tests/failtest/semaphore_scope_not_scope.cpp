// expect: after the value comes the scope, memory_scope::gpu or memory_scope::sys
// A semaphore op's order is fixed (a signal releases, a wait acquires): what follows the value is
// its scope, and a memory order there is a mistake the type catches.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(2), threads(1_c), semaphores("turn", shape(2_c)), [](auto turn) {
#ifdef STAGECRAFT_KO
    return semaphore_signal(turn(1_c), 1_c, memory_order::release);
#else
    return semaphore_signal(turn(1_c), 1_c, memory_scope::sys);
#endif
  });
}
int main() { (void)lower(make()); }
