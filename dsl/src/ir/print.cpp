// The IR printer and the canonical hash.
//
// The listing is the canonical form: it shows every field that affects semantics, in a fixed
// order, with variables and allocations named by number. Hashing the listing (rather than a
// second hand-written serialisation) means the printer and the cache key cannot disagree about
// what matters.
#include <algorithm>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stagecraft/ir/kernel.hpp"
#include "stagecraft/ir/tcgen05.hpp"

namespace stagecraft::ir {

std::string stmt_name(StmtOp op) {
  switch (op) {
    case StmtOp::seq: return "seq";
    case StmtOp::for_: return "for";
    case StmtOp::if_: return "if";
    case StmtOp::copy_gmem_to_smem: return "copy_gmem_to_smem";
    case StmtOp::copy_smem_to_gmem: return "copy_smem_to_gmem";
    case StmtOp::commit_group: return "commit_smem_to_gmem_group";
    case StmtOp::wait_group: return "wait_smem_to_gmem";
    case StmtOp::commit_smem: return "commit_smem";
    case StmtOp::barrier_arrive: return "barrier_arrive";
    case StmtOp::barrier_wait: return "barrier_wait";
    case StmtOp::store: return "store";
    case StmtOp::wgmma: return "wgmma";
    case StmtOp::wgmma_commit: return "wgmma_commit";
    case StmtOp::wgmma_wait: return "wgmma_wait";
    case StmtOp::tcgen05_mma: return "tcgen05_mma";
    case StmtOp::tcgen05_commit_arrive: return "tcgen05_commit_arrive";
    case StmtOp::tmem_dealloc: return "tmem_dealloc";
    case StmtOp::named_barrier_sync: return "named_barrier_sync";
    case StmtOp::named_barrier_arrive: return "named_barrier_arrive";
    case StmtOp::semaphore_signal: return "semaphore_signal";
    case StmtOp::semaphore_wait: return "semaphore_wait";
    case StmtOp::try_cancel: return "try_cancel";
    case StmtOp::break_if: return "break_if";
    case StmtOp::atomic_fetch: return "atomic_fetch";
    case StmtOp::tcgen05_cp: return "tcgen05_copy_scales";
  }
  return "?";
}

std::string stmt_name(Stmt const& s) {
  const bool pair = (s.op == StmtOp::tcgen05_mma || s.op == StmtOp::tcgen05_commit_arrive) && s.n == 2;
  return stmt_name(s.op) + (pair ? "_2cta" : "");
}

std::string expr_op_name(ExprOp op) {
  static constexpr const char* names[] = {"const", "var", "program_id", "cluster_idx", "thread_id", "+", "-", "*", "/", "%",
                                          "min", "max", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "!", "at", "extent", "clc"};
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(names) ? names[i] : fmt::format("?expr_op{}", i);
}

std::string value_op_name(ValueOp op) {
  static constexpr const char* names[] = {"load", "async_load_tmem", "scalar", "+", "-", "*", "/", "min", "max", "neg", "exp", "cast",
                                               "exp2", "log", "rsqrt", "tanh", "abs", "sum", "max", "min", "broadcast", "iota",
                                               "<", "<=", ">", ">=", "==", "!=", "select", "fma",
                                               "permute", "reshape", "slice", "index"};
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(names) ? names[i] : fmt::format("?value_op{}", i);
}

namespace {

constexpr const char* axis_name(std::int64_t a) { return a == 0 ? "x" : a == 1 ? "y" : "z"; }

// The canonical name: what the listing (and so the hash) uses, whatever the user called it.
std::string numbered_name(Kernel const& k, int id) {
  if (id < 0 || id >= static_cast<int>(k.allocs.size())) return fmt::format("?alloc{}", id);
  switch (k.allocs[id].kind) {
    case AllocKind::smem: return fmt::format("s{}", id);
    case AllocKind::barrier: return fmt::format("b{}", id);
    case AllocKind::cluster_barrier: return fmt::format("cb{}", id);
    case AllocKind::tmem: return fmt::format("t{}", id);
    case AllocKind::accumulator: return fmt::format("acc{}", id);
  }
  return fmt::format("?alloc{}", id);
}

// The printer also lists kernels that failed to verify (to show what is wrong), where a chain
// may be arbitrarily deep and a shared DAG exponentially large when expanded. Verified kernels
// stay far inside these bounds (max_tree_depth, max_nesting, max_tree_nodes), so the listing,
// and the hash over it, is exact for them.
constexpr int print_depth_limit = 4 * max_tree_depth + max_nesting;
constexpr std::int64_t print_node_budget = max_expanded_nodes;  // expressions and values, as the verifier counts them

std::string loc_text(SourceLoc const& l) { return l.line > 0 ? fmt::format("{}:{}", l.file, l.line) : std::string(); }

class Printer {
 public:
  // named: allocations by the user's names (diagnostics); otherwise by number (the listing).
  explicit Printer(Kernel const& k, bool named = false) : k_(k), named_(named) {}

