// expect: x.at\(i\): the index in \[4, 5\) reaches outside the table
// The total of 4 groups read as t.at(4) from a table of 4 offsets (4 groups need 5: one more than groups).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  auto table = gmem<i32>("offsets", shape(4_c));
#else
  auto table = gmem<i32>("offsets", shape(5_c));
#endif
  return kernel<sm_90a>("k", grid(4_c), threads(1_c), gmem<f32>("x", shape(256_c, 64_c)), table,
                        smem<f32>(shape(64_c, 64_c)), [](auto x, auto offsets, auto xs) {
                          auto rows = x.rows(offsets.at(0_c), offsets.at(4_c));
                          return store(rows.tile(shape(64_c, 64_c), masked(), 0_c, 0_c), load(xs));
                        });
}
int main() { (void)lower(make()); }
