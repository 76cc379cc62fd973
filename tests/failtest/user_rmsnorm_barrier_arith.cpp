// expect: Barriers are not arrays
// User-shaped (issue 27): an RMSNorm with residual through a two-stage TMA ring, whose author
// computes the next stage's barrier as `full + 1` (pointer arithmetic on the array) instead of
// indexing it. The error must be as short as for the seed's kernel (failtest.error_size).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>(
      "rmsnorm_residual", grid(4), threads(1_c),
      gmem<f32>("x", shape(256_c, 128_c)), gmem<f32>("r", shape(256_c, 128_c)), gmem<f32>("w", shape(128_c)), gmem<f32>("y", shape(256_c, 128_c)),
      smem<f32>(shape(2_c, 16_c, 128_c)), smem<f32>(shape(16_c)), barrier(arrivals(1_c), count(2_c)),
      [&](auto x, auto r, auto w, auto y, auto xs, auto inv, auto full) {
        auto first = program_id() * 4_c;
        return for_(range(4_c), [&](auto j) {
          auto s = stage<2>(j);
#ifdef STAGECRAFT_KO
          auto landed = barrier_wait(full + 1);
#else
          auto landed = barrier_wait(full[s]);
#endif
          auto X = load(xs[s]) + load(r.tile(shape(16_c, 128_c), first + j, 0_c));
          return seq(copy_gmem_to_smem(x.block(first + j, 0_c), xs[s], full[s]), landed,
                     store(inv, rsqrt(sum<1>(X * X) / 128.0f + 1e-6f)),
                     store(y.tile(shape(16_c, 128_c), first + j, 0_c), X * broadcast<1>(load(inv), X) * broadcast<0>(load(w.tile(shape(128_c), 0_c)), X)));
        });
      });
}
int main() { (void)lower(make()); }
