// expect: MMA barrier must have orders_tensor_core set to True\.
// The barrier a tcgen05 commit arrives on is declared without orders_tensor_core.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(4), threads(1_c), tmem<f32>(shape(128_c, 128_c)), smem<f16>(shape(128_c, 64_c), swizzle(128_c)),
                         smem<f16>(shape(128_c, 64_c), swizzle(128_c)),
#ifdef STAGECRAFT_KO
                         barrier(arrivals(1_c), count(1_c)),
#else
                         barrier(arrivals(1_c), count(1_c), orders_tensor_core),
#endif
                         [](auto acc, auto a, auto b, auto mma_done) {
                           return seq(tcgen05_mma(acc, a, transpose(b), false), tcgen05_commit_arrive(mma_done), barrier_wait(mma_done));
                         });
}
int main() { (void)lower(make()); }
