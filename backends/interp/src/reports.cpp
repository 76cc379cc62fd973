// Diagnostics (each one ends the run) and the names they use for agents and barriers, and the
// op lane of the timeline.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "machine.hpp"

namespace stagecraft::interp::detail {

std::string machine::who(agent_state const& a) const {
  auto const& cs = ctas_[a.cta];
  return fmt::format("{} of CTA ({}, {}, {})", ir::role_name(k_, a.wg), cs.pid[0], cs.pid[1], cs.pid[2]);
}

std::string machine::where(ir::StmtId id) const {
  const auto l = ir::where(k_, id);
  return l.empty() ? l : "; written at " + l;
}

std::string machine::bar_name(barrier_state const& b) const {
  auto const& al = k_.allocs[b.alloc];
  std::vector<std::int64_t> idx(al.shape.size());
  auto f = b.flat;
  for (int d = static_cast<int>(al.shape.size()) - 1; d >= 0; --d) {
    idx[d] = f % al.shape[d];
    f /= al.shape[d];
  }
  return fmt::format("{}[{}]", ir::alloc_name(k_, b.alloc), fmt::join(idx, "]["));
}

void machine::report(check c, int op, int agent, std::string const& text) {
  // The user's line and the op as they wrote it close every message about an op.
  diagnostic d{c, fmt::format("{}: kernel '{}'{}: {}{}", check_name(c), k_.name, op >= 0 ? fmt::format(", op #{} ({})", op, ir::stmt_name(k_.stmts[op])) : "", text,
                              op >= 0 ? ir::at_source(k_, op) : ""), op};
  if (agent >= 0 && agent < static_cast<int>(agents_.size())) {
    d.cta = ctas_[agents_[agent].cta].linear;
    d.warpgroup = agents_[agent].wg;
  }
  if (o_.trace) tr_.events.push_back({trace_event::kind::diagnostic, time_, time_, d.cta < 0 ? 0 : d.cta, d.warpgroup < 0 ? 0 : d.warpgroup, op, d.message});
  diags_.push_back(std::move(d));
  throw stop_run{};
}

void machine::trace_op(agent_state const& a, ir::StmtId id) {
  if (!o_.trace) return;
  tr_.events.push_back({trace_event::kind::op, a.began, time_, ctas_[a.cta].linear, a.wg, id, op_label(a, id)});
}

std::string machine::op_label(agent_state const& a, ir::StmtId id) {
  auto const& s = k_.stmts[id];
  if (s.op == ir::StmtOp::barrier_wait) {  // traced after the wait: observed is the completion it got
    auto& b = barrier_of(a, s.refs[0]);
    return fmt::format("barrier_wait {} for completion #{}", bar_name(b), a.observed[static_cast<std::size_t>(&b - ctas_[a.cta].barriers.data())]);
  }
  if (s.op == ir::StmtOp::barrier_arrive) return fmt::format("barrier_arrive {}", bar_name(barrier_of(a, s.refs[0])));
  if (s.op == ir::StmtOp::named_barrier_sync || s.op == ir::StmtOp::named_barrier_arrive) return named_barrier_label(a, s);
  return ir::stmt_name(s);
}

}  // namespace stagecraft::interp::detail
