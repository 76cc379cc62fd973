// expect: wgmma in role 1 \(thread_id\(\) == 1\), which is one warp \(32 threads\): wgmma is a warpgroup instruction \(.sync.aligned over 128 threads\)
// A consumer's wgmma moved into the role threads(...) declares as a single warp (the producer's).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long consumer = 1;
#else
constexpr long long consumer = 0;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(warpgroup, warp), accumulator<f32>(shape(64_c, 128_c)),
                        smem<f16>(shape(64_c, 64_c), swizzle(128_c)), smem<f16>(shape(128_c, 64_c), swizzle(128_c)),
                        [](auto acc, auto a, auto b) {
                          return if_(thread_id() == int_c<consumer>, seq(wgmma(acc, a, transpose(b)), wgmma_commit(), wgmma_wait(0_c)));
                        });
}
int main() { (void)lower(make()); }
