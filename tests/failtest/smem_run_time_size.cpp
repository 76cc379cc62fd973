// expect: SMEM allocations need static shapes, but the shape \(\?, 64\) has a run-time extent
// A run-time extent (run_time("M", m): a launch argument) is a size of GMEM parameters, loops and
// grids; an SMEM allocation's shape is part of the kernel's layout and stays static: one error at
// the declaration. The ok twin stages M's rows through a static 128 x 64 tile.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make(std::int64_t m) {
  auto M = run_time("M", m);
#ifdef STAGECRAFT_KO
  auto tile = smem<f32>(shape(M, 64_c));
#else
  auto tile = smem<f32>(shape(128_c, 64_c));
#endif
  return kernel<sm_90a>("k", grid(ceil_div(M, 128)), threads(1_c), gmem<f32>("x", shape(M, 64_c)), tile, barrier(arrivals(1_c), count(1_c)),
                        [](auto x, auto buf, auto full) {
                          return seq(copy_gmem_to_smem(x.block(program_id(), 0_c), buf, full), barrier_wait(full[0_c]),
                                     store(buf, load(buf) + 1.0f));
                        });
}
int main() { (void)lower(make(1000)); }
