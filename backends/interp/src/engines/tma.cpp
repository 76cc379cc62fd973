// The TMA engine (cp.async.bulk.tensor): loads from GMEM into the SMEM of one CTA or, multicast,
// of every CTA of a collective group, completing transaction bytes on an mbarrier; and stores
// from SMEM to GMEM tracked in per-agent bulk groups (commit_group / wait_group[.read]).
// See machine.hpp for how an engine plugs into the machine.
#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "../machine.hpp"

namespace stagecraft::interp::detail {

// Every warpgroup has exited: a TMA load still in flight writes SMEM (and completes a barrier)
// of a CTA that is gone. Typically a producer that prefetched steps no consumer takes, and
// exited without draining its ring.
void machine::check_loads_at_exit() {
  for (auto const& op : pending_) {
    if (op.what == async_op::kind::clc) {
      cur_op_ = op.stmt;
      report(check::load_pending_at_exit, op.stmt, op.agent,
             fmt::format("every role of CTA {} has exited, but the try_cancel issued by {} is still in flight: its response lands in SMEM "
                         "that is gone (wait on its barrier before the CTA exits)",
                         ctas_[op.dst_cta[0]].linear, who(agents_[op.agent])));
      continue;
    }
    if (op.what != async_op::kind::load) continue;
    auto const& b = load_barrier(op, 0);
    cur_op_ = op.stmt;
    report(check::load_pending_at_exit, op.stmt, op.agent,
           fmt::format("every warpgroup of CTA {} has exited, but the TMA load issued by {} into {} (completing {}) is still in "
                       "flight: nobody waits for it (a producer that loads steps no consumer takes should stop, or drain by "
                       "waiting for the consumers to release every stage, before it exits)",
                       ctas_[op.dst_cta[0]].linear, who(agents_[op.agent]), op.dst[0].mem->name, bar_name(b)));
  }
}

// All but the newest n committed groups have finished reading (read_only) or writing.
bool machine::groups_done(agent_state const& a, std::int64_t n, bool read_only) const {
  const auto need = a.committed - n;
  for (std::int64_t g = a.groups_base; g < need; ++g) {
    auto const& gs = a.groups[static_cast<std::size_t>(g - a.groups_base)];
    if (gs.reads_pending || (!read_only && gs.writes_pending)) return false;
  }
  return true;
}

int machine::cta_at(std::array<std::int64_t, 3> const& cidx) const {
  for (std::size_t c = 0; c < ctas_.size(); ++c)
    if (ctas_[c].cidx == cidx) return static_cast<int>(c);
  return -1;
}

int machine::pair_leader_of(int cta) const {
  auto idx = ctas_[static_cast<std::size_t>(cta)].cidx;
  idx[0] &= ~std::int64_t{1};
  const int leader = cta_at(idx);
  return leader >= 0 ? leader : cta;  // always found: the verifier requires an even cluster extent along axis 0
}

barrier_state& machine::load_barrier(async_op const& op, std::size_t d) {
  const int c = op.pair_leader ? pair_leader_of(op.dst_cta[d]) : op.dst_cta[d];
  return ctas_[static_cast<std::size_t>(c)].barriers[static_cast<std::size_t>(op.bar_elem)];
}

// A TMA load. pair_leader (Stmt::n == 2, cp.async.bulk.tensor .cta_group::2): the bytes landing
// in each destination complete on the barrier at the same element in that destination's pair
// leader, and only the leader's issuing thread arrives, expecting the bytes of both CTAs of its
// pair (the pair's CTAs run one program: the odd CTA's copy moves as many bytes into its own
// SMEM). The odd CTA's copy makes no arrival: if it is never issued, the leader's phase never
// completes (a deadlock, as on the GPU).
void machine::issue_load(agent_state& a, ir::Stmt const& s) {
  const bool pair = s.n == 2;
  auto& b = barrier_of(a, s.refs[2]);
  const auto elem = &b - ctas_[a.cta].barriers.data();
  const bool leader = !pair || ctas_[a.cta].cidx[0] % 2 == 0;
  async_op op{async_op::kind::load};
  op.agent = a.comp;
  op.stmt = cur_op_;
  op.src = view_of(a, s.refs[0], a.cta, gmem_use::tma_load);
  const auto bytes = op.src.elements() * ir::dtype_bits(op.src.mem->dtype) / 8;
  std::vector<int> dests = s.axes.empty() ? std::vector<int>{a.cta} : peers(a.cta, s.axes);
  if (!s.axes.empty()) {
    // Each CTA of the collective group loads its share of the rows and multicasts it: every
    // destination receives the whole block, bytes from every member.
    const auto n = static_cast<std::int64_t>(dests.size());
    const auto pos = std::find(dests.begin(), dests.end(), a.cta) - dests.begin();
    if (op.src.box[0] % n != 0)
      report(check::index_out_of_range, cur_op_, a,
             fmt::format("a multicast copy splits its block's {} rows over {} CTAs, which does not divide", op.src.box[0], n));
    op.src.box[0] /= n;
    op.src.origin[0] += pos * op.src.box[0];
  }
  for (int d : dests) {
    region r = view_of(a, s.refs[1], d);
    if (!s.axes.empty()) {
      const auto n = static_cast<std::int64_t>(dests.size());
      const auto pos = std::find(dests.begin(), dests.end(), a.cta) - dests.begin();
      const auto lead = static_cast<std::size_t>(r.box.size() - op.src.box.size());
      r.box[lead] /= n;
      r.origin[lead] += pos * r.box[lead];
    }
    op.dst.push_back(r);
    op.dst_cta.push_back(d);
  }
  op.bar_elem = elem;
  op.bytes = op.src.elements() * ir::dtype_bits(op.src.mem->dtype) / 8;
  op.pair_leader = pair;
  op.vc = a.vc;
  if (leader) {
    // arrive.expect_tx: the whole destination block, from its type (an overhanging box's fill
    // counts too); the pair's leader expects its odd CTA's block as well.
    b.tx += pair ? 2 * bytes : bytes;
    if (b.tx > tx_limit)
      report(check::tx_underflow, cur_op_, a,
             fmt::format("tx-count out of range on {}: phase {} now expects {} bytes, beyond the mbarrier's limit of {} "
                         "(split the stage over several barriers or copies)",
                         bar_name(b), b.completed, b.tx, tx_limit));
    arrive(b, a.vc, a);
  }
  ++a.vc.c[a.comp];
  enqueue(std::move(op));
}

void machine::issue_store(agent_state& a, ir::Stmt const& s) {
  async_op op{async_op::kind::store_read};
  op.agent = a.comp;
  op.stmt = cur_op_;
  op.src = view_of(a, s.refs[0], a.cta);
  // A box that overhangs the array writes only its part inside (wholly outside: nothing). The
  // engine reads the whole SMEM box, but what it reads for the outside is dropped: only the
  // part inside is checked (never-written padding that is dropped is no poison read).
  op.gdst = view_of(a, s.refs[1], a.cta, gmem_use::tma_store).inside();
  op.group = a.committed;  // the open group
  op.vc = a.vc;
  ++a.open.reads_pending;
  ++a.open.writes_pending;
  ++a.open.stores;
  a.open.last = cur_op_;
  a.last_store = cur_op_;
  ++a.vc.c[a.comp];
  enqueue(std::move(op));
}

// commit_bulk_group: the stores issued since the last commit become one group.
void machine::tma_commit_group(agent_state& a) {
  a.groups.push_back(a.open);
  ++a.committed;
  a.open = {};
}

// wait_group[.read] n: the agent is ordered after the reads (and, without .read, the writes) of
// every group but the newest n. blocked() has already held it until they are done.
void machine::tma_wait_group(agent_state& a, ir::Stmt const& s) {
  const auto done = a.committed - s.n;
  a.vc.c[a.store_r_comp] = std::max<std::uint32_t>(a.vc.c[a.store_r_comp], static_cast<std::uint32_t>(std::max<std::int64_t>(done, 0)));
  if (!s.flag) a.vc.c[a.store_w_comp] = std::max<std::uint32_t>(a.vc.c[a.store_w_comp], static_cast<std::uint32_t>(std::max<std::int64_t>(done, 0)));
  a.waited_reads = std::max(a.waited_reads, done);
  // Groups nothing can still complete into are dropped, so the deque stays short.
  while (a.groups_base < done && !a.groups.empty() && !a.groups.front().reads_pending && !a.groups.front().writes_pending) {
    a.groups.pop_front();
    ++a.groups_base;
  }
}

// The completion of one TMA operation (the scheduler has made it current).
void machine::tma_complete(async_op& op) {
  auto& a = agents_[op.agent];
  switch (op.what) {
    case async_op::kind::load: {
      // Read the GMEM source, then land in every destination and complete its bytes. The part
      // of an overhanging box outside the array lands as zeros (OOB_FILL_NONE), or as NaN where
      // the block is masked(NAN) (OOB_FILL_NAN_REQUEST_ZERO_FMA).
      const region src = op.src.inside();
      const bool partial = src.elements() != op.src.elements();
      const auto fill = k_.refs[k_.stmts[op.stmt].refs[0]].fill;
      const bool nan_fill = fill && std::isnan(*fill);
      if (o_.checks) access(src, false, op.vc, epoch_of_load(op), a.comp, "a TMA load");
      for (std::size_t d = 0; d < op.dst.size(); ++d) {
        auto& b = load_barrier(op, d);
        const epoch stamp = epoch::make(b.completed + 1, static_cast<std::uint32_t>(b.comp), cluster_id());
        multicast_into_ = op.dst_cta[d] != a.cta ? op.dst_cta[d] : -1;  // for the message of a race there
        if (o_.checks) access(op.dst[d], true, op.vc, stamp, a.comp, "a TMA load");
        multicast_into_ = -1;
        if (partial && nan_fill) fill_nan(op.dst[d]);
        else if (partial) fill_zero(op.dst[d]);
        copy_region(src, op.dst[d].leading(src));
        b.tx -= op.bytes;
        b.releases.join(op.vc);
        trace_barrier(b, fmt::format("{}: {} B landed, {} tx bytes and {} arrival(s) pending", bar_name(b), op.bytes, b.tx, b.pending));
        try_complete(b, a.comp);
      }
      trace_async(op, 0, "load");
      break;
    }
    case async_op::kind::store_read: {
      const epoch stamp = epoch::make(static_cast<std::uint32_t>(op.group + 1), static_cast<std::uint32_t>(a.store_r_comp), cluster_id());
      const auto reduce = static_cast<ir::Reduce>(k_.stmts[op.stmt].n);  // a TMA reduce (cp.reduce.async.bulk.tensor)
      const char* what = reduce == ir::Reduce::none ? "a TMA store" : "a TMA reduce";
      --group_of(a, op.group).reads_pending;
      if (o_.schedule == policy::eager) {
        // Eager completes the write right after the read with nothing in between: copy
        // SMEM to GMEM directly (same bytes, same checks, no staging).
        if (o_.checks) access(op.src.leading(op.gdst), false, op.vc, stamp, a.comp, what);
        trace_async(op, 1, "store (SMEM read)");
        const epoch wstamp = epoch::make(static_cast<std::uint32_t>(op.group + 1), static_cast<std::uint32_t>(a.store_w_comp), cluster_id());
        if (reduce != ir::Reduce::none) {
          if (o_.checks) reduce_access(op.gdst, op.vc, wstamp, a.comp, what);
          reduce_bytes(op.gdst, region_bytes(op.src.leading(op.gdst)), reduce);
        } else {
          if (o_.checks) access(op.gdst, true, op.vc, wstamp, a.comp, what);
          copy_region(op.src.leading(op.gdst), op.gdst);
        }
        --group_of(a, op.group).writes_pending;
        trace_async(op, 1, "store (GMEM write)");
        break;
      }
      const region from = op.src.leading(op.gdst);
      if (o_.checks) access(from, false, op.vc, stamp, a.comp, what);
      op.staged_bytes = std::make_shared<std::vector<std::byte>>(region_bytes(from));
      op.what = async_op::kind::store_write;
      trace_async(op, 1, "store (SMEM read)");
      op.issued = time_;
      pending_.push_back(std::move(op));  // the GMEM write comes later
      break;
    }
    case async_op::kind::store_write: {
      const epoch stamp = epoch::make(static_cast<std::uint32_t>(op.group + 1), static_cast<std::uint32_t>(a.store_w_comp), cluster_id());
      if (const auto reduce = static_cast<ir::Reduce>(k_.stmts[op.stmt].n); reduce != ir::Reduce::none) {
        if (o_.checks) reduce_access(op.gdst, op.vc, stamp, a.comp, "a TMA reduce");
        reduce_bytes(op.gdst, *op.staged_bytes, reduce);
      } else {
        if (o_.checks) access(op.gdst, true, op.vc, stamp, a.comp, "a TMA store");
        write_bytes(op.gdst, *op.staged_bytes);
      }
      op.staged_bytes.reset();
      --group_of(a, op.group).writes_pending;
      trace_async(op, 1, "store (GMEM write)");
      break;
    }
    case async_op::kind::mma:  // the wgmma engine's (engines/wgmma.cpp)
    case async_op::kind::tc_mma:
    case async_op::kind::tc_commit:  // the tcgen05 engine's (engines/tcgen05.cpp)
    case async_op::kind::tc_cp:
    case async_op::kind::clc:        // cluster launch control (engines/clc.cpp)
      break;
  }
}

// An exiting agent must have committed every TMA store and waited for every group's reads.
void machine::tma_check_stores_at_exit(agent_state const& a) {
  if (a.open.stores > 0)
    report(check::store_pending_at_exit, a.open.last, a,
           fmt::format("{} exits with TMA stores that were never committed (commit_smem_to_gmem_group) nor waited for", who(a)));
  if (a.waited_reads < a.committed)
    report(check::store_pending_at_exit, a.last_store, a,
           fmt::format("{} exits with {} bulk group(s) of TMA stores not waited for: their SMEM may be released while the "
                       "copy engine still reads it (end with wait_smem_to_gmem(0_c, read_only) or wait_smem_to_gmem(0_c))",
                       who(a), a.committed - a.waited_reads));
}

group_state& machine::group_of(agent_state& a, std::int64_t g) {
  if (g >= a.committed) return a.open;
  return a.groups[static_cast<std::size_t>(g - a.groups_base)];
}

epoch machine::epoch_of_load(async_op const& op) const {
  // GMEM read by a TMA load: ordered for whoever observes the destination barrier's next completion.
  auto const& b = ctas_[op.dst_cta[0]].barriers[static_cast<std::size_t>(op.bar_elem)];
  return epoch::make(b.completed + 1, static_cast<std::uint32_t>(b.comp), cluster_id());
}

void machine::trace_async(async_op const& op, int engine, const char* what) {
  if (!o_.trace) return;
  // What a reader of the timeline (or a lesson's narration) wants: which block moved, how many
  // bytes, and for a load the barrier whose transaction count it completed.
  auto block = [](region const& r) {
    std::vector<std::int64_t> at(r.origin.size());
    for (std::size_t d = 0; d < at.size(); ++d) {
      const auto foot = r.box[d] * (d < r.step.size() ? r.step[d] : 1);  // a strided block's footprint
      at[d] = foot ? r.origin[d] / foot : r.origin[d];
    }
    return fmt::format("{} block ({})", r.mem ? r.mem->name : "?", fmt::join(at, ", "));
  };
  std::string label;
  if (op.what == async_op::kind::load) {
    auto const& b = ctas_[op.dst_cta.front()].barriers[static_cast<std::size_t>(op.bar_elem)];
    label = fmt::format("TMA load #{} of {}: {} B complete_tx on {}{}", op.stmt, block(op.src), op.bytes, bar_name(b),
                        op.dst.size() > 1 ? fmt::format(" in {} CTAs (multicast)", op.dst.size()) : "");
  } else {
    label = fmt::format("TMA {} #{} ({} to {})", what, op.stmt, op.src.mem ? op.src.mem->name : "?", block(op.gdst));
  }
  // GMEM bytes moved: a load reads its box's part inside the array, a store writes it (gdst is
  // already cut to it); the bench's model charges these to HBM, not the whole box.
  auto inside_bytes = [](region const& g) { return g.mem ? g.elements() * ir::dtype_bits(g.mem->dtype) / 8 : -1; };
  const std::int64_t gmem_bytes = op.what == async_op::kind::load ? inside_bytes(op.src.inside()) : inside_bytes(op.gdst);
  tr_.events.push_back({trace_event::kind::async, op.issued, time_, ctas_[agents_[op.agent].cta].linear, k_.roles + engine,
                        op.stmt, std::move(label), gmem_bytes});
}

}  // namespace stagecraft::interp::detail
