// expect: an index table is a rank-1 array of i32 or u32
// Offsets read from a float array (a cu_seqlens stored as f32) instead of an i32 table.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  auto table = gmem<f32>("offsets", shape(5_c));
#else
  auto table = gmem<i32>("offsets", shape(5_c));
#endif
  return kernel<sm_90a>("k", grid(4), threads(1_c), gmem<f32>("x", shape(256_c, 64_c)), table,
                        smem<f32>(shape(64_c, 64_c)), [](auto x, auto offsets, auto xs) {
                          auto lo = offsets.at(program_id(0_c));
                          auto rows = x.rows(lo, lo + 64_c);
                          return store(rows.tile(shape(64_c, 64_c), masked(), 0_c, 0_c), load(xs));
                        });
}
int main() { (void)lower(make()); }
