// expect: named_barrier_arrive: the id is out of range: it can be 7, but ids are 0 to 6 \(hardware ids 9 to 15
// A static named-barrier id past the seven the generated code leaves free (hardware ids 0 to 8
// are __syncthreads and the warpgroups' own barriers).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(2_c), [](auto...) {
#ifdef STAGECRAFT_KO
    return if_(thread_id() == 0_c, named_barrier_arrive(7_c, 256_c), named_barrier_sync(6_c, 256_c));
#else
    return if_(thread_id() == 0_c, named_barrier_arrive(6_c, 256_c), named_barrier_sync(6_c, 256_c));
#endif
  });
}
int main() { (void)lower(make()); }
