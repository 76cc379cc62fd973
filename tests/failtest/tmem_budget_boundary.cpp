// expect: kernel exceeds available tensor memory: tmem_columns=544 > max_tmem_columns=512
// The TMEM budget to the allocation unit: 256 + 128 + 128 columns fill the SM's 512; one more
// allocation of the smallest size (32 columns) is over.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_100a>("k", grid(4), threads(1_c), gmem<f32>("y", shape(512, 256)),
                         tmem<f32>(shape(128_c, 256_c)), tmem<f32>(shape(128_c, 128_c)), tmem<f32>(shape(128_c, 128_c)),
#ifdef STAGECRAFT_KO
                         tmem<f32>(shape(128_c, 32_c)),
                         [](auto y, auto acc, auto, auto, auto) {
#else
                         [](auto y, auto acc, auto, auto) {
#endif
                           return store(y.tile(shape(128_c, 256_c), program_id(), 0_c), async_load_tmem(acc));
                         });
}
int main() { (void)lower(make()); }
