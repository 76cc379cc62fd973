#include "stagecraft/bench/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "stagecraft/interp/interp.hpp"
#include "stagecraft/ir/tcgen05.hpp"
#include "stagecraft/ir/roles.hpp"
#include "stagecraft/registry.hpp"

namespace stagecraft::bench {

extern const char* const builtin_machines_json;  // data/machines.json, compiled in (machines_data.cpp)

namespace {
using json = nlohmann::json;

// ---- the data file ------------------------------------------------------------------------------

machine parse_machine(json const& j, std::string const& where) {
  machine m;
  auto num = [&](const char* key, auto& field) {
    if (!j.contains(key)) throw std::invalid_argument(fmt::format("{}: machine '{}' has no \"{}\"", where, m.name, key));
    if (!j[key].is_number()) throw std::invalid_argument(fmt::format("{}: machine '{}': \"{}\" must be a number", where, m.name, key));
    field = j[key].get<std::remove_reference_t<decltype(field)>>();
    if (!(static_cast<double>(field) > 0))
      throw std::invalid_argument(fmt::format("{}: machine '{}': \"{}\" must be positive, got {}", where, m.name, key, j[key].dump()));
  };
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) throw std::invalid_argument(fmt::format("{}: a machine without a \"name\"", where));
  m.name = j["name"].get<std::string>();
  m.description = j.value("description", "");
  num("sms", m.sms);
  num("clock_ghz", m.clock_ghz);
  num("hbm_gbps", m.hbm_gbps);
  num("hbm_efficiency", m.hbm_efficiency);
  num("sm_tma_gbps", m.sm_tma_gbps);
  num("tma_latency_ns", m.tma_latency_ns);
  num("tma_issue_ns", m.tma_issue_ns);
  num("store_latency_ns", m.store_latency_ns);
  num("smem_bytes_per_clk", m.smem_bytes_per_clk);
  num("tc_flops_per_clk", m.tc_flops_per_clk);
  num("barrier_latency_ns", m.barrier_latency_ns);
  num("op_ns", m.op_ns);
  num("launch_us", m.launch_us);
  num("smem_per_sm", m.smem_per_sm);
  num("max_ctas_per_sm", m.max_ctas_per_sm);
  num("l2_bytes", m.l2_bytes);
  // Added with the issue and L2 terms: a machine file written before them keeps the defaults.
  auto opt = [&](const char* key, double& field) {
    if (j.contains(key)) num(key, field);
  };
  opt("l2_gbps", m.l2_gbps);
  opt("fp32_lanes_per_clk", m.fp32_lanes_per_clk);
  opt("mufu_lanes_per_clk", m.mufu_lanes_per_clk);
  if (m.hbm_efficiency > 1) throw std::invalid_argument(fmt::format("{}: machine '{}': hbm_efficiency is a fraction of peak (at most 1)", where, m.name));
  return m;
}

// ---- the replay -------------------------------------------------------------------------------

std::int64_t product(std::vector<std::int64_t> const& v, std::size_t from = 0) {
  std::int64_t n = 1;
  for (std::size_t i = from; i < v.size(); ++i) n *= v[i];
  return n;
}

}  // namespace

double ref_bytes(ir::Kernel const& k, ir::RefId id) {
  auto const& r = k.refs[id];
  ir::DType dt;
  std::int64_t n;
  if (r.base == ir::RefBase::param) {
    dt = k.params[r.id].dtype;
    n = r.shape.empty() ? product(k.params[r.id].shape) : product(r.shape);
  } else {
    auto const& a = k.allocs[r.id];
    dt = a.dtype;
    n = r.shape.empty() ? product(a.shape, r.index.size()) : product(r.shape);
  }
  // GMEM's footprint for a parameter (FP6 packed), the element's for an allocation.
  return static_cast<double>(n) * (r.base == ir::RefBase::param ? ir::packed_bits(dt) : ir::dtype_bits(dt)) / 8.0;
}

