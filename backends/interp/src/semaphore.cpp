// Grid-wide semaphores (ops/semaphore.hpp): i32 counters in a kernel-owned GMEM array, changed
// only by atomic read-modify-writes. A signal adds its value and releases the warpgroup's
// clock into the counter; a wait blocks until the counter holds its value, takes it and
// acquires every release the counter has seen (each earlier RMW heads a release sequence that
// the wait's read continues, so it synchronises with all of them).
//
// Clusters run one after another, so a signal from an earlier cluster is already in the counter
// when a later one waits, and one from a later cluster never arrives: that wait is a deadlock,
// as it may be on the GPU, which does not promise that a CTA launched later runs while an
// earlier one spins. What crosses clusters is the released clock, kept per cluster
// (vclock::foreign): an access of an earlier cluster is ordered before a thread whose foreign
// clock for that cluster covers it (foreign_hb).
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "machine.hpp"

namespace stagecraft::interp::detail {

std::int32_t& machine::semaphore_counter(agent_state const& a, ir::Stmt const& s, std::int64_t* elem) {
  const region g = view_of(a, s.refs[0], a.cta);  // index-out-of-range is reported there
  auto const& m = *g.mem;
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < m.shape.size(); ++d) flat = flat * m.shape[d] + g.origin[d];
  if (elem) *elem = flat;
  return reinterpret_cast<std::int32_t*>(m.data)[flat];
}

std::int64_t machine::semaphore_value(agent_state const& a, ir::Stmt const& s) {
  const auto v = eval(a, s.e0);
  if (!ir::semaphore_value_ok(v))
    report(check::semaphore_value, cur_op_, a,
           fmt::format("{} {} '{}' with the value {}, but a semaphore's value must be 1 to 2^31 - 1 (a signal adds it, a wait takes it)",
                       who(a), s.op == ir::StmtOp::semaphore_signal ? "signals" : "waits on", gmem_[k_.refs[s.refs[0]].id].name, v));
  return v;
}

void machine::semaphore_release(agent_state& a, std::pair<int, std::int64_t> key) {
  auto& st = semaphores_[key];
  join_into(st.released, {{cluster_id(), a.vc.c}});
  if (a.vc.foreign) join_into(st.released, *a.vc.foreign);
  ++a.vc.c[a.comp];  // what it does next is not part of its release
}

void machine::semaphore_signal(agent_state& a, ir::Stmt const& s) {
  const auto v = semaphore_value(a, s);
  std::int64_t elem = 0;
  auto& counter = semaphore_counter(a, s, &elem);
  counter = static_cast<std::int32_t>(static_cast<std::uint32_t>(counter) + static_cast<std::uint32_t>(v));  // red.add wraps
  semaphore_release(a, {k_.refs[s.refs[0]].id, elem});
}

bool machine::semaphore_blocked(agent_state& a, ir::Stmt const& s) {
  const auto v = semaphore_value(a, s);
  return semaphore_counter(a, s) < v;
}

void machine::semaphore_take(agent_state& a, ir::Stmt const& s) {
  const auto v = semaphore_value(a, s);
  std::int64_t elem = 0;
  auto& counter = semaphore_counter(a, s, &elem);
  counter -= static_cast<std::int32_t>(v);  // blocked() let it through: counter >= v
  semaphore_acquire(a, {k_.refs[s.refs[0]].id, elem});
}

void machine::semaphore_acquire(agent_state& a, std::pair<int, std::int64_t> key) {
  auto it = semaphores_.find(key);
  if (it == semaphores_.end()) return;  // nothing released it yet
  foreign_clocks others;
  for (auto const& [cl, clock] : it->second.released) {
    if (cl == cluster_id()) {
      for (std::size_t i = 0; i < a.vc.c.size() && i < clock.size(); ++i) a.vc.c[i] = std::max(a.vc.c[i], clock[i]);
    } else {
      others.emplace(cl, clock);
    }
  }
  if (!others.empty()) {
    auto mine = a.vc.foreign ? std::make_shared<foreign_clocks>(*a.vc.foreign) : std::make_shared<foreign_clocks>();
    join_into(*mine, others);
    a.vc.foreign = std::move(mine);
  }
}

