// expect: tcgen05_mma: A is the sub-view \(128, 64\) of \(256, 64\), which tcgen05_mma does not read: pass a whole view \(index a stage\)
// The second 128 rows of A as a slice (refused: the tcgen05 descriptors are built from whole
// views), and as a stage of a (2, 128, 64) view (accepted).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
#define A_SHAPE shape(256_c, 64_c)
#define A_ROWS(a) slice<0>(a, 128_c, 128_c)
#else
#define A_SHAPE shape(2_c, 128_c, 64_c)
#define A_ROWS(a) a[1_c]
#endif

auto make() {
  return kernel<sm_100a>("k", grid(1), threads(1_c), tmem<f32>(shape(128_c, 64_c)), smem<bf16>(A_SHAPE, swizzle(128_c)),
                         smem<bf16>(shape(64_c, 64_c), swizzle(128_c)), barrier(arrivals(1_c), orders_tensor_core),
                         [](auto d, auto a, auto b, auto done) {
                           return seq(tcgen05_mma(d, A_ROWS(a), transpose(b), done, false), barrier_wait(done), tmem_dealloc(d));
                         });
}
int main() { (void)lower(make()); }
