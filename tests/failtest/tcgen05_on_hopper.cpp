// expect: tcgen05 instructions \(tcgen05_mma, tcgen05_commit_arrive, async_load_tmem, store_tmem\) need a kernel<sm_100a>, but this kernel targets sm_90a
// A Blackwell tcgen05 kernel declared for Hopper.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using target_t = sm_90a;
#else
using target_t = sm_100a;
#endif

auto make() {
  return kernel<target_t>("k", grid(4), threads(1_c), tmem<f32>(shape(128_c, 128_c)), smem<f16>(shape(128_c, 64_c), swizzle(128_c)),
                          smem<f16>(shape(128_c, 64_c), swizzle(128_c)), barrier(arrivals(1_c), count(1_c), orders_tensor_core),
                          [](auto acc, auto a, auto b, auto done) {
                            return seq(tcgen05_mma(acc, a, transpose(b), done, false), barrier_wait(done));
                          });
}
int main() { (void)lower(make()); }
