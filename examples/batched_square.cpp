// y[b] = x[b] * x[b] for a batch of (M, 128) matrices: 3-D TMA loads into a 2-D ring of stages
// guarded by a 2-D barrier array.
//
// CTA r owns rows [64r, 64r + 64) of every batch element. A batch element's 64x128 strip is
// loaded as two (1, 64, 64) boxes, q = 0 and 1, into buf[p][q] with completion on ready(p, q),
// where p is the ring slot of the batch step: the next batch element is in flight while this
// one is squared and written back with ordinary stores. Any M: the last CTA's boxes overhang
// the rows (TMA fills them with zeros) and its stores go through a masked tile, which drops them.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

auto batched_square(std::int64_t B, std::int64_t M) {
  return kernel<sm_90a>(
      "batched_square", grid(ceil_div(M, 64)), threads(1_c),
      gmem<f32>("x", shape(B, M, 128_c)),              // (batch, row, col)
      gmem<f32>("y", shape(B, M, 128_c)),              // (batch, row, col)
      smem<f32>(shape(2_c, 2_c, 1_c, 64_c, 64_c)),      // (slot, half, 1, row, col)
      barrier(arrivals(1_c), count(2_c, 2_c)),          // ready(slot, half)
      [&](auto x, auto y, auto buf, auto ready) {
        auto row = program_id();
        auto fetch = [&](auto cursor) {  // both halves of batch element cursor.step
          return for_(range(2_c), [&](auto q) {
            return copy_gmem_to_smem(x.block(cursor.step, row, q), buf[cursor][q], ready(cursor, q));
          });
        };
        return seq(fetch(stage<2>(0_c)),
                   for_(range(B), [&](auto b) {
                     auto cur = stage<2>(b);
                     auto next = cur.advance(1_c);
                     return seq(if_(next.step < B, fetch(next)),
                                for_(range(2_c), [&](auto q) {
                                  auto v = load(buf[cur][q]);  // (1, 64, 64)
                                  return seq(barrier_wait(ready(cur, q)),
                                             store(y.tile(shape(1_c, 64_c, 64_c), masked(), b, row, q), v * v));
                                }));
                   }));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "batched_square",
    .summary = "y = x * x over a batch; 3-D TMA boxes into a (slot, half) ring with a 2-D barrier array",
    .params = {{.name = "B", .default_value = 6, .help = "batch size", .min = 1, .max = 4096},
               {.name = "M", .default_value = 256, .help = "rows per batch element (any)", .min = 64}},
    .build = [](param_values const& p) { return lower(batched_square(p.at("B"), p.at("M"))); },
    .reference =
        [](std::vector<host_tensor>& t, param_values const&) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * x[i];
        },
});

}  // namespace
}  // namespace stagecraft::examples
