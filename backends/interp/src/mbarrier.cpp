// The PTX mbarrier object: pending arrivals and a tx-count per phase; a phase completes when
// both reach zero, and whoever waits on it joins the clock of everything released into it.
// Cluster barriers are the same object arrived on by every peer of a collective group.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "machine.hpp"

namespace stagecraft::interp::detail {

// The barrier element a ref names in the agent's CTA (run-time indices checked).
barrier_state& machine::barrier_of(agent_state const& a, ir::RefId rid) {
  auto const& r = k_.refs[rid];
  auto const& al = k_.allocs[r.id];
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < al.shape.size(); ++d) {
    const auto i = eval(a, r.index[d]);
    if (i < 0 || i >= al.shape[d])
      report(check::index_out_of_range, cur_op_, a,
             fmt::format("barrier index out of range: {} indexes {} with {} in dimension {}, which has {} elements (shape ({}))", who(a),
                         ir::alloc_name(k_, r.id), i, d, al.shape[d], fmt::join(al.shape, ", ")));
    flat = flat * al.shape[d] + i;
  }
  return ctas_[a.cta].barriers[static_cast<std::size_t>(bar_base_[r.id] + flat)];
}

void machine::arrive(barrier_state& b, vclock const& vc, agent_state const& who_) {
  if (b.pending == 0)
    report(check::over_arrival, cur_op_, who_,
           fmt::format("over-arrival on {}: phase {} already has all {} expected arrivals (it waits only for {} tx bytes); "
                       "this arrival by {} has no phase to go to",
                       bar_name(b), b.completed, b.expected, b.tx, who(who_)));
  --b.pending;
  b.releases.join(vc);
  trace_barrier(b, fmt::format("{} arrival {}/{} by {}, {} tx bytes pending", bar_name(b), b.expected - b.pending, b.expected, who(who_), b.tx));
  try_complete(b, who_.comp);
}

// A .release.cta arrival on a peer CTA's barrier is not morally strong with that CTA's threads:
// it carries no generic access (no agent's own component) and no bulk store's GMEM writes (a
// peer's generic read of them needs a .cluster release). What it still orders is what has
// completed asynchronously and is known to this thread: operand reads of the wgmma/tcgen05
// groups it waited for, TMA loads whose landing it observed, bulk stores' SMEM reads it waited for.
vclock machine::async_part(vclock const& vc) const {
  vclock out = vc;
  for (auto const& g : agents_) {
    out.c[static_cast<std::size_t>(g.comp)] = 0;
    out.c[static_cast<std::size_t>(g.store_w_comp)] = 0;
  }
  return out;
}

// The barrier lane of the timeline: every arrival and every landing of TMA bytes, with the
// state it leaves (what a learner watches a phase fill up with).
void machine::trace_barrier(barrier_state const& b, std::string label) {
  if (!o_.trace) return;
  tr_.events.push_back({trace_event::kind::arrival, time_, time_, ctas_[cta_of_barrier(b)].linear, static_cast<int>(tr_.lanes.size()) - 1,
                        cur_op_, std::move(label)});
}

void machine::try_complete(barrier_state& b, int agent_for_msg) {
  if (b.pending != 0) return;
  if (b.tx < 0)
    report(check::tx_underflow, cur_op_, agent_for_msg,
           fmt::format("tx underflow on {}: phase {} has all {} arrivals but {} more bytes were completed than expected "
                       "(expect_tx too small for the copies that complete on it)",
                       bar_name(b), b.completed, b.expected, -b.tx));
  if (b.tx != 0) return;
  auto& slot = b.last[b.completed % 2];
  slot = b.releases;
  ++b.completed;
  slot.c[b.comp] = b.completed;
  b.pending = b.expected;
  b.releases.clear();
  if (o_.trace) {
    tr_.events.push_back({trace_event::kind::phase, time_, time_, ctas_[cta_of_barrier(b)].linear,
                          static_cast<int>(tr_.lanes.size()) - 1, -1,
                          fmt::format("{} completion #{} (phase {} done)", bar_name(b), b.completed, b.completed - 1)});
  }
}

int machine::cta_of_barrier(barrier_state const& b) const {
  for (std::size_t c = 0; c < ctas_.size(); ++c)
    if (!ctas_[c].barriers.empty() && &b >= ctas_[c].barriers.data() && &b < ctas_[c].barriers.data() + ctas_[c].barriers.size())
      return static_cast<int>(c);
  return 0;
}

std::vector<int> machine::peers(int cta, std::vector<int> const& axes) const {
  std::vector<int> out;
  auto const& me = ctas_[cta].cidx;
  for (std::size_t c = 0; c < ctas_.size(); ++c) {
    bool same = true;
    for (int d = 0; d < 3; ++d)
      if (std::find(axes.begin(), axes.end(), d) == axes.end() && ctas_[c].cidx[d] != me[d]) same = false;
    if (same) out.push_back(static_cast<int>(c));
  }
  return out;
}

}  // namespace stagecraft::interp::detail
