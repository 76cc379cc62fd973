// expect: kernel exceeds available shared memory: smem_bytes=232456 > max_smem_bytes=232448
// Barriers count against the SMEM budget too: 227 KiB less 8 bytes of stages leave room for
// exactly one mbarrier (8 bytes); a second one is over.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long barriers = 2;
#else
constexpr long long barriers = 1;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), smem<i8>(shape(int_c<227 * 1024 - 8>)),
                        barrier(arrivals(1_c), count(int_c<barriers>)), [](auto, auto bars) {
                          return seq(barrier_arrive(bars[0_c]), barrier_wait(bars[0_c]));
                        });
}
int main() { (void)lower(make()); }
