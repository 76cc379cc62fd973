// Front-end tree -> flat IR. Expressions are hash-consed (equal subexpressions share one id) so
// the IR is canonical; variables are renumbered in binding order.
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "stagecraft/lower.hpp"

namespace stagecraft::ir {
namespace {

SourceLoc source(src_loc l) { return l.file && l.line > 0 ? SourceLoc{l.file, static_cast<int>(l.line)} : SourceLoc{}; }

// Lowering meets holes only where a typed check already failed (a stand-in), or in a tree built
// by hand: the kernel(...) call is the closest line the user wrote.
std::string at_kernel(Kernel const& k) {
  return k.debug.kernel.line > 0 ? fmt::format("\n  at {}:{}: kernel '{}'", k.debug.kernel.file, k.debug.kernel.line, k.name) : std::string();
}

class Lowering {
 public:
  explicit Lowering(Kernel& k) : k_(k) {}

  // The kernel's run-time extents, numbered as parameters first name them; each parameter's
  // front-end extent ids become those numbers.
  void run_time_extents() {
    for (auto& p : k_.params) {
      for (std::size_t d = 0; d < p.extent.size(); ++d) {
        const auto id = p.extent[d];
        if (id == none) continue;
        if (id < 0)
          throw VerifyError(fmt::format("kernel '{}': dimension {} of parameter '{}' is an expression of run-time extents; a parameter's run-time "
                                        "dimension must be one extent (run_time(name, value)), which a launch reads off the tensor{}",
                                        k_.name, d, p.name, at_kernel(k_)));
        auto [it, fresh] = extents_.try_emplace(id, static_cast<std::int32_t>(k_.extents.size()));
        if (fresh) k_.extents.push_back({tree::extent_name(id), p.shape[d]});
        auto const& x = k_.extents[static_cast<std::size_t>(it->second)];
        if (x.value != p.shape[d])
          throw VerifyError(fmt::format("kernel '{}': run-time extent '{}' is {} in one parameter but {} in '{}' (dimension {}){}", k_.name, x.name,
                                        x.value, p.shape[d], p.name, d, at_kernel(k_)));
        p.extent[d] = it->second;
      }
      if (std::all_of(p.extent.begin(), p.extent.end(), [](std::int32_t e) { return e == none; })) p.extent.clear();
    }
    for (auto& p : k_.params) {  // segment tables over a run-time number of rows: some parameter's dimension
      if (p.segments_extent == none) continue;
      auto it = extents_.find(p.segments_extent);
      if (it == extents_.end())
        throw VerifyError(fmt::format("kernel '{}': segment table '{}' {}: the launch checks the table against the packed parameters' "
                                      "rows, so they must be one run-time extent (run_time(name, value)) that a parameter has as a dimension{}",
                                      k_.name, p.name,
                                      p.segments_extent < 0 ? std::string("counts its rows with an expression of run-time extents, not one extent")
                                                            : fmt::format("covers {} rows, but no parameter has {} as a dimension",
                                                                          tree::extent_name(p.segments_extent), tree::extent_name(p.segments_extent)),
                                      at_kernel(k_)));
      p.segments_extent = it->second;
    }
  }

  ExprId expr(tree::ExprP const& e) {
    if (!e) throw VerifyError(fmt::format("kernel '{}': lowering met an empty index expression{}", k_.name, at_kernel(k_)));
    Expr x{e->op, e->value};
    if (e->op == ExprOp::extent) {
      auto it = extents_.find(static_cast<std::int32_t>(e->value));
      if (it == extents_.end())
        throw VerifyError(fmt::format("kernel '{}': an index expression reads run-time extent '{}', which is no parameter's dimension: a launch "
                                      "could not know its value (declare a parameter with shape(..., {}, ...)){}",
                                      k_.name, tree::extent_name(static_cast<std::int32_t>(e->value)), tree::extent_name(static_cast<std::int32_t>(e->value)),
                                      at_kernel(k_)));
      x.value = it->second;
    }
    if (e->op == ExprOp::var) {
      auto it = vars_.find(static_cast<int>(e->value));
      // Unbound variables are kept with a number past the bound ones; the verifier names them.
      x.value = it != vars_.end() ? it->second : 1'000'000 + e->value;
    }
    if (e->a) x.a = expr(e->a);
    if (e->b) x.b = expr(e->b);
    auto key = std::make_tuple(x.op, x.value, x.a, x.b);
    if (auto it = interned_.find(key); it != interned_.end()) return it->second;
    k_.exprs.push_back(x);
    return interned_[key] = static_cast<ExprId>(k_.exprs.size() - 1);
  }

