// Set-up of the machine (GMEM memories and their shadows, barrier numbering, trace lanes) and
// the interpreter's public entry points. The machine itself is described in machine.hpp.
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "machine.hpp"
#include "stagecraft/ir/scopes.hpp"

namespace stagecraft::interp {

const char* policy_name(policy p) {
  switch (p) {
    case policy::eager: return "eager";
    case policy::lazy: return "lazy";
    case policy::random: return "random";
    case policy::pct: return "pct";
  }
  return "?";
}

const char* check_name(check c) {
  switch (c) {
    case check::deadlock: return "deadlock";
    case check::missed_phase: return "missed-phase";
    case check::tx_underflow: return "tx-underflow";
    case check::over_arrival: return "over-arrival";
    case check::index_out_of_range: return "index-out-of-range";
    case check::data_race: return "data-race";
    case check::missing_fence: return "missing-fence";
    case check::store_pending_at_exit: return "store-pending-at-exit";
    case check::load_pending_at_exit: return "load-pending-at-exit";
    case check::poison_read: return "poison-read";
    case check::step_limit: return "step-limit";
    case check::unsupported: return "unsupported";
    case check::wgmma_pending_at_exit: return "wgmma-pending-at-exit";
    case check::tcgen05_pending_at_dealloc: return "tcgen05-pending-at-dealloc";
    case check::tcgen05_pair_issuer: return "tcgen05-pair-issuer";
    case check::tmem_use_after_dealloc: return "tmem-use-after-dealloc";
    case check::tmem_not_freed: return "tmem-not-freed";
    case check::named_barrier_count_mismatch: return "named-barrier-count-mismatch";
    case check::semaphore_value: return "semaphore-value";
    case check::clc_after_failure: return "clc-after-failure";
  }
  return "?";
}


namespace {
// Every parameter a store or TMA store writes, workspaces included (they need race shadows).
std::vector<int> stored_params(ir::Kernel const& k) {
  std::vector<bool> w(k.params.size(), false);
  auto mark = [&](ir::RefId r) {
    if (r >= 0 && k.refs[r].base == ir::RefBase::param) w[k.refs[r].id] = true;
  };
  for (auto const& s : k.stmts) {
    if (s.op == ir::StmtOp::copy_smem_to_gmem) mark(s.refs[1]);
    if (s.op == ir::StmtOp::store) mark(s.refs[0]);
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < w.size(); ++i)
    if (w[i]) out.push_back(static_cast<int>(i));
  return out;
}
}  // namespace

// The outputs: a workspace is the kernel's own scratch, never compared or copied back.
std::vector<int> written_params(ir::Kernel const& k) {
  auto out = stored_params(k);
  std::erase_if(out, [&](int p) { return k.params[p].workspace; });
  return out;
}

namespace detail {
namespace {
// The shadow grain a memory starts with (see memory::grain): the gcd of the innermost extents
// of the views the IR names. GMEM blocks are as wide as their shape; an SMEM view spans whole
// rows unless it indexes every dimension (one element). Accesses the refs do not show (the
// share of a row a CTA multicasts) refine the cells when they happen (memory::refine).
std::int64_t initial_grain(ir::Kernel const& k, ir::RefBase base, int id, std::vector<std::int64_t> const& shape) {
  std::int64_t g = shape.back();
  for (auto const& r : k.refs) {
    if (r.base != base || r.id != id) continue;
    if (base == ir::RefBase::param && !r.shape.empty()) g = std::gcd(g, r.shape.back());
    if (base == ir::RefBase::alloc && r.index.size() >= shape.size()) g = 1;
  }
  return std::max<std::int64_t>(g, 1);
}

// GMEM parameters the kernel reads (TMA load sources, generic loads).
std::vector<int> read_params(ir::Kernel const& k) {
  std::vector<int> out;
  auto mark = [&](ir::RefId r) {
    if (r >= 0 && k.refs[r].base == ir::RefBase::param && std::find(out.begin(), out.end(), k.refs[r].id) == out.end())
      out.push_back(k.refs[r].id);
  };
  for (auto const& s : k.stmts)
    if (s.op == ir::StmtOp::copy_gmem_to_smem) mark(s.refs[0]);
  for (auto const& v : k.values)
    if (v.op == ir::ValueOp::load) mark(v.ref);
  return out;
}
}  // namespace

machine::machine(ir::Kernel const& k, std::vector<host_tensor>& gmem, options const& o)
    : k_(k), o_(o), prog_(detail::flatten(k)), rng_{o.seed} {
  const auto written = stored_params(k), read = read_params(k);
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    memory m;
    m.name = k.params[i].name;
    m.dtype = k.params[i].dtype;
    m.shape = k.params[i].shape;
    m.data = gmem[i].bytes.data();
    auto has = [&](std::vector<int> const& v) { return std::find(v.begin(), v.end(), static_cast<int>(i)) != v.end(); };
    if (o_.checks && has(written)) {
      m.grain = initial_grain(k, ir::RefBase::param, static_cast<int>(i), m.shape);
      m.allocate_shadow(static_cast<std::size_t>(gmem[i].elements() / m.grain), has(read));
    }
    gmem_.push_back(std::move(m));
  }
  // Barrier elements and their offsets within a CTA.
  for (std::size_t a = 0; a < k.allocs.size(); ++a) {
    const bool memory_like = k.allocs[a].kind == ir::AllocKind::smem || k.allocs[a].kind == ir::AllocKind::accumulator ||
                             k.allocs[a].kind == ir::AllocKind::tmem;
    smem_grain_.push_back(memory_like ? initial_grain(k, ir::RefBase::alloc, static_cast<int>(a), k.allocs[a].shape) : 1);
    bar_base_.push_back(bar_count_);
    auto const& al = k.allocs[a];
    if (al.kind == ir::AllocKind::barrier || al.kind == ir::AllocKind::cluster_barrier)
      bar_count_ += std::accumulate(al.shape.begin(), al.shape.end(), std::int64_t{1}, std::multiplies<>());
  }
  smem_offset_ = ir::smem_offsets(k);
  for (std::size_t a = 0; a < k.allocs.size(); ++a)
    cta_scope_.push_back(o.all_cta_scopes || ir::cluster_barrier_scope(k, static_cast<int>(a)).cta);
  // wgmma plans, once per statement: both backends derive the instructions from the same one.
  plans_.resize(k.stmts.size());
  for (std::size_t s = 0; s < k.stmts.size(); ++s)
    if (k.stmts[s].op == ir::StmtOp::wgmma) {
      plans_[s] = std::make_unique<ir::wgmma::plan>(ir::wgmma::plan_of(k, k.stmts[s]));
      has_wgmma_ = true;
      mma_input_ = plans_[s]->b_type;
      mma_accumulator_ = plans_[s]->acc;
    }
  tc_plans_.resize(k.stmts.size());
  for (std::size_t s = 0; s < k.stmts.size(); ++s)
    if (k.stmts[s].op == ir::StmtOp::tcgen05_mma) {
      tc_plans_[s] = std::make_unique<ir::tcgen05::plan>(ir::tcgen05::plan_of(k, k.stmts[s]));
      has_tcgen05_ = true;
      mma_input_ = tc_plans_[s]->b_type;
    }
  // A commit with no MMA before it is legal (it arrives at once) and needs the MMA stream too.
  for (auto const& st : k.stmts) {
    if (st.op == ir::StmtOp::tcgen05_commit_arrive || st.op == ir::StmtOp::tmem_dealloc || st.op == ir::StmtOp::tcgen05_cp) has_tcgen05_ = true;
    if (st.op == ir::StmtOp::semaphore_signal || st.op == ir::StmtOp::semaphore_wait || st.op == ir::StmtOp::atomic_fetch) has_semaphores_ = true;
  }
  tmem_col_ = ir::tcgen05::tmem_columns_of(k);
  // Ops that arrive on each allocation: named in deadlock reports.
  for (std::size_t s = 0; s < k.stmts.size(); ++s) {
    auto const& st = k.stmts[s];
    auto note = [&](ir::RefId r) { arrivers_[k.refs[r].id].push_back(static_cast<int>(s)); };
    if (st.op == ir::StmtOp::copy_gmem_to_smem) note(st.refs[2]);
    if (st.op == ir::StmtOp::barrier_arrive || st.op == ir::StmtOp::tcgen05_commit_arrive) note(st.refs[0]);
    if (st.op == ir::StmtOp::tcgen05_mma && ir::tcgen05::mma_commit_barrier(st) != ir::none) note(ir::tcgen05::mma_commit_barrier(st));
  }
  if (o_.trace) {
    tr_.kernel = k.name;
    tr_.sources = detail::op_sources(k);
    for (int w = 0; w < k.roles; ++w) tr_.lanes.push_back(ir::role_label(k, w));
    tr_.lanes.push_back("tma load");
    tr_.lanes.push_back("tma store");
    if (has_wgmma_) tr_.lanes.push_back("wgmma");
    if (has_tcgen05_) tr_.lanes.push_back("tcgen05");
    tr_.lanes.push_back("barriers");  // last: the barrier events find it as lanes.size() - 1
    tr_.ctas = static_cast<int>(k.grid[0] * k.grid[1] * k.grid[2]);
  }
}

result machine::take(std::vector<host_tensor> buffers) {
  result r;
  r.buffers = std::move(buffers);
  r.diagnostics = std::move(diags_);
  r.timeline = std::move(tr_);
  r.steps = time_;
  r.mma_k = mma_k_;
  r.max_exp_arg = max_exp_arg_;
  r.math = o_.math;
  r.mma_input = mma_input_;
  r.mma_accumulator = mma_accumulator_;
  return r;
}

}  // namespace detail

