// CTA named barriers (bar.sync / bar.arrive with an id and a thread count). Unlike an mbarrier
// there is no object in memory and no parity: a phase completes when the count of threads it
// names has arrived, every bar.sync of the phase then goes on, and the next arrival opens the
// next phase. Happens-before follows the PTX memory model: every arrival (sync or arrive) is a
// release into the phase, every sync acquires what the whole phase released.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "machine.hpp"

namespace stagecraft::interp::detail {

namespace {
std::string hw(int id) { return fmt::format("named barrier {} (bar {})", id, ir::first_named_barrier + id); }
}  // namespace

bool machine::named_barrier(agent_state& a, ir::Stmt const& s) {
  const bool sync = s.op == ir::StmtOp::named_barrier_sync;
  if (sync && a.nb_id >= 0) {  // second step: the phase completed, acquire it
    a.vc.join(a.nb_join);
    a.nb_id = -1;
    return true;
  }
  const auto id = eval(a, s.e0);
  if (id < 0 || id >= ir::max_named_barriers)
    report(check::index_out_of_range, cur_op_, a,
           fmt::format("named barrier id out of range: {} uses id {}, but ids are 0 to {} (hardware ids {} to 15)", who(a), id,
                       ir::max_named_barriers - 1, ir::first_named_barrier));
  auto& cta = ctas_[a.cta];
  auto& nb = cta.named[static_cast<std::size_t>(id)];
  if (nb.expected != 0 && nb.expected != s.n) {
    auto const& [first, first_op] = nb.arrivers.front();
    report(check::named_barrier_count_mismatch, cur_op_, a,
           fmt::format("{} arrives at {} counting {} threads, but {} opened its phase {} at op #{} counting {}: every participant of a "
                       "phase must name the same count (on the GPU the phase completes at an unpredictable time)",
                       who(a), hw(static_cast<int>(id)), s.n, who(agents_[static_cast<std::size_t>(first)]), nb.completed, first_op,
                       nb.expected));
  }
  nb.expected = s.n;
  nb.arrived += ir::role_threads(k_, a.wg);  // every thread of the role runs the statement
  nb.arrivers.emplace_back(a.comp, cur_op_);
  nb.releases.join(a.vc);
  if (sync) {
    a.nb_id = static_cast<int>(id);
    a.nb_phase = nb.completed;
  }
  if (nb.arrived >= nb.expected) {
    // Everyone syncing in this phase goes on with what the phase released (the arriver itself
    // included, when it completes the phase with a sync).
    for (auto& w : agents_)
      if (w.cta == a.cta && w.nb_id == static_cast<int>(id) && w.nb_phase == nb.completed) w.nb_join = nb.releases;
    ++nb.completed;
    nb.arrived = nb.expected = 0;
    nb.arrivers.clear();
    nb.releases.clear();
  }
  ++a.vc.c[a.comp];  // what it does next is not part of its release
  return !sync;
}

bool machine::named_barrier_blocked(agent_state const& a) const {
  return a.nb_id >= 0 && ctas_[a.cta].named[static_cast<std::size_t>(a.nb_id)].completed <= a.nb_phase;
}

std::string machine::named_barrier_deadlock(agent_state const& a) const {
  auto const& nb = ctas_[a.cta].named[static_cast<std::size_t>(a.nb_id)];
  std::vector<std::string> who_arrived;
  for (auto const& [agent, op] : nb.arrivers)
    who_arrived.push_back(fmt::format("{} at op #{} {}", who(agents_[static_cast<std::size_t>(agent)]), op, ir::stmt_name(k_.stmts[op])));
  return fmt::format("waits at {} for phase {} to complete: {}/{} threads arrived ({})", hw(a.nb_id), a.nb_phase, nb.arrived, nb.expected,
                     fmt::join(who_arrived, ", "));
}

std::string machine::named_barrier_label(agent_state const& a, ir::Stmt const& s) {
  // Traced when the op is done: a sync has acquired its phase (nb_phase), an arrival is past.
  if (s.op == ir::StmtOp::named_barrier_sync) return fmt::format("{} {} phase {}", ir::stmt_name(s), hw(static_cast<int>(eval(a, s.e0))), a.nb_phase);
  return fmt::format("{} {}", ir::stmt_name(s), hw(static_cast<int>(eval(a, s.e0))));
}

}  // namespace stagecraft::interp::detail
