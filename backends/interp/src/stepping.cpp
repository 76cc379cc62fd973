// A schedule driven from outside (options::choose): what the chooser is shown at each step.
// Nothing here changes the machine; the scheduler (scheduler.cpp) applies the pick.
#include <algorithm>

#include <fmt/format.h>

#include "machine.hpp"

namespace stagecraft::interp::detail {

// "cta1." in a cluster of several CTAs, "" in a one-CTA cluster: the prefix of every name shown.
std::string machine::cta_prefix(int cta) const { return ctas_.size() == 1 ? std::string() : fmt::format("cta{}.", ctas_[cta].linear); }
std::string machine::agent_label(agent_state const& a) const { return cta_prefix(a.cta) + ir::role_label(k_, a.wg); }

namespace {
const char* async_kind(async_op::kind k) {
  switch (k) {
    case async_op::kind::load: return "TMA load";
    case async_op::kind::store_read: return "TMA store, reading SMEM";
    case async_op::kind::store_write: return "TMA store, writing GMEM";
    case async_op::kind::mma: return "wgmma";
    case async_op::kind::tc_mma: return "tcgen05 MMA";
    case async_op::kind::tc_commit: return "tcgen05 commit";
    case async_op::kind::tc_cp: return "tcgen05 copy";
    case async_op::kind::clc: return "try_cancel";
  }
  return "async";
}
}  // namespace

step_point machine::step_point_of(std::vector<int> const& runnable) {
  step_point p;
  p.step = time_ - 1;  // the scheduler counted this step before asking
  auto op_text = [&](ir::StmtId id) {
    const auto at = ir::where(k_, id);
    const auto line = at.substr(at.rfind(':') == std::string::npos ? 0 : at.rfind(':') + 1);
    return fmt::format("op #{} {}{}", id, ir::describe(k_, id), at.empty() ? "" : fmt::format(" (line {})", line));
  };
  for (int i : runnable) {
    auto const& a = agents_[i];
    p.choices.push_back({agent_label(a), op_text(prog_[a.pc].stmt), false});
  }
  for (auto const& op : pending_) {
    std::string what = fmt::format("{} of {}, issued by {}", async_kind(op.what), op_text(op.stmt), agent_label(agents_[op.agent]));
    if (op.what == async_op::kind::load && !op.dst_cta.empty())
      what += fmt::format(": lands {} bytes and completes them on {}{}", op.bytes, cta_prefix(op.dst_cta[0]),
                          bar_name(ctas_[op.dst_cta[0]].barriers[static_cast<std::size_t>(op.bar_elem)]));
    else if (op.what == async_op::kind::tc_commit && op.bar_cta >= 0)
      what += fmt::format(": arrives on {}{} once the MMAs before it are done", cta_prefix(op.bar_cta),
                          bar_name(ctas_[op.bar_cta].barriers[static_cast<std::size_t>(op.bar_elem)]));
    p.choices.push_back({fmt::format("async{}", op.id), std::move(what), true});
  }
  for (std::size_t ci = 0; ci < ctas_.size(); ++ci)
    for (auto const& b : ctas_[ci].barriers)
      p.barriers.push_back(fmt::format("{}{}: {} completed (phase {} open), arrivals {}/{}, tx {} bytes pending", cta_prefix(static_cast<int>(ci)),
                                       bar_name(b), b.completed, b.completed, b.expected - b.pending, b.expected, b.tx));
  for (std::size_t i = 0; i < agents_.size(); ++i) {
    auto const& a = agents_[i];
    if (a.done || std::find(runnable.begin(), runnable.end(), static_cast<int>(i)) != runnable.end()) continue;
    auto const& s = op_at(a);
    std::string line = fmt::format("{} at {}", agent_label(a), op_text(prog_[a.pc].stmt));
    if (s.op == ir::StmtOp::barrier_wait) {
      auto const& b = barrier_of(a, s.refs[0]);
      const auto e = static_cast<std::size_t>(&b - ctas_[a.cta].barriers.data());
      line += fmt::format(": waits for completion #{} of {}{}", a.observed[e] + 1, cta_prefix(a.cta), bar_name(b));
    }
    p.blocked.push_back(std::move(line));
  }
  return p;
}

}  // namespace stagecraft::interp::detail
