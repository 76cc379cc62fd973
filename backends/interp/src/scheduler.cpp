// The scheduler: runs each cluster's agents and async completions one choice per step, under
// the policy the options name (eager, lazy, random, pct), and detects deadlock. Every choice is
// a pure function of the options' seed, so a failing schedule replays exactly.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "machine.hpp"

namespace stagecraft::interp::detail {

// Clusters run one after another: nothing orders two clusters, so none can wait for another.
void machine::run() {
  const auto& g = k_.grid;
  const auto& c = k_.cluster;
  try {
    cluster_index_ = 0;
    for (std::int64_t z = 0; z < g[2]; z += c[2])
      for (std::int64_t y = 0; y < g[1]; y += c[1])
        for (std::int64_t x = 0; x < g[0]; x += c[0], ++cluster_index_)
          if (!clc_canceled_.count(cluster_index_)) run_cluster({x, y, z});  // a canceled cluster never runs
  } catch (stop_run const&) {
  }
}

// Sets up one cluster (CTAs, SMEM, barriers, agents, PCT change points) and schedules it.
void machine::run_cluster(std::array<std::int64_t, 3> origin) {
  ++clusters_run_;
  // Read sets of earlier clusters are never looked up again (cluster mismatch), unless a
  // semaphore orders a later cluster after them (foreign_hb).
  if (!has_semaphores_) shared_.clear();
  for (auto& cs : ctas_) {  // recycle SMEM storage: large fresh allocations cost a page fault per 4 KiB
    if (!cs.bytes.empty()) smem_pool_.push_back(std::move(cs.bytes));
    for (std::size_t a = 0; a < cs.smem.size(); ++a) {
      auto& m = cs.smem[a];
      // Grains refined by this cluster's accesses: the next cluster starts with them.
      if (m.sw) smem_grain_[a] = std::gcd(smem_grain_[a], m.grain);
    }
  }
  ctas_.clear();
  agents_.clear();
  pending_.clear();
  const auto& c = k_.cluster;
  for (std::int64_t z = 0; z < c[2]; ++z)
    for (std::int64_t y = 0; y < c[1]; ++y)
      for (std::int64_t x = 0; x < c[0]; ++x) {
        cta_state cs;
        cs.cidx = {x, y, z};
        // (the run's own numbering: with options::pid_offset only program_id moves)
        cs.linear = static_cast<int>(origin[0] + x + k_.grid[0] * (origin[1] + y + k_.grid[1] * (origin[2] + z)));
        cs.pid = {origin[0] + x + o_.pid_offset[0], origin[1] + y + o_.pid_offset[1], origin[2] + z + o_.pid_offset[2]};
        ctas_.push_back(std::move(cs));
      }
  const int nctas = static_cast<int>(ctas_.size());
  const int nagents = nctas * k_.roles;
  // Components: agents, then barrier elements of every CTA, then each agent's store sides.
  // Kernels with wgmma add one more per agent: its wgmma groups (value = groups known complete).
  // Kernels with tcgen05 use the same per-agent component for their MMA stream (value = MMAs
  // known complete); a kernel targets one architecture, so never both.
  const bool mma = has_wgmma_ || has_tcgen05_;
  mma_base_ = mma ? nagents + nctas * static_cast<int>(bar_count_) + 2 * nagents : -1;
  const int ncomp = nagents + nctas * static_cast<int>(bar_count_) + 2 * nagents + (mma ? nagents : 0);
  if (o_.checks && ncomp >= static_cast<int>(max_components))
    report(check::unsupported, -1, -1,
           fmt::format("a cluster with {} warpgroups and {} barrier elements per CTA needs {} clock components; the race checker "
                       "handles {} (run with checks off)",
                       nagents, bar_count_, ncomp, max_components - 1));
  const auto cta_bytes = static_cast<std::size_t>(ir::smem_bytes(k_));
  for (int ci = 0; ci < nctas; ++ci) {
    auto& cs = ctas_[ci];
    // One byte array per CTA, allocations at their ir::smem_offsets, as the hardware holds it.
    // Recycled storage keeps the previous cluster's bytes: SMEM starts undefined (the poison
    // check reports reads of it) and clusters run in a fixed order, so runs stay deterministic
    // without clearing it.
    if (!smem_pool_.empty()) {
      cs.bytes = std::move(smem_pool_.back());
      smem_pool_.pop_back();
    }
    if (cs.bytes.size() != cta_bytes) cs.bytes.assign(cta_bytes, std::byte{0});
    cs.tmem_k.assign(static_cast<std::size_t>(std::max<std::int64_t>(ir::tmem_columns(k_), 1)), 0);
    cs.tmem_freed_by.assign(k_.allocs.size(), ir::none);
    cs.tmem_freer.assign(k_.allocs.size(), -1);
    cs.tmem_mmas.assign(k_.allocs.size(), {});
    for (std::size_t a = 0; a < k_.allocs.size(); ++a) {
      auto const& al = k_.allocs[a];
      memory m;
      if (al.kind == ir::AllocKind::smem) {
        m.name = ir::alloc_name(k_, static_cast<int>(a));
        m.dtype = al.dtype;
        m.shape = al.shape;
        const auto n = std::accumulate(al.shape.begin(), al.shape.end(), std::int64_t{1}, std::multiplies<>());
        m.data = cs.bytes.data() + smem_offset_[a];
        m.smem = true;
        // smem_base is 0: the generated code's dynamic SMEM is 1024-aligned, and the swizzle
        // reads only address bits 4-9, so the same bytes move as on the GPU.
        m.address = static_cast<std::uint32_t>(smem_offset_[a]);
        m.swizzle = al.swizzle;
        if (al.tiling.size() == 2 && al.shape.size() >= 2) {
          m.tile_r = al.tiling[0];
          m.tile_c = al.tiling[1];
        }
        m.mapped = m.swizzle != 0 || (m.tile_r > 0 && m.tile_c != al.shape.back());
        if (o_.checks) {
          m.grain = smem_grain_[a];
          m.allocate_shadow(static_cast<std::size_t>(n / m.grain), true);
          std::fill_n(m.sw, n / m.grain, epoch::make(0, poison, 0));
        }
      } else if (al.kind == ir::AllocKind::tmem) {
        // TMEM is allocated at the CTA's start and freed at its exit (the front end has no
        // alloc/dealloc statements): undefined until an MMA writes it, like SMEM.
        m.name = ir::alloc_name(k_, static_cast<int>(a));
        m.dtype = al.dtype;
        m.shape = al.shape;
        const auto n = m.elements();
        m.owned.assign(static_cast<std::size_t>(n * ir::dtype_bits(al.dtype) / 8), std::byte{0});
        m.data = m.owned.data();
        m.tmem = true;
        if (o_.checks) {
          m.grain = smem_grain_[a];
          m.allocate_shadow(static_cast<std::size_t>(n / m.grain), true);
          std::fill_n(m.sw, n / m.grain, epoch::make(0, poison, 0));
        }
      }
      cs.smem.push_back(std::move(m));
      if (al.kind == ir::AllocKind::barrier || al.kind == ir::AllocKind::cluster_barrier) {
        const auto n = std::accumulate(al.shape.begin(), al.shape.end(), std::int64_t{1}, std::multiplies<>());
        const int per_phase = al.arrivals * (al.kind == ir::AllocKind::cluster_barrier ? group_size(al.collective_axes) : 1);
        for (std::int64_t e = 0; e < n; ++e) {
          barrier_state b;
          b.alloc = static_cast<int>(a);
          b.flat = e;
          b.expected = b.pending = per_phase;
          b.comp = nagents + ci * static_cast<int>(bar_count_) + static_cast<int>(cs.barriers.size());
          b.releases.c.assign(ncomp, 0);
          b.last[0].c.assign(ncomp, 0);
          b.last[1].c.assign(ncomp, 0);
          cs.barriers.push_back(std::move(b));
        }
      }
    }
  }
  for (auto& cs : ctas_)
    for (auto& nb : cs.named) nb.releases.c.assign(ncomp, 0);
  for (int ci = 0; ci < nctas; ++ci)
    for (int w = 0; w < k_.roles; ++w) {
      agent_state a;
      a.cta = ci;
      a.wg = w;
      a.vars.assign(k_.num_vars, 0);
      a.hi.assign(k_.num_vars, 0);
      a.comp = static_cast<int>(agents_.size());
      a.store_r_comp = nagents + nctas * static_cast<int>(bar_count_) + 2 * a.comp;
      a.store_w_comp = a.store_r_comp + 1;
      a.vc.c.assign(ncomp, 0);
      a.vc.c[a.comp] = 1;
      a.observed.assign(static_cast<std::size_t>(bar_count_), 0);
      a.priority = static_cast<std::uint64_t>(o_.pct_depth) + rng_.below(1u << 30);
      a.began = time_;  // clusters run one after another: its first op starts now
      if (mma) a.mma_comp = mma_base_ + a.comp;
      // Its register accumulators: undefined until written (the poison check reads them).
      a.acc.resize(k_.allocs.size());
      a.acc_k.assign(k_.allocs.size(), 0);
      for (std::size_t al_id = 0; al_id < k_.allocs.size(); ++al_id) {
        auto const& al = k_.allocs[al_id];
        if (al.kind != ir::AllocKind::accumulator) continue;
        auto& m = a.acc[al_id];
        m.name = fmt::format("acc{}", al_id);
        m.dtype = al.dtype;
        m.shape = al.shape;
        const auto n = m.elements();
        m.owned.assign(static_cast<std::size_t>(n * ir::dtype_bits(al.dtype) / 8), std::byte{0});
        m.data = m.owned.data();
        m.registers = true;
        if (o_.checks) {
          m.grain = smem_grain_[al_id];
          m.allocate_shadow(static_cast<std::size_t>(n / m.grain), true);
          std::fill_n(m.sw, n / m.grain, epoch::make(0, poison, 0));
        }
      }
      agents_.push_back(std::move(a));
    }
  if (o_.schedule == policy::pct) {
    // Change points fall within the run's expected length and at most one fires per step, so
    // d - 1 beyond that length only piles up: clamped, a huge d costs neither memory nor time.
    // Latest first, so the next one pops off the back (erasing the front was quadratic).
    change_points_.clear();
    const auto points = std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max(o_.pct_depth, 1) - 1), pct_length_);
    for (std::uint64_t i = 0; i < points; ++i) change_points_.push_back(time_ + 1 + rng_.below(std::max<std::uint64_t>(pct_length_, 1)));
    std::sort(change_points_.begin(), change_points_.end(), std::greater<>());
  }
  const auto start = time_;
  schedule();
  cluster_steps_ = time_ - start;
  pct_length_ = std::max(pct_length_, cluster_steps_);
}

