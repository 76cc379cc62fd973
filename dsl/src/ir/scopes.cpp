// ir::cluster_barrier_scope: which cluster barriers may use .cta arrivals and waits (scopes.hpp
// says why each rule is there; docs/interpreter.md how the interpreter models the weak scope).
#include "stagecraft/ir/scopes.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <vector>

#include <fmt/format.h>

namespace stagecraft::ir {
namespace {

// Every statement in body order, with the loops around it.
struct placed {
  StmtId id;
  std::vector<StmtId> loops;
};

void walk(Kernel const& k, StmtId id, std::vector<StmtId>& loops, std::vector<placed>& out) {
  if (id == none) return;
  auto const& s = k.stmts[id];
  out.push_back({id, loops});
  if (s.op == StmtOp::for_) loops.push_back(id);
  for (StmtId c : s.body) walk(k, c, loops, out);
  if (s.op == StmtOp::for_) loops.pop_back();
}

// The refs the loads of kind `op` in a statement's value read (load: generic loads; load_tmem:
// TMEM loads, tcgen05.ld).
std::vector<RefId> loaded_refs(Kernel const& k, Stmt const& s, ValueOp op) {
  std::vector<RefId> refs;
  std::set<ValueId> seen;
  std::function<void(ValueId)> visit = [&](ValueId v) {
    if (v == none || !seen.insert(v).second) return;
    auto const& x = k.values[v];
    if (x.op == op) refs.push_back(x.ref);
    visit(x.a), visit(x.b), visit(x.c);
  };
  visit(s.value);
  return refs;
}

// The refs a statement reads or writes generically: its store's destination and every load in
// its value.
std::vector<RefId> generic_refs(Kernel const& k, Stmt const& s) {
  auto refs = loaded_refs(k, s, ValueOp::load);
  if (s.op == StmtOp::store) refs.insert(refs.begin(), s.refs[0]);
  return refs;
}

std::string op_text(Kernel const& k, StmtId id) {
  auto w = where(k, id);
  return fmt::format("op #{} ({}{})", id, stmt_name(k.stmts[id]), w.empty() ? "" : ", " + w);
}

}  // namespace

barrier_scope cluster_barrier_scope(Kernel const& k, int alloc) {
  if (k.allocs[alloc].kind != AllocKind::cluster_barrier) return {true, "a CTA barrier"};
  std::vector<placed> order;
  std::vector<StmtId> loops;
  walk(k, k.body, loops, order);

  // SMEM a peer CTA's asynchronous operations touch.
  std::set<int> shared_with_peers;
  for (auto const& p : order) {
    auto const& s = k.stmts[p.id];
    if (s.op == StmtOp::copy_gmem_to_smem && !s.axes.empty()) shared_with_peers.insert(k.refs[s.refs[1]].id);
    if (s.op == StmtOp::tcgen05_mma && s.n == 2)
      for (std::size_t i = 1; i < 3 && i < s.refs.size(); ++i)
        if (s.refs[i] != none && k.refs[s.refs[i]].base == RefBase::alloc) shared_with_peers.insert(k.refs[s.refs[i]].id);
  }
  // GMEM the kernel writes (generic or bulk stores): reading it generically is as much a
  // conflict as writing it. Inputs only read are no one's business.
  std::set<int> written;
  for (auto const& p : order) {
    auto const& s = k.stmts[p.id];
    if (s.op == StmtOp::store && k.refs[s.refs[0]].base == RefBase::param) written.insert(k.refs[s.refs[0]].id);
    if (s.op == StmtOp::copy_smem_to_gmem) written.insert(k.refs[s.refs[1]].id);
  }
  for (auto const& p : order) {
    auto const& s = k.stmts[p.id];
    for (RefId r : generic_refs(k, s)) {
      auto const& ref = k.refs[r];
      const bool writes = s.op == StmtOp::store && r == s.refs[0];
      if (ref.base == RefBase::param && (writes || written.count(ref.id)))
        return {false, fmt::format("{} {} GMEM '{}' generically, which a peer may {} after the wait", op_text(k, p.id), writes ? "writes" : "reads",
                                   k.params[ref.id].name, writes ? "read" : "overwrite, or have written before its arrival")};
      if (shared_with_peers.count(ref.id))
        return {false, fmt::format("{} accesses '{}' generically, and a peer CTA's multicast copy or pair MMA touches it too",
                                   op_text(k, p.id), alloc_name(k, ref.id))};
    }
  }
  // Statement w may run before statement a: earlier in the body, or in a loop around both.
  auto may_precede = [&](std::size_t w, std::size_t a) {
    if (w < a) return true;
    for (StmtId l : order[w].loops)
      if (std::find(order[a].loops.begin(), order[a].loops.end(), l) != order[a].loops.end()) return true;
    return false;
  };
  auto arrival_after = [&](std::size_t w) -> std::size_t {  // an arrival on this barrier `w` may precede, or order.size()
    for (std::size_t a = 0; a < order.size(); ++a) {
      auto const& as = k.stmts[order[a].id];
      if (as.op == StmtOp::barrier_arrive && k.refs[as.refs[0]].id == alloc && may_precede(w, a)) return a;
    }
    return order.size();
  };
  // (d): a TMEM load of a pair MMA's accumulator that may come before an arrival on this barrier.
  std::set<int> pair_tmem;
  for (auto const& p : order) {
    auto const& s = k.stmts[p.id];
    if (s.op == StmtOp::tcgen05_mma && s.n == 2 && k.refs[s.refs[0]].base == RefBase::alloc) pair_tmem.insert(k.refs[s.refs[0]].id);
  }
  for (std::size_t w = 0; w < order.size() && !pair_tmem.empty(); ++w)
    for (RefId r : loaded_refs(k, k.stmts[order[w].id], ValueOp::load_tmem))
      if (pair_tmem.count(k.refs[r].id))
        if (const auto a = arrival_after(w); a < order.size())
          return {false, fmt::format("{} reads TMEM '{}' (tcgen05.ld), which the pair's MMA issued in the other CTA overwrites after the wait, "
                                     "before {} arrives: a .cta release carries no TMEM read to another CTA",
                                     op_text(k, order[w].id), alloc_name(k, k.refs[r].id), op_text(k, order[a].id))};
  // (c): a full bulk wait that may come before an arrival on this barrier.
  for (std::size_t w = 0; w < order.size(); ++w) {
    auto const& ws = k.stmts[order[w].id];
    if (ws.op != StmtOp::wait_group || ws.flag) continue;
    if (const auto a = arrival_after(w); a < order.size())
      return {false, fmt::format("{} waits for bulk stores' GMEM writes before {} arrives, and a .cluster release is what publishes them",
                                 op_text(k, order[w].id), op_text(k, order[a].id))};
  }
  return {true, "its arrivals order only asynchronous accesses (no generic access to GMEM or to SMEM a peer touches, no bulk-write "
                "wait before an arrival)"};
}

}  // namespace stagecraft::ir