  // Each of these appends to one buffer: building every subtree's text and copying it into its
  // parent's made printing quadratic in the depth, and a large verified kernel timed out.
  std::string expr(ExprId id) const {
    std::string o;
    put_expr(id, o);
    return o;
  }
  std::string ref(RefId id) const {
    std::string o;
    put_ref(id, o);
    return o;
  }
  std::string value(ValueId id) const {
    std::string o;
    put_value(id, o);
    return o;
  }

  void put_expr(ExprId id, std::string& o) const {
    auto out = std::back_inserter(o);
    if (id < 0 || id >= static_cast<ExprId>(k_.exprs.size())) return void(fmt::format_to(out, "?e{}", id));
    const guard g(*this);
    if (g.exhausted()) return void(fmt::format_to(out, "e{}...", id));
    auto const& e = k_.exprs[id];
    switch (e.op) {
      case ExprOp::constant: return void(fmt::format_to(out, "{}", e.value));
      case ExprOp::var: return void(fmt::format_to(out, "v{}", e.value));
      case ExprOp::program_id: return void(fmt::format_to(out, "program_id.{}", axis_name(e.value)));
      case ExprOp::cluster_idx: return void(fmt::format_to(out, "cluster_idx.{}", axis_name(e.value)));
      case ExprOp::thread_id: o += "thread_id"; return;
      case ExprOp::extent:  // by name: the listing (and so the hash) holds no run-time value
        o += e.value >= 0 && e.value < static_cast<std::int64_t>(k_.extents.size()) ? k_.extents[static_cast<std::size_t>(e.value)].name
                                                                                   : fmt::format("?x{}", e.value);
        return;
      case ExprOp::min: case ExprOp::max:
        o += expr_op_name(e.op) + "(";
        put_expr(e.a, o);
        o += ", ";
        put_expr(e.b, o);
        o += ')';
        return;
      case ExprOp::lnot:
        o += '!';
        put_operand(e.a, o);
        return;
      case ExprOp::load:  // x.at(i): the parameter by its name, as statements print their blocks
        o += (e.value >= 0 && e.value < static_cast<std::int64_t>(k_.params.size()) ? k_.params[static_cast<std::size_t>(e.value)].name
                                                                                     : fmt::format("?p{}", e.value)) + ".at(";
        put_expr(e.a, o);
        o += ')';
        return;
      case ExprOp::fetched:  // fetched(s3[+e])
        o += "fetched(" + (named_ ? alloc_name(k_, static_cast<int>(e.value)) : numbered_name(k_, static_cast<int>(e.value))) + "[+";
        put_expr(e.a, o);
        o += "])";
        return;
      case ExprOp::clc_result:  // clc_canceled(s3[+e]), clc_ctaid.x(s3[+e])
        o += e.value % 4 == 0 ? "clc_canceled(" : fmt::format("clc_ctaid.{}(", axis_name(e.value % 4 - 1));
        o += (named_ ? alloc_name(k_, static_cast<int>(e.value / 4)) : numbered_name(k_, static_cast<int>(e.value / 4))) + "[+";
        put_expr(e.a, o);
        o += "])";
        return;
      case ExprOp::add: case ExprOp::sub: case ExprOp::mul: case ExprOp::div: case ExprOp::mod: case ExprOp::lt: case ExprOp::le:
      case ExprOp::gt: case ExprOp::ge: case ExprOp::eq: case ExprOp::ne: case ExprOp::land: case ExprOp::lor:
        put_operand(e.a, o);
        o += ' ' + expr_op_name(e.op) + ' ';
        put_operand(e.b, o);
        return;
    }
    o += expr_op_name(e.op);
  }