namespace {
void check_inputs(ir::Kernel const& k, std::vector<host_tensor> const& buffers) {
  if (buffers.size() != k.params.size())
    throw std::invalid_argument(fmt::format("kernel '{}' takes {} GMEM buffers, got {}", k.name, k.params.size(), buffers.size()));
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    auto const& p = k.params[i];
    auto const& b = buffers[i];
    if (b.dtype != p.dtype || b.shape != p.shape ||
        b.bytes.size() != static_cast<std::size_t>(host_tensor::byte_count(b.dtype, b.shape)))
      throw std::invalid_argument(fmt::format("kernel '{}': parameter '{}' expects {}[{}], got {}[{}] ({} bytes)", k.name, p.name,
                                              ir::dtype_name(p.dtype), fmt::join(p.shape, ", "), ir::dtype_name(b.dtype),
                                              fmt::join(b.shape, ", "), b.bytes.size()));
  }
  check_segment_tables(k, buffers);
}
}  // namespace

result run(ir::Kernel const& lowered, std::vector<host_tensor> buffers, options const& o) {
  ir::verify(lowered);
  // Run-time extents take the buffers' sizes (the kernel re-verified for them).
  const ir::Kernel bound = lowered.extents.empty() ? ir::Kernel{} : bind_to_buffers(lowered, buffers);
  ir::Kernel const& k = lowered.extents.empty() ? lowered : bound;
  check_inputs(k, buffers);
  // A workspace runs on zeroed memory of the interpreter's own; the caller's slot comes back as
  // it was given (it is neither an input nor an output).
  std::vector<std::vector<std::byte>> given(buffers.size());
  for (std::size_t i = 0; i < buffers.size(); ++i)
    if (k.params[i].workspace) {
      given[i] = std::move(buffers[i].bytes);
      buffers[i].bytes.assign(given[i].size(), std::byte{0});
    }
  detail::machine m(k, buffers, o);
  m.run();
  for (std::size_t i = 0; i < buffers.size(); ++i)
    if (k.params[i].workspace) buffers[i].bytes = std::move(given[i]);
  return m.take(std::move(buffers));
}

exploration explore(ir::Kernel const& k, std::vector<host_tensor> const& buffers, options base, int n) {
  exploration e;
  const int runs = (base.schedule == policy::eager || base.schedule == policy::lazy) ? std::min(n, 1) : n;
  for (int i = 0; i < runs; ++i) {
    options o = base;
    o.seed = base.seed + static_cast<std::uint64_t>(i);
    auto r = run(k, buffers, o);
    ++e.schedules;
    if (!r.ok()) {
      e.failing_seed = o.seed;
      e.failure = std::move(r);
      break;
    }
  }
  return e;
}

}  // namespace stagecraft::interp
