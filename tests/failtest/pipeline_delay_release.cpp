// expect: emit_pipeline: delay_release = 2 must be in \[0, 2\)
// An input released two steps late in a two-stage pipeline: its stage would be refilled while still in use.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(2), threads(1_c), gmem<f32>("x", shape(128, 256)), gmem<f32>("y", shape(128, 256)),
                        smem<f32>(shape(2_c, 64_c, 32_c)), smem<f32>(shape(2_c, 64_c, 32_c)), barrier(arrivals(1_c), count(2_c)),
                        [](auto x, auto y, auto xs, auto ys, auto full) {
                          auto at = [](auto const& a) { return [a](auto j) { return a.block(program_id(), j); }; };
#ifdef STAGECRAFT_KO
                          auto input = in(x, xs, at(x), delay_release<2>);
#else
                          auto input = in(x, xs, at(x), delay_release<1>);
#endif
                          return emit_pipeline<2>(8, full, ins(input), outs(out(y, ys, at(y))),
                                                  [](auto, auto xv, auto yv) { return store(yv, load(xv) * 2.0f); });
                        });
}
int main() { (void)lower(make()); }
