// expect: declaration_name_must_be_a_C_identifier
// A scratch declaration named with something that is not an identifier: diagnostics, traces and
// generated code print the name, so it is rejected while compiling, at the declaration.
#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

auto make() {
  return kernel<sm_90a>("k", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 64_c)),
#ifdef STAGECRAFT_KO
                        smem<f32>("x tile", shape(64_c, 64_c)),
#else
                        smem<f32>("x_tile", shape(64_c, 64_c)),
#endif
                        barrier("full", arrivals(1_c)), [](auto x, auto xs, auto full) {
                          return seq(copy_gmem_to_smem(x.block(0_c, 0_c), xs, full), barrier_wait(full));
                        });
}
int main() { (void)lower(make()); }