int machine::group_size(std::vector<int> const& axes) const {
  int n = 1;
  for (int ax : axes) n *= static_cast<int>(k_.cluster[ax]);
  return n;
}

// One choice per step: an agent's next op, or an async completion.
void machine::schedule() {
  std::size_t rr = 0;  // round-robin cursor
  std::vector<int> runnable;
  for (;;) {
    if (time_ >= o_.max_steps)
      report(check::step_limit, -1, -1, fmt::format("the step budget of {} ran out: a loop that does not end?", o_.max_steps));
    runnable.clear();
    bool live = false;
    for (std::size_t i = 0; i < agents_.size(); ++i) {
      auto& a = agents_[i];
      if (a.done) continue;
      settle(a);
      if (a.done) continue;
      live = true;
      if (!blocked(a)) runnable.push_back(static_cast<int>(i));
    }
    if (!live && pending_.empty()) return;
    if (!live) check_loads_at_exit();
    if (runnable.empty() && pending_.empty()) deadlock();

    ++time_;
    if (o_.choose) {  // the caller drives: agents first, then completions, as step_point lists them
      const auto pick = o_.choose(step_point_of(runnable));
      if (pick >= runnable.size() + pending_.size())
        throw std::out_of_range(fmt::format("the chooser picked choice {} of {}", pick, runnable.size() + pending_.size()));
      if (pick < runnable.size()) step(runnable[pick]);
      else complete(pick - runnable.size());
      continue;
    }
    switch (o_.schedule) {
      case policy::eager:
      case policy::lazy: {
        // eager: async work first; lazy: async work only when no agent can run.
        const bool async_now = o_.schedule == policy::eager ? !pending_.empty() : runnable.empty();
        if (async_now) {
          complete(0);
        } else {  // agents round-robin
          auto it = std::find_if(runnable.begin(), runnable.end(), [&](int i) { return static_cast<std::size_t>(i) >= rr; });
          const int pick = it != runnable.end() ? *it : runnable.front();
          step(pick);
          rr = static_cast<std::size_t>(pick) + 1;
        }
        break;
      }
      case policy::random: {
        const auto n = runnable.size() + pending_.size();
        const auto pick = rng_.below(n);
        if (pick < runnable.size()) step(runnable[pick]);
        else complete(pick - runnable.size());
        break;
      }
      case policy::pct: {
        // The highest priority among runnable agents and pending completions runs; at a
        // change point the one that would run drops below every initial priority.
        std::uint64_t best = 0;
        long choice = -1;
        bool is_agent = false;
        for (int i : runnable)
          if (agents_[i].priority >= best) { best = agents_[i].priority; choice = i; is_agent = true; }
        for (std::size_t j = 0; j < pending_.size(); ++j)
          if (pending_[j].priority > best) { best = pending_[j].priority; choice = static_cast<long>(j); is_agent = false; }
        if (!change_points_.empty() && time_ >= change_points_.back()) {
          const auto low = static_cast<std::uint64_t>(change_points_.size());
          change_points_.pop_back();
          if (is_agent) agents_[choice].priority = low;
          else pending_[choice].priority = low;
        }
        if (is_agent) step(static_cast<int>(choice));
        else complete(static_cast<std::size_t>(choice));
        break;
      }
    }
  }
}