// A reference's shape (an indexed ring stage: the stage's) and element type.
std::vector<std::int64_t> ref_shape(ir::Kernel const& k, ir::RefId id) {
  auto const& r = k.refs[id];
  if (!r.shape.empty()) return r.shape;
  auto const& full = r.base == ir::RefBase::param ? k.params[r.id].shape : k.allocs[r.id].shape;
  const auto from = r.base == ir::RefBase::param ? 0 : std::min(r.index.size(), full.size());
  return {full.begin() + static_cast<std::ptrdiff_t>(from), full.end()};
}
namespace {

ir::DType ref_dtype(ir::Kernel const& k, ir::RefId id) {
  auto const& r = k.refs[id];
  return r.base == ir::RefBase::param ? k.params[r.id].dtype : k.allocs[r.id].dtype;
}

// Bytes a generic `store` moves: what its value loads, then what it writes, split by memory.
void value_bytes(ir::Kernel const& k, ir::ValueId v, double& smem, double& gmem, double& flops) {
  if (v == ir::none) return;
  auto const& x = k.values[v];
  if (x.op == ir::ValueOp::load || x.op == ir::ValueOp::load_tmem) {
    if (x.ref != ir::none) (k.refs[x.ref].base == ir::RefBase::param ? gmem : smem) += ref_bytes(k, x.ref);
    return;
  }
  // A reduction does one operation per operand element; broadcasts, iotas and views only place values.
  if (ir::value_is_reduction(x.op)) flops += static_cast<double>(product(k.values[x.a].shape));
  else if (x.op != ir::ValueOp::scalar && x.op != ir::ValueOp::index && x.op != ir::ValueOp::cast && !ir::value_only_places(x.op))
    flops += static_cast<double>(product(x.shape));
  value_bytes(k, x.a, smem, gmem, flops);
  value_bytes(k, x.b, smem, gmem, flops);
  value_bytes(k, x.c, smem, gmem, flops);
}

// ---- instruction issue -----------------------------------------------------------------------
// What a warp issues for a generic store's value, estimated from the IR where no SASS was
// measured: per element of each node, one FP32-pipe instruction for arithmetic, compares and
// selects (an FMA is one), and for the transcendentals either the SFU approximation (fast math:
// one MUFU and a scaling FMUL) or the exact software sequence. The exact exp's 50 instructions
// are the static gate's: attention_hopper D=128's MMA loop is 1980 SASS with --math exact and 414
// fast, for 32 exponentials per thread: (1980 - 414) / 32 = 49 more per exp. The others are the
// same order (log, rsqrt, tanh: range reduction and a polynomial), division a Newton step.
struct warp_work {
  double fp32 = 0, mufu = 0;  // instructions per thread (= per warp)
};

void value_work(ir::Kernel const& k, ir::ValueId v, double threads, ir::math_mode math, warp_work& w) {
  if (v == ir::none) return;
  auto const& x = k.values[v];
  if (x.op == ir::ValueOp::load || x.op == ir::ValueOp::load_tmem || x.op == ir::ValueOp::scalar || x.op == ir::ValueOp::index) return;
  const double per_thread = static_cast<double>(product(x.op == ir::ValueOp::cast || !ir::value_is_reduction(x.op) ? x.shape : k.values[x.a].shape)) / threads;
  const bool fast = math == ir::math_mode::fast;
  if (ir::value_only_places(x.op)) {
  } else if (ir::value_is_math(x.op) && x.op != ir::ValueOp::abs) {
    if (fast) w.fp32 += per_thread, w.mufu += per_thread;
    else w.fp32 += 50 * per_thread;
  } else if (x.op == ir::ValueOp::div) {
    if (fast) w.fp32 += 2 * per_thread, w.mufu += per_thread;
    else w.fp32 += 10 * per_thread;
  } else if (x.op == ir::ValueOp::cast) {
    w.fp32 += 0.5 * per_thread;  // a pair per cvt (cvt.rn.bf16x2.f32), or one widening
  } else {
    w.fp32 += per_thread;  // reductions: one op per operand element (the shuffles are latency)
  }
  value_work(k, x.a, threads, math, w);
  value_work(k, x.b, threads, math, w);
  value_work(k, x.c, threads, math, w);
}

// Clocks of one SM sub-partition for a warp's instructions: one issue slot a clock, a MUFU
// instruction 32 / (its lanes per sub-partition) clocks of the special-function unit.
double issue_clocks(machine const& m, double instructions, double mufu) { return std::max(instructions, mufu * 32.0 / (m.mufu_lanes_per_clk / 4)); }

// Per statement, the IR's estimate of a store's issue clocks (0 for the rest): a property of the
// kernel, computed once for every replay of it.
std::vector<double> store_issue_clocks(ir::Kernel const& k, machine const& m, ir::math_mode math) {
  std::vector<double> out(k.stmts.size(), 0.0);
  for (std::size_t i = 0; i < k.stmts.size(); ++i)
    if (k.stmts[i].op == ir::StmtOp::store) {
      warp_work w;
      value_work(k, k.stmts[i].value, 128, math, w);
      out[i] = issue_clocks(m, w.fp32 + w.mufu, w.mufu);
    }
  return out;
}

// The MMA loops: the innermost for_ loops holding a wgmma or tcgen05_mma, marked per statement.
// Returns, per statement, the loop (its for_ id) it belongs to, or -1.
std::vector<std::int32_t> mma_loops(ir::Kernel const& k) {
  std::vector<std::int32_t> loop_of(k.stmts.size(), -1);
  auto has_mma = [&](auto& self, ir::StmtId id) -> bool {
    auto const& st = k.stmts[static_cast<std::size_t>(id)];
    if (st.op == ir::StmtOp::wgmma || st.op == ir::StmtOp::tcgen05_mma) return true;
    for (auto c : st.body)
      if (c != ir::none && self(self, c)) return true;
    return false;
  };
  auto mark = [&](auto& self, ir::StmtId id, std::int32_t loop) -> void {
    loop_of[static_cast<std::size_t>(id)] = loop;
    for (auto c : k.stmts[static_cast<std::size_t>(id)].body)
      if (c != ir::none) self(self, c, loop);
  };
  auto visit = [&](auto& self, ir::StmtId id) -> void {
    auto const& st = k.stmts[static_cast<std::size_t>(id)];
    if (st.op == ir::StmtOp::for_ && has_mma(has_mma, id)) {
      bool inner = false;  // a loop inside that holds an MMA too: that one is the MMA loop
      auto deeper = [&](auto& me, ir::StmtId c) -> void {
        auto const& s2 = k.stmts[static_cast<std::size_t>(c)];
        if (s2.op == ir::StmtOp::for_ && has_mma(has_mma, c)) inner = true;
        for (auto b : s2.body)
          if (b != ir::none) me(me, b);
      };
      for (auto c : st.body)
        if (c != ir::none) deeper(deeper, c);
      if (!inner) return mark(mark, id, static_cast<std::int32_t>(id));
    }
    for (auto c : st.body)
      if (c != ir::none) self(self, c);
  };
  if (k.body != ir::none) visit(visit, k.body);
  return loop_of;
}

// The tensor cores' rate for an MMA reading `a`'s dtype, in elements of K: 8-bit operands twice
// the 16-bit rate, tf32 (f32 operands) half of it. Packed FP4 (e2m1x2) runs twice fp8's rate in
// values (B200: 9 dense FP4 PFLOP/s against 4.5 fp8), which is fp8's in bytes: its elements.
double tc_rate_factor(ir::DType t) {
  switch (t) {
    case ir::DType::e4m3: case ir::DType::e5m2: case ir::DType::i8: case ir::DType::u8: case ir::DType::e2m1x2: return 2.0;
    case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1: return 2.0;  // kind::f8f6f4's one rate (B200: FP6 dense as fp8)
    case ir::DType::f32: return 0.5;
    default: return 1.0;
  }
}

struct replayer {
  ir::Kernel const& k;
  machine const& m;
  std::int64_t concurrent;  // CTAs running at once in this wave
  int per_sm;               // of them, on one SM
  model_options const& o;
  double hbm_fraction;                      // of the bytes moved, what HBM serves; the rest L2 serves
  std::vector<std::int32_t> const& loop_of;  // per statement: its MMA loop, or -1
  std::vector<double> const& store_clocks;   // per statement: a store's estimated issue clocks

