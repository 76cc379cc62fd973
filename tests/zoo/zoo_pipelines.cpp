// Pipeline mistakes: the ones users of emit_pipeline / warp-specialized pipelines really make.
#include <stagecraft/stagecraft.hpp>

#include "zoo.hpp"

namespace stagecraft::zoo {

// ws_copy written by hand (1 producer, 1 consumer, K = 2).
// MISTAKE: the consumer releases the stage (arrives on consumed[s]) before it has read it, "to
// let the producer start early": the producer's refill may overwrite the stage under the read.
// FIX: release after the last read of the stage.
ir::Kernel early_release(variant v) {
  constexpr long long K = 2;
  const std::int64_t M = 128, N = 512, steps = N / 64;
  return lower(kernel<sm_90a>(
      "zoo_early_release", grid(M / 64), threads(2_c),
      gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)),  // (row, col)
      smem<f32>(shape(int_c<K>, 64_c, 64_c)),                   // xs: (stage, row, col)
      barrier(arrivals(1_c), count(int_c<K>)),                  // ready[stage]
      barrier(arrivals(1_c), count(int_c<K>)),                  // consumed[stage]
      [&](auto x, auto y, auto xs, auto ready, auto consumed) {
        auto row = program_id();
        auto producer = for_(range(steps), [&](auto j) {
          auto s = stage<K>(j);
          return seq(if_(j >= int_c<K>, barrier_wait(consumed[s])), copy_gmem_to_smem(x.block(row, j), xs[s], ready[s]));
        });
        auto consumer = for_(range(steps), [&](auto j) {
          auto s = stage<K>(j);
          auto copy_out = store(y.tile(shape(64_c, 64_c), row, j), load(xs[s]));
          if (v == variant::buggy) return seq(barrier_wait(ready[s]), barrier_arrive(consumed[s]), copy_out);
          return seq(barrier_wait(ready[s]), copy_out, barrier_arrive(consumed[s]));
        });
        return if_(thread_id() == 0_c, producer, consumer);
      }));
}

// emit_pipeline (K = 2) whose body also reads the previous step's stage: y_j = x_j + x_{j-1}.
// MISTAKE: the input keeps delay_release = 0, so its stage is refilled right after its own
// step, while the next step still reads it.
// FIX: delay_release<1>: the stage is released one step later.
ir::Kernel refill_released_too_early(variant v) {
  constexpr long long K = 2;
  const std::int64_t M = 128, N = 512;
  auto build = [&](auto delay) {
    return lower(kernel<sm_90a>(
        "zoo_refill_released_too_early", grid(M / 64), threads(1_c),
        gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)),  // (row, col)
        smem<f32>(shape(int_c<K>, 64_c, 64_c)),                   // xs: (stage, row, col)
        smem<f32>(shape(int_c<K>, 64_c, 64_c)),                   // ys
        barrier(arrivals(1_c), count(int_c<K>)),                  // full[stage]
        [&](auto x, auto y, auto xs, auto ys, auto full) {
          auto row = program_id();
          return emit_pipeline<K>(N / 64, full, ins(in(x, xs, [&](auto j) { return x.block(row, j); }, delay)),
                                  outs(out(y, ys, [&](auto j) { return y.block(row, j); })), [&](auto j, auto xv, auto yv) {
                                    auto previous = stage<K>(j + int_c<K - 1>);  // the stage of step j - 1
                                    return if_(j >= 1_c, store(yv, load(xv) + load(xs[previous])), store(yv, load(xv) + load(xv)));
                                  });
        }));
  };
  return v == variant::buggy ? build(delay_release<0>) : build(delay_release<1>);
}

// A warp-specialized producer (1 producer, 1 consumer, K = 2) that prefetches one step more
// than the consumers take ("the last iteration loads ahead anyway").
// MISTAKE: the extra load is still in flight when every warpgroup has exited.
// FIX: load exactly the steps the consumers take (or drain before exiting).
ir::Kernel producer_no_drain(variant v) {
  constexpr long long K = 2;
  const std::int64_t M = 128, N = 512, steps = N / 64;
  const std::int64_t loads = v == variant::buggy ? steps + 1 : steps;
  return lower(kernel<sm_90a>(
      "zoo_producer_no_drain", grid(M / 64), threads(2_c),
      gmem<f32>("x", shape(M, N + 64)), gmem<f32>("y", shape(M, N)),  // x has one spare column block
      smem<f32>(shape(int_c<K>, 64_c, 64_c)),                        // xs: (stage, row, col)
      barrier(arrivals(1_c), count(int_c<K>)),                       // ready[stage]
      barrier(arrivals(1_c), count(int_c<K>)),                       // consumed[stage]
      [&](auto x, auto y, auto xs, auto ready, auto consumed) {
        auto row = program_id();
        auto producer = for_(range(loads), [&](auto j) {
          auto s = stage<K>(j);
          return seq(if_(j >= int_c<K>, barrier_wait(consumed[s])), copy_gmem_to_smem(x.block(row, j), xs[s], ready[s]));
        });
        auto consumer = for_(range(steps), [&](auto j) {
          auto s = stage<K>(j);
          return seq(barrier_wait(ready[s]), store(y.tile(shape(64_c, 64_c), row, j), load(xs[s])), barrier_arrive(consumed[s]));
        });
        return if_(thread_id() == 0_c, producer, consumer);
      }));
}

}  // namespace stagecraft::zoo
