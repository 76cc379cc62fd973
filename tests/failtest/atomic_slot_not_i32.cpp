// expect: the slot of an atomic is one i32 of an unswizzled SMEM allocation: slots\[s\] of smem<i32>\(shape\(stages, 1_c\)\)
// What a fetch_add returns lands in one i32 of SMEM: a u32 allocation, or a row of more than one
// element, is not a slot (the counter is an s32, and the slot one word the warpgroup reads).
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
#ifdef STAGECRAFT_KO
  auto slots = smem<u32>(shape(2_c, 1_c));
#else
  auto slots = smem<i32>(shape(2_c, 1_c));
#endif
  return kernel<sm_90a>("k", grid(2), threads(1_c), gmem<i32>("y", shape(2_c, 32_c)), semaphores("next", shape(1_c)), slots,
                        [](auto y, auto next, auto slot) {
                          return seq(fetch_add(next(0_c), 1_c, slot[0_c]),
                                     store(y.tile(shape(1_c, 32_c), program_id(0_c), 0_c), full<i32>(shape(1_c, 32_c), 0) + fetched(slot[0_c])));
                        });
}
int main() { (void)lower(make()); }
