// Lesson 09: clusters, multicast, and releasing a stage to every peer.
//
// Two CTAs of a cluster need the same w block every step, so they load it once: each issues the
// multicast TMA copy for its half of the rows, and the hardware writes every half into both
// CTAs' stage. Each CTA's full[s] therefore receives the whole block's bytes, half of them from
// its peer. The same holds when a stage is reused: my refill writes into my peer's SMEM too, so
// I may refill only after *both* CTAs are done with the stage. A cluster barrier says that:
// every CTA's barrier_arrive(released[s]) arrives on the barrier of every CTA in the group.
#include <stagecraft/lessons.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::lessons {
namespace {

enum class mistake { none, local_release, leader_only };

template <mistake Bug>
ir::Kernel clusters() {
  constexpr long long K = 2;
  const std::int64_t M = 512, N = 512, steps = N / 64;
  return lower(kernel<sm_90a>(
      "lesson09_clusters", grid(M / 128), threads(1_c), cluster(2_c),
      gmem<f32>("x", shape(M, N)),                 // (row, col)
      gmem<f32>("w", shape(128_c, N)),             // (row, col): block j is step j's w, shared by the cluster
      gmem<f32>("y", shape(M, N)),                 // (row, col)
      smem<f32>(shape(int_c<K>, 128_c, 64_c)),     // ws: (stage, row, col), written by both CTAs' multicasts
      barrier(arrivals(1_c), count(int_c<K>)),     // full[stage]: my copy's arrival + the whole block's bytes
      // released[stage]: one arrival per CTA of the group (each CTA's arrive reaches every CTA's copy)
      cluster_barrier(collective_axes(0_c), arrivals(1_c), count(int_c<K>)),
      [&](auto x, auto w, auto y, auto ws, auto full, auto released) {
        auto row = program_id();
        auto fetch = [&](auto j, auto s) {
          auto copy = copy_gmem_to_smem(w.block(0_c, j), ws[s], full[s], collective_axes(0_c));
          // MISTAKE (leader_only): "the multicast reaches both CTAs anyway", so only CTA 0 issues
          // it and CTA 1 just arrives: CTA 1 receives bytes it never expected.
          if constexpr (Bug == mistake::leader_only) return if_(cluster_idx(0_c) == 0_c, copy, barrier_arrive(full[s]));
          else return copy;
        };
        auto prologue = for_(range(int_c<K>), [&](auto j) { return fetch(j, stage<K>(j)); });
        auto main_loop = for_(range(steps), [&](auto j) {
          auto s = stage<K>(j);
          auto refill = [&] {
            // MISTAKE (local_release): refill once *I* am done, without waiting for the peer.
            if constexpr (Bug == mistake::local_release) return fetch(j + int_c<K>, s);
            else return seq(barrier_wait(released[s]), fetch(j + int_c<K>, s));
          }();
          return seq(barrier_wait(full[s]),
                     store(y.tile(shape(128_c, 64_c), row, j), load(x.tile(shape(128_c, 64_c), row, j)) * load(ws[s])),
                     barrier_arrive(released[s]),
                     if_(j + int_c<K> < steps, refill));
        });
        return seq(prologue, main_loop);
      }));
}

STAGECRAFT_LESSON(lesson_entry{
    .number = 9,
    .slug = "clusters",
    .title = "Clusters: multicast and cluster barriers",
    .summary = "A multicast load fills the same stage in every CTA of the group, so every CTA must issue its "
               "share, and a stage is free only when every peer has released it (a cluster barrier).",
    .build = clusters<mistake::none>,
    .reference =
        [](std::vector<host_tensor>& t) {
          auto x = t[0].as<float>();
          auto w = t[1].as<float>();
          auto y = t[2].as<float>();
          const std::size_t N = 512;
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * w[(i / N % 128) * N + i % N];
        },
    .twins = {{.name = "local_release",
               .mistake = "a CTA refills a stage once it is done with it, without waiting for its peer",
               .expect = "data-race",
               .policy = "pct",
               .hardware = "my multicast share lands in my peer's stage while the peer still reads it: the peer's "
                           "rows of y use half of the next block's w, now and then",
               .fix = "barrier_wait(released[s]) (a cluster barrier both CTAs arrive on) before the refill",
               .build = clusters<mistake::local_release>},
              {.name = "leader_only",
               .mistake = "only the cluster's first CTA issues the multicast; the other just arrives",
               .expect = "tx-underflow",
               .policy = "eager",
               .hardware = "CTA 1's barrier receives the leader's half without expecting it: its transaction count "
                           "goes wrong, its phase completes at the wrong time or never, and CTA 0 waits for a half "
                           "nobody sends: a hang",
               .fix = "every CTA of the group issues the same multicast copy",
               .build = clusters<mistake::leader_only>}},
});

}  // namespace
}  // namespace stagecraft::lessons