bool machine::blocked(agent_state& a) {
  auto const& s = op_at(a);
  cur_op_ = prog_[a.pc].stmt;
  if (s.op == ir::StmtOp::barrier_wait) {
    auto& b = barrier_of(a, s.refs[0]);
    const auto seen = a.observed[static_cast<std::size_t>(&b - ctas_[a.cta].barriers.data())];
    if (b.completed >= seen + 2)
      report(check::missed_phase, cur_op_, a,
             fmt::format("{} waits for completion #{} of {} (phase {}), but the barrier has already completed {} phases: "
                         "the waiter skipped completion #{}, and on hardware its parity aliases with #{} so the wait "
                         "returns at the wrong time",
                         who(a), seen + 1, bar_name(b), seen, b.completed, seen + 1, seen + 3));
    return b.completed <= seen;
  }
  if (s.op == ir::StmtOp::named_barrier_sync) return named_barrier_blocked(a);
  if (s.op == ir::StmtOp::semaphore_wait) return semaphore_blocked(a, s);
  if (s.op == ir::StmtOp::wait_group) return !groups_done(a, s.n, s.flag);
  if (s.op == ir::StmtOp::wgmma_wait) return !mma_groups_done(a, s.n);
  return false;
}

void machine::deadlock() {
  std::string msg = "deadlock: every warpgroup still running is blocked and nothing is in flight";
  int first_op = -1, first_agent = -1;
  for (auto& a : agents_) {
    if (a.done) continue;
    auto const& s = op_at(a);
    const auto id = prog_[a.pc].stmt;
    if (first_op < 0) {
      first_op = id;
      first_agent = a.comp;
    }
    if (s.op == ir::StmtOp::barrier_wait) {
      auto& b = barrier_of(a, s.refs[0]);
      const auto seen = a.observed[static_cast<std::size_t>(&b - ctas_[a.cta].barriers.data())];
      std::vector<std::string> ops;
      for (int o : arrivers_[b.alloc]) ops.push_back(fmt::format("#{} {}", o, ir::stmt_name(k_.stmts[o])));
      msg += fmt::format("\n  {} at op #{} barrier_wait {}: waits for completion #{} (phase {}); arrivals {}/{}, tx bytes pending {}; "
                         "ops that could still arrive: {}{}",
                         who(a), id, bar_name(b), seen + 1, seen, b.expected - b.pending, b.expected, b.tx,
                         ops.empty() ? std::string("none") : fmt::format("{}", fmt::join(ops, ", ")), where(id));
    } else if (s.op == ir::StmtOp::named_barrier_sync) {
      msg += fmt::format("\n  {} at op #{} named_barrier_sync: {}{}", who(a), id, named_barrier_deadlock(a), where(id));
    } else if (s.op == ir::StmtOp::semaphore_wait) {
      msg += fmt::format("\n  {} at op #{} semaphore_wait: {}{}", who(a), id, semaphore_deadlock(a, s), where(id));
    } else {
      msg += fmt::format("\n  {} at op #{} {}{}", who(a), id, ir::stmt_name(s), where(id));
    }
  }
  report(check::deadlock, first_op, first_agent, msg);
  throw stop_run{};  // unreachable: report throws
}

