// y = 2x + z, computed by two warpgroups that hand tiles over through SMEM.
//
// Warpgroup 0 (producer) reads a 64x64 block of x with ordinary loads, writes 2x into the
// stage's `twice` buffer and arrives on ready[s]; it also starts a TMA load of the z block into
// the stage, which is the second of ready[s]'s two arrivals (plus its bytes). Warpgroup 1
// (consumer) waits on ready[s], adds the two buffers into its own output stage, stores it with
// TMA and releases the stage on consumed[s], which the producer waits on before refilling it.
// Any M and N (N a multiple of 4: TMA moves rows of 16-byte units): the last blocks overhang the
// array; the x tile is masked (its loads read 0 outside), TMA fills z's outside with zeros and
// drops y's.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

auto handoff(std::int64_t M, std::int64_t N) {
  const std::int64_t steps = ceil_div(N, 64);
  return kernel<sm_90a>(
      "handoff", grid(ceil_div(M, 64)), threads(2_c),
      gmem<f32>("x", shape(M, N)),          // (row, col)
      gmem<f32>("z", shape(M, N)),          // (row, col)
      gmem<f32>("y", shape(M, N)),          // (row, col)
      smem<f32>(shape(2_c, 64_c, 64_c)),    // twice: (stage, row, col), written by warpgroup 0
      smem<f32>(shape(2_c, 64_c, 64_c)),    // zs:    (stage, row, col), written by TMA
      smem<f32>(shape(2_c, 64_c, 64_c)),    // out:   (stage, row, col), warpgroup 1's
      barrier(arrivals(2_c), count(2_c)),   // ready[stage]: producer's arrive + the TMA load's
      barrier(arrivals(1_c), count(2_c)),   // consumed[stage]: the consumer is done reading
      [&](auto x, auto z, auto y, auto twice, auto zs, auto out, auto ready, auto consumed) {
        auto row = program_id();
        auto producer = for_(range(steps), [&](auto j) {
          auto s = stage<2>(j);
          return seq(if_(j >= 2_c, barrier_wait(consumed[s])),
                     copy_gmem_to_smem(z.block(row, j), zs[s], ready[s]),
                     store(twice[s], load(x.tile(shape(64_c, 64_c), masked(), row, j)) * 2.0f),
                     barrier_arrive(ready[s]));
        });
        auto consumer = for_(range(steps), [&](auto j) {
          auto s = stage<2>(j);
          return seq(barrier_wait(ready[s]),
                     wait_smem_to_gmem(1_c, read_only),  // out[s]'s store from step j-2 has read it
                     store(out[s], load(twice[s]) + load(zs[s])),
                     barrier_arrive(consumed[s]),
                     commit_smem(),
                     copy_smem_to_gmem(out[s], y.block(row, j)),
                     commit_smem_to_gmem_group());
        });
        return if_(thread_id() == 0_c, producer, seq(consumer, wait_smem_to_gmem(0_c)));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "handoff",
    .summary = "y = 2x + z; a producer warpgroup hands 64x64 tiles to a consumer through SMEM (2-arrival barrier)",
    .params = {{.name = "M", .default_value = 256, .help = "rows (any)", .min = 64},
               {.name = "N", .default_value = 512, .help = "columns (a multiple of 4)", .min = 64, .multiple_of = 4}},
    .build = [](param_values const& p) { return lower(handoff(p.at("M"), p.at("N"))); },
    .reference =
        [](std::vector<host_tensor>& t, param_values const&) {
          auto x = t[0].as<float>();
          auto z = t[1].as<float>();
          auto y = t[2].as<float>();
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * 2.0f + z[i];
        },
});

}  // namespace
}  // namespace stagecraft::examples
