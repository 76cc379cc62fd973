#include "stagecraft/bench/bench.hpp"

#include <optional>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stagecraft/interp/interp.hpp"
#include "stagecraft/ir/eval.hpp"
#include "stagecraft/ir/tcgen05.hpp"
#ifdef STAGECRAFT_HAVE_CUDA_RUNTIME
#include "stagecraft/cuda/runtime.hpp"
#include "stagecraft/nvrtc/nvrtc.hpp"
#endif

namespace stagecraft::bench {

double ref_bytes(ir::Kernel const& k, ir::RefId id);                  // model.cpp
std::vector<std::int64_t> ref_shape(ir::Kernel const& k, ir::RefId id);  // model.cpp

namespace {

std::int64_t to_int(std::string const& s, std::string const& whole) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || p != s.data() + s.size())
    throw usage_error(fmt::format("--sweep '{}': '{}' is not an integer (write k=a..b or k=a,b,c)", whole, s));
  return v;
}

// Bit exact, except outputs of wgmma and of fast math mode, which are within interp::mma_tolerance's bound.
std::string compare(ir::Kernel const& k, std::vector<host_tensor> const& got, std::vector<host_tensor> const& want, const char* what,
                    std::optional<interp::mma_tolerance> const& tol) {
  std::int64_t checked = 0;
  for (int p : interp::written_params(k))
    for (std::int64_t i = 0; i < got[p].elements(); ++i, ++checked) {
      const double g = got[p].get(i), w = want[p].get(i);
      if (tol ? !tol->within(g, w, got[p].dtype, p) : !(g == w || (std::isnan(g) && std::isnan(w))))
        return fmt::format("WRONG: {} element {} = {} but {} gives {}{}", k.params[p].name, i, g, what, w,
                           tol ? fmt::format(" ({} {:.3g})", tol->rule(), tol->bound(w, got[p].dtype, p)) : "");
    }
  return fmt::format("correct ({} elements {} {})", checked, tol ? (tol->math_units > 0 ? "within " + tol->rule() + " of" : "within the MMA tolerance of") : "match", what);
}

// ---- the IR's work ----------------------------------------------------------------------------

