// expect: store: Expected dtypes to match but src had type f32 and dst had type f16
// An f32 result stored into an f16 output buffer without converting it.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), smem<f32>(shape(128_c, 64_c)), smem<f16>(shape(128_c, 64_c)),
                        [](auto in, auto out) {
                          auto t = load(in) * 2.0f;
#ifdef STAGECRAFT_KO
                          return store(out, t);
#else
                          return store(out, cast<f16>(t));
#endif
                        });
}
int main() { (void)lower(make()); }
