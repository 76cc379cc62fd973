// expect: kernel exceeds available tensor memory: tmem_columns=544 > max_tmem_columns=512
// A ring of accumulators is one allocation of every stage's columns: two stages of 256 f32
// columns are the SM's 512 (gemm_blackwell's ring at BN = 256), and nothing else fits beside
// them; two stages of 128 leave room.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
constexpr long long C = 256;
#else
constexpr long long C = 128;
#endif

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), gmem<f32>("y", shape(128, 256)), tmem<f32>(shape(2_c, 128_c, int_c<C>)),
                         tmem<f32>(shape(128_c, 32_c)), [](auto y, auto d, auto e) {
                           return seq(store(y.tile(shape(128_c, int_c<C>), 0_c, 0_c), async_load_tmem(d[1_c])),
                                      store(y.tile(shape(128_c, 32_c), 0_c, 0_c), async_load_tmem(e)), tmem_dealloc(d), tmem_dealloc(e));
                         });
}
int main() { (void)make(); }