struct walker {
  ir::Kernel const& k;
  std::vector<host_tensor> const& inputs;  // what index tables (x.at(i)) hold
  std::array<std::int64_t, 3> pid{}, cidx{};
  int wg = 0;
  std::vector<std::int64_t> vars;
  work w;
  bool breaking = false;  // a break_if fired: leave the innermost loop
  // Atomics (ops/atomic.hpp). Every CTA runs at one pace, as the model's replay assumes: CTA
  // c's n-th add of v to a counter fetches (n * ctas + c) v, what it would fetch if each round's
  // adds came in CTA order (the other ops act on one counter in walk order). So a ticket counter
  // gives each CTA its even share of the tiles, whatever order the walk takes.
  using key = std::pair<int, std::int64_t>;  // (parameter or allocation, element)
  std::int64_t cta = 0, ctas = 1;            // the walked CTA's linear index, the grid's CTAs
  std::map<key, std::int32_t> counters;
  std::map<key, std::int64_t> adds;          // this CTA's adds so far, per counter
  // What the slots hold, per CTA: the values written to each element in turn, and per role how
  // many of them it sees. Roles are walked one after another, so a role reading a slot another
  // role writes sees what the writer had written when it arrived on the barrier phase the
  // reader waited for (its k-th wait on a barrier element: the writer's k-th arrival there).
  std::map<key, std::vector<std::int32_t>> slot_values;
  std::vector<std::map<key, std::size_t>> seen;            // per role
  std::map<key, std::vector<std::map<key, std::size_t>>> published;  // per barrier element: per arrival, what its role saw
  std::vector<std::map<key, std::size_t>> waits;           // per role, per barrier element: waits so far
  key element_key(ir::RefId id, std::vector<std::int64_t> const& shape) {
    auto const& r = k.refs[id];
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < r.index.size() && d < shape.size(); ++d) flat = flat * shape[d] + eval(r.index[d]);
    return {r.id, flat};
  }

  // The work model follows the kernel's control flow: its index arithmetic is the interpreter's
  // (a division by zero, which the interpreter reports, counts as 0 here).
  std::int64_t eval(ir::ExprId id) {
    return ir::eval_index(
        k, id,
        [&](ir::Expr const& e) -> std::int64_t {
          switch (e.op) {
            case ir::ExprOp::var: return vars[static_cast<std::size_t>(e.value)];
            case ir::ExprOp::program_id: return pid[static_cast<std::size_t>(e.value)];
            case ir::ExprOp::cluster_idx: return cidx[static_cast<std::size_t>(e.value)];
            case ir::ExprOp::thread_id: return wg;
            default: return e.value;
          }
        },
        [&](ir::Expr const& e, std::int64_t i) -> std::int64_t {  // out of range: the interpreter reports it, 0 here
          // A cluster launch control response: "not canceled", so every CTA does its own tile,
          // once; the grid's work is the same whoever does it.
          if (e.op == ir::ExprOp::clc_result) return 0;
          if (e.op == ir::ExprOp::fetched) {
            const key slot{static_cast<int>(e.value), i};
            const std::size_t n = seen[static_cast<std::size_t>(wg)][slot];
            return n == 0 ? 0 : slot_values[slot][n - 1];
          }
          auto const& t = inputs[static_cast<std::size_t>(e.value)];
          return i >= 0 && i < t.elements() ? static_cast<std::int64_t>(t.get(i)) : 0;
        },
        [] {});
  }

  // The GMEM bytes a TMA copy of block `id` moves: the box's part inside its array (TMA neither
  // reads nor writes the outside of an overhanging box), as the interpreter's regions cut it.
  double tma_bytes(ir::RefId id) {
    auto const& r = k.refs[id];
    if (r.base != ir::RefBase::param || !r.index.empty() || r.block.size() != r.shape.size()) return ref_bytes(k, id);
    auto const& p = k.params[static_cast<std::size_t>(r.id)];
    if (p.shape.size() != r.shape.size()) return ref_bytes(k, id);
    double n = 1;
    for (std::size_t d = 0; d < r.shape.size(); ++d) {
      const std::int64_t step = r.stride.empty() ? 1 : r.stride[d];
      std::int64_t origin = eval(r.block[d]) * r.shape[d] * step;
      if (d == 0 && r.windowed()) origin += eval(r.row_lo);
      const std::int64_t avail = std::max<std::int64_t>(p.shape[d] - origin, 0);
      n *= static_cast<double>(std::min(r.shape[d], (avail + step - 1) / step));
    }
    return n * ir::packed_bits(p.dtype) / 8.0;  // GMEM's bytes: FP6 packed
  }

  void value(ir::ValueId v) {
    if (v == ir::none) return;
    auto const& x = k.values[v];
    if (x.op == ir::ValueOp::load) {
      if (k.refs[x.ref].base == ir::RefBase::param) w.read_bytes += ref_bytes(k, x.ref);
      return;
    }
    if (x.op == ir::ValueOp::load_tmem || x.op == ir::ValueOp::scalar || x.op == ir::ValueOp::index) return;
    // A reduction does one operation per operand element; broadcasts, iotas and views only place values.
    if (x.op != ir::ValueOp::cast && !ir::value_only_places(x.op)) {
      double n = 1;
      for (auto d : ir::value_is_reduction(x.op) ? k.values[x.a].shape : x.shape) n *= static_cast<double>(d);
      w.flops += n;
    }
    value(x.a);
    value(x.b);
    value(x.c);
  }

  void stmt(ir::StmtId id) {
    auto const& s = k.stmts[id];
    switch (s.op) {
      case ir::StmtOp::seq:
        for (auto c : s.body)
          if (!breaking) stmt(c);
        break;
      case ir::StmtOp::for_: {
        const auto lo = eval(s.e0), hi = eval(s.e1);
        for (auto i = lo; i < hi && !breaking; ++i) {
          vars[static_cast<std::size_t>(s.var)] = i;
          stmt(s.body[0]);
        }
        breaking = false;
        break;
      }
      case ir::StmtOp::break_if: breaking = eval(s.e0) != 0; break;
      case ir::StmtOp::atomic_fetch: {
        auto const& r = k.refs[s.refs[0]];
        auto const& shape = k.params[static_cast<std::size_t>(r.id)].shape;
        std::int64_t flat = 0;
        for (std::size_t d = 0; d < shape.size() && d < r.block.size(); ++d) flat = flat * shape[d] + eval(r.block[d]);
        const auto a = ir::atomic_of(s.n);
        const auto v = static_cast<std::int32_t>(eval(s.e0));
        std::int32_t old = 0;
        if (a.op == ir::Atomic::add) {
          old = static_cast<std::int32_t>(static_cast<std::uint32_t>((adds[{r.id, flat}]++ * ctas + cta) * v));
        } else {
          auto& c = counters[{r.id, flat}];
          old = c;
          c = ir::atomic_result(a.op, old, v, s.e1 == ir::none ? 0 : static_cast<std::int32_t>(eval(s.e1)));
        }
        auto const& slot = k.refs[s.refs[1]];
        const key at{slot.id, slot.index.empty() ? 0 : eval(slot.index.back())};
        slot_values[at].push_back(old);
        seen[static_cast<std::size_t>(wg)][at] = slot_values[at].size();
        break;
      }
      case ir::StmtOp::barrier_arrive: {
        if (seen[static_cast<std::size_t>(wg)].empty()) break;  // nothing to publish
        const auto b = element_key(s.refs[0], k.allocs[static_cast<std::size_t>(k.refs[s.refs[0]].id)].shape);
        published[b].push_back(seen[static_cast<std::size_t>(wg)]);
        break;
      }
      case ir::StmtOp::barrier_wait: {
        const auto b = element_key(s.refs[0], k.allocs[static_cast<std::size_t>(k.refs[s.refs[0]].id)].shape);
        const std::size_t n = waits[static_cast<std::size_t>(wg)][b]++;
        if (auto it = published.find(b); it != published.end() && n < it->second.size())
          for (auto const& [slot, count] : it->second[n]) seen[static_cast<std::size_t>(wg)][slot] = std::max(seen[static_cast<std::size_t>(wg)][slot], count);
        break;
      }
      case ir::StmtOp::if_:
        if (eval(s.e0)) stmt(s.body[0]);
        else if (s.body.size() > 1) stmt(s.body[1]);
        break;
      case ir::StmtOp::copy_gmem_to_smem: w.read_bytes += tma_bytes(s.refs[0]); break;
      case ir::StmtOp::copy_smem_to_gmem: w.write_bytes += tma_bytes(s.refs[1]); break;
      case ir::StmtOp::store:
        if (k.refs[s.refs[0]].base == ir::RefBase::param) w.write_bytes += ref_bytes(k, s.refs[0]);
        value(s.value);
        break;
      case ir::StmtOp::wgmma:
      case ir::StmtOp::tcgen05_mma: {
        // acc (M, N) += A (M, K) * B: K is B's size over N, whichever way B is laid out. A pair
        // MMA (tcgen05 cta_group::2, issued by the even CTA) is M = 2 x its accumulator's rows
        // over the pair, and each CTA holds half of B's N: four times what its own views say.
        const auto acc = ref_shape(k, s.refs[0]);  // a TMEM ring's stage: the stage's shape
        const auto b = ref_shape(k, s.refs[2]);
        double mn = 1, bk = 1;
        for (auto d : acc) mn *= static_cast<double>(d);
        for (auto d : b) bk *= static_cast<double>(d);
        const double pair = s.op == ir::StmtOp::tcgen05_mma && s.n == 2 ? 4.0 : 1.0;
        // Packed FP4 (e2m1x2): two values of K per element.
        auto const& br = k.refs[s.refs[2]];
        const double values = ir::tcgen05::values_per_element(br.base == ir::RefBase::param ? k.params[br.id].dtype : k.allocs[br.id].dtype);
        if (!acc.empty() && acc.back() > 0) w.tensor_flops += pair * values * 2.0 * mn * bk / static_cast<double>(acc.back());
        break;
      }
      default: break;
    }
  }
};