  void put_ref(RefId id, std::string& o) const {
    auto out = std::back_inserter(o);
    if (id == none) return void(o += "<registers>");
    if (id < 0 || id >= static_cast<RefId>(k_.refs.size())) return void(fmt::format_to(out, "?r{}", id));
    auto const& r = k_.refs[id];
    auto coords = [&](std::vector<ExprId> const& es, const char* sep) {
      for (std::size_t i = 0; i < es.size(); ++i) {
        if (i) o += sep;
        put_expr(es[i], o);
      }
    };
    if (r.base == RefBase::param) {
      auto name = r.id >= 0 && r.id < static_cast<int>(k_.params.size()) ? k_.params[r.id].name : fmt::format("?param{}", r.id);
      o += name;
      if (r.row_lo != none) {  // a window of rows (only windowed blocks print one: other listings are unchanged)
        o += ".rows(";
        put_expr(r.row_lo, o);
        o += ", ";
        put_expr(r.row_hi, o);
        o += ')';
      }
      o += ".block[";
      coords(r.block, ", ");
      fmt::format_to(out, "]({})", fmt::join(r.shape, "x"));
      // Only strided blocks print (and hash) their strides: every other listing is unchanged.
      if (!r.stride.empty()) fmt::format_to(out, " stride({})", fmt::join(r.stride, "x"));
      if (r.fill) fmt::format_to(out, " masked({})", *r.fill);
      return;
    }
    o += named_ ? alloc_name(k_, r.id) : numbered_name(k_, r.id);
    if (!r.index.empty()) {
      o += '[';
      coords(r.index, "][");
      o += ']';
    }
    // A sub-view: its origin and extents, which the hash (of this listing) must tell apart.
    if (r.block.empty()) return;
    o += ".sub[";
    coords(r.block, ", ");
    fmt::format_to(out, "]({})", fmt::join(r.shape, "x"));
  }

  // A view's packed parameter (ir/tile_view.hpp); rejected IR may carry any double, which must
  // still print (converting NaN or 1e300 to an integer would be undefined).
  static std::int64_t view_code(double x) { return x >= 0 && x < 0x1p53 ? static_cast<std::int64_t>(x) : -1; }

  void put_value(ValueId id, std::string& o) const {
    auto out = std::back_inserter(o);
    if (id < 0 || id >= static_cast<ValueId>(k_.values.size())) return void(fmt::format_to(out, "?t{}", id));
    const guard g(*this);
    if (g.exhausted()) return void(fmt::format_to(out, "t{}...", id));
    auto const& v = k_.values[id];
    auto call1 = [&](std::string head, ValueId a) {
      o += head;
      put_value(a, o);
      o += ')';
    };
    switch (v.op) {
      case ValueOp::load: o += "load("; put_ref(v.ref, o); o += ')'; return;
      case ValueOp::load_tmem: o += "async_load_tmem("; put_ref(v.ref, o); o += ')'; return;
      case ValueOp::scalar: return void(fmt::format_to(out, "{}:{}", v.scalar, dtype_name(v.dtype)));
      case ValueOp::index:  // an index expression as a scalar tile: (hi - lo):f32
        o += '(';
        put_expr(v.index, o);
        return void(fmt::format_to(out, "):{}", dtype_name(v.dtype)));
      case ValueOp::neg: o += '-'; put_vop(v.a, o); return;
      case ValueOp::exp: case ValueOp::exp2: case ValueOp::log: case ValueOp::rsqrt: case ValueOp::tanh: case ValueOp::abs:
        return call1(value_op_name(v.op) + "(", v.a);
      // The axis is part of the op (the front end's spelling), the shape says what the result is.
      case ValueOp::reduce_sum: case ValueOp::reduce_max: case ValueOp::reduce_min:
        return call1(fmt::format("{}<{}>(", value_op_name(v.op), v.scalar), v.a);
      case ValueOp::broadcast:
        fmt::format_to(out, "broadcast<{}>(", v.scalar);
        put_value(v.a, o);
        return void(fmt::format_to(out, ", ({}))", fmt::join(v.shape, ", ")));
      case ValueOp::iota: return void(fmt::format_to(out, "iota<{}>:{}({})", v.scalar, dtype_name(v.dtype), fmt::join(v.shape, ", ")));
      // Views in the front end's spelling; the parameters are decoded as ir/tile_view.hpp packs them.
      case ValueOp::permute: {
        const auto code = view_code(v.scalar);
        std::vector<std::int64_t> perm;
        for (std::size_t d = 0; d < v.shape.size(); ++d) perm.push_back((code >> (3 * d)) & 7);
        return call1(fmt::format("permute<{}>(", fmt::join(perm, ", ")), v.a);
      }
      case ValueOp::reshape:
        o += "reshape(";
        put_value(v.a, o);
        return void(fmt::format_to(out, ", ({}))", fmt::join(v.shape, ", ")));
      case ValueOp::slice: {
        const auto code = view_code(v.scalar);
        const auto axis = static_cast<std::size_t>(code & 7);
        fmt::format_to(out, "slice<{}>(", axis);
        put_value(v.a, o);
        return void(fmt::format_to(out, ", {}, {})", code >> 3, axis < v.shape.size() ? v.shape[axis] : 0));
      }
      case ValueOp::cast: return call1(fmt::format("cast<{}>(", dtype_name(v.dtype)), v.a);
      case ValueOp::min: case ValueOp::max:
        o += value_op_name(v.op) + "(";
        put_value(v.a, o);
        o += ", ";
        put_value(v.b, o);
        o += ')';
        return;
      case ValueOp::select: case ValueOp::fma:
        o += value_op_name(v.op) + "(";
        put_value(v.a, o);
        o += ", ";
        put_value(v.b, o);
        o += ", ";
        put_value(v.c, o);
        o += ')';
        return;
      case ValueOp::lt: case ValueOp::le: case ValueOp::gt: case ValueOp::ge: case ValueOp::eq: case ValueOp::ne:
      case ValueOp::add: case ValueOp::sub: case ValueOp::mul: case ValueOp::div:
        put_vop(v.a, o);
        o += ' ' + value_op_name(v.op) + ' ';
        put_vop(v.b, o);
        return;
    }
    o += value_op_name(v.op);
  }

