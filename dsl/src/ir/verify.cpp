// The IR verifier: every invariant a backend relies on, checked on plain data. The typed front
// end already guarantees most of these for kernels it builds; the verifier is what stands
// between a hand-built or corrupted IR (or a lowering bug) and a backend.
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stagecraft/ir/kernel.hpp"

namespace stagecraft::ir {
namespace {

bool is_identifier(std::string const& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

class Verifier {
 public:
  explicit Verifier(Kernel const& k) : k_(k) {}

  void run() {
    kernel_level();
    for (std::size_t i = 0; i < k_.exprs.size(); ++i) expr_shape(static_cast<ExprId>(i));
    if (k_.body < 0 || k_.body >= static_cast<StmtId>(k_.stmts.size())) fail("the body is statement {}, which does not exist", k_.body);
    seen_.assign(k_.stmts.size(), false);
    stmt(k_.body);
    for (std::size_t i = 0; i < seen_.size(); ++i)
      if (!seen_[i]) fail("statement #{} is not reachable from the body", i);
  }

 private:
  template <class... A>
  [[noreturn]] void fail(fmt::format_string<A...> f, A&&... a) const {
    throw VerifyError(fmt::format("kernel '{}': {}", k_.name, fmt::format(f, std::forward<A>(a)...)));
  }
  template <class... A>
  [[noreturn]] void fail_at(StmtId s, fmt::format_string<A...> f, A&&... a) const {
    throw VerifyError(fmt::format("kernel '{}': op #{} ({}): {}", k_.name, s, stmt_name(k_.stmts[s].op),
                                  fmt::format(f, std::forward<A>(a)...)));
  }

  void kernel_level() {
    if (!is_identifier(k_.name)) fail("the kernel name must be a C identifier (it names the generated function)");
    if (k_.grid_rank < 1 || k_.grid_rank > 3) fail("grid rank must be 1 to 3, got {}", k_.grid_rank);
    for (int i = 0; i < 3; ++i)
      if (k_.grid[i] < 1) fail("grid dimension {} must be at least 1, got {}", i, k_.grid[i]);
    if (k_.warpgroups < 1 || k_.warpgroups > max_warpgroups)
      fail("num_threads must be between 1 and {} warpgroups, got {}", max_warpgroups, k_.warpgroups);
    if (k_.cluster_rank < 0 || k_.cluster_rank > 3) fail("cluster rank must be 0 to 3, got {}", k_.cluster_rank);
    std::int64_t csize = 1;
    for (int i = 0; i < 3; ++i) {
      if (k_.cluster[i] < 1) fail("cluster dimension {} must be at least 1, got {}", i, k_.cluster[i]);
      if (k_.grid[i] % k_.cluster[i] != 0)
        fail("grid dimension {} ({}) must be a multiple of the cluster dimension ({})", i, k_.grid[i], k_.cluster[i]);
      csize *= k_.cluster[i];
    }
    const auto climit = k_.cluster_nonportable ? max_cluster_nonportable : max_cluster_portable;
    if (csize > climit) fail("a cluster of {} CTAs exceeds the limit of {}", csize, climit);

    std::set<std::string> names;
    for (auto const& p : k_.params) {
      if (!is_identifier(p.name)) fail("parameter name '{}' must be a C identifier", p.name);
      if (!names.insert(p.name).second) fail("two parameters are named '{}'", p.name);
      if (p.shape.empty() || p.shape.size() > 5) fail("parameter '{}' has rank {}, expected 1 to 5", p.name, p.shape.size());
      if (p.dynamic.size() != p.shape.size()) fail("parameter '{}': {} dynamic flags for rank {}", p.name, p.dynamic.size(), p.shape.size());
      for (auto e : p.shape)
        if (e < 1) fail("parameter '{}' has shape ({}): every extent must be at least 1", p.name, fmt::join(p.shape, ", "));
    }
    for (std::size_t i = 0; i < k_.allocs.size(); ++i) {
      auto const& a = k_.allocs[i];
      if (a.shape.empty()) fail("allocation {} ({}) has no shape", i, alloc_kind_name(a.kind));
      for (auto e : a.shape)
        if (e < 1) fail("allocation {} ({}) has shape ({}): every extent must be at least 1", i, alloc_kind_name(a.kind), fmt::join(a.shape, ", "));
      if (a.kind == AllocKind::barrier || a.kind == AllocKind::cluster_barrier) {
        if (a.arrivals < 1) fail("Num arrivals must be at least 1, but got {} (allocation {})", a.arrivals, i);
        for (int ax : a.collective_axes)
          if (ax < 0 || ax >= k_.cluster_rank)
            fail("cluster barrier {} uses cluster axis {}, but the kernel's cluster has {} dimensions", i, ax, k_.cluster_rank);
        if (a.kind == AllocKind::cluster_barrier && a.collective_axes.empty()) fail("cluster barrier {} has no collective axes", i);
      }
      if (a.kind == AllocKind::smem && a.swizzle != 0) {
        if (a.swizzle != 32 && a.swizzle != 64 && a.swizzle != 128) fail("allocation {}: swizzle must be 32, 64 or 128 bytes, but got {}", i, a.swizzle);
        const auto trailing = a.tiling.empty() ? a.shape.back() : a.tiling.back();
        if (trailing * dtype_bits(a.dtype) / 8 != a.swizzle)
          fail("allocation {}: swizzle = {} bytes with dtype {} needs a trailing dimension of {} elements, but got {}", i, a.swizzle,
               dtype_name(a.dtype), a.swizzle * 8 / dtype_bits(a.dtype), trailing);
      }
      if (a.kind == AllocKind::tmem && k_.target != Target::sm_100a) fail("TMEM exists on Blackwell only, but the kernel targets {}", target_name(k_.target));
    }
    if (auto s = smem_bytes(k_); s > max_smem_bytes)
      fail("kernel exceeds available shared memory: smem_bytes={} > max_smem_bytes={}", s, max_smem_bytes);
    if (auto t = tmem_columns(k_); t > max_tmem_columns)
      fail("kernel exceeds available tensor memory: tmem_columns={} > max_tmem_columns={}", t, max_tmem_columns);
  }

  void expr_shape(ExprId id) const {
    auto const& e = k_.exprs[id];
    auto child = [&](ExprId c) {
      if (c < 0 || c >= id) fail("index expression {} ({}) refers to expression {}, which is not defined before it", id, expr_op_name(e.op), c);
    };
    if (expr_is_binary(e.op)) {
      child(e.a);
      child(e.b);
    } else if (e.op == ExprOp::lnot) {
      child(e.a);
    }
    if (e.op == ExprOp::program_id && (e.value < 0 || e.value >= k_.grid_rank))
      fail("program_id({}) but the grid has {} dimensions", e.value, k_.grid_rank);
    if (e.op == ExprOp::cluster_idx && (e.value < 0 || e.value >= std::max(1, k_.cluster_rank)))
      fail("cluster_idx({}) but the cluster has {} dimensions", e.value, k_.cluster_rank);
  }

  // Variables of an expression must be bound by an enclosing loop.
  void scoped(StmtId s, ExprId id) const {
    if (id < 0 || id >= static_cast<ExprId>(k_.exprs.size())) fail_at(s, "refers to index expression {}, which does not exist", id);
    auto const& e = k_.exprs[id];
    if (e.op == ExprOp::var && !in_scope_.count(e.value))
      fail_at(s, "uses index variable v{} outside the loop that binds it", e.value);
    if (e.a != none) scoped(s, e.a);
    if (e.b != none) scoped(s, e.b);
  }

  Ref const& ref(StmtId s, RefId id) const {
    if (id < 0 || id >= static_cast<RefId>(k_.refs.size())) fail_at(s, "refers to memory reference {}, which does not exist", id);
    auto const& r = k_.refs[id];
    for (auto i : r.index) scoped(s, i);
    for (auto b : r.block) scoped(s, b);
    if (r.base == RefBase::param) {
      if (r.id < 0 || r.id >= static_cast<int>(k_.params.size())) fail_at(s, "refers to parameter {}, which does not exist", r.id);
      auto const& p = k_.params[r.id];
      if (!r.index.empty()) fail_at(s, "parameter '{}' is addressed by blocks, not indexed", p.name);
      if (r.block.size() != p.shape.size() || r.shape.size() != p.shape.size())
        fail_at(s, "a block of parameter '{}' (rank {}) needs {} coordinates and extents, got {} and {}", p.name, p.shape.size(),
                p.shape.size(), r.block.size(), r.shape.size());
      for (std::size_t d = 0; d < p.shape.size(); ++d)
        if (r.shape[d] < 1 || p.shape[d] % r.shape[d] != 0)
          fail_at(s, "the block shape ({}) does not divide the shape ({}) of parameter '{}'", fmt::join(r.shape, ", "),
                  fmt::join(p.shape, ", "), p.name);
    } else {
      if (r.id < 0 || r.id >= static_cast<int>(k_.allocs.size())) fail_at(s, "refers to allocation {}, which does not exist", r.id);
      auto const& a = k_.allocs[r.id];
      if (r.index.size() > a.shape.size()) fail_at(s, "indexes allocation {} with {} indices, but it has rank {}", r.id, r.index.size(), a.shape.size());
      std::vector<std::int64_t> rest(a.shape.begin() + static_cast<std::ptrdiff_t>(r.index.size()), a.shape.end());
      if (a.kind != AllocKind::barrier && a.kind != AllocKind::cluster_barrier && rest != r.shape)
        fail_at(s, "a view of allocation {} claims shape ({}), but indexing its shape ({}) leaves ({})", r.id, fmt::join(r.shape, ", "),
                fmt::join(a.shape, ", "), fmt::join(rest, ", "));
      for (std::size_t d = 0; d < r.index.size(); ++d) {
        auto const& e = k_.exprs[r.index[d]];
        if (e.op == ExprOp::constant && (e.value < 0 || e.value >= a.shape[d]))
          fail_at(s, "{} offset is out of bounds: offset = {} in a dimension of {}", a.kind == AllocKind::smem ? "SMEM" : "Barrier",
                  e.value, a.shape[d]);
      }
    }
    return r;
  }

  Alloc const& alloc_of(StmtId s, Ref const& r, std::initializer_list<AllocKind> kinds, const char* role) const {
    if (r.base != RefBase::alloc) fail_at(s, "{} must be a {} reference, but it is the parameter '{}'", role, alloc_kind_name(*kinds.begin()), k_.params[r.id].name);
    auto const& a = k_.allocs[r.id];
    for (auto k : kinds)
      if (a.kind == k) return a;
    fail_at(s, "{} must be a {} reference, but it is a {}", role, alloc_kind_name(*kinds.begin()), alloc_kind_name(a.kind));
  }

  void barrier_operand(StmtId s, RefId id, bool need_tc = false) const {
    auto const& r = ref(s, id);
    auto const& a = alloc_of(s, r, {AllocKind::barrier, AllocKind::cluster_barrier}, "the barrier operand");
    if (r.index.size() != a.shape.size())
      fail_at(s, "Attempting to operate on barrier without indexing, but num_barriers = {}",
              std::accumulate(a.shape.begin() + static_cast<std::ptrdiff_t>(r.index.size()), a.shape.end(), std::int64_t{1}, std::multiplies<>()));
    if (need_tc && !a.orders_tensor_core) fail_at(s, "MMA barrier must have orders_tensor_core set to True.");
  }

  DType ref_dtype(Ref const& r) const { return r.base == RefBase::param ? k_.params[r.id].dtype : k_.allocs[r.id].dtype; }

  void value(StmtId s, ValueId id) const {
    if (id < 0 || id >= static_cast<ValueId>(k_.values.size())) fail_at(s, "refers to tile value {}, which does not exist", id);
    auto const& v = k_.values[id];
    auto sub = [&](ValueId c) -> Value const& {
      if (c < 0 || c >= id) fail_at(s, "tile value {} ({}) refers to value {}, which is not defined before it", id, value_op_name(v.op), c);
      value(s, c);
      return k_.values[c];
    };
    if (v.op == ValueOp::load || v.op == ValueOp::load_tmem) {
      auto const& r = ref(s, v.ref);
      if (v.op == ValueOp::load_tmem && (r.base != RefBase::alloc || k_.allocs[r.id].kind != AllocKind::tmem))
        fail_at(s, "async_load_tmem reads a TMEM reference");
      if (ref_dtype(r) != v.dtype || r.shape != v.shape)
        fail_at(s, "tile value {} loads {} ({}) from memory of {} ({})", id, dtype_name(v.dtype), fmt::join(v.shape, ", "),
                dtype_name(ref_dtype(r)), fmt::join(r.shape, ", "));
    } else if (value_is_binary(v.op)) {
      auto const& a = sub(v.a);
      auto const& b = sub(v.b);
      if (a.dtype != v.dtype || b.dtype != v.dtype || a.shape != v.shape || b.shape != v.shape)
        fail_at(s, "tile value {} ({}): Expected dtypes and shapes to match, got {}({}) and {}({})", id, value_op_name(v.op),
                dtype_name(a.dtype), fmt::join(a.shape, ", "), dtype_name(b.dtype), fmt::join(b.shape, ", "));
    } else if (v.op != ValueOp::scalar) {
      auto const& a = sub(v.a);
      if (a.shape != v.shape) fail_at(s, "tile value {} ({}) changes the shape", id, value_op_name(v.op));
      if (v.op != ValueOp::cast && a.dtype != v.dtype) fail_at(s, "tile value {} ({}) changes the dtype", id, value_op_name(v.op));
    }
  }

  void stmt(StmtId s) {
    if (s < 0 || s >= static_cast<StmtId>(k_.stmts.size())) fail("refers to statement {}, which does not exist", s);
    if (seen_[s]) fail_at(s, "is used twice in the tree");
    seen_[s] = true;
    auto const& x = k_.stmts[s];
    auto need_refs = [&](std::size_t n) {
      if (x.refs.size() != n) fail_at(s, "takes {} memory operands, got {}", n, x.refs.size());
    };
    switch (x.op) {
      case StmtOp::seq:
        for (auto c : x.body) stmt(c);
        return;
      case StmtOp::for_: {
        scoped(s, x.e0);
        scoped(s, x.e1);
        if (x.body.size() != 1) fail_at(s, "a loop has exactly one body, got {}", x.body.size());
        if (x.var < 0 || x.var >= k_.num_vars || !bound_.insert(x.var).second) fail_at(s, "binds variable v{} twice or out of range", x.var);
        in_scope_.insert(x.var);
        stmt(x.body[0]);
        in_scope_.erase(x.var);
        return;
      }
      case StmtOp::if_:
        scoped(s, x.e0);
        if (x.body.empty() || x.body.size() > 2) fail_at(s, "has a then and at most one else branch, got {} bodies", x.body.size());
        for (auto c : x.body) stmt(c);
        return;
      case StmtOp::copy_gmem_to_smem:
      case StmtOp::copy_smem_to_gmem: {
        const bool load = x.op == StmtOp::copy_gmem_to_smem;
        need_refs(load ? 3 : 2);
        auto const& g = ref(s, x.refs[load ? 0 : 1]);
        auto const& m = ref(s, x.refs[load ? 1 : 0]);
        if (g.base != RefBase::param) fail_at(s, "the {} must be a GMEM reference", load ? "source" : "destination");
        alloc_of(s, m, {AllocKind::smem}, load ? "the destination" : "the source");
        if (ref_dtype(g) != ref_dtype(m))
          fail_at(s, "Expected dtypes to match but src had type {} and dst had type {}", dtype_name(ref_dtype(load ? g : m)),
                  dtype_name(ref_dtype(load ? m : g)));
        if (g.shape != m.shape)
          fail_at(s, "Expected shapes to match, but src had shape ({}) and dst had shape ({})", fmt::join((load ? g : m).shape, ", "),
                  fmt::join((load ? m : g).shape, ", "));
        const auto bytes = std::accumulate(m.shape.begin(), m.shape.end(), std::int64_t{1}, std::multiplies<>()) * dtype_bits(ref_dtype(m)) / 8;
        if (bytes % 16 != 0 || m.shape.back() * dtype_bits(ref_dtype(m)) / 8 % 16 != 0)
          fail_at(s, "TMA copies move a multiple of 16 bytes in total and per row, got {} bytes", bytes);
        if (m.shape.empty() || m.shape.size() > max_tma_rank) fail_at(s, "TMA copies are 1- to 5-dimensional, got rank {}", m.shape.size());
        for (std::size_t d = x.axes.empty() ? 0 : 1; d < m.shape.size(); ++d)  // a multicast's outer box is its share: checked by codegen
          if (m.shape[d] > max_tma_box)
            fail_at(s, "TMA boxes are 1 to 256 elements per dimension, but the view ({}) has {} in dimension {}", fmt::join(m.shape, ", "),
                    m.shape[d], d);
        if (load) barrier_operand(s, x.refs[2]);
        for (int ax : x.axes)
          if (ax < 0 || ax >= k_.cluster_rank) fail_at(s, "multicasts over cluster axis {}, but the cluster has {} dimensions", ax, k_.cluster_rank);
        return;
      }
      case StmtOp::commit_group:
      case StmtOp::commit_smem:
        need_refs(0);
        return;
      case StmtOp::wait_group:
        if (x.n < 0 || x.n > 63) fail_at(s, "n must be in [0, 63], got {}", x.n);
        return;
      case StmtOp::barrier_arrive:
      case StmtOp::barrier_wait:
        need_refs(1);
        barrier_operand(s, x.refs[0]);
        return;
      case StmtOp::store: {
        need_refs(1);
        auto const& r = ref(s, x.refs[0]);
        if (r.base == RefBase::alloc) alloc_of(s, r, {AllocKind::smem, AllocKind::accumulator}, "the destination");
        value(s, x.value);
        auto const& v = k_.values[x.value];
        if (v.dtype != ref_dtype(r)) fail_at(s, "Expected dtypes to match but src had type {} and dst had type {}", dtype_name(v.dtype), dtype_name(ref_dtype(r)));
        if (v.shape != r.shape)
          fail_at(s, "Expected shapes to match, but src had shape ({}) and dst had shape ({})", fmt::join(v.shape, ", "), fmt::join(r.shape, ", "));
        return;
      }
      case StmtOp::wgmma:
      case StmtOp::wgmma_wait:
        if (k_.target != Target::sm_90a) fail_at(s, "wgmma is a Hopper instruction, but the kernel targets {}", target_name(k_.target));
        if (x.op == StmtOp::wgmma) {
          need_refs(3);
          alloc_of(s, ref(s, x.refs[0]), {AllocKind::accumulator}, "the accumulator");
          if (x.refs[1] == none) value(s, x.value);
          else alloc_of(s, ref(s, x.refs[1]), {AllocKind::smem}, "A");
          alloc_of(s, ref(s, x.refs[2]), {AllocKind::smem}, "B");
        } else if (x.n < 0 || x.n > 7) {
          fail_at(s, "n must be in [0, 7], got {}", x.n);
        }
        return;
      case StmtOp::tcgen05_mma:
      case StmtOp::tcgen05_commit_arrive:
        if (k_.target != Target::sm_100a) fail_at(s, "tcgen05 is a Blackwell instruction, but the kernel targets {}", target_name(k_.target));
        if (x.op == StmtOp::tcgen05_mma) {
          if (x.refs.size() != 3 && x.refs.size() != 4) fail_at(s, "takes 3 or 4 memory operands, got {}", x.refs.size());
          alloc_of(s, ref(s, x.refs[0]), {AllocKind::tmem}, "the accumulator");
          alloc_of(s, ref(s, x.refs[1]), {AllocKind::smem, AllocKind::tmem}, "A");
          alloc_of(s, ref(s, x.refs[2]), {AllocKind::smem}, "B");
          if (x.refs.size() == 4) barrier_operand(s, x.refs[3], true);
          scoped(s, x.e0);
        } else {
          need_refs(1);
          barrier_operand(s, x.refs[0], true);
        }
        return;
    }
    fail_at(s, "unknown operation");
  }

  Kernel const& k_;
  std::vector<bool> seen_;
  std::set<std::int64_t> in_scope_, bound_;
};

}  // namespace

void verify(Kernel const& k) { Verifier(k).run(); }

namespace {
// Walks the allocations in order, aligning each (as smem_decl::alignment does at compile time).
template <class F>
std::int64_t lay_out_smem(Kernel const& k, F&& at) {
  std::int64_t off = 0;
  for (auto const& a : k.allocs) {
    const std::int64_t n = std::accumulate(a.shape.begin(), a.shape.end(), std::int64_t{1}, std::multiplies<>());
    std::int64_t bytes = 0, align = 1;
    if (a.kind == AllocKind::smem) {
      bytes = n * dtype_bits(a.dtype) / 8;
      align = a.swizzle ? 8 * a.swizzle : 128;
    } else if (a.kind == AllocKind::barrier || a.kind == AllocKind::cluster_barrier) {
      bytes = 8 * n;
      align = 8;
    } else {
      at(std::int64_t{-1});
      continue;
    }
    off = (off + align - 1) / align * align;
    at(off);
    off += bytes;
  }
  return off;
}
}  // namespace

std::vector<std::int64_t> smem_offsets(Kernel const& k) {
  std::vector<std::int64_t> out;
  lay_out_smem(k, [&](std::int64_t o) { out.push_back(o); });
  return out;
}

std::int64_t smem_bytes(Kernel const& k) {
  return lay_out_smem(k, [](std::int64_t) {});
}

std::int64_t tmem_columns(Kernel const& k) {
  std::int64_t cols = 0;
  for (auto const& a : k.allocs)
    if (a.kind == AllocKind::tmem && a.shape.size() == 2) cols += a.shape[1] * dtype_bits(a.dtype) / 32;
  return cols;
}

}  // namespace stagecraft::ir
