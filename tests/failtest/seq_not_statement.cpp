// expect: seq\(\.\.\.\) takes statements
// A computed tile dropped into seq(...) without store(...): the result would go nowhere.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(512, 64)), smem<f32>(shape(128_c, 64_c)),
                        barrier(arrivals(1_c), count(1_c)), [](auto x, auto buf, auto full) {
                          auto fetch = copy_gmem_to_smem(x.block(program_id(), 0), buf, full);
#ifdef STAGECRAFT_KO
                          return seq(fetch, barrier_wait(full), load(buf) + 1.0f);
#else
                          return seq(fetch, barrier_wait(full), store(buf, load(buf) + 1.0f));
#endif
                        });
}
int main() { (void)lower(make()); }