  // One CTA's share of the machine in this wave: HBM for the bytes the arrays hold, L2 for the
  // re-reads (a GEMM's A and B tiles, read by every CTA of their row or column), and no more
  // than what one SM's TMA moves.
  double bw() const {  // bytes per ns (= GB/s)
    const double hbm = m.hbm_gbps * m.hbm_efficiency / static_cast<double>(concurrent);
    const double l2 = m.l2_gbps / static_cast<double>(concurrent);
    return std::min(m.sm_tma_gbps / per_sm, 1.0 / (hbm_fraction / hbm + (1 - hbm_fraction) / l2));
  }
  double clk_ns() const { return 1.0 / m.clock_ghz; }
  double smem_bw() const { return m.smem_bytes_per_clk * m.clock_ghz / per_sm; }
  double issue_gap() const { return m.tma_issue_ns * per_sm; }

  struct agent {
    double ready = 0, busy = 0, wait_bar = 0, wait_group = 0;
    std::int64_t committed = 0;
    double mma_end = 0;                // the tensor cores finish this agent's MMAs issued so far
    std::vector<double> wgmma_groups;  // per wgmma_commit: when its group completes
    std::map<std::int32_t, double> kloop_op_clocks;  // per MMA loop: the measured loop's clocks per op
    std::vector<std::pair<double, double>> groups;  // per bulk group: SMEM read done, GMEM write done
    std::pair<double, double>& group(std::int64_t g) {
      if (static_cast<std::size_t>(g) >= groups.size()) groups.resize(static_cast<std::size_t>(g) + 1, {0.0, 0.0});
      return groups[static_cast<std::size_t>(g)];
    }
  };
  struct in_flight {
    double issued = 0;
    std::int64_t group = 0;
    int agent = 0;
    double read_done = 0;
  };
  // A resource used for intervals of time (the bandwidth share, the TMA issue slot). The replay
  // visits ops in the interpreter's order, not in modelled time: a transfer modelled early may be
  // visited after one modelled late, so a request takes the earliest gap that fits at or after
  // its start instead of queueing behind whatever was visited before it.
  struct timeline_resource {
    std::map<double, double> busy;  // start -> end, disjoint
    double reserve(double start, double length) {
      double t = start;
      auto it = busy.upper_bound(t);
      if (it != busy.begin() && std::prev(it)->second > t) t = std::prev(it)->second;
      while (it != busy.end() && it->first < t + length) {
        t = std::max(t, it->second);
        ++it;
      }
      // Merge with the neighbours it touches, so the map stays as short as the busy stretches.
      double b = t, e = t + length;
      auto next = busy.lower_bound(b);
      if (next != busy.begin() && std::prev(next)->second >= b - 1e-9) {
        --next;
        b = next->first;
        next = busy.erase(next);
      }
      while (next != busy.end() && next->first <= e + 1e-9) {
        e = std::max(e, next->second);
        next = busy.erase(next);
      }
      busy[b] = e;
      return t;
    }
  };
  struct cta_engines {
    timeline_resource pipe;   // its bandwidth share: latencies overlap, bytes take turns
    timeline_resource issue;  // the SM's TMA issue slot
    timeline_resource tc;     // its share of the SM's tensor cores: MMAs of all its warpgroups take turns
    timeline_resource alu;    // its share of the SM's instruction issue (every warpgroup has a warp on each sub-partition)
    double bytes = 0, pipe_busy = 0, tc_busy = 0, alu_busy = 0;
  };

