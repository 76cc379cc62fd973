// expect: break_if\(cond\): the condition must be an integer expression \(a comparison of indices\)
// A loop left on a float: conditions are index expressions.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), [](auto...) {
#ifdef STAGECRAFT_KO
    return for_(range(4_c), [](auto) { return break_if(0.5f); });
#else
    return for_(range(4_c), [](auto j) { return break_if(j > 1_c); });
#endif
  });
}
int main() { (void)lower(make()); }
