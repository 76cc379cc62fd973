// A user's kernel: y = a*x + y over 128x64 blocks, one TMA load per operand and a TMA store.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include "helpers.hpp"

namespace my {
namespace {
using namespace stagecraft;

auto saxpy(std::int64_t M, std::int64_t N) {
  return kernel<sm_90a>("saxpy", grid(M / 128, N / 64), threads(1_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)),
      smem<f32>(shape(2_c, 128_c, 64_c)),   // (operand, row, col): x's block, then y's
      barrier(arrivals(2_c), count(1_c)),  // both loads arrive (with their bytes)
      [&](auto x, auto y, auto buf, auto full) {
        auto i = program_id(0_c);  // each axis has its own type (its static range)
        auto j = program_id(1_c);
        return seq(copy_gmem_to_smem(x.block(i, j), buf[0_c], full),
                   copy_gmem_to_smem(y.block(i, j), buf[1_c], full),
                   barrier_wait(full),
                   store(buf[1_c], load(buf[0_c]) * alpha + load(buf[1_c])),
                   commit_smem(),
                   copy_smem_to_gmem(buf[1_c], y.block(i, j)),
                   commit_smem_to_gmem_group(),
                   wait_smem_to_gmem(0_c));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "saxpy",
    .summary = "y = a*x + y (a user's kernel, registered from a static library)",
    .params = {{.name = "M", .default_value = 256, .help = "rows", .min = 128, .multiple_of = 128},
               {.name = "N", .default_value = 128, .help = "columns", .min = 64, .multiple_of = 64}},
    .build = [](param_values const& p) { return lower(saxpy(p.at("M"), p.at("N"))); },
    .reference = [](std::vector<host_tensor>& t, param_values const&) { reference_saxpy(t[0].as<float>(), t[1].as<float>()); },
});

}  // namespace
}  // namespace my
