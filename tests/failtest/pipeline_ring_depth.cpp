// expect: emit_pipeline: a ring of shape \(2, 64, 32\) cannot hold 3 concurrent steps: its first dimension must be 3
// max_concurrent_steps raised to 3 but the SMEM ring still has 2 stages.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

constexpr long long K = 3;
auto make() {
  return kernel<sm_90a>("k", grid(2), threads(1_c), gmem<f32>("x", shape(128, 256)), gmem<f32>("y", shape(128, 256)),
#ifdef STAGECRAFT_KO
                        smem<f32>(shape(2_c, 64_c, 32_c)),
#else
                        smem<f32>(shape(int_c<K>, 64_c, 32_c)),
#endif
                        smem<f32>(shape(int_c<K>, 64_c, 32_c)), barrier(arrivals(1_c), count(int_c<K>)),
                        [](auto x, auto y, auto xs, auto ys, auto full) {
                          auto at = [](auto const& a) { return [a](auto j) { return a.block(program_id(), j); }; };
                          return emit_pipeline<K>(8, full, ins(in(x, xs, at(x))), outs(out(y, ys, at(y))),
                                                  [](auto, auto xv, auto yv) { return store(yv, load(xv) * 2.0f); });
                        });
}
int main() { (void)lower(make()); }