  // A reducing store: ".add" after the op in the listing, ", reduce_add" as the call's last argument.
  // (n out of range prints as a number: the printer shows corrupted IR too.)
  static std::string reduce_suffix(Stmt const& s) {
    if (s.n == 0) return "";
    return s.n > 0 && s.n <= static_cast<std::int64_t>(last_reduce) ? fmt::format(".{}", reduce_name(static_cast<Reduce>(s.n))) : fmt::format(".?reduce{}", s.n);
  }
  static std::string reduce_arg(Stmt const& s) {
    if (s.n == 0) return "";
    return s.n > 0 && s.n <= static_cast<std::int64_t>(last_reduce) ? fmt::format(", reduce_{}", reduce_name(static_cast<Reduce>(s.n))) : fmt::format(", ?reduce{}", s.n);
  }

  // A semaphore counter as the user indexed it: turn(i, j).
  std::string counter(Stmt const& s) const {
    const RefId r = at(s, 0);
    if (r < 0 || r >= static_cast<RefId>(k_.refs.size()) || k_.refs[r].base != RefBase::param || k_.refs[r].id < 0 ||
        k_.refs[r].id >= static_cast<int>(k_.params.size()))
      return "?";
    std::vector<std::string> idx;
    for (auto e : k_.refs[r].block) idx.push_back(expr(e));
    return fmt::format("{}({})", k_.params[k_.refs[r].id].name, fmt::join(idx, ", "));
  }

