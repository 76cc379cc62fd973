// expect: copy_smem_to_gmem with reduce_max: the destination is f32, but reduce_max takes i32 and u32
// A running maximum of f32 scores kept with a TMA reduce: red and cp.reduce.async.bulk.tensor
// have no f32 max (an i32 view of non-negative floats orders the same, which is the usual way).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

#ifdef STAGECRAFT_KO
using T = f32;
#else
using T = i32;
#endif

auto make() {
  auto t = shape(64_c, 64_c);
  return kernel<sm_90a>("k", grid(2), threads(1_c), gmem<T>("x", shape(64, 128)), gmem<T>("y", shape(64, 64)), smem<T>(t),
                        [t](auto x, auto y, auto buf) {
                          return seq(store(buf, load(x.tile(t, 0_c, program_id()))), commit_smem(),
                                     copy_smem_to_gmem(buf, y.block(0_c, 0_c), reduce_max), commit_smem_to_gmem_group(),
                                     wait_smem_to_gmem(0_c, read_only));
                        });
}
int main() { (void)lower(make()); }
