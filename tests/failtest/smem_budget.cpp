// expect: kernel exceeds available shared memory: smem_bytes=262208 > max_smem_bytes=232448
// A ring made 8 stages deep: 8 x 32 KiB f32 stages (plus barriers) exceed the 227 KiB of a CTA.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long K = 8;
#else
constexpr long long K = 6;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 1024)),
                        smem<f32>(shape(int_c<K>, 128_c, 64_c)), barrier(arrivals(1_c), count(int_c<K>)),
                        [](auto x, auto buf, auto full) {
                          return for_(range(16_c), [&](auto j) {
                            auto s = stage<K>(j);
                            return seq(copy_gmem_to_smem(x.block(program_id(), j), buf[s], full[s]), barrier_wait(full[s]));
                          });
                        });
}
int main() { (void)lower(make()); }