void machine::enqueue(async_op op) {
  op.issued = time_;
  op.id = next_async_++;
  op.fence_vc = agents_[static_cast<std::size_t>(op.agent)].last_fence;  // issued in the agent's step: its latest fence precedes the issue
  op.priority = static_cast<std::uint64_t>(o_.pct_depth) + rng_.below(1u << 30);
  pending_.push_back(std::move(op));
}

// Completes pending_[index] on the engine that owns it.
void machine::complete(std::size_t index) {
  // One warpgroup's wgmmas execute in issue order (they chain on their accumulators in
  // hardware): choosing any of them completes its agent's oldest. Likewise one thread's tcgen05
  // ops, which is what lets a commit arrive only after every MMA issued before it.
  auto stream = [](async_op::kind w) {
    return w == async_op::kind::tc_mma || w == async_op::kind::tc_commit || w == async_op::kind::tc_cp ? 2 : w == async_op::kind::mma ? 1 : 0;
  };
  if (const int st = stream(pending_[index].what); st != 0)
    for (std::size_t j = 0; j < index; ++j)
      if (stream(pending_[j].what) == st && pending_[j].agent == pending_[index].agent) {
        index = j;
        break;
      }
  async_op op = std::move(pending_[index]);
  pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(index));
  cur_op_ = op.stmt;
  issuer_fence_ = op.fence_vc.get();
  switch (op.what) {
    case async_op::kind::load:
    case async_op::kind::store_read:
    case async_op::kind::store_write: tma_complete(op); break;
    case async_op::kind::mma: wgmma_complete(op); break;
    case async_op::kind::tc_mma:
    case async_op::kind::tc_commit: tcgen05_complete(op); break;
    case async_op::kind::tc_cp: tcgen05_cp_complete(op); break;
    case async_op::kind::clc: clc_complete(op); break;
  }
  issuer_fence_ = nullptr;
}

}  // namespace stagecraft::interp::detail
