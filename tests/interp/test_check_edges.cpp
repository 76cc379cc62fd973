// Protocol checks at their smallest unit. TMA moves 16-byte units, so the smallest count a
// barrier can be off by is 16 bytes; the bug zoo's cases are off by whole tiles, so a check
// with 16 bytes of slack would pass them all (the mutation check found this).
#include <catch2/catch.hpp>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/stagecraft.hpp>

#include "inputs.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

TEST_CASE("a tx underflow of one 16-byte unit is reported, with its byte count", "[interp][checks]") {
  // A 2x4 f32 block (two 16-byte rows) multicast over a 2-CTA cluster, issued by the leader only:
  // its share lands on the follower's barrier, which expected no bytes: 16 too many.
  const auto k = lower(kernel<sm_90a>("tx_edge", grid(2), threads(1_c), cluster(2_c), gmem<f32>("w", shape(2_c, 4_c)),
                                      smem<f32>(shape(2_c, 4_c)),  // (row, col) in each CTA
                                      barrier(arrivals(1_c)), [](auto w, auto ws, auto bar) {
                                        return seq(if_(cluster_idx(0_c) == 0_c, copy_gmem_to_smem(w.block(0_c, 0_c), ws, bar, collective_axes(0_c)),
                                                       barrier_arrive(bar)),
                                                   barrier_wait(bar));
                                      }));
  INFO("input seed 31");
  auto r = interp::run(k, testing::random_buffers(k, 31), {.schedule = interp::policy::eager});
  REQUIRE_FALSE(r.diagnostics.empty());
  auto const& d = r.diagnostics.front();
  INFO(d.message);
  CHECK(d.kind == interp::check::tx_underflow);
  CHECK(d.cta == 1);
  CHECK_THAT(d.message, Contains("kernel 'tx_edge'") && Contains("phase 0 has all 1 arrivals but 16 more bytes were completed than expected"));
}