  // One statement as the user called it: `barrier_wait(full[v0 % 2])`.
  std::string call(StmtId id) const {
    if (id < 0 || id >= static_cast<StmtId>(k_.stmts.size())) return fmt::format("?op{}", id);
    auto const& s = k_.stmts[id];
    std::vector<std::string> args;
    switch (s.op) {
      case StmtOp::seq: return fmt::format("seq(... {} statements)", s.body.size());
      case StmtOp::for_: return fmt::format("for_(range({}, {}), [&](auto v{}) {{ ... }})", expr(s.e0), expr(s.e1), s.var);
      case StmtOp::if_: return fmt::format("if_({}, ...)", expr(s.e0));
      case StmtOp::store: {
        return fmt::format("{}({}, {}{})", writes_tmem(s) ? "store_tmem" : "store", ref(at(s, 0)), value(s.value), reduce_arg(s));
      }
      case StmtOp::copy_smem_to_gmem: return fmt::format("copy_smem_to_gmem({}, {}{})", ref(at(s, 0)), ref(at(s, 1)), reduce_arg(s));
      case StmtOp::wait_group: return fmt::format("wait_smem_to_gmem({}{})", s.n, s.flag ? ", read_only" : "");
      case StmtOp::wgmma_wait: return fmt::format("wgmma_wait({})", s.n);
      case StmtOp::break_if: return fmt::format("break_if({})", expr(s.e0));
      case StmtOp::named_barrier_sync:
      case StmtOp::named_barrier_arrive: return fmt::format("{}({}, {})", stmt_name(s), s.e0 == none ? "?" : expr(s.e0), s.n);
      case StmtOp::semaphore_signal:
      case StmtOp::semaphore_wait:  // semaphore_signal(turn(0, 1), 1, memory_scope::sys)
        return fmt::format("{}({}, {}{})", stmt_name(s), counter(s), s.e0 == none ? "?" : expr(s.e0), s.n == 1 ? ", memory_scope::sys" : s.n == 0 ? "" : fmt::format(", ?{}", s.n));
      case StmtOp::atomic_fetch: {  // fetch_add(tiles(0), 1, s2, memory_order::acq_rel)
        if (!atomic_code_ok(s.n)) return fmt::format("atomic_fetch(?{})", s.n);
        const auto a = atomic_of(s.n);
        static constexpr const char* fn[] = {"fetch_add", "fetch_min", "fetch_max", "exchange", "compare_exchange"};
        return fmt::format("{}({}, {}{}, {}{}{})", fn[static_cast<int>(a.op)], counter(s),
                           a.op == Atomic::cas ? (s.e1 == none ? "?, " : expr(s.e1) + ", ") : "", s.e0 == none ? "?" : expr(s.e0), ref(at(s, 1)),
                           a.order == MemoryOrder::relaxed ? "" : fmt::format(", memory_order::{}", memory_order_name(a.order)),
                           a.scope == MemoryScope::sys ? ", memory_scope::sys" : "");
      }
      case StmtOp::wgmma:
        return fmt::format("wgmma({}, {}, {})", ref(at(s, 0)), at(s, 1) == none ? value(s.value) : ref(at(s, 1)), ref(at(s, 2)));
      case StmtOp::copy_gmem_to_smem:
        for (auto r : s.refs) args.push_back(ref(r));
        if (!s.axes.empty()) args.push_back(fmt::format("collective_axes({})", fmt::join(s.axes, ", ")));
        if (s.n == 2) args.push_back("pair_leader");
        break;
      case StmtOp::tcgen05_mma:
        for (std::size_t i = 0; i < s.refs.size(); ++i) {
          if (s.flag && i == 3) args.push_back(fmt::format("block_scale({}, {})", ref(s.refs[3]), ref(at(s, 4))));  // at: malformed IR may lack one
          if (!s.flag || (i != 3 && i != 4)) args.push_back(ref(s.refs[i]));
        }
        args.push_back(s.e0 == none ? "true" : expr(s.e0));
        break;
      case StmtOp::tcgen05_commit_arrive:
        for (auto r : s.refs) args.push_back(ref(r));
        if (!s.axes.empty()) args.push_back(fmt::format("collective_axes({})", fmt::join(s.axes, ", ")));
        break;
      default:
        for (auto r : s.refs) args.push_back(ref(r));
    }
    return fmt::format("{}({})", stmt_name(s), fmt::join(args, ", "));
  }


