// The kernel shown in README.md, verbatim: it must keep compiling and lowering.
#include <catch2/catch.hpp>

#include <stagecraft/stagecraft.hpp>
using namespace stagecraft;

namespace {
// y = x + 1: each CTA streams 128x64 blocks through a K-deep ring of SMEM stages.
template <long long K>
auto add_one(std::int64_t M, std::int64_t N) {
  return kernel<sm_90a>("add_one", grid(M / 128), threads(1_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)),
      smem<f32>(shape(int_c<K>, 128_c, 64_c)),        // (stage, row, col)
      barrier(arrivals(1_c), count(int_c<K>)),         // full[stage]
      [&](auto x, auto y, auto buf, auto full) {
        return for_(range(N / 64), [&](auto j) {
          auto s = stage<K>(j);                        // typed cursor: slot and phase from j
          return seq(copy_gmem_to_smem(x.block(program_id(), j), buf[s], full[s]),  // bytes from buf's type
                     barrier_wait(full[s]),
                     store(buf[s], load(buf[s]) + 1.0f),
                     commit_smem(),
                     copy_smem_to_gmem(buf[s], y.block(program_id(), j)),
                     commit_smem_to_gmem_group(),
                     wait_smem_to_gmem(0_c, read_only));
        });
      });
}
}  // namespace

TEST_CASE("the README's kernel compiles, lowers and verifies", "[readme]") {
  ir::Kernel k = lower(add_one<4>(4096, 4096));
  CHECK(k.grid[0] == 32);
  CHECK(ir::print(k).find("copy_gmem_to_smem x.block[program_id.x, v0](128x64)") != std::string::npos);
}