  std::vector<agent> agents;
  std::map<int, cta_engines> ctas;
  std::map<std::tuple<int, int, int>, std::vector<in_flight>> fifo;  // (cta, stmt, engine)
  std::map<std::pair<int, std::string>, double> arriving;            // latest contribution to the open phase
  std::map<std::pair<int, std::string>, std::map<long, double>> completed;  // completion #N at
  double end = 0;

  double transfer(cta_engines& c, double start, double bytes) {
    const double length = bytes / bw();
    const double begin = c.pipe.reserve(start, length);
    c.bytes += bytes;
    c.pipe_busy += length;
    return begin + length;
  }

  static std::string barrier_of_label(std::string const& label) {
    const auto cut = label.find_first_of(" :");
    return label.substr(0, cut);
  }

  interp::trace run(interp::trace const& t) {
    agents.assign(static_cast<std::size_t>(std::max(t.ctas, 1) * k.roles), {});
    if (!o.profile.empty()) {
      // Each agent's iterations of each MMA loop (its MMA ops over the loop's distinct MMA
      // statements it ran) and the ops it ran in it: the measured clocks per iteration, spread
      // over those ops.
      std::map<std::pair<int, std::int32_t>, std::pair<double, std::map<int, int>>> seen;  // (agent, loop) -> ops, MMA stmt -> runs
      for (auto const& e : t.events) {
        if (e.what != interp::trace_event::kind::op || loop_of[static_cast<std::size_t>(e.op)] < 0) continue;
        auto& [ops, mmas] = seen[{e.cta * k.roles + e.lane, loop_of[static_cast<std::size_t>(e.op)]}];
        ops += 1;
        const auto op = k.stmts[static_cast<std::size_t>(e.op)].op;
        if (op == ir::StmtOp::wgmma || op == ir::StmtOp::tcgen05_mma) ++mmas[e.op];
      }
      const double per_iteration = issue_clocks(m, o.profile.kloop, o.profile.mufu);
      for (auto const& [key, v] : seen) {
        if (v.second.empty()) continue;  // a role that runs the loop's other ops, not its MMAs
        double runs = 0;
        for (auto const& [_, n] : v.second) runs += n;
        const double iterations = runs / static_cast<double>(v.second.size());
        agents[static_cast<std::size_t>(key.first)].kloop_op_clocks[key.second] = per_iteration * iterations / v.first;
      }
    }
    interp::trace out = t;
    out.events.clear();
    std::size_t i = 0;
    auto key = [](interp::trace_event const& e) {
      return e.what == interp::trace_event::kind::op || e.what == interp::trace_event::kind::async ? e.t1 : e.t0;
    };
    while (i < t.events.size()) {
      std::size_t j = i;
      while (j < t.events.size() && key(t.events[j]) == key(t.events[i])) ++j;
      step(t, i, j, out);
      i = j;
    }
    std::stable_sort(out.events.begin(), out.events.end(), [](auto const& a, auto const& b) { return a.t0 < b.t0; });
    return out;
  }

  // One scheduler step of the interpreter: an agent's op or an async completion, with the
  // arrivals and phase completions it caused.
  void step(interp::trace const& t, std::size_t from, std::size_t to, interp::trace& out) {
    using kind = interp::trace_event::kind;
    double at = 0;
    bool have_actor = false;
    for (std::size_t i = from; i < to; ++i) {
      auto const& e = t.events[i];
      if (e.what == kind::op) at = op(e, out), have_actor = true;
      else if (e.what == kind::async) at = async(e, out), have_actor = true;
    }
    if (!have_actor) return;
    for (std::size_t i = from; i < to; ++i) {
      auto const& e = t.events[i];
      if (e.what == kind::arrival) {
        auto& a = arriving[{e.cta, barrier_of_label(e.label)}];
        a = std::max(a, at);
        push(out, e, at, at);
      } else if (e.what == kind::phase) {
        const auto name = e.label.substr(0, e.label.find(" completion #"));
        const long n = std::strtol(e.label.c_str() + e.label.find('#') + 1, nullptr, 10);
        auto& a = arriving[{e.cta, name}];
        completed[{e.cta, name}][n] = std::max(a, at);
        push(out, e, std::max(a, at), std::max(a, at));
        a = 0;
      }
    }
  }

  void push(interp::trace& out, interp::trace_event const& e, double t0, double t1) {
    auto c = e;
    c.t0 = static_cast<std::uint64_t>(std::llround(t0));
    c.t1 = std::max(c.t0, static_cast<std::uint64_t>(std::llround(t1)));
    out.events.push_back(std::move(c));
    end = std::max(end, t1);
  }

