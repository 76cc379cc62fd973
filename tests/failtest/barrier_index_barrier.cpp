// expect: Barrier can only be indexed with integers or slices
// Two barrier arrays mixed up: the empty barrier passed as the index of the full one.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), barrier(arrivals(1_c), count(2_c)),
                        barrier(arrivals(1_c), count(2_c)), [](auto full, auto empty) {
                          return for_(range(2_c), [&](auto s) {
#ifdef STAGECRAFT_KO
                            auto f = full[empty];
#else
                            auto f = full[s];
#endif
                            return seq(barrier_arrive(f), barrier_wait(f), barrier_arrive(empty[s]), barrier_wait(empty[s]));
                          });
                        });
}
int main() { (void)lower(make()); }
