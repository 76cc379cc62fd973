// expect: async_load_tmem in role 1 \(thread_id\(\) == 1\), which is one warp: the tcgen05.ld of a warp reaches only its quarter of the 128 TMEM lanes
// An epilogue's TMEM load given to the MMA warp: it reaches 32 of D's 128 lanes.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long epilogue = 1;
#else
constexpr long long epilogue = 0;
#endif

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(warpgroup, warp), tmem<f32>(shape(128_c, 64_c)), smem<f32>(shape(128_c, 64_c)),
                         [](auto d, auto s) {
                           return seq(if_(thread_id() == int_c<epilogue>, store(s, async_load_tmem(d))), if_(thread_id() == 0_c, tmem_dealloc(d)));
                         });
}
int main() { (void)lower(make()); }