  // annotate: each line ends with the statement's source location, as a comment.
  void stmt(StmtId id, int depth, std::string& out, bool annotate = false) const {
    if (id < 0 || id >= static_cast<StmtId>(k_.stmts.size())) {
      out += fmt::format("  ?{}\n", id);
      return;
    }
    const guard g(*this, false);
    // A verified tree prints each statement once; a corrupted one may list a statement in its
    // own body (a cycle, or a DAG that expands exponentially).
    if (g.exhausted() || ++stmts_printed_ > k_.stmts.size()) {
      out += fmt::format("  #{} ... (nested too deep, or reached twice)\n", id);
      return;
    }
    auto const& s = k_.stmts[id];
    std::string line = fmt::format("  #{:<3} {:{}}", id, "", depth * 2);
    switch (s.op) {
      case StmtOp::seq:
        out += line + "seq\n";
        break;
      case StmtOp::for_:
        out += line + fmt::format("for v{} in [{}, {})\n", s.var, expr(s.e0), expr(s.e1));
        break;
      case StmtOp::if_:
        out += line + fmt::format("if {}{}\n", expr(s.e0), s.body.size() > 1 ? "  (then, else)" : "");
        break;
      case StmtOp::copy_gmem_to_smem:
        out += line + fmt::format("copy_gmem_to_smem {} -> {}  arrive+expect_tx({} B) on {}{}{}\n", ref(at(s, 0)), ref(at(s, 1)),
                                  bytes(at(s, 1)), ref(at(s, 2)),
                                  s.axes.empty() ? "" : fmt::format("  multicast over cluster axes ({})", fmt::join(s.axes, ", ")),
                                  s.n == 2 ? "  in the pair leader (cta_group::2)" : "");
        break;
      case StmtOp::copy_smem_to_gmem:
        out += line + fmt::format("copy_smem_to_gmem{} {} -> {}  ({} B)\n", reduce_suffix(s), ref(at(s, 0)), ref(at(s, 1)), bytes(at(s, 0)));
        break;
      case StmtOp::wait_group:
        out += line + fmt::format("wait_smem_to_gmem {}{}\n", s.n, s.flag ? " read_only" : "");
        break;
      case StmtOp::wgmma_wait:
        out += line + fmt::format("wgmma_wait {}\n", s.n);
        break;
      case StmtOp::store:
        out += line + fmt::format("{}{} {} <- {}\n", writes_tmem(s) ? "store_tmem" : "store", reduce_suffix(s), ref(at(s, 0)), value(s.value));
        break;
      case StmtOp::wgmma:
        out += line + fmt::format("wgmma {} += {}{} * {}{}\n", ref(at(s, 0)), at(s, 1) == none ? value(s.value) : ref(at(s, 1)),
                                  s.transpose & 1 ? "^T" : "", ref(at(s, 2)), s.transpose & 2 ? "^T" : "");
        break;
      case StmtOp::tcgen05_cp:
        out += line + fmt::format("tcgen05_copy_scales {} <- {}\n", ref(at(s, 1)), ref(at(s, 0)));
        break;
      case StmtOp::try_cancel:
        out += line + fmt::format("try_cancel -> {}  arrive+expect_tx(16 B) on {}\n", ref(at(s, 0)), ref(at(s, 1)));
        break;
      case StmtOp::break_if:
        out += line + fmt::format("break_if {}\n", expr(s.e0));
        break;
      case StmtOp::atomic_fetch:
        out += line + call(id) + "\n";
        break;
      case StmtOp::tcgen05_mma:
        out += line + fmt::format("{} {} {}= {}{} * {}{}{}\n", stmt_name(s), ref(at(s, 0)), s.e0 == none ? "" : fmt::format("(accumulate if {}) +", expr(s.e0)),
                                  ref(at(s, 1)), s.transpose & 1 ? "^T" : "", ref(at(s, 2)), s.transpose & 2 ? "^T" : "",
                                  (s.flag ? fmt::format("  scaled by {}, {}", ref(at(s, 3)), ref(at(s, 4))) : std::string()) +
                                      (tcgen05::mma_commit_barrier(s) != none ? fmt::format("  then arrive on {}", ref(tcgen05::mma_commit_barrier(s))) : ""));
        break;
      default: {
        std::vector<std::string> ops;
        for (auto r : s.refs) ops.push_back(ref(r));
        const bool semaphore = s.op == StmtOp::semaphore_signal || s.op == StmtOp::semaphore_wait;
        out += line + fmt::format("{}{}{}{}{}\n", stmt_name(s), ops.empty() ? "" : " ", fmt::join(ops, ", "),
                                  s.axes.empty() ? "" : fmt::format("  also in the pairs along cluster axes ({})", fmt::join(s.axes, ", ")),
                                  semaphore && s.n == 1 ? "  memory_scope::sys" : semaphore && s.n != 0 ? fmt::format("  ?scope{}", s.n) : "");
      }
    }
    if (annotate && static_cast<std::size_t>(id) < k_.debug.stmts.size()) {
      if (auto l = loc_text(k_.debug.stmts[id]); !l.empty()) {
        out.pop_back();  // the newline: the comment goes on the statement's line
        out += fmt::format("  // {}\n", l);
      }
    }
    for (auto c : s.body) stmt(c, depth + 1, out, annotate);
  }