  double op(interp::trace_event const& e, interp::trace& out) {
    auto& a = agents[static_cast<std::size_t>(e.cta * k.roles + e.lane)];
    auto& c = ctas[e.cta];
    auto const& s = k.stmts[e.op];
    const double before = a.ready;
    double start = a.ready, cost = m.op_ns;
    switch (s.op) {
      case ir::StmtOp::barrier_wait: {
        // "barrier_wait b1[2] for completion #3"
        const auto p = e.label.find(" for completion #");
        const std::string name = e.label.substr(13, p - 13);
        const long n = std::strtol(e.label.c_str() + p + 17, nullptr, 10);
        auto const& done = completed[{e.cta, name}];
        if (auto it = done.find(n); it != done.end()) {
          const double visible = it->second + m.barrier_latency_ns;
          if (visible > start) a.wait_bar += visible - start, start = visible;
        }
        break;
      }
      case ir::StmtOp::wait_group: {
        double need = 0;
        for (std::int64_t g = 0; g < a.committed - s.n; ++g) need = std::max(need, s.flag ? a.group(g).first : a.group(g).second);
        if (need > start) a.wait_group += need - start, start = need;
        break;
      }
      case ir::StmtOp::commit_group: ++a.committed; break;
      case ir::StmtOp::copy_gmem_to_smem:
      case ir::StmtOp::copy_smem_to_gmem: {
        start = c.issue.reserve(start, issue_gap());
        const int engine = s.op == ir::StmtOp::copy_gmem_to_smem ? 0 : 1;
        fifo[{e.cta, e.op, engine}].push_back({start + cost, a.committed, e.cta * k.roles + e.lane, 0});
        break;
      }
      case ir::StmtOp::store: {
        // Generic loads from GMEM stall the warpgroup for their latency; generic stores to GMEM
        // are fire-and-forget: the warpgroup waits only for its bandwidth share (back-pressure),
        // and the kernel ends once the last write has landed.
        double smem = 0, gread = 0, flops = 0;
        value_bytes(k, s.value, smem, gread, flops);
        const bool to_gmem = k.refs[s.refs[0]].base == ir::RefBase::param;
        // A store into SMEM at the wavefronts the gate measured (bank conflicts serialise it).
        if (!to_gmem) smem += ref_bytes(k, s.refs[0]) * o.profile.smem_conflict;
        double t = start + cost;
        if (gread > 0) t = transfer(c, t, gread) + m.tma_latency_ns;
        t += smem / smem_bw();
        if (to_gmem) {
          t = transfer(c, t, ref_bytes(k, s.refs[0]));
          end = std::max(end, t + m.store_latency_ns);
        }
        cost = t - start;
        break;
      }
      case ir::StmtOp::wgmma:
      case ir::StmtOp::tcgen05_mma: {
        // Issued by the warpgroup (wgmma) or one thread (tcgen05), run by the SM's tensor cores,
        // which the CTA's warpgroups share: 2 M N K FLOPs at the rate of A's dtype, from when
        // the tensor cores are free. The issuer goes on; its wgmma_wait or the commit's arrival
        // waits for the completion.
        // A: an operand in memory, or (wgmma with A from registers: refs[1] is none) the value.
        const bool a_value = s.refs[1] == ir::none;
        const auto acc = ref_shape(k, s.refs[0]);
        const auto a_shape = a_value ? k.values[s.value].shape : ref_shape(k, s.refs[1]);
        const auto a_dtype = a_value ? k.values[s.value].dtype : ref_dtype(k, s.refs[1]);
        const double kdim = acc.empty() ? 0 : static_cast<double>(product(a_shape)) / static_cast<double>(acc.front());
        const double len = 2.0 * static_cast<double>(product(acc)) * kdim / (m.tc_flops_per_clk * tc_rate_factor(a_dtype) * m.clock_ghz / per_sm);
        const double t0 = c.tc.reserve(start + cost, len);
        c.tc_busy += len;
        a.mma_end = std::max(a.mma_end, t0 + len);
        const int who = e.cta * k.roles + e.lane;
        auto& q = fifo[{e.cta, e.op, 2}];
        q.push_back({t0, 0, who, t0 + len});
        if (s.op == ir::StmtOp::tcgen05_mma && ir::tcgen05::mma_commit_barrier(s) != ir::none) q.push_back({start + cost, 0, who, a.mma_end});  // its fused commit
        break;
      }
      case ir::StmtOp::wgmma_commit: a.wgmma_groups.push_back(a.mma_end); break;
      case ir::StmtOp::wgmma_wait: {
        double need = 0;
        for (std::int64_t g = 0; g < static_cast<std::int64_t>(a.wgmma_groups.size()) - s.n; ++g) need = std::max(need, a.wgmma_groups[static_cast<std::size_t>(g)]);
        if (need > start) a.wait_group += need - start, start = need;
        break;
      }
      case ir::StmtOp::tcgen05_commit_arrive:  // arrives once the issuer's MMAs so far are done
        fifo[{e.cta, e.op, 2}].push_back({start + cost, 0, e.cta * k.roles + e.lane, std::max(start + cost, a.mma_end)});
        break;
      default: break;
    }
    // Instruction issue on the CTA's share of the SM's sub-partitions: the measured MMA loop's
    // clocks per op where a profile was given, else the IR's estimate for a store's arithmetic.
    double clocks = 0;
    const auto loop = loop_of[static_cast<std::size_t>(e.op)];
    if (auto it = a.kloop_op_clocks.find(loop); loop >= 0 && it != a.kloop_op_clocks.end()) clocks = it->second;
    else clocks = store_clocks[static_cast<std::size_t>(e.op)];
    if (clocks > 0) {
      const double len = clocks * clk_ns() * per_sm;
      const double t0 = c.alu.reserve(start + cost, len);
      c.alu_busy += len;
      cost = t0 + len - start;
    }
    a.ready = start + cost;
    a.busy += cost;
    push(out, e, before, a.ready);
    return a.ready;
  }

