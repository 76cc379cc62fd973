// Agents executing their program: index expressions, control flow (which costs no scheduler
// step), and the dispatch of each IR statement to the part of the machine that models it.
#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "machine.hpp"
#include "stagecraft/ir/eval.hpp"

namespace stagecraft::interp::detail {

std::int64_t machine::eval(agent_state const& a, ir::ExprId id) {
  auto const& cs = ctas_[a.cta];
  return ir::eval_index(
      k_, id,
      [&](ir::Expr const& e) -> std::int64_t {
        switch (e.op) {
          case ir::ExprOp::var: return a.vars[e.value];
          case ir::ExprOp::program_id: return cs.pid[e.value];
          case ir::ExprOp::cluster_idx: return cs.cidx[e.value];
          case ir::ExprOp::thread_id: return a.wg;
          default: return e.value;  // a constant
        }
      },
      [&](ir::Expr const& e, std::int64_t i) -> std::int64_t {  // x.at(i): an input the kernel never writes (verify)
        if (e.op == ir::ExprOp::clc_result) return clc_read(a, e, i);
        if (e.op == ir::ExprOp::fetched) return fetched_read(a, e, i);
        auto const& m = gmem_[static_cast<std::size_t>(e.value)];
        if (i < 0 || i >= m.shape[0]) {
          report(check::index_out_of_range, cur_op_, a,
                 fmt::format("index table out of range: {} reads {}.at({}), but '{}' has {} elements", who(a), m.name, i, m.name, m.shape[0]));
          return 0;
        }
        std::int32_t v;  // i32 or u32 (verify): four bytes, read as the generated code reads them
        std::memcpy(&v, m.data + i * 4, 4);
        return m.dtype == ir::DType::u32 ? static_cast<std::int64_t>(static_cast<std::uint32_t>(v)) : v;
      },
      [&] { report(check::index_out_of_range, cur_op_, a, "an index expression divides by zero"); });
}

// Runs control instructions until the agent stands on an op (or ends).
void machine::settle(agent_state& a) {
  for (;;) {
    auto const& in = prog_[a.pc];
    if (in.what == code::op) return;
    // Control flow takes no scheduler step, so a loop with an empty body would otherwise
    // spin past the step budget forever.
    if (++control_steps_ > o_.max_steps)
      report(check::step_limit, in.stmt, a, fmt::format("the step budget of {} ran out in control flow: a loop that does not end?", o_.max_steps));
    switch (in.what) {
      case code::op: return;
      case code::end:
        finish(a);
        return;
      case code::loop_init: {
        auto const& s = k_.stmts[in.stmt];
        cur_op_ = in.stmt;
        a.vars[in.var] = eval(a, s.e0);
        a.hi[in.var] = eval(a, s.e1);
        ++a.pc;
        break;
      }
      case code::loop_test: a.pc = a.vars[in.var] >= a.hi[in.var] ? in.target : a.pc + 1; break;
      case code::loop_next:
        ++a.vars[in.var];
        a.pc = in.target;
        break;
      case code::jump_zero:  // a condition's reads (a cluster launch control query) are this op's
        cur_op_ = in.stmt;
        a.pc = eval(a, k_.stmts[in.stmt].e0) ? a.pc + 1 : in.target;
        break;
      case code::jump_nonzero:
        cur_op_ = in.stmt;
        a.pc = eval(a, k_.stmts[in.stmt].e0) ? in.target : a.pc + 1;
        break;
      case code::jump: a.pc = in.target; break;
    }
  }
}

void machine::step(int index) {
  auto& a = agents_[index];
  const ir::StmtId id = prog_[a.pc].stmt;
  cur_op_ = id;
  auto const& s = k_.stmts[id];
  switch (s.op) {
    case ir::StmtOp::copy_gmem_to_smem: issue_load(a, s); break;
    case ir::StmtOp::try_cancel: issue_try_cancel(a, s); break;
    case ir::StmtOp::copy_smem_to_gmem: issue_store(a, s); break;
    case ir::StmtOp::commit_group: tma_commit_group(a); break;
    case ir::StmtOp::wait_group: tma_wait_group(a, s); break;
    case ir::StmtOp::commit_smem:  // fence.proxy.async: check_fenced (memory.cpp) looks these up
      a.fences.push_back(a.vc.c[a.comp]);
      a.last_fence = std::make_shared<const vclock>(a.vc);
      ++a.vc.c[a.comp];
      break;
    case ir::StmtOp::barrier_arrive: {
      auto& b = barrier_of(a, s.refs[0]);
      auto const& al = k_.allocs[b.alloc];
      if (al.kind == ir::AllocKind::cluster_barrier) {
        // At .cta scope an arrival orders, for a peer CTA, only what has already completed
        // asynchronously (ir/scopes.hpp); its own CTA gets the full release.
        const bool weak = cta_scope_[b.alloc] != 0;
        std::optional<vclock> async_only;
        for (int peer : peers(a.cta, al.collective_axes)) {
          if (weak && peer != a.cta && !async_only) async_only = async_part(a.vc);
          arrive(ctas_[peer].barriers[&b - ctas_[a.cta].barriers.data()], weak && peer != a.cta ? *async_only : a.vc, a);
        }
      } else {
        arrive(b, a.vc, a);
      }
      ++a.vc.c[a.comp];
      break;
    }
    case ir::StmtOp::barrier_wait: {
      auto& b = barrier_of(a, s.refs[0]);
      auto& seen = a.observed[static_cast<std::size_t>(&b - ctas_[a.cta].barriers.data())];
      a.vc.join(b.last[seen % 2]);
      ++seen;
      break;
    }
    case ir::StmtOp::store: do_store(a, s); break;
    case ir::StmtOp::wgmma: issue_wgmma(a, s); break;
    case ir::StmtOp::wgmma_commit: wgmma_commit(a); break;
    case ir::StmtOp::wgmma_wait: wgmma_wait(a, s); break;
    case ir::StmtOp::tcgen05_mma: issue_tcgen05_mma(a, s); break;
    case ir::StmtOp::tcgen05_cp: issue_tcgen05_cp(a, s); break;
    case ir::StmtOp::tcgen05_commit_arrive: tcgen05_commit(a, s.refs[0]); break;
    case ir::StmtOp::tmem_dealloc: tmem_dealloc(a, s); break;
    case ir::StmtOp::named_barrier_sync:
    case ir::StmtOp::named_barrier_arrive:
      // A sync that arrived stays on its op until its phase completes (blocked() asks), and its
      // op then spans the wait in the trace: began is left at the arrival.
      if (!named_barrier(a, s)) return;
      break;
    case ir::StmtOp::semaphore_signal: semaphore_signal(a, s); break;
    case ir::StmtOp::semaphore_wait: semaphore_take(a, s); break;
    case ir::StmtOp::atomic_fetch: atomic_fetch(a, s); break;
    default:
      report(check::unsupported, id, a,
             fmt::format("{} is not modelled by the interpreter yet (tensor-core ops arrive with their own issue)", ir::stmt_name(s.op)));
  }
  trace_op(a, id);
  ++a.pc;
  a.began = time_;
}

void machine::finish(agent_state& a) {
  a.done = true;
  tma_check_stores_at_exit(a);
  if (has_wgmma_) wgmma_check_at_exit(a);
  if (has_tcgen05_) tcgen05_check_at_exit(a);
}

}  // namespace stagecraft::interp::detail