#ifdef STAGECRAFT_HAVE_CUDA_RUNTIME

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
double quantile(std::vector<float> v, double q) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}
#endif

void finish_rates(point& p) {
  p.gbps = p.median_ms > 0 ? p.bytes / (p.median_ms * 1e-3) / 1e9 : 0;
  p.tflops = p.median_ms > 0 ? p.flops / (p.median_ms * 1e-3) / 1e12 : 0;
  if (p.baseline_ms > 0) {
    p.baseline_gbps = p.bytes / (p.baseline_ms * 1e-3) / 1e9;
    p.of_baseline = p.median_ms > 0 ? p.baseline_ms / p.median_ms : 0;
  }
}

}  // namespace

std::vector<host_tensor> seeded_inputs(ir::Kernel const& k, std::uint64_t seed) { return stagecraft::seeded_inputs(k, seed); }

work work_of(ir::Kernel const& k, std::vector<host_tensor> const& inputs) {
  walker w{k, inputs};
  w.vars.assign(static_cast<std::size_t>(std::max(k.num_vars, 1)), 0);
  w.ctas = k.grid[0] * k.grid[1] * k.grid[2];
  std::array<std::int64_t, 3> cl = k.cluster_rank > 0 ? k.cluster : std::array<std::int64_t, 3>{1, 1, 1};
  for (std::int64_t z = 0; z < k.grid[2]; ++z)
    for (std::int64_t y = 0; y < k.grid[1]; ++y)
      for (std::int64_t x = 0; x < k.grid[0]; ++x)
        for (int g = 0; g < k.roles; ++g) {
          if (g == 0) {  // a new CTA: its SMEM slots and barriers start afresh
            w.cta = (z * k.grid[1] + y) * k.grid[0] + x;
            w.adds.clear(), w.slot_values.clear(), w.published.clear();
            w.seen.assign(static_cast<std::size_t>(k.roles), {});
            w.waits.assign(static_cast<std::size_t>(k.roles), {});
          }
          w.pid = {x, y, z};
          w.cidx = {x % cl[0], y % cl[1], z % cl[2]};
          w.wg = g;
          w.stmt(k.body);
        }
  return w.w;
}

