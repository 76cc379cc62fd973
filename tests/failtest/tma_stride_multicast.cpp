// expect: copy_gmem_to_smem: a multicast load splits the rows of its block over the cluster, so with element strides \(2, 1\) it takes a plain block
// A multicast load splits its box's rows over the cluster; that split is not defined for strided boxes here.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), cluster(2_c), gmem<f32>("x", shape(256_c, 64_c)), smem<f32>(shape(128_c, 64_c)),
                        barrier(arrivals(1_c)), [](auto x, auto buf, auto full) {
#ifdef STAGECRAFT_KO
                          auto get = copy_gmem_to_smem(x.block(strides(2_c, 1_c), 0_c, 0_c), buf, full, collective_axes(0_c));
#else
                          auto get = copy_gmem_to_smem(x.block(0_c, 0_c), buf, full, collective_axes(0_c));
#endif
                          return seq(get, barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