  double async(interp::trace_event const& e, interp::trace& out) {
    const int engine = e.lane - k.roles;
    auto& q = fifo[{e.cta, e.op, engine}];
    auto& c = ctas[e.cta];
    auto const& s = k.stmts[e.op];
    if (engine == 2) {  // the tensor cores: an MMA's completion, or a commit's arrival after the MMAs it covers
      if (q.empty()) return 0;
      const auto f = q.front();
      q.erase(q.begin());
      push(out, e, f.issued, f.read_done);
      return f.read_done;
    }
    if (engine == 0) {  // a TMA load: its bytes through the pipe, then the latency
      if (q.empty()) return 0;
      auto f = q.front();
      q.erase(q.begin());
      // HBM moves the box's part inside the array (the interpreter measured it): an overhanging
      // last tile costs its rows, not a whole box.
      const double done = transfer(c, f.issued, e.gmem_bytes >= 0 ? static_cast<double>(e.gmem_bytes) : ref_bytes(k, s.refs[0])) + m.tma_latency_ns;
      push(out, e, f.issued, done);
      return done;
    }
    // A TMA store: the SMEM read (its bulk group's read_only point), then the GMEM write.
    const bool write = e.label.find("(GMEM write)") != std::string::npos;
    if (q.empty()) return 0;
    auto& f = q.front();
    const double bytes = ref_bytes(k, s.refs[1]);
    if (!write) {
      f.read_done = f.issued + bytes / smem_bw() + m.barrier_latency_ns;
      auto& g = agents[static_cast<std::size_t>(f.agent)].group(f.group);
      g.first = std::max(g.first, f.read_done);
      push(out, e, f.issued, f.read_done);
      return f.read_done;
    }
    const double done = transfer(c, f.read_done, e.gmem_bytes >= 0 ? static_cast<double>(e.gmem_bytes) : bytes) + m.store_latency_ns;
    auto& g = agents[static_cast<std::size_t>(f.agent)].group(f.group);
    g.second = std::max(g.second, done);
    push(out, e, f.read_done, done);
    q.erase(q.begin());
    return done;
  }
};

}  // namespace