std::string machine::semaphore_deadlock(agent_state& a, ir::Stmt const& s) {
  const auto v = eval(a, s.e0);
  std::int64_t elem = 0;
  const auto held = semaphore_counter(a, s, &elem);
  const int param = k_.refs[s.refs[0]].id;
  auto const& m = gmem_[param];
  std::vector<std::string> ops;
  for (std::size_t i = 0; i < k_.stmts.size(); ++i)
    if ((k_.stmts[i].op == ir::StmtOp::semaphore_signal || k_.stmts[i].op == ir::StmtOp::atomic_fetch) && k_.refs[k_.stmts[i].refs[0]].id == param)
      ops.push_back(fmt::format("#{}", i));
  return fmt::format("waits for semaphore '{}'[{}] to hold {}, but it holds {} and nothing still running signals it (ops that signal or change '{}': "
                     "{}). Clusters run in launch order: a signal from a CTA launched later never comes while this one waits, as the "
                     "GPU does not promise to run it",
                     m.name, fmt::join(unflatten(m, elem), ", "), v, held, m.name, ops.empty() ? std::string("none") : fmt::format("{}", fmt::join(ops, ", ")));
}

// atomic_fetch: one indivisible step of the warpgroup (the generated code's elected thread, then
// the warpgroup's sync). An acquire joins every release the counter has seen, as a wait's does;
// a release publishes what the warpgroup did before; then what the counter held lands in the slot,
// a write of the warpgroup like any store (a reader in another warpgroup needs a barrier after it).
void machine::atomic_fetch(agent_state& a, ir::Stmt const& s) {
  const auto spec = ir::atomic_of(s.n);
  auto operand = [&](ir::ExprId e, const char* what) {
    const auto v = eval(a, e);
    if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
      report(check::semaphore_value, cur_op_, a,
             fmt::format("{} {} '{}' with {} {}, which is not an i32 (atom.{}.s32 takes 32-bit operands)", who(a), ir::atomic_name(spec.op),
                         gmem_[k_.refs[s.refs[0]].id].name, what, v, ir::atomic_name(spec.op)));
    return static_cast<std::int32_t>(v);
  };
  const auto v = operand(s.e0, "the operand");
  const auto expected = spec.op == ir::Atomic::cas ? operand(s.e1, "the expected value") : 0;
  std::int64_t elem = 0;
  auto& counter = semaphore_counter(a, s, &elem);
  const std::pair<int, std::int64_t> key{k_.refs[s.refs[0]].id, elem};
  if (ir::order_acquires(spec.order)) semaphore_acquire(a, key);
  const std::int32_t old = counter;
  // (options::atomic_share: the other CTAs' adds, as the replay of one stands for them; wraps as atom.add does)
  const auto share = spec.op == ir::Atomic::add ? static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::int64_t>(v) * o_.atomic_share)) : v;
  counter = ir::atomic_result(spec.op, old, share, expected);
  if (ir::order_releases(spec.order)) semaphore_release(a, key);
  const region g = view_of(a, s.refs[1], a.cta);
  if (o_.checks) access(g, true, a.vc, own_stamp(a), a.comp, nullptr);  // a generic store of the warpgroup
  std::vector<std::byte> bytes(4);
  std::memcpy(bytes.data(), &old, 4);
  write_bytes(g, bytes);
}

// fetched(slot): the i32 at element `elem` of the slot's allocation, read by agent a as a
// generic load.
std::int64_t machine::fetched_read(agent_state const& a, ir::Expr const& e, std::int64_t elem) {
  auto& m = ctas_[a.cta].smem[static_cast<std::size_t>(e.value)];
  if (elem < 0 || elem >= m.elements()) {
    report(check::index_out_of_range, cur_op_, a,
           fmt::format("{} reads fetched({}[{}]), but {} has {} slots", who(a), m.name, elem, m.name, m.elements()));
    return 0;
  }
  region g{&m};
  for (std::size_t d = 0; d + 1 < m.shape.size(); ++d) g.origin.push_back(elem), g.box.push_back(1);  // (R, 1): row elem; (1): the one
  g.origin.push_back(0);
  g.box.push_back(1);
  if (o_.checks) access(g, false, a.vc, own_stamp(a), a.comp, nullptr);  // a generic load
  const auto bytes = region_bytes(g);
  std::int32_t v;
  std::memcpy(&v, bytes.data(), 4);
  return v;
}

// Is `e`, an access of another cluster, ordered before the thread whose clock is `vc`?
bool machine::foreign_hb(epoch e, vclock const& vc) const {
  if (e.cluster() == many_clusters) return false;
  auto it = vc.foreign->find(e.cluster());
  if (it == vc.foreign->end()) return false;
  auto const& seen = it->second;
  if (is_set(e)) {  // shared_ keeps every cluster's sets in kernels with semaphores
    auto const& set = shared_[e.clock - 1].c;
    for (std::size_t i = 0; i < set.size(); ++i)
      if (i >= seen.size() ? set[i] != 0 : set[i] > seen[i]) return false;
    return true;
  }
  return e.comp() < seen.size() && seen[e.comp()] >= e.clock;
}

}  // namespace stagecraft::interp::detail
