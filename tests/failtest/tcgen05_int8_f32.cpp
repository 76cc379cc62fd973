// expect: tcgen05_mma: i8 inputs accumulate in i32, but the accumulator is f32
// s8 operands into an f32 TMEM accumulator: kind::i8 accumulates in s32 only (its D format is
// S32), so the accumulator must be tmem<i32>.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using TD = f32;
#else
using TD = i32;
#endif

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<TD>(shape(128_c, 64_c)), smem<i8>(shape(128_c, 128_c), swizzle(128_c)),
                         smem<i8>(shape(64_c, 128_c), swizzle(128_c)), barrier(arrivals(1_c), orders_tensor_core),
                         [](auto d, auto a, auto b, auto done) {
                           return seq(tcgen05_mma(d, a, transpose(b), done, false), barrier_wait(done), tmem_dealloc(d));
                         });
}
int main() { (void)lower(make()); }