std::vector<machine> load_machines(std::string const& path_in) {
  std::string path = path_in, text;
  if (path.empty())
    if (const char* env = std::getenv("STAGECRAFT_MACHINES"); env && *env) path = env;
  if (path.empty()) {
    text = builtin_machines_json;
    path = "the built-in data/machines.json";
  } else {
    std::ifstream in(path);
    if (!in) throw std::invalid_argument(fmt::format("cannot read the machine file '{}'", path));
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  json j;
  try {
    j = json::parse(text);
  } catch (json::exception const& e) {
    throw std::invalid_argument(fmt::format("the machine file '{}' is not JSON: {}", path, e.what()));
  }
  if (!j.contains("machines") || !j["machines"].is_array() || j["machines"].empty())
    throw std::invalid_argument(fmt::format("the machine file '{}' has no \"machines\" array", path));
  std::vector<machine> out;
  for (auto const& x : j["machines"]) out.push_back(parse_machine(x, path));
  return out;
}

machine find_machine(std::string const& name, std::string const& path) {
  auto all = load_machines(path);
  std::vector<std::string> names;
  for (auto const& m : all) {
    if (m.name == name) return m;
    names.push_back(m.name);
  }
  throw usage_error(fmt::format("unknown machine '{}' (the model knows {})", name, fmt::join(names, ", ")));
}

std::string machines_json(std::vector<machine> const& ms) {
  json arr = json::array();
  for (auto const& m : ms)
    arr.push_back({{"name", m.name}, {"description", m.description}, {"sms", m.sms}, {"clock_ghz", m.clock_ghz}, {"hbm_gbps", m.hbm_gbps},
                   {"hbm_efficiency", m.hbm_efficiency}, {"sm_tma_gbps", m.sm_tma_gbps}, {"tma_latency_ns", m.tma_latency_ns},
                   {"tma_issue_ns", m.tma_issue_ns}, {"store_latency_ns", m.store_latency_ns}, {"smem_bytes_per_clk", m.smem_bytes_per_clk},
                   {"tc_flops_per_clk", m.tc_flops_per_clk}, {"barrier_latency_ns", m.barrier_latency_ns}, {"op_ns", m.op_ns},
                   {"launch_us", m.launch_us}, {"smem_per_sm", m.smem_per_sm}, {"max_ctas_per_sm", m.max_ctas_per_sm}, {"l2_bytes", m.l2_bytes},
                   {"l2_gbps", m.l2_gbps}, {"fp32_lanes_per_clk", m.fp32_lanes_per_clk}, {"mufu_lanes_per_clk", m.mufu_lanes_per_clk}});
  return json{{"about", "stagecraft cost-model parameters (MODEL): fitted by `stagecraft bench --backend gpu --calibrate`"}, {"machines", arr}}.dump(2) + "\n";
}

prediction replay(ir::Kernel const& k, interp::trace const& t, machine const& m, model_options const& o) {
  prediction p;
  p.ctas = k.grid[0] * k.grid[1] * k.grid[2];
  const std::int64_t cluster = k.cluster_rank > 0 ? k.cluster[0] * k.cluster[1] * k.cluster[2] : 1;
  const std::int64_t smem = ir::smem_bytes(k) + 1024;  // the driver keeps 1 KiB of each CTA's SMEM
  if (smem > m.smem_per_sm)
    throw std::invalid_argument(fmt::format("kernel '{}' needs {} bytes of SMEM per CTA (with the 1 KiB the driver reserves), but an SM of {} has {}",
                                            k.name, smem, m.name, m.smem_per_sm));
  p.ctas_per_sm = static_cast<int>(std::min<std::int64_t>({m.max_ctas_per_sm, m.smem_per_sm / smem, 2048 / ir::block_threads(k)}));
  p.concurrent = std::min<std::int64_t>(p.ctas, static_cast<std::int64_t>(m.sms) * p.ctas_per_sm);
  p.concurrent = std::max(cluster, p.concurrent / cluster * cluster);
  p.waves = (p.ctas + p.concurrent - 1) / p.concurrent;
  const std::int64_t rest = p.ctas % p.concurrent;

  const auto loop_of = mma_loops(k);
  const auto store_clocks = store_issue_clocks(k, m, o.math);
  // HBM serves each array's bytes once (inputs read, outputs written; workspaces stay in L2);
  // what the CTAs move beyond that are re-reads, which L2 serves. The share is measured on a
  // first replay of the bytes moved.
  double array_bytes = 0;
  for (auto const& prm : k.params)
    if (!prm.workspace) array_bytes += static_cast<double>(product(prm.shape)) * ir::packed_bits(prm.dtype) / 8.0;
  double hbm_fraction = 1;
  auto wave = [&](std::int64_t n, interp::trace* keep, std::vector<warpgroup_time>* wgs, double* busy, double* bytes) {
    replayer r{k, m, n, static_cast<int>(std::min<std::int64_t>(p.ctas_per_sm, (n + m.sms - 1) / m.sms)), o, hbm_fraction, loop_of, store_clocks};
    auto tl = r.run(t);
    if (keep) *keep = std::move(tl);
    if (wgs)
      for (std::size_t i = 0; i < r.agents.size(); ++i)
        wgs->push_back({static_cast<int>(i) / k.roles, static_cast<int>(i) % k.roles, r.agents[i].busy,
                        r.agents[i].wait_bar + r.agents[i].wait_group, r.agents[i].wait_bar, r.agents[i].wait_group});
    if (busy || bytes) {
      double b = 0, by = 0;
      for (auto const& [_, c] : r.ctas) b = std::max(b, c.pipe_busy), by += c.bytes;
      if (busy) *busy = b;
      if (bytes) *bytes = by;
    }
    if (n == p.concurrent)
      for (auto const& [_, c] : r.ctas) p.tc_busy = std::max(p.tc_busy, c.tc_busy), p.issue_busy = std::max(p.issue_busy, c.alu_busy);
    if (n == p.concurrent) p.hbm_share_gbps = r.bw();
    return r.end;
  };
  double pipe_busy = 0, cluster_bytes = 0;
  wave(p.concurrent, nullptr, nullptr, nullptr, &cluster_bytes);
  const double moved = cluster_bytes * static_cast<double>(p.ctas) / static_cast<double>(std::max<std::int64_t>(t.ctas, 1));
  hbm_fraction = moved > array_bytes ? array_bytes / moved : 1.0;
  p.hbm_fraction = hbm_fraction;
  p.tc_busy = p.issue_busy = 0;
  p.cta_ns = wave(p.concurrent, &p.timeline, &p.warpgroups, &pipe_busy, &cluster_bytes);
  p.pipe_busy = pipe_busy;
  const double full = static_cast<double>(p.ctas / p.concurrent) * p.cta_ns;
  const double tail = rest > 0 ? wave(rest, nullptr, nullptr, nullptr, nullptr) : 0.0;
  p.kernel_ms = (m.launch_us * 1e3 + full + tail) / 1e6;
  const double total_bytes = cluster_bytes * static_cast<double>(p.ctas) / static_cast<double>(std::max<std::int64_t>(t.ctas, 1));
  p.hbm_bound_ms = std::min(total_bytes, array_bytes) / (m.hbm_gbps * m.hbm_efficiency) / 1e6;
  p.kernel_ms = std::max(p.kernel_ms, m.launch_us / 1e3 + p.hbm_bound_ms);
  // What the CTA's time goes to: the busiest of its bandwidth share, tensor cores and issue, if
  // that fills most of it; else waiting (latency the pipeline does not hide).
  const double busy_frac = p.cta_ns > 0 ? pipe_busy / p.cta_ns : 0;
  const double tc_frac = p.cta_ns > 0 ? p.tc_busy / p.cta_ns : 0;
  const double issue_frac = p.cta_ns > 0 ? p.issue_busy / p.cta_ns : 0;
  const bool hbm_share = p.hbm_share_gbps < m.sm_tma_gbps / std::max(1, p.ctas_per_sm) * 0.999;
  if (tc_frac > 0.85 && tc_frac >= busy_frac && tc_frac >= issue_frac)
    p.limited_by = fmt::format("tensor cores (busy {:.0f}%)", 100 * tc_frac);
  else if (issue_frac > 0.85 && issue_frac >= busy_frac)
    p.limited_by = fmt::format("instruction issue (busy {:.0f}%)", 100 * issue_frac);
  else if (busy_frac > 0.85)
    p.limited_by = hbm_share ? (hbm_fraction > 0.5 ? "HBM bandwidth" : "L2 bandwidth") : "SM TMA bandwidth";
  else
    p.limited_by = fmt::format("latency (bandwidth share idle {:.0f}%{}{})", 100 * (1 - busy_frac),
                               tc_frac >= 0.005 ? fmt::format(", tensor cores busy {:.0f}%", 100 * tc_frac) : "",
                               issue_frac >= 0.005 ? fmt::format(", issue busy {:.0f}%", 100 * issue_frac) : "");
  p.timeline.kernel = fmt::format("{} (MODEL of {}, not a measurement; times in ns)", k.name, m.name);
  p.timeline.time_unit = "ns";
  return p;
}

prediction predict(ir::Kernel const& k, std::vector<host_tensor> const& inputs, machine const& m, model_options const& o) {
  // One cluster stands for all: CTAs of a grid do not synchronise across clusters.
  ir::Kernel one = k;
  if (k.cluster_rank > 0) one.grid = k.cluster;
  else one.grid = {1, 1, 1};
  // A grid computed from run-time extents (ir::Kernel::grid_expr) is the launch's: the replayed
  // cluster is a grid of its own, which the verifier would otherwise hold to the expression.
  one.grid_expr = {ir::none, ir::none, ir::none};
  // Tickets from a counter (ticket_tiles): the replayed cluster takes its even share of them, as
  // if every cluster ran at its pace (alone it would take every tile: the grid's work on one SM).
  const std::int64_t share = std::max<std::int64_t>(1, (k.grid[0] * k.grid[1] * k.grid[2]) / std::max<std::int64_t>(1, one.grid[0] * one.grid[1] * one.grid[2]));
  auto at = [&](std::array<std::int64_t, 3> origin) {
    return interp::run(one, inputs, {.schedule = interp::policy::eager, .checks = false, .trace = true, .atomic_share = share, .pid_offset = origin});
  };
  auto r = at({0, 0, 0});
  if (!r.ok())
    throw std::invalid_argument(fmt::format("the model replays only kernels the interpreter runs clean, and '{}' gets: {}", k.name, r.diagnostics.front().message));
  prediction first = replay(k, r.timeline, m, o);
  // The grid's last cluster too, where CTAs differ in work (a causal attention's first CTA takes
  // one key block and its last S / 128): one wave ends with its slowest CTA; over several, SMs take
  // the next CTA as one finishes, so the grid costs about its CTAs' mean, which the first and the
  // last give for work that grows (or shrinks) along the grid. A last cluster that cannot run
  // alone (a semaphore waiting for the CTAs before it) leaves the first to stand for all.
  const std::array<std::int64_t, 3> last{k.grid[0] - one.grid[0], k.grid[1] - one.grid[1], k.grid[2] - one.grid[2]};
  if (last == std::array<std::int64_t, 3>{0, 0, 0}) return first;
  auto rl = at(last);
  if (!rl.ok()) return first;
  prediction other = replay(k, rl.timeline, m, o);
  const double mean_ms = (first.kernel_ms + other.kernel_ms) / 2;
  prediction& slow = other.cta_ns > first.cta_ns ? other : first;  // its timeline and utilisation are reported
  if (slow.waves > 1) slow.kernel_ms = std::max(mean_ms, m.launch_us / 1e3 + slow.hbm_bound_ms);
  return std::move(slow);
}

issue_profile load_issue_profile(std::string const& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(fmt::format("cannot read the issue profile '{}'", path));
  json j;
  try {
    j = json::parse(in);
  } catch (json::exception const& e) {
    throw std::invalid_argument(fmt::format("the issue profile '{}' is not JSON: {}", path, e.what()));
  }
  issue_profile p;
  auto num = [&](const char* key, double& field, bool required) {
    if (!j.contains(key)) {
      if (required) throw std::invalid_argument(fmt::format("the issue profile '{}' has no \"{}\" (SASS instructions per iteration of the MMA loop)", path, key));
      return;
    }
    if (!j[key].is_number() || j[key].get<double>() < 0)
      throw std::invalid_argument(fmt::format("the issue profile '{}': \"{}\" must be a number at least 0, got {}", path, key, j[key].dump()));
    field = j[key].get<double>();
  };
  num("kloop", p.kloop, true);
  num("mufu", p.mufu, false);
  num("smem_conflict", p.smem_conflict, false);
  if (p.smem_conflict < 1)
    throw std::invalid_argument(fmt::format("the issue profile '{}': \"smem_conflict\" is wavefronts over the conflict-free count, at least 1, got {}", path, p.smem_conflict));
  if (p.kloop <= 0) throw std::invalid_argument(fmt::format("the issue profile '{}': \"kloop\" must be positive", path));
  if (p.mufu > p.kloop) throw std::invalid_argument(fmt::format("the issue profile '{}': \"mufu\" ({}) is more than \"kloop\" ({})", path, p.mufu, p.kloop));
  p.source = j.value("source", path);
  return p;
}

}  // namespace stagecraft::bench