 private:
  // Counts depth on the way down and nodes overall; exhausted() once either limit is passed.
  struct guard {
    Printer const& p;
    explicit guard(Printer const& q, bool counted = true) : p(q) {
      ++p.depth_;
      p.nodes_ += counted;
    }
    ~guard() { --p.depth_; }
    guard(guard const&) = delete;
    guard& operator=(guard const&) = delete;
    bool exhausted() const { return p.depth_ > print_depth_limit || p.nodes_ > print_node_budget; }
  };
  mutable int depth_ = 0;
  mutable std::int64_t nodes_ = 0;
  mutable std::size_t stmts_printed_ = 0;

  static RefId at(Stmt const& s, std::size_t i) { return i < s.refs.size() ? s.refs[i] : none; }
  // A store into TMEM is the user's store_tmem.
  bool writes_tmem(Stmt const& s) const {
    const RefId d = at(s, 0);
    if (d == none || d < 0 || d >= static_cast<RefId>(k_.refs.size())) return false;
    auto const& r = k_.refs[static_cast<std::size_t>(d)];
    return r.base == RefBase::alloc && r.id >= 0 && r.id < static_cast<int>(k_.allocs.size()) &&
           k_.allocs[static_cast<std::size_t>(r.id)].kind == AllocKind::tmem;
  }
  // A binary operand in parentheses (min and max print as calls, which need none).
  void put_operand(ExprId id, std::string& o) const {
    const bool paren = id >= 0 && id < static_cast<ExprId>(k_.exprs.size()) && expr_is_binary(k_.exprs[id].op) &&
                       k_.exprs[id].op != ExprOp::min && k_.exprs[id].op != ExprOp::max;
    if (paren) o += '(';
    put_expr(id, o);
    if (paren) o += ')';
  }
  void put_vop(ValueId id, std::string& o) const {
    const bool paren = id >= 0 && id < static_cast<ValueId>(k_.values.size()) &&
                       ((value_is_binary(k_.values[id].op) && k_.values[id].op != ValueOp::min && k_.values[id].op != ValueOp::max) ||
                        value_is_compare(k_.values[id].op));
    if (paren) o += '(';
    put_value(id, o);
    if (paren) o += ')';
  }
  std::int64_t bytes(RefId id) const {
    if (id < 0 || id >= static_cast<RefId>(k_.refs.size())) return 0;
    auto const& r = k_.refs[id];
    // Wrapping arithmetic: only an unverified kernel can overflow here, and its listing just
    // needs to be printable.
    std::uint64_t n = 1;
    for (auto e : r.shape) n *= static_cast<std::uint64_t>(e);
    const bool in_range = r.id >= 0 && r.id < static_cast<int>(r.base == RefBase::param ? k_.params.size() : k_.allocs.size());
    auto dt = !in_range ? DType::f32 : r.base == RefBase::param ? k_.params[r.id].dtype : k_.allocs[r.id].dtype;
    return static_cast<std::int64_t>(n * static_cast<std::uint64_t>(dtype_bits(dt)) / 8);
  }
  Kernel const& k_;
  bool named_ = false;
};

// The listing; `annotate` adds names and locations as comments (which the hash leaves out).
std::string listing(Kernel const& k, bool annotate) {
  // Run-time extents print by name, their values only as annotations: the hash (the JIT cache
  // key) is the same for every value, as the generated code is.
  std::vector<std::string> grid;
  for (int i = 0; i < std::clamp(k.grid_rank, 0, 3); ++i) {
    const auto g = k.grid_expr[static_cast<std::size_t>(i)];
    if (g == none) grid.push_back(fmt::format("{}", k.grid[static_cast<std::size_t>(i)]));
    else grid.push_back(Printer(k).expr(g) + (annotate ? fmt::format(" = {}", k.grid[static_cast<std::size_t>(i)]) : ""));
  }
  std::string out = fmt::format("kernel {} target={} grid=({}) ", k.name, target_name(k.target), fmt::join(grid, ", "));
  if (k.role_warps.empty()) {
    out += fmt::format("warpgroups={}", k.roles);  // threads(n): every role a warpgroup
  } else {
    std::vector<std::string> roles;
    for (int w : k.role_warps) roles.emplace_back(w == 1 ? "warp" : w == 4 ? "warpgroup" : fmt::format("{} warps", w));
    out += fmt::format("roles=({})", fmt::join(roles, ", "));
  }
  if (k.cluster_rank > 0)
    out += fmt::format(" cluster=({}){}", fmt::join(std::vector<std::int64_t>(k.cluster.begin(), k.cluster.begin() + std::min(k.cluster_rank, 3)), ", "),
                       k.cluster_nonportable ? " non-portable" : "");
  out += fmt::format("\n  smem {} B, tmem {} columns\n", smem_bytes(k), tmem_columns(k));
  for (auto const& p : k.params) {
    std::vector<std::string> ext;
    for (std::size_t i = 0; i < p.shape.size(); ++i)
      if (p.run_time(i) && static_cast<std::size_t>(p.extent[i]) < k.extents.size())
        ext.push_back(k.extents[static_cast<std::size_t>(p.extent[i])].name + (annotate ? fmt::format("={}", p.shape[i]) : ""));
      else
        ext.push_back(i < p.dynamic.size() && p.dynamic[i] ? fmt::format("{}?", p.shape[i]) : fmt::format("{}", p.shape[i]));
    out += fmt::format("  param {}: {} {}[{}]{}\n", p.name, p.workspace ? "workspace" : "gmem", dtype_name(p.dtype), fmt::join(ext, ", "),
                       p.segments < 0 ? std::string()
                       : p.segments_extent >= 0 && static_cast<std::size_t>(p.segments_extent) < k.extents.size()
                           ? fmt::format(" segments of {}{} rows", k.extents[static_cast<std::size_t>(p.segments_extent)].name, annotate ? fmt::format("={}", p.segments) : "")
                           : fmt::format(" segments of {} rows", p.segments));
  }
  for (std::size_t i = 0; i < k.allocs.size(); ++i) {
    auto const& a = k.allocs[i];
    std::string extra;
    switch (a.kind) {
      case AllocKind::smem:
        if (!a.tiling.empty()) extra += fmt::format(" tiling=({})", fmt::join(a.tiling, ", "));
        if (a.swizzle) extra += fmt::format(" swizzle={}", a.swizzle);
        break;
      case AllocKind::barrier:
      case AllocKind::cluster_barrier:
        extra += fmt::format(" arrivals={}", a.arrivals);
        if (a.orders_tensor_core) extra += " orders_tensor_core";
        if (!a.collective_axes.empty()) extra += fmt::format(" collective_axes=({})", fmt::join(a.collective_axes, ", "));
        break;
      default: break;
    }
    const bool typed = a.kind != AllocKind::barrier && a.kind != AllocKind::cluster_barrier;
    std::string note;
    if (annotate) {
      const int id = static_cast<int>(i);
      const auto name = alloc_name(k, id), loc = alloc_where(k, id);
      if (name != numbered_name(k, id)) note = name;
      if (!loc.empty()) note += (note.empty() ? "" : ", ") + loc;
      if (!note.empty()) note = "  // " + note;
    }
    out += fmt::format("  {} {}: {}{}[{}]{}{}\n", alloc_kind_name(a.kind), numbered_name(k, static_cast<int>(i)), typed ? dtype_name(a.dtype) : "",
                       typed ? "" : "", fmt::join(a.shape, ", "), extra, note);
  }
  out += "body:\n";
  Printer(k).stmt(k.body, 0, out, annotate);
  return out;
}

}  // namespace

std::string alloc_name(Kernel const& k, int alloc) {
  if (alloc >= 0 && static_cast<std::size_t>(alloc) < k.debug.alloc_names.size() && !k.debug.alloc_names[alloc].empty())
    return k.debug.alloc_names[alloc];
  return numbered_name(k, alloc);
}

std::string where(Kernel const& k, StmtId id) {
  return id >= 0 && static_cast<std::size_t>(id) < k.debug.stmts.size() ? loc_text(k.debug.stmts[id]) : std::string();
}

std::string alloc_where(Kernel const& k, int alloc) {
  return alloc >= 0 && static_cast<std::size_t>(alloc) < k.debug.allocs.size() ? loc_text(k.debug.allocs[alloc]) : std::string();
}

std::string describe(Kernel const& k, StmtId id) { return Printer(k, true).call(id); }

std::string at_source(Kernel const& k, StmtId id) {
  const auto l = where(k, id);
  return fmt::format("\n  at {}{}{}", l, l.empty() ? "" : ": ", describe(k, id));
}

std::string print(Kernel const& k) { return listing(k, true); }

std::uint64_t hash(Kernel const& k) {
  // FNV-1a over a versioned canonical listing; bump the version when the listing changes.
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  mix("stagecraft-ir-v1\n");
  mix(listing(k, false));  // names and locations are not semantics
  return h;
}

}  // namespace stagecraft::ir