  RefId ref(tree::Ref const& r) {
    Ref x{r.base == tree::Base::param ? RefBase::param : RefBase::alloc, r.id, {}, {}, r.shape, r.stride, r.fill};
    for (auto const& i : r.index) x.index.push_back(expr(i));
    for (auto const& b : r.block) x.block.push_back(expr(b));
    if (r.row_lo) x.row_lo = expr(r.row_lo), x.row_hi = expr(r.row_hi);
    k_.refs.push_back(std::move(x));
    return static_cast<RefId>(k_.refs.size() - 1);
  }

  ValueId value(tree::ValueP const& v) {
    if (!v) throw VerifyError(fmt::format("kernel '{}': lowering met an empty tile expression{}", k_.name, at_kernel(k_)));
    Value x{v->op, v->dtype, v->shape};
    if (v->a) x.a = value(v->a);
    if (v->b) x.b = value(v->b);
    if (v->c) x.c = value(v->c);
    if (v->op == ValueOp::load || v->op == ValueOp::load_tmem) x.ref = ref(v->ref);
    if (v->index) x.index = expr(v->index);
    x.scalar = v->scalar;
    k_.values.push_back(std::move(x));
    return static_cast<ValueId>(k_.values.size() - 1);
  }

  // Pre-order numbering: the parent's id is reserved before its children are lowered.
  StmtId stmt(tree::StmtP const& s) {
    if (!s) throw VerifyError(fmt::format("kernel '{}': lowering met an empty statement{}", k_.name, at_kernel(k_)));
    const auto id = static_cast<StmtId>(k_.stmts.size());
    k_.stmts.push_back(Stmt{s->op});
    k_.debug.stmts.push_back(source(s->loc));
    Stmt x{s->op};
    if (s->op == StmtOp::for_) {
      x.e0 = expr(s->e0);
      x.e1 = expr(s->e1);
      x.var = k_.num_vars++;
      vars_[s->var] = x.var;
    } else if (s->e0) {
      x.e0 = expr(s->e0);
      if (s->e1) x.e1 = expr(s->e1);  // atomic_fetch's cas
    }
    for (auto const& r : s->refs) x.refs.push_back(r.id < 0 ? none : ref(r));
    if (s->value) x.value = value(s->value);
    for (auto const& b : s->body) x.body.push_back(stmt(b));
    if (s->op == StmtOp::for_) vars_.erase(s->var);
    x.n = s->n;
    x.flag = s->flag;
    x.axes = s->axes;
    x.transpose = s->transpose;
    k_.stmts[id] = std::move(x);
    return id;
  }

 private:
  Kernel& k_;
  std::unordered_map<int, int> vars_;
  std::map<std::int32_t, std::int32_t> extents_;  // front-end extent id -> the kernel's
  std::map<std::tuple<ExprOp, std::int64_t, ExprId, ExprId>, ExprId> interned_;
};

}  // namespace

Kernel::Kernel() = default;
Kernel::Kernel(Kernel const&) = default;
Kernel::Kernel(Kernel&&) noexcept = default;
Kernel& Kernel::operator=(Kernel const&) = default;
Kernel& Kernel::operator=(Kernel&&) noexcept = default;
Kernel::~Kernel() = default;

Kernel lower(tree::KernelDesc const& d) {
  Kernel k;
  k.name = d.name;
  k.target = d.target;
  k.grid = d.grid;
  k.grid_rank = d.grid_rank;
  k.cluster = d.cluster;
  k.cluster_rank = d.cluster_rank;
  k.cluster_nonportable = d.cluster_nonportable;
  k.roles = d.roles;
  k.role_warps = d.role_warps;
  k.params = d.params;
  k.allocs = d.allocs;
  k.debug.kernel = source(d.loc);
  for (std::size_t i = 0; i < d.allocs.size(); ++i) {
    k.debug.alloc_names.emplace_back(i < d.alloc_names.size() && d.alloc_names[i] ? d.alloc_names[i] : "");
    k.debug.allocs.push_back(i < d.alloc_locs.size() ? source(d.alloc_locs[i]) : SourceLoc{});
  }
  if (!d.body) throw VerifyError(fmt::format("kernel '{}': the kernel has no body (its checks failed?){}", d.name, at_kernel(k)));
  Lowering l(k);
  l.run_time_extents();
  for (std::size_t i = 0; i < 3; ++i)
    if (d.grid_expr[i]) k.grid_expr[i] = l.expr(d.grid_expr[i]);
  k.body = l.stmt(d.body);
  verify(k);
  return k;
}

}  // namespace stagecraft::ir
