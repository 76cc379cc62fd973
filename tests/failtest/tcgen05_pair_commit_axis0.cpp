// expect: tcgen05_commit_arrive_2cta: a pair commit always arrives in both CTAs of its pair \(cluster axis 0\): its collective_axes name the axes along which the other pairs lie
// A pair commit reaches its own pair anyway: collective_axes name the other pairs (axis 1 or 2), never axis 0.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(2, 2), threads(1_c), cluster(2_c, 2_c), tmem<f32>(shape(128_c, 128_c)),
                         smem<bf16>(shape(128_c, 64_c), swizzle(128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                         barrier(arrivals(2_c), orders_tensor_core), barrier(arrivals(1_c), orders_tensor_core),
                         [](auto d, auto a, auto b, auto empty, auto done) {
#ifdef STAGECRAFT_KO
                           auto release = tcgen05_commit_arrive_2cta(empty, collective_axes(0_c));
#else
                           auto release = tcgen05_commit_arrive_2cta(empty, collective_axes(1_c));
#endif
                           return seq(if_(cluster_idx(0_c) == 0_c, seq(tcgen05_mma_2cta(d, a, transpose(b), false), release, tcgen05_commit_arrive_2cta(done))),
                                      barrier_wait(done), barrier_wait(empty));
                         });
}
int main() { (void)lower(make()); }
