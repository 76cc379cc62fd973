// Cluster launch control (clusterlaunchcontrol.try_cancel, sm_100a; ops/clc.hpp): a thread asks
// the hardware to cancel a cluster of the grid that has not started, and takes its work over.
//
// The model. Clusters run here one after another, so which clusters "have started" on a GPU is a
// choice of the schedule: eager answers every request with the first cluster in launch order
// that has neither run nor been canceled (one CTA may end up doing the whole grid's work, a GPU
// with one SM); lazy answers "failed" (every other cluster already runs: one tile per CTA); random
// and PCT draw between the two. A canceled cluster never runs (run() skips it). The response is
// 16 bytes of the CTA's SMEM written asynchronously, stamped with the barrier completion its
// bytes complete, so reading it (clc_result, an index expression) before the barrier wait that
// observes that completion is a data race: "a query that races its response". Our encoding of the
// opaque response: u32 0 is 1 when a cluster was canceled, u32 1-3 its first CTA's ctaid x, y, z
// (the GPU's bits differ; only the query instructions read them there).
// After a CTA has observed a failed response, another try_cancel of that CTA is undefined (PTX
// ISA): reported as clc-after-failure.
#include <cstring>

#include <fmt/format.h>

#include "../machine.hpp"

namespace stagecraft::interp::detail {

void machine::issue_try_cancel(agent_state& a, ir::Stmt const& s) {
  auto& cs = ctas_[a.cta];
  if (cs.clc_failed_at != ir::none)
    report(check::clc_after_failure, cur_op_, a,
           fmt::format("{} issues try_cancel after its CTA observed a failed response at op #{} (clc_canceled was 0): the PTX ISA leaves "
                       "any try_cancel after an observed failure undefined; leave the tile loop when a response says no cluster was canceled",
                       who(a), cs.clc_failed_at));
  auto& b = barrier_of(a, s.refs[1]);
  async_op op{async_op::kind::clc};
  op.agent = a.comp;
  op.stmt = cur_op_;
  op.dst.push_back(view_of(a, s.refs[0], a.cta));
  op.dst_cta.push_back(a.cta);
  op.bar_elem = &b - cs.barriers.data();
  op.bytes = 16;
  op.vc = a.vc;
  b.tx += op.bytes;  // arrive.expect_tx(16), as the generated code's elected thread does
  arrive(b, a.vc, a);
  ++a.vc.c[a.comp];
  enqueue(std::move(op));
}

// The first cluster in launch order that has neither run nor been canceled, or -1.
std::int64_t machine::clc_candidate() const {
  const auto& c = k_.cluster;
  const std::int64_t per_row = k_.grid[0] / c[0], per_plane = per_row * (k_.grid[1] / c[1]);
  const std::int64_t clusters = per_plane * (k_.grid[2] / c[2]);
  for (std::int64_t i = cluster_index_ + 1; i < clusters; ++i)
    if (!clc_canceled_.count(i)) return i;
  return -1;
}

void machine::clc_complete(async_op& op) {
  auto& a = agents_[op.agent];
  std::int64_t victim = clc_candidate();
  switch (o_.schedule) {
    case policy::eager: break;
    case policy::lazy: victim = -1; break;
    default:
      if (victim >= 0 && rng_.below(4) == 0) victim = -1;  // the rest of the grid has started: no cluster left to cancel
  }
  std::uint32_t words[4] = {0, 0, 0, 0};
  if (victim >= 0) {
    clc_canceled_.insert(victim);
    const auto& c = k_.cluster;
    const std::int64_t per_row = k_.grid[0] / c[0], per_plane = per_row * (k_.grid[1] / c[1]);
    words[0] = 1;
    words[1] = static_cast<std::uint32_t>(victim % per_row * c[0]);
    words[2] = static_cast<std::uint32_t>(victim % per_plane / per_row * c[1]);
    words[3] = static_cast<std::uint32_t>(victim / per_plane * c[2]);
  }
  auto& b = ctas_[static_cast<std::size_t>(op.dst_cta[0])].barriers[static_cast<std::size_t>(op.bar_elem)];
  const epoch stamp = epoch::make(b.completed + 1, static_cast<std::uint32_t>(b.comp), cluster_id());
  if (o_.checks) access(op.dst[0], true, op.vc, stamp, a.comp, "a try_cancel response");
  std::vector<std::byte> bytes(16);
  std::memcpy(bytes.data(), words, 16);
  write_bytes(op.dst[0], bytes);
  b.tx -= op.bytes;
  b.releases.join(op.vc);
  const auto what = victim >= 0 ? fmt::format("canceled the cluster of CTA ({}, {}, {})", words[1], words[2], words[3]) : std::string("nothing to cancel");
  trace_barrier(b, fmt::format("{}: the try_cancel response landed ({}), {} tx bytes and {} arrival(s) pending", bar_name(b), what, b.tx, b.pending));
  try_complete(b, a.comp);
  trace_async(op, 0, "try_cancel");
}

// clc_result: what the response at u32 element `elem` of allocation e.value / 4 says, read by
// agent a as a generic load (ordered after the response's landing only through its barrier).
std::int64_t machine::clc_read(agent_state const& a, ir::Expr const& e, std::int64_t elem) {
  auto& cs = ctas_[a.cta];
  const auto alloc = static_cast<std::size_t>(e.value / 4);
  auto& m = cs.smem[alloc];
  if (elem < 0 || elem % 4 != 0 || elem + 4 > m.elements()) {
    report(check::index_out_of_range, cur_op_, a,
           fmt::format("{} reads a cluster launch control response at u32 element {} of {}, which has {} (a response is a row of 4)", who(a), elem,
                       m.name, m.elements()));
    return 0;
  }
  region g{&m};
  if (m.shape.size() == 2) {  // row elem / 4 of (rows, 4); else the one row of (4) (the verifier's ranks)
    g.origin.push_back(elem / 4);
    g.box.push_back(1);
  }
  g.origin.push_back(0);
  g.box.push_back(4);
  if (o_.checks) access(g, false, a.vc, own_stamp(a), a.comp, "a cluster launch control query (clc_canceled / clc_ctaid)");
  std::uint32_t words[4];
  const auto bytes = region_bytes(g);
  std::memcpy(words, bytes.data(), 16);
  const auto what = e.value % 4;
  if (what == 0 && words[0] == 0 && cs.clc_failed_at == ir::none) cs.clc_failed_at = cur_op_;
  return what == 0 ? words[0] : words[what];
}

}  // namespace stagecraft::interp::detail