const char* backend_name(backend b) { return b == backend::gpu ? "gpu" : "model"; }

axis parse_sweep(std::string const& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw usage_error(fmt::format("--sweep '{}': expected k=a..b or k=a,b,c (e.g. --sweep K=1..6)", text));
  axis a{text.substr(0, eq), {}};
  const auto rest = text.substr(eq + 1);
  if (const auto dots = rest.find(".."); dots != std::string::npos) {
    const auto lo = to_int(rest.substr(0, dots), text), hi = to_int(rest.substr(dots + 2), text);
    if (hi < lo) throw usage_error(fmt::format("--sweep '{}': the range {}..{} is empty (write the smaller bound first)", text, lo, hi));
    if (hi - lo >= 4096) throw usage_error(fmt::format("--sweep '{}': {} points; a sweep takes at most 4096", text, hi - lo + 1));
    for (auto v = lo; v <= hi; ++v) a.values.push_back(v);
  } else {
    std::size_t at = 0;
    while (at <= rest.size()) {
      const auto comma = rest.find(',', at);
      a.values.push_back(to_int(rest.substr(at, comma == std::string::npos ? std::string::npos : comma - at), text));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
  }
  return a;
}

std::vector<param_values> points_of(kernel_entry const& e, options const& o) {
  std::vector<std::string> seen;
  for (auto const& a : o.sweep) {
    if (std::find(seen.begin(), seen.end(), a.name) != seen.end()) throw usage_error(fmt::format("--sweep {} is given twice", a.name));
    if (o.set.count(a.name)) throw usage_error(fmt::format("{} is both --set and --sweep: give it one way", a.name));
    bool known = false;
    for (auto const& p : e.params) known = known || p.name == a.name;
    if (!known) {
      std::vector<std::string> names;
      for (auto const& p : e.params) names.push_back(p.name);
      throw usage_error(fmt::format("kernel '{}' has no parameter '{}' to sweep (its parameters: {})", e.name, a.name, fmt::join(names, ", ")));
    }
    seen.push_back(a.name);
  }
  std::vector<param_values> out{o.set};
  for (auto const& a : o.sweep) {
    std::vector<param_values> next;
    for (auto const& base : out)
      for (auto v : a.values) {
        auto p = base;
        p[a.name] = v;
        next.push_back(std::move(p));
      }
    out = std::move(next);
  }
  for (auto& p : out) p = registry::resolve(e, p);  // every value checked against its spec up front
  return out;
}

report run(kernel_entry const& e, options const& o) {
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count)
    throw usage_error(fmt::format("shard {}/{}: the index must be at least 0 and below the count", o.shard_index, o.shard_count));
  report rep;
  rep.kernel = e.name;
  rep.where = o.where;
  for (auto const& a : o.sweep) rep.axes.push_back(a.name);
  const auto all = points_of(e, o);
  std::optional<machine> m;
  if (o.where == backend::model) {
    m = find_machine(o.machine, o.machines_file);
    rep.device = fmt::format("MODEL of {} ({}): predicted, not measured", m->name, m->description);
    rep.machine = m->name;
  } else {
#ifdef STAGECRAFT_HAVE_CUDA_RUNTIME
    const auto st = cuda::driver_status();
    if (auto why = cuda::unusable(st)) throw no_device(*why);
    rep.device = fmt::format("{} ({}, {} SMs)", st.device, ir::target_name(*st.target), st.multiprocessors);
#else
    throw no_device("no CUDA driver available: this build has no CUDA toolkit (configure found none)");
#endif
  }
  std::size_t mine = 0, done = 0;
  for (std::size_t i = 0; i < all.size(); ++i) mine += static_cast<int>(i % static_cast<std::size_t>(o.shard_count)) == o.shard_index;
  [[maybe_unused]] std::map<double, double> copy_ms;  // baseline per byte count, measured once per run
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(o.shard_count)) != o.shard_index) continue;
    point p;
    p.index = i;
    p.values = all[i];
    if (o.progress) o.progress(done, mine, describe_point(p.values));
    try {
      ir::Kernel k = registry::build(e, p.values);
      const auto inputs = entry_inputs(e, p.values, k, o.input_seed);
      const auto w = work_of(k, inputs);
      p.bytes = w.read_bytes + w.write_bytes;
      p.flops = w.flops + w.tensor_flops;
      if (o.where == backend::model) {
        const auto pr = predict(k, inputs, *m, {.math = o.math, .profile = o.profile});
        p.median_ms = p.min_ms = pr.kernel_ms;
        p.reps = 0;
        p.limited_by = pr.limited_by;
        p.ctas = pr.ctas;
        p.waves = pr.waves;
        p.ctas_per_sm = pr.ctas_per_sm;
        for (auto const& g : pr.warpgroups)
          if (g.cta == 0) p.wait_fraction.push_back(pr.cta_ns > 0 ? g.waiting_ns / pr.cta_ns : 0);
        if (o.on_prediction) o.on_prediction(p, pr);
        if (w.memory_bound()) {
          // The modelled copy streams the same bytes at the model's sustained HBM rate.
          p.baseline = "device-to-device copy (MODEL)";
          p.baseline_ms = (m->launch_us * 1e3 + p.bytes / (m->hbm_gbps * m->hbm_efficiency)) / 1e6;
        }
        // The interpreter ran one cluster only for the model: the outputs are not whole.
        p.check = "not checked (the model runs one cluster; `stagecraft run` checks the kernel)";
      } else {
#ifdef STAGECRAFT_HAVE_CUDA_RUNTIME
        const auto st = cuda::driver_status();
        k.target = *st.target;
        ir::verify(k);
        const auto c = nvrtc::compile(k, k.target, {.codegen = {.math = o.math}});
        cuda::timing_options to{.warmup = o.warmup, .min_reps = o.min_reps, .max_reps = o.max_reps, .max_seconds = o.max_seconds,
                                .target_spread = o.target_spread, .flush_l2 = o.flush_l2, .deadline_ms = o.deadline_ms};
        const auto t = cuda::benchmark(c, k, inputs, to);
        p.median_ms = median(t.ms);
        p.min_ms = *std::min_element(t.ms.begin(), t.ms.end());
        p.spread = p.median_ms > 0 ? (quantile(t.ms, 0.9) - quantile(t.ms, 0.1)) / p.median_ms : 0;
        p.reps = static_cast<int>(t.ms.size());
        if (o.check) {
          auto expected = inputs;
          e.reference(expected, p.values);
          // The interpreter says whether an output comes from wgmma, and the tolerance for it.
          const auto by_interp = interp::run(k, inputs, {.schedule = interp::policy::eager, .checks = false, .math = o.math});
          p.check = compare(k, t.buffers, expected, "the reference", interp::tolerance_of(k, by_interp, inputs));
        } else {
          p.check = "not checked (--no-check)";
        }
        if (w.memory_bound()) {
          // A copy of half the traffic reads and writes the same total bytes as the kernel.
          const double copy_bytes = std::max(16.0, std::round(p.bytes / 2));
          if (!copy_ms.count(copy_bytes)) copy_ms[copy_bytes] = median(cuda::benchmark_copy(static_cast<std::size_t>(copy_bytes), to).ms);
          p.baseline = "device-to-device copy";
          p.baseline_ms = copy_ms[copy_bytes];
        }
#endif
      }
      finish_rates(p);
    } catch (usage_error const&) {
      throw;
    } catch (ir::ConfigError const& x) {
      p.error = x.what();
    } catch (std::invalid_argument const& x) {
      p.error = x.what();
#ifdef STAGECRAFT_HAVE_CUDA_RUNTIME
    } catch (cuda::timeout const&) {
      throw;  // the context is unusable: nothing after it could be measured
    } catch (cuda::error const& x) {
      p.error = x.what();
#endif
    }
    rep.points.push_back(std::move(p));
    ++done;
  }
  if (o.progress) o.progress(done, mine, "");
  return rep;
}

std::string describe_point(param_values const& v) {
  std::vector<std::string> s;
  for (auto const& [n, x] : v) s.push_back(fmt::format("{}={}", n, x));
  return fmt::format("{}", fmt::join(s, " "));
}

}  // namespace stagecraft::bench
