// expect: Barrier offset is out of bounds: slice of length 3 starting in \[1, 3\) of a dimension of 4
// Off by one: a window of 3 barriers starting one past the loop index runs off the end of a 4-barrier array.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), barrier(arrivals(1_c), count(4_c)), [](auto bar) {
    return for_(range(2_c), [&](auto i) {
#ifdef STAGECRAFT_KO
      auto window = bar.slice(i + 1_c, 3_c);
#else
      auto window = bar.slice(i, 3_c);
#endif
      return seq(barrier_arrive(window[2_c]), barrier_wait(window[2_c]));
    });
  });
}
int main() { (void)lower(make()); }
