// expect: kernel exceeds available tensor memory: tmem_columns=1024 > max_tmem_columns=512
// Two f32 accumulators of 512 columns each: the SM has 512 TMEM columns in total.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long N = 512;
#else
constexpr long long N = 256;
#endif

auto make() {
  return kernel<sm_100a>("k", grid(4), threads(1_c), gmem<f32>("y", shape(512, 1024)),
                         tmem<f32>(shape(128_c, int_c<N>)), tmem<f32>(shape(128_c, int_c<N>)),
                         [](auto y, auto acc0, auto acc1) {
                           auto out = [&](auto c) { return y.tile(shape(128_c, int_c<N>), program_id(), c); };
                           return seq(store(out(0_c), async_load_tmem(acc0)), store(out(1_c), async_load_tmem(acc1)));
                         });
}
int main() { (void)lower(make()); }
