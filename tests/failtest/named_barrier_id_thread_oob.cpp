// expect: Barrier offset is out of bounds: the kernel has num_threads = 8 warpgroups, but an index derived from thread_id\(\) stays in bounds only for up to 7
// A named-barrier id derived from thread_id() (one barrier per warpgroup, as FA3 numbers its
// schedulers): with 8 warpgroups the last id would be 7, past the 7 ids there are.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  return kernel<sm_90a>("k", grid(1), threads(8_c), [](auto...) {
#else
  return kernel<sm_90a>("k", grid(1), threads(7_c), [](auto...) {
#endif
    return named_barrier_sync(thread_id(), 128_c);
  });
}
int main() { (void)lower(make()); }
