// expect: Barriers are not arrays
// Lesson 02, compile-time mistake 2 (the second seed error): a barrier loaded as if it held data.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("lesson02_not_array", grid(2), threads(1_c), gmem<f32>("y", shape(256, 64)),
                        smem<f32>(shape(128_c, 64_c)), barrier(arrivals(1_c), count(1_c)), [](auto y, auto buf, auto done) {
#ifdef STAGECRAFT_KO
                          return store(y.tile(shape(128_c, 64_c), program_id(), 0_c), load(done));
#else
                          return seq(barrier_arrive(done), barrier_wait(done), store(y.tile(shape(128_c, 64_c), program_id(), 0_c), load(buf)));
#endif
                        });
}
int main() { (void)lower(make()); }
