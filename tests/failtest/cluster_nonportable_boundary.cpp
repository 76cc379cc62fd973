// expect: a cluster of 17 CTAs exceeds the limit of 16
// The non-portable cluster limit to the CTA: 16 CTAs compile, 17 do not.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long ctas = 17;
#else
constexpr long long ctas = 16;
#endif

auto make() {
  return kernel<sm_90a>("k", grid(int_c<ctas * 4>), threads(1_c), cluster_nonportable(int_c<ctas>),
                        cluster_barrier(collective_axes(0_c), arrivals(1_c)),
                        [](auto peers) { return seq(barrier_arrive(peers), barrier_wait(peers)); });
}
int main() { (void)lower(make()); }
