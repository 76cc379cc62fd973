// expect: Barriers are unsupported for SMEM -> GMEM copies
// A TMA store given a barrier as if it completed like a load (stores complete through bulk groups).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("y", shape(512, 64)),
                        smem<f32>(shape(128_c, 64_c)), barrier(arrivals(1_c), count(1_c)),
                        [](auto y, auto buf, auto done) {
#ifdef STAGECRAFT_KO
                          auto put = copy_smem_to_gmem(buf, y.block(program_id(), 0), done);
#else
                          auto put = copy_smem_to_gmem(buf, y.block(program_id(), 0));
#endif
                          return seq(store(buf, load(buf) * 0.0f), commit_smem(), put, commit_smem_to_gmem_group(),
                                     wait_smem_to_gmem(0_c));
                        });
}
int main() { (void)lower(make()); }
