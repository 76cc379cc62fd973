// The IR verifier: the contract between whoever builds an ir::Kernel and every backend.
//
// The typed front end already guarantees most of these invariants for kernels it builds; the
// verifier is what stands between a hand-built or corrupted IR (or a lowering bug) and a backend.
// Backends walk every arena entry and follow operand fields whatever the op, so every entry is
// checked, reachable or not, and every field an op does not use must be empty. A kernel that
// passes can be printed, hashed, generated and interpreted without undefined behaviour: sizes
// are overflow-checked, counts and expression trees are bounded, and nothing here recurses (a
// corrupted chain of a million nested statements must not overflow the verifier's stack).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stagecraft/ir/eval.hpp"
#include "stagecraft/ir/protocol_error.hpp"
#include "stagecraft/ir/kernel.hpp"
#include "stagecraft/ir/roles.hpp"
#include "stagecraft/ir/tcgen05.hpp"
#include "stagecraft/ir/tile_view.hpp"
#include "stagecraft/ir/wgmma.hpp"

namespace stagecraft::ir {
namespace {

bool is_identifier(std::string const& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// Enums arrive from memory that may hold any byte: range-check before switching on them.
bool valid(DType t) { return static_cast<unsigned>(t) <= static_cast<unsigned>(last_dtype); }
bool valid(Target t) { return static_cast<unsigned>(t) <= static_cast<unsigned>(Target::sm_100a); }
bool valid(AllocKind k) { return static_cast<unsigned>(k) <= static_cast<unsigned>(AllocKind::accumulator); }
bool valid(RefBase b) { return static_cast<unsigned>(b) <= static_cast<unsigned>(RefBase::alloc); }
bool valid(ExprOp op) { return static_cast<unsigned>(op) <= static_cast<unsigned>(last_expr_op); }
bool valid(ValueOp op) { return static_cast<unsigned>(op) < static_cast<unsigned>(value_op_count); }
bool valid(StmtOp op) { return static_cast<unsigned>(op) <= static_cast<unsigned>(last_stmt_op); }

// The product of extents, or nullopt when it does not fit in 63 bits (or an extent is < 1).
std::optional<std::int64_t> checked_product(std::vector<std::int64_t> const& v, std::int64_t times = 1) {
  std::int64_t n = times;
  for (auto e : v)
    if (e < 1 || __builtin_mul_overflow(n, e, &n)) return std::nullopt;
  return n;
}

bool distinct(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return std::adjacent_find(v.begin(), v.end()) == v.end();
}

// Sorted variable numbers an expression (or a tile value, through its loads) reads.
using var_set = std::vector<std::int32_t>;
var_set merge(var_set const& a, var_set const& b) {
  var_set out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

class Verifier {
 public:
  explicit Verifier(Kernel const& k) : k_(k) {}

  void run() {
    kernel_level();
    run_time_extents();
    for (std::size_t i = 0; i < k_.params.size(); ++i) param(i);
    for (std::size_t i = 0; i < k_.allocs.size(); ++i) {
      alloc_context_ = static_cast<int>(i);
      alloc(i);
      alloc_name_unique(i);
    }
    alloc_context_ = -1;
    // Layout sums are overflow-safe only once every allocation's own size is known to be small.
    if (auto s = smem_bytes(k_); s > max_smem_bytes)
      fail("kernel exceeds available shared memory: smem_bytes={} > max_smem_bytes={}", s, max_smem_bytes);
    if (auto t = tmem_columns(k_); t > max_tmem_columns)
      fail("kernel exceeds available tensor memory: tmem_columns={} > max_tmem_columns={}", t, max_tmem_columns);
    // Children come before parents in every arena, so one forward pass sees each entry once,
    // with its operands already checked: linear however much is shared.
    find_users();
    expr_vars_.resize(k_.exprs.size());
    expr_size_.resize(k_.exprs.size());
    expr_depth_.resize(k_.exprs.size());
    for (std::size_t i = 0; i < k_.exprs.size(); ++i) {
      context_ = expr_user_[i];
      expr(static_cast<ExprId>(i));
    }
    context_ = none;
    run_time_grid();
    ref_vars_.resize(k_.refs.size());
    for (std::size_t i = 0; i < k_.refs.size(); ++i) {
      context_ = ref_user_[i];
      ref(static_cast<RefId>(i));
    }
    value_vars_.resize(k_.values.size());
    value_size_.resize(k_.values.size());
    value_depth_.resize(k_.values.size());
    for (std::size_t i = 0; i < k_.values.size(); ++i) {
      context_ = value_user_[i];
      value(static_cast<ValueId>(i));
    }
    context_ = none;
    for (std::size_t i = 0; i < k_.stmts.size(); ++i) stmt_fields(static_cast<StmtId>(i));
    semaphores_only_counted();
    index_tables_read_only();
    tree();
    warp_role_ops();
    tmem_lifetimes();
    for (std::size_t i = 0; i < k_.exprs.size(); ++i)
      if (k_.exprs[i].op == ExprOp::var && k_.exprs[i].value >= k_.num_vars)
        fail("index expression {} reads variable v{}, but the kernel has {} variables", i, k_.exprs[i].value, k_.num_vars);
  }

 private:
  // Arena entries are checked on their own, but a message about one a statement uses names
  // that statement (context_), as if it had been found there.
  // E: VerifyError, or ConfigError where the values the user chose (not an IR bug) are at fault.
  template <class E = VerifyError, class... A>
  [[noreturn]] void fail(fmt::format_string<A...> f, A&&... a) const {
    if (context_ != none) fail_at<E>(context_, f, std::forward<A>(a)...);
    // A ConfigError follows from values chosen at run time (the CLI's --set, --arch): it stays
    // one line (a usage error), and no line of the source is at fault.
    throw E(fmt::format("kernel '{}': {}{}", k_.name, fmt::format(f, std::forward<A>(a)...),
                        std::is_same_v<E, ConfigError> ? std::string() : declared_at()));
  }
  // Where the user declared what a kernel-level message is about: the allocation being checked,
  // else the kernel(...) call. Nothing when unknown (hand-built IR).
  std::string declared_at() const {
    if (alloc_context_ >= 0) {
      const auto l = alloc_where(k_, alloc_context_);
      return l.empty() ? std::string()
                       : fmt::format("\n  at {}: {} {}", l, alloc_kind_name(k_.allocs[alloc_context_].kind), alloc_name(k_, alloc_context_));
    }
    return k_.debug.kernel.line > 0 ? fmt::format("\n  at {}:{}: kernel '{}'", k_.debug.kernel.file, k_.debug.kernel.line, k_.name)
                                    : std::string();
  }
  // A protocol mistake the statement tree shows (ProtocolError): the op's line as fail_at gives it.
  [[noreturn]] void protocol_at(StmtId s, char const* check, std::string const& what) const {
    throw ProtocolError(fmt::format("kernel '{}': op #{} ({}): {}{}", k_.name, s, stmt_name(k_.stmts[s]), what, at_source(k_, s)), check);
  }
  template <class E = VerifyError, class... A>
  [[noreturn]] void fail_at(StmtId s, fmt::format_string<A...> f, A&&... a) const {
    // The op's line: on a line of its own, or (a ConfigError, which the CLI prints as a one-line
    // usage error) in parentheses.
    std::string at = at_source(k_, s);
    if constexpr (std::is_same_v<E, ConfigError>) at = " (" + at.substr(at.find("at ")) + ")";
    throw E(fmt::format("kernel '{}': op #{} ({}): {}{}", k_.name, s, stmt_name(k_.stmts[s]),
                        fmt::format(f, std::forward<A>(a)...), at));
  }

  // ---- the kernel, its parameters and allocations ----------------------------------------------
  void kernel_level() {
    if (!is_identifier(k_.name)) fail("the kernel name must be a C identifier (it names the generated function)");
    if (!valid(k_.target)) fail("unknown target {}", static_cast<int>(k_.target));
    if (k_.grid_rank < 1 || k_.grid_rank > 3) fail("grid rank must be 1 to 3, got {}", k_.grid_rank);
    for (int i = 0; i < 3; ++i) {
      if (k_.grid[i] < 1) fail<ConfigError>("grid dimension {} must be at least 1, got {}", i, k_.grid[i]);
      const auto limit = i == 0 ? max_grid_x : max_grid_yz;
      if (k_.grid[i] > limit) fail("grid dimension {} is {}, beyond CUDA's limit of {}", i, k_.grid[i], limit);
      if (i >= k_.grid_rank && k_.grid[i] != 1) fail("grid dimension {} is {}, but the grid has rank {} (dimensions past it must be 1)", i, k_.grid[i], k_.grid_rank);
    }
    // x < 2^31 and y, z < 2^16 (checked above): the product stays below 2^63.
    if (const auto ctas = k_.grid[0] * k_.grid[1] * k_.grid[2]; ctas > max_ctas)
      fail("a grid of ({}) is {} CTAs, beyond the {} that CTA numbers hold", fmt::join(k_.grid, ", "), ctas, max_ctas);
    roles();
    if (k_.cluster_rank < 0 || k_.cluster_rank > 3) fail("cluster rank must be 0 to 3, got {}", k_.cluster_rank);
    if (k_.cluster_rank == 0 && k_.cluster_nonportable) fail("a kernel without a cluster cannot ask for non-portable cluster sizes");
    std::int64_t csize = 1;
    for (int i = 0; i < 3; ++i) {
      if (k_.cluster[i] < 1 || k_.cluster[i] > max_cluster_nonportable)
        fail("cluster dimension {} must be between 1 and {}, got {}", i, max_cluster_nonportable, k_.cluster[i]);
      if (i >= k_.cluster_rank && k_.cluster[i] != 1)
        fail("cluster dimension {} is {}, but the cluster has rank {} (dimensions past it must be 1)", i, k_.cluster[i], k_.cluster_rank);
      if (k_.grid[i] % k_.cluster[i] != 0)
        fail<ConfigError>("grid dimension {} ({}) must be a multiple of the cluster dimension ({})", i, k_.grid[i], k_.cluster[i]);
      csize *= k_.cluster[i];
    }
    const auto climit = k_.cluster_nonportable ? max_cluster_nonportable : max_cluster_portable;
    if (csize > climit) fail("a cluster of {} CTAs exceeds the limit of {}", csize, climit);
    if (k_.num_vars < 0 || k_.num_vars > max_vars) fail("num_vars must be between 0 and {}, got {}", max_vars, k_.num_vars);
    constexpr auto max_id = static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());
    if (k_.exprs.size() > max_id || k_.refs.size() > max_id || k_.values.size() > max_id || k_.stmts.size() > max_id ||
        k_.params.size() > max_id || k_.allocs.size() > max_id)
      fail("an arena has more entries than 32-bit ids can name");
  }

  // threads(n) (role_warps empty): n warpgroups. threads(warpgroup, warp, ...): roles of one
  // warp or one warpgroup each, laid out in order, a warpgroup on a warpgroup boundary.
  void roles() {
    if (k_.role_warps.empty()) {
      if (k_.roles < 1 || k_.roles > max_warpgroups)
        fail("num_threads must be between 1 and {} warpgroups, got {}", max_warpgroups, k_.roles);
      return;
    }
    if (k_.roles < 1 || k_.roles > max_roles) fail("a kernel has 1 to {} roles, got {}", max_roles, k_.roles);
    if (k_.role_warps.size() != static_cast<std::size_t>(k_.roles))
      fail("the kernel has {} roles, but role_warps lists {}", k_.roles, k_.role_warps.size());
    int warp = 0;
    for (int r = 0; r < k_.roles; ++r) {
      const int w = k_.role_warps[static_cast<std::size_t>(r)];
      if (w != 1 && w != 4) fail("role {} has {} warps, but a role is one warp or one warpgroup (4 warps)", r, w);
      if (w == 4 && warp % 4 != 0)
        fail("role {} is a warpgroup but starts at warp {}: a warpgroup role starts on a warpgroup boundary (warp 0, 4, 8, ...), since "
             "wgmma, setmaxnreg and the TMEM lane quarters of tcgen05.ld belong to the hardware warpgroup (declare warpgroup roles "
             "before the single warps)", r, warp);
      warp += w;
      if (warp > max_warps) fail("the roles take {} warps or more, but a CTA has at most {} (1024 threads)", warp, max_warps);
    }
  }

  // Ops a single warp cannot issue (ir/roles.hpp), in any role of one warp that may reach them.
  void warp_role_ops() const {
    const auto warps = warp_role_set(k_);
    if (!warps) return;
    const auto who = stmt_roles(k_);
    for (std::size_t i = 0; i < k_.stmts.size(); ++i) {
      const auto s = static_cast<StmtId>(i);
      auto const& x = k_.stmts[i];
      const auto on_warp = who[i] & warps;
      if (!on_warp) continue;
      const int r = __builtin_ctz(on_warp);
      const auto role = role_name(k_, r);
      switch (x.op) {
        case StmtOp::wgmma:
        case StmtOp::wgmma_commit:
        case StmtOp::wgmma_wait:
          fail_at(s, "runs in {}, but wgmma is a warpgroup instruction (.sync.aligned over 128 threads) and a warp is 32: issue it from "
                  "a warpgroup role", role);
        case StmtOp::store:
          if (x.value != none && reads_tmem(x.value))
            fail_at(s, "runs in {}, but the tcgen05.ld of a warp reaches only its quarter of the 128 TMEM lanes (lanes 32 * (warp % 4) to "
                    "+ 31: {} to {} for warp {}), and a tile spans all 128: load TMEM in a warpgroup role", role,
                    32 * (first_warp(k_, r) % 4), 32 * (first_warp(k_, r) % 4) + 31, first_warp(k_, r));
          fail_at(s, "runs in {}, but tile math spreads a tile over the 128 threads of a warpgroup and a warp is 32: store tiles from a "
                  "warpgroup role", role);
        default: break;
      }
    }
  }

  void param(std::size_t i) {
    auto const& p = k_.params[i];
    if (!is_identifier(p.name)) fail("parameter name '{}' must be a C identifier", p.name);
    for (std::size_t j = 0; j < i; ++j)
      if (k_.params[j].name == p.name) fail("two parameters are named '{}'", p.name);
    if (!valid(p.dtype)) fail("parameter '{}' has unknown dtype {}", p.name, static_cast<int>(p.dtype));
    if (p.dtype == DType::pred) fail("parameter '{}' has dtype pred, a register mask with no memory layout (store cast<i32>(mask))", p.name);
    if (p.shape.empty() || p.shape.size() > max_param_rank)
      fail("parameter '{}' has rank {}, expected 1 to {}", p.name, p.shape.size(), max_param_rank);
    if (p.dynamic.size() != p.shape.size()) fail("parameter '{}': {} dynamic flags for rank {}", p.name, p.dynamic.size(), p.shape.size());
    if (!p.extent.empty() && p.extent.size() != p.shape.size())
      fail("parameter '{}': {} run-time extent entries for rank {}", p.name, p.extent.size(), p.shape.size());
    for (std::size_t d = 0; d < p.extent.size(); ++d) {
      const auto x = p.extent[d];
      if (x == none) continue;
      if (x < 0 || static_cast<std::size_t>(x) >= k_.extents.size())
        fail("parameter '{}' dimension {} is run-time extent {}, but the kernel has {}", p.name, d, x, k_.extents.size());
      if (p.shape[d] != k_.extents[static_cast<std::size_t>(x)].value)
        fail("parameter '{}' dimension {} is run-time extent {} = {}, but its shape says {}", p.name, d, k_.extents[static_cast<std::size_t>(x)].name,
             k_.extents[static_cast<std::size_t>(x)].value, p.shape[d]);
      if (p.segments != -1) fail("segment table '{}' has a run-time extent ({}): its length is the number of groups, compiled in", p.name,
                                 k_.extents[static_cast<std::size_t>(x)].name);
    }
    for (auto e : p.shape)
      if (e < 1) fail("parameter '{}' has shape ({}): every extent must be at least 1", p.name, fmt::join(p.shape, ", "));
    const auto bytes = checked_product(p.shape, dtype_bits(p.dtype) / 8);
    if (!bytes || *bytes > max_gmem_bytes)
      fail<ConfigError>("parameter '{}' of shape ({}) and dtype {} exceeds {} bytes", p.name, fmt::join(p.shape, ", "), dtype_name(p.dtype), max_gmem_bytes);
    if (p.workspace && *bytes > max_workspace_bytes)
      fail<ConfigError>("workspace '{}' of shape ({}) and dtype {} takes {} bytes, over the workspace limit of {} bytes (it is zero-filled on every launch)",
                        p.name, fmt::join(p.shape, ", "), dtype_name(p.dtype), *bytes, max_workspace_bytes);
    if (p.segments != -1 && (p.dtype != DType::i32 || p.shape.size() != 1 || p.workspace))
      fail("parameter '{}' is a segment table, which is a rank-1 i32 input, not {}{}[{}]", p.name, p.workspace ? "a workspace " : "",
           dtype_name(p.dtype), fmt::join(p.shape, ", "));
    if (p.segments_extent != none) {
      if (p.segments_extent < 0 || static_cast<std::size_t>(p.segments_extent) >= k_.extents.size())
        fail("segment table '{}' covers run-time extent {}, but the kernel has {}", p.name, p.segments_extent, k_.extents.size());
      if (p.segments != k_.extents[static_cast<std::size_t>(p.segments_extent)].value)
        fail("segment table '{}' covers run-time extent {} = {} rows, but says {}", p.name, k_.extents[static_cast<std::size_t>(p.segments_extent)].name,
             k_.extents[static_cast<std::size_t>(p.segments_extent)].value, p.segments);
    }
    if (p.segments < -1 || p.segments > std::numeric_limits<std::int32_t>::max())
      fail<ConfigError>("segment table '{}' covers {} rows: an i32 offset holds 0 to {}", p.name, p.segments, std::numeric_limits<std::int32_t>::max());
  }

  // Run-time extents: named, distinct, at least 1, and each some parameter's dimension (a
  // launcher takes the values from the tensors it is given).
  void run_time_extents() {
    for (std::size_t i = 0; i < k_.extents.size(); ++i) {
      auto const& x = k_.extents[i];
      if (!is_identifier(x.name)) fail("run-time extent {} is named '{}', which is not a C identifier (it names a kernel argument)", i, x.name);
      for (std::size_t j = 0; j < i; ++j)
        if (k_.extents[j].name == x.name) fail("two run-time extents are named '{}'", x.name);
      for (auto const& p : k_.params)
        if (p.name == x.name) fail("run-time extent '{}' has the name of a parameter", x.name);
      if (x.value < 1 || x.value > std::numeric_limits<std::int32_t>::max())
        fail<ConfigError>("run-time extent {} = {}: it must be 1 to {}", x.name, x.value, std::numeric_limits<std::int32_t>::max());
      bool used = false;
      for (auto const& p : k_.params)
        for (auto e : p.extent) used = used || e == static_cast<std::int32_t>(i);
      if (!used) fail("run-time extent '{}' is no parameter's dimension: a launch could not know its value", x.name);
    }
  }

  // A grid dimension over run-time extents: an expression of constants and extents only (the
  // launcher evaluates it on the host) whose value is the dimension's.
  void run_time_grid() const {
    for (int i = 0; i < 3; ++i) {
      const auto g = k_.grid_expr[static_cast<std::size_t>(i)];
      if (g == none) continue;
      if (g < 0 || g >= static_cast<ExprId>(k_.exprs.size())) fail("grid dimension {} is expression {}, which does not exist", i, g);
      if (i >= k_.grid_rank) fail("grid dimension {} has an expression, but the grid has rank {}", i, k_.grid_rank);
      const auto v = eval_on_host(k_, g);
      if (v.refused)
        fail("grid dimension {} reads {}: a grid is computed on the host from constants and run-time extents only", i, expr_op_name(v.refused->op));
      if (!v.value) fail<ConfigError>("grid dimension {} divides by zero for {}", i, extent_values());
      if (*v.value != k_.grid[static_cast<std::size_t>(i)])
        fail("grid dimension {} is {}, but its expression gives {} for {}", i, k_.grid[static_cast<std::size_t>(i)], *v.value, extent_values());
    }
  }
  std::string extent_values() const {
    std::vector<std::string> v;
    for (auto const& x : k_.extents) v.push_back(fmt::format("{}={}", x.name, x.value));
    return fmt::format("{}", fmt::join(v, ", "));
  }

  void alloc(std::size_t i) {
    auto const& a = k_.allocs[i];
    if (!valid(a.kind)) fail("allocation {} has unknown kind {}", i, static_cast<int>(a.kind));
    if (!valid(a.dtype)) fail("allocation {} ({}) has unknown dtype {}", i, alloc_kind_name(a.kind), static_cast<int>(a.dtype));
    if (a.dtype == DType::pred) fail("allocation {} ({}) has dtype pred, a register mask with no memory layout (store cast<i32>(mask))", i, alloc_kind_name(a.kind));
    const char* kind = alloc_kind_name(a.kind);
    if (a.shape.empty() || a.shape.size() > static_cast<std::size_t>(max_alloc_rank))
      fail("allocation {} ({}) has rank {}, expected 1 to {}", i, kind, a.shape.size(), max_alloc_rank);
    for (auto e : a.shape)
      if (e < 1) fail("allocation {} ({}) has shape ({}): every extent must be at least 1", i, kind, fmt::join(a.shape, ", "));
    // Any allocation that is not tiny fails the SMEM / TMEM / register limits below; bounding
    // each one here keeps every later size computation far from overflow.
    const auto n = checked_product(a.shape, 8);
    if (!n || *n > max_gmem_bytes) fail("allocation {} ({}) of shape ({}) is too large", i, kind, fmt::join(a.shape, ", "));
    const bool is_barrier = a.kind == AllocKind::barrier || a.kind == AllocKind::cluster_barrier;
    // Fields that do not apply to a kind must be empty: they are printed and hashed, and a
    // backend must never meet a combination no front end can make.
    if (is_barrier && a.dtype != DType{}) fail("barrier allocation {} has dtype {}, but barriers are untyped", i, dtype_name(a.dtype));
    if (a.kind != AllocKind::smem && (!a.tiling.empty() || a.swizzle != 0))
      fail("allocation {} ({}) has a tiling or swizzle, which only SMEM allocations have", i, kind);
    if (!is_barrier && (a.arrivals != 0 || a.orders_tensor_core))
      fail("allocation {} ({}) has arrivals or orders_tensor_core, which only barriers have", i, kind);
    if (a.kind != AllocKind::cluster_barrier && !a.collective_axes.empty())
      fail("allocation {} ({}) has collective axes, which only cluster barriers have", i, kind);
    if (is_barrier) {
      if (a.arrivals < 1) fail("Num arrivals must be at least 1, but got {} (allocation {})", a.arrivals, i);
      for (int ax : a.collective_axes)
        if (ax < 0 || ax >= k_.cluster_rank)
          fail("cluster barrier {} uses cluster axis {}, but the kernel's cluster has {} dimensions", i, ax, k_.cluster_rank);
      if (!distinct(a.collective_axes)) fail("cluster barrier {} names a collective axis twice: ({})", i, fmt::join(a.collective_axes, ", "));
      if (a.kind == AllocKind::cluster_barrier && a.collective_axes.empty()) fail("cluster barrier {} has no collective axes", i);
      // Arrivals per phase, from every peer: an mbarrier counts at most 2^20 - 1.
      std::int64_t peers = 1;
      for (int ax : a.collective_axes) peers *= k_.cluster[ax];
      if (a.arrivals * peers > (std::int64_t{1} << 20) - 1)
        fail("barrier allocation {} expects {} arrivals per phase, beyond the mbarrier's limit of {}", i, a.arrivals * peers, (1 << 20) - 1);
    }
    if (a.kind == AllocKind::smem) {
      if (a.tiling.size() > a.shape.size()) fail("allocation {}: tiling ({}) has more dimensions than the shape ({})", i, fmt::join(a.tiling, ", "), fmt::join(a.shape, ", "));
      const auto lead = a.shape.size() - a.tiling.size();
      for (std::size_t d = 0; d < a.tiling.size(); ++d)
        if (a.tiling[d] < 1 || a.shape[lead + d] % a.tiling[d] != 0)
          fail("allocation {}: tiling ({}) must divide the trailing dimensions of the shape ({})", i, fmt::join(a.tiling, ", "), fmt::join(a.shape, ", "));
    }
    if (a.kind == AllocKind::smem && a.swizzle != 0) {
      if (a.swizzle != 32 && a.swizzle != 64 && a.swizzle != 128) fail("allocation {}: swizzle must be 32, 64 or 128 bytes, but got {}", i, a.swizzle);
      const auto trailing = a.tiling.empty() ? a.shape.back() : a.tiling.back();
      if (trailing * dtype_bits(a.dtype) / 8 != a.swizzle)
        fail("allocation {}: swizzle = {} bytes with dtype {} needs a trailing dimension of {} elements, but got {}", i, a.swizzle,
             dtype_name(a.dtype), a.swizzle * 8 / dtype_bits(a.dtype), trailing);
    }
    if (a.kind == AllocKind::tmem) {
      if (k_.target != Target::sm_100a) fail<ConfigError>("TMEM exists on Blackwell only, but the kernel targets {}", target_name(k_.target));
      if (a.shape.size() != 2 && a.shape.size() != 3)
        fail("TMEM allocation {} has rank {}: TMEM is (lanes, columns), or a ring of them (stages, lanes, columns)", i, a.shape.size());
      if (a.shape.size() == 3 && (a.shape[0] < 1 || a.shape[1] != 128))
        fail("TMEM ring {} has shape ({}): a ring is (stages >= 1, 128 lanes, columns)", i, fmt::join(a.shape, ", "));
    }
  }

  // Names the user gave (front-end names are checked while compiling; hand-built IR is not).
  // They are printed in diagnostics and generated code beside parameter names.
  void alloc_name_unique(std::size_t i) {
    if (i >= k_.debug.alloc_names.size() || k_.debug.alloc_names[i].empty()) return;
    auto const& n = k_.debug.alloc_names[i];
    if (!is_identifier(n)) fail("allocation {} is named '{}', which is not a C identifier", i, n);
    for (std::size_t j = 0; j < i; ++j)
      if (j < k_.debug.alloc_names.size() && k_.debug.alloc_names[j] == n) {
        const auto lj = alloc_where(k_, static_cast<int>(j));
        fail("two declarations are named '{}': {} {}{} and {} {} (names must be unique in a kernel)", n, alloc_kind_name(k_.allocs[j].kind),
             j, lj.empty() ? "" : " at " + lj, alloc_kind_name(k_.allocs[i].kind), i);
      }
    for (auto const& p : k_.params)
      if (p.name == n) fail("allocation {} is named '{}', like a parameter of the kernel (names must be unique in a kernel)", i, n);
    for (std::size_t j = 0; j < k_.allocs.size(); ++j)
      if (j != i && numbered_like(n, j))
        fail("allocation {} is named '{}', the name allocation {} is printed under (choose another name)", i, n, j);
  }
  bool numbered_like(std::string const& n, std::size_t j) const {
    if (j < k_.debug.alloc_names.size() && !k_.debug.alloc_names[j].empty()) return false;
    return alloc_name(k_, static_cast<int>(j)) == n;
  }

  // ---- arena entries, each on its own -----------------------------------------------------------
  // The statements that count a semaphore (its refs[0]): signal, wait and the value-returning atomics.
  static bool counts_semaphore(StmtOp op) { return op == StmtOp::semaphore_signal || op == StmtOp::semaphore_wait || op == StmtOp::atomic_fetch; }

  // A semaphore array is only signalled and waited on: a load, store or copy of it would race the
  // atomics that count it (and its zero at launch is the launcher's, not an input).
  void semaphores_only_counted() const {
    std::vector<char> counted(k_.params.size(), 0);
    for (auto const& x : k_.stmts)
      if (counts_semaphore(x.op)) counted[static_cast<std::size_t>(k_.refs[x.refs[0]].id)] = 1;
    auto check = [&](RefId r, StmtId s) {
      if (r == none || k_.refs[r].base != RefBase::param || !counted[static_cast<std::size_t>(k_.refs[r].id)]) return;
      if (s == none) fail("a tile value reads '{}', a semaphore array: its counters are only signalled and waited on", k_.params[k_.refs[r].id].name);
      fail_at(s, "reads or writes '{}', a semaphore array: its counters are only signalled, waited on and changed by atomics (semaphore_signal, "
              "semaphore_wait, fetch_add, ...)", k_.params[k_.refs[r].id].name);
    };
    for (std::size_t i = 0; i < k_.stmts.size(); ++i) {
      auto const& x = k_.stmts[i];
      for (std::size_t j = counts_semaphore(x.op) ? 1 : 0; j < x.refs.size(); ++j) check(x.refs[j], static_cast<StmtId>(i));
    }
    for (std::size_t i = 0; i < k_.values.size(); ++i) check(k_.values[i].ref, value_user_[i]);
  }

  // An index table (x.at(i)) is read as if it were a constant: every backend may read it at any
  // time and as often as it likes (the generated code through the read-only cache), which is
  // exact only if nothing in the kernel writes it.
  void index_tables_read_only() const {
    std::vector<char> table(k_.params.size(), 0);
    for (auto const& e : k_.exprs)
      if (e.op == ExprOp::load) table[static_cast<std::size_t>(e.value)] = 1;
    for (std::size_t i = 0; i < k_.stmts.size(); ++i) {
      auto const& x = k_.stmts[i];
      const RefId w = x.op == StmtOp::store || counts_semaphore(x.op) ? x.refs[0]
                      : x.op == StmtOp::copy_smem_to_gmem                                                          ? x.refs[1]
                                                                                                                   : none;
      if (x.op == StmtOp::copy_smem_to_gmem && k_.refs[w].windowed())
        fail_at(static_cast<StmtId>(i), "stores a TMA box through a window of '{}' (x.rows(lo, hi)): the tensor map knows only the whole "
                "array, so the box would write the rows after the window too (store the tile with a masked generic store: "
                "store(x.rows(lo, hi).tile(shape, masked(), ...), value))", k_.params[k_.refs[w].id].name);
      if (counts_semaphore(x.op) && k_.refs[w].windowed())
        fail_at(static_cast<StmtId>(i), "counts a semaphore of '{}' through a window of rows: address the counter directly", k_.params[k_.refs[w].id].name);
      if (w != none && k_.refs[w].base == RefBase::param && table[static_cast<std::size_t>(k_.refs[w].id)])
        fail_at(static_cast<StmtId>(i), "writes '{}', which x.at(i) reads as an index table: an index table is an input the kernel never writes",
                k_.params[k_.refs[w].id].name);
    }
  }

  // The first statement (in arena order) that uses each entry, directly or through others; for
  // messages only, so ids out of range are skipped here and reported by the checks.
  void find_users() {
    expr_user_.assign(k_.exprs.size(), none);
    ref_user_.assign(k_.refs.size(), none);
    value_user_.assign(k_.values.size(), none);
    auto mark = [](std::vector<StmtId>& users, std::int64_t id, StmtId s) {
      if (s != none && id >= 0 && id < static_cast<std::int64_t>(users.size()) && users[id] == none) users[id] = s;
    };
    for (std::size_t i = 0; i < k_.stmts.size(); ++i) {
      auto const& x = k_.stmts[i];
      const auto s = static_cast<StmtId>(i);
      mark(expr_user_, x.e0, s);
      mark(expr_user_, x.e1, s);
      for (auto r : x.refs) mark(ref_user_, r, s);
      mark(value_user_, x.value, s);
    }
    for (std::size_t i = k_.values.size(); i-- > 0;) {  // parents come after their operands
      auto const& v = k_.values[i];
      mark(value_user_, v.a, value_user_[i]);
      mark(value_user_, v.b, value_user_[i]);
      mark(value_user_, v.c, value_user_[i]);
      mark(expr_user_, v.index, value_user_[i]);
      mark(ref_user_, v.ref, value_user_[i]);
    }
    for (std::size_t i = 0; i < k_.refs.size(); ++i) {
      for (auto e : k_.refs[i].index) mark(expr_user_, e, ref_user_[i]);
      for (auto e : k_.refs[i].block) mark(expr_user_, e, ref_user_[i]);
      mark(expr_user_, k_.refs[i].row_lo, ref_user_[i]);
      mark(expr_user_, k_.refs[i].row_hi, ref_user_[i]);
    }
    for (std::size_t i = k_.exprs.size(); i-- > 0;) {
      mark(expr_user_, k_.exprs[i].a, expr_user_[i]);
      mark(expr_user_, k_.exprs[i].b, expr_user_[i]);
    }
  }

  void expr(ExprId id) {
    auto const& e = k_.exprs[id];
    if (!valid(e.op)) fail("index expression {} has unknown op {}", id, static_cast<int>(e.op));
    const bool binary = expr_is_binary(e.op), unary = expr_is_unary(e.op);
    auto child = [&](ExprId c) {
      if (c < 0 || c >= id) fail("index expression {} ({}) refers to expression {}, which is not defined before it", id, expr_op_name(e.op), c);
    };
    if (binary || unary) child(e.a);
    else if (e.a != none) fail("index expression {} ({}) has an operand, but takes none", id, expr_op_name(e.op));
    if (binary) child(e.b);
    else if (e.b != none) fail("index expression {} ({}) has a second operand, but takes {}", id, expr_op_name(e.op), unary ? "one" : "none");
    switch (e.op) {
      case ExprOp::constant: break;
      case ExprOp::var:
        // A variable past num_vars is reported where it is used (lowering numbers unbound
        // variables that way), or after the walk if nothing uses it.
        if (e.value < 0 || e.value > std::numeric_limits<std::int32_t>::max()) fail("index expression {} reads variable v{}, which cannot exist", id, e.value);
        expr_vars_[id] = {static_cast<std::int32_t>(e.value)};
        break;
      case ExprOp::program_id:
        if (e.value < 0 || e.value >= k_.grid_rank) fail("program_id({}) but the grid has {} dimensions", e.value, k_.grid_rank);
        break;
      case ExprOp::cluster_idx:
        if (e.value < 0 || e.value >= std::max(1, k_.cluster_rank)) fail("cluster_idx({}) but the cluster has {} dimensions", e.value, k_.cluster_rank);
        break;
      case ExprOp::extent:
        if (e.value < 0 || e.value >= static_cast<std::int64_t>(k_.extents.size()))
          fail("index expression {} reads run-time extent {}, but the kernel has {}", id, e.value, k_.extents.size());
        break;
      case ExprOp::clc_result: {  // a response: 4 u32 per row of an SMEM allocation (clc_response); the row read is checked at run time
        const auto alloc = e.value / 4;
        if (e.value < 0 || alloc >= static_cast<std::int64_t>(k_.allocs.size()))
          fail("index expression {} reads a cluster launch control response of allocation {}, which does not exist", id, alloc);
        auto const& a = k_.allocs[static_cast<std::size_t>(alloc)];
        if (a.kind != AllocKind::smem || a.dtype != DType::u32 || a.shape.empty() || a.shape.size() > 2 || a.shape.back() != 4 || a.swizzle != 0 ||
            !a.tiling.empty())
          fail("index expression {} reads a cluster launch control response from {} ({} [{}]), but a response is a row of 4 u32 of an "
               "unswizzled SMEM allocation of rank 1 or 2", id, alloc_name(k_, static_cast<int>(alloc)), dtype_name(a.dtype), fmt::join(a.shape, ", "));
        if (k_.target != Target::sm_100a)
          fail<ConfigError>("cluster launch control (clusterlaunchcontrol.query_cancel) is a Blackwell instruction, but the kernel targets {}",
                            target_name(k_.target));
        break;
      }
      case ExprOp::fetched: {  // an atomic's slot; the element read is checked at run time
        if (e.value < 0 || e.value >= static_cast<std::int64_t>(k_.allocs.size()))
          fail("index expression {} reads an atomic's slot in allocation {}, which does not exist", id, e.value);
        auto const& a = k_.allocs[static_cast<std::size_t>(e.value)];
        if (!atomic_slot_alloc(a))
          fail("index expression {} reads an atomic's slot in {} ({} [{}]), but a slot is one i32 of an unswizzled SMEM allocation of shape "
               "(stages, 1) or (1)", id, alloc_name(k_, static_cast<int>(e.value)), dtype_name(a.dtype), fmt::join(a.shape, ", "));
        break;
      }
      case ExprOp::load: {  // an index table: which parameters may be one is checked with the statements
        if (e.value < 0 || e.value >= static_cast<std::int64_t>(k_.params.size()))
          fail("index expression {} reads parameter {}, which does not exist", id, e.value);
        auto const& p = k_.params[static_cast<std::size_t>(e.value)];
        if (p.shape.size() != 1 || !dtype_is_index(p.dtype) || p.workspace)
          fail("{}.at(i) reads an index from '{}', which is {}: an index table is a rank-1 i32 or u32 input parameter", p.name, p.name,
               p.workspace ? "a workspace" : fmt::format("{} of rank {}", dtype_name(p.dtype), p.shape.size()));
        break;
      }
      default:
        if (e.value != 0) fail("index expression {} ({}) carries the value {}, which it does not use", id, expr_op_name(e.op), e.value);
    }
    std::int64_t size = 1;
    int depth = 1;
    for (ExprId c : {e.a, e.b}) {
      if (c == none) continue;
      size += expr_size_[c];
      depth = std::max(depth, expr_depth_[c] + 1);
      expr_vars_[id] = merge(expr_vars_[id], expr_vars_[c]);
    }
    expr_size_[id] = std::min(size, max_tree_nodes + 1);  // saturate: sizes of shared DAGs grow exponentially
    expr_depth_[id] = depth;
    if (expr_size_[id] > max_tree_nodes || depth > max_tree_depth)
      fail("index expression {} expands to more than {} nodes or {} levels", id, max_tree_nodes, max_tree_depth);
    // Only variables of enclosing loops may be read, and loops nest at most max_nesting deep.
    if (expr_vars_[id].size() > static_cast<std::size_t>(max_nesting))
      fail("index expression {} reads {} loop variables, more than loops can nest", id, expr_vars_[id].size());
  }

  void expr_operand(ExprId id, const char* what, std::size_t ref) const {
    if (id < 0 || id >= static_cast<ExprId>(k_.exprs.size()))
      fail("memory reference {} has {} expression {}, which does not exist", ref, what, id);
  }

  void ref(RefId id) {
    auto const& r = k_.refs[id];
    if (!valid(r.base)) fail("memory reference {} has unknown base {}", id, static_cast<int>(r.base));
    for (auto i : r.index) expr_operand(i, "an index", static_cast<std::size_t>(id));
    for (auto b : r.block) expr_operand(b, "a block coordinate", static_cast<std::size_t>(id));
    for (auto i : r.index) ref_vars_[id] = merge(ref_vars_[id], expr_vars_[i]);
    for (auto b : r.block) ref_vars_[id] = merge(ref_vars_[id], expr_vars_[b]);
    if (r.row_lo != none || r.row_hi != none) {  // a window: both bounds, on a GMEM block
      expr_operand(r.row_lo, "a window start", static_cast<std::size_t>(id));
      expr_operand(r.row_hi, "a window end", static_cast<std::size_t>(id));
      ref_vars_[id] = merge(merge(ref_vars_[id], expr_vars_[r.row_lo]), expr_vars_[r.row_hi]);
      if (r.base != RefBase::param) fail("memory reference {} has a window of rows, which only GMEM parameters have", id);
      if (!r.stride.empty())
        fail("memory reference {}: a strided block of parameter '{}' cannot lie in a window of rows (x.rows(lo, hi))", id, k_.params[r.id].name);
    }
    if (r.base == RefBase::param) {
      if (r.id < 0 || r.id >= static_cast<int>(k_.params.size())) fail("memory reference {} refers to parameter {}, which does not exist", id, r.id);
      auto const& p = k_.params[r.id];
      if (!r.index.empty()) fail("memory reference {}: parameter '{}' is addressed by blocks, not indexed", id, p.name);
      if (r.block.size() != p.shape.size() || r.shape.size() != p.shape.size())
        fail("memory reference {}: a block of parameter '{}' (rank {}) needs {} coordinates and extents, got {} and {}", id, p.name,
             p.shape.size(), p.shape.size(), r.block.size(), r.shape.size());
      // A block may overhang its array's end: TMA fills the outside on loads and drops it on
      // stores (generic loads and stores must tile it exactly unless masked: whole_blocks). A
      // TMA box must fit in the array; a masked tile may be larger (a 256-wide row tile of a
      // 100-column array), each of its elements is predicated.
      if (r.fill) {
        if (!r.stride.empty()) fail("memory reference {}: a block of parameter '{}' is both strided (a TMA traversal) and masked (generic access)", id, p.name);
        // Floats: rounded to the dtype as a stored element would be (infinities and NaN too);
        // integers: a value of the dtype exactly.
        const double f = *r.fill;
        const auto [lo, hi] = range_of(p.dtype);
        if (dtype_is_float(p.dtype) ? std::isfinite(f) && std::abs(f) > static_cast<double>(std::numeric_limits<float>::max())
                                    : !(f == std::trunc(f) && f >= lo && f <= hi))
          fail<ConfigError>("memory reference {}: the fill {} of a masked tile of parameter '{}' is not a value of its dtype {}", id, f, p.name,
                            dtype_name(p.dtype));
      }
      for (std::size_t d = 0; d < p.shape.size(); ++d)
        if (r.shape[d] < 1 || (!r.fill && r.shape[d] > p.shape[d]))
          fail<ConfigError>("memory reference {}: the block shape ({}) is larger than the shape ({}) of parameter '{}' (a TMA box must fit in the array; "
                            "a generic tile larger than it must be masked, x.tile(shape, masked(fill), ...))", id, fmt::join(r.shape, ", "),
               fmt::join(p.shape, ", "), p.name);
      if (!r.stride.empty()) {  // a strided block (TMA elementStrides): the front end's rules, for IR built by hand
        if (r.stride.size() != p.shape.size())
          fail("memory reference {}: a strided block of parameter '{}' (rank {}) needs {} element strides, got {}", id, p.name, p.shape.size(),
               p.shape.size(), r.stride.size());
        for (std::size_t d = 0; d < r.stride.size(); ++d)
          if (r.stride[d] < 1 || r.stride[d] > max_tma_element_stride)
            fail("memory reference {}: TMA element strides are 1 to {}, but the strides ({}) have {} in dimension {}", id, max_tma_element_stride,
                 fmt::join(r.stride, ", "), r.stride[d], d);
        if (r.stride.back() != 1)
          fail("memory reference {}: TMA does not stride the innermost dimension, but the strides ({}) end in {}", id, fmt::join(r.stride, ", "),
               r.stride.back());
        for (std::size_t d = 0; d < p.shape.size(); ++d)
          if (r.shape[d] * r.stride[d] > p.shape[d])
            fail<ConfigError>("memory reference {}: the footprint ({}) of the block ({}) with element strides ({}) is larger than the shape ({}) of parameter '{}'",
                              id, r.shape[d] * r.stride[d], fmt::join(r.shape, ", "), fmt::join(r.stride, ", "), fmt::join(p.shape, ", "), p.name);
      }
      return;
    }
    if (!r.stride.empty()) fail("memory reference {}: element strides ({}) belong to GMEM blocks, not to allocation {}", id, fmt::join(r.stride, ", "), r.id);
    if (r.fill) fail("memory reference {}: a fill ({}) belongs to masked GMEM tiles, not to allocation {}", id, *r.fill, r.id);
    if (r.id < 0 || r.id >= static_cast<int>(k_.allocs.size())) fail("memory reference {} refers to allocation {}, which does not exist", id, r.id);
    auto const& a = k_.allocs[r.id];
    // `block` of an allocation's reference is a sub-view's origin (SMEM, and TMEM columns: slice<1>
    // of a (lanes, columns) view, every lane): one offset per dimension left.
    if (!r.block.empty() && a.kind != AllocKind::smem && a.kind != AllocKind::tmem)
      fail("memory reference {}: allocation {} ({}) is indexed, not addressed by blocks (only SMEM and TMEM views have sub-views)", id, r.id,
           alloc_kind_name(a.kind));
    if (!r.block.empty() && a.kind == AllocKind::tmem) {
      auto const& lane = k_.exprs[r.block[0]];
      if (r.block.size() != 2 || lane.op != ExprOp::constant || lane.value != 0 || r.shape.size() != 2 || r.shape[0] != a.shape[a.shape.size() - 2])
        fail("memory reference {}: a sub-view of TMEM allocation {} cuts its columns only (slice<1>: every lane, from lane 0)", id, r.id);
    }
    if (r.index.size() > a.shape.size()) fail("memory reference {} indexes allocation {} with {} indices, but it has rank {}", id, r.id, r.index.size(), a.shape.size());
    // A view's shape is what indexing leaves; a barrier reference keeps its array's shape.
    const bool is_barrier = a.kind == AllocKind::barrier || a.kind == AllocKind::cluster_barrier;
    std::vector<std::int64_t> rest(a.shape.begin() + static_cast<std::ptrdiff_t>(is_barrier ? 0 : r.index.size()), a.shape.end());
    if (!r.block.empty()) {
      if (r.block.size() != rest.size() || r.shape.size() != rest.size())
        fail("memory reference {}: a sub-view of allocation {} needs one origin and one extent per dimension its indexing leaves ({}), got {} and {}", id,
             r.id, rest.size(), r.block.size(), r.shape.size());
      for (std::size_t d = 0; d < rest.size(); ++d) {
        if (r.shape[d] < 1 || r.shape[d] > rest[d])
          fail("memory reference {}: a sub-view of allocation {} claims shape ({}), which does not fit the view ({}) it cuts", id, r.id,
               fmt::join(r.shape, ", "), fmt::join(rest, ", "));
        auto const& e = k_.exprs[r.block[d]];
        if (e.op == ExprOp::constant && (e.value < 0 || e.value > rest[d] - r.shape[d]))
          fail("memory reference {}: SMEM offset is out of bounds: a sub-view of extent {} from {} in a dimension of {}", id, r.shape[d], e.value, rest[d]);
      }
    } else if (rest != r.shape) {
      fail("memory reference {}: a view of allocation {} claims shape ({}), but indexing its shape ({}) leaves ({})", id, r.id,
           fmt::join(r.shape, ", "), fmt::join(a.shape, ", "), fmt::join(rest, ", "));
    }
    for (std::size_t d = 0; d < r.index.size(); ++d) {
      auto const& e = k_.exprs[r.index[d]];
      if (e.op == ExprOp::constant && (e.value < 0 || e.value >= a.shape[d]))
        fail("memory reference {}: {} offset is out of bounds: offset = {} in a dimension of {}", id,
             a.kind == AllocKind::smem ? "SMEM" : is_barrier ? "Barrier" : alloc_kind_name(a.kind),
             e.value, a.shape[d]);
    }
  }

  // Nodes of a reference's index expressions when expanded (each below max_tree_nodes).
  std::int64_t ref_size(Ref const& r) const {
    std::int64_t n = 0;
    for (auto i : r.index) n += expr_size_[i];
    for (auto b : r.block) n += expr_size_[b];
    return n;
  }

  bool reads_tmem(ValueId id) const {
    auto const& v = k_.values[static_cast<std::size_t>(id)];
    if (v.op == ValueOp::load_tmem) return true;
    for (auto c : {v.a, v.b, v.c})
      if (c != none && reads_tmem(c)) return true;
    return false;
  }
  DType ref_dtype(Ref const& r) const { return r.base == RefBase::param ? k_.params[r.id].dtype : k_.allocs[r.id].dtype; }
  AllocKind ref_kind(Ref const& r) const { return k_.allocs[r.id].kind; }

  // A generic load or store of a GMEM block has no bounds check on the GPU (the addresses are
  // block * shape): its blocks must tile the parameter exactly. Only TMA copies may overhang.
  // `s`: the statement to name (a store); a load's value names its user itself (context_).
  void whole_blocks(RefId id, const char* what, StmtId s = none) const {
    auto const& r = k_.refs[id];
    if (r.base != RefBase::param || r.fill) return;  // a masked tile predicates every element
    auto const& p = k_.params[r.id];
    for (std::size_t d = 0; d < p.shape.size() && d < r.shape.size(); ++d)
      if (p.shape[d] % r.shape[d] != 0) {
        const auto msg = fmt::format("the block shape ({}) does not divide the shape ({}) of parameter '{}' ({} has no bounds check: only TMA "
                                     "copies and masked tiles, x.tile(shape, masked(fill), ...), may overhang the array)", fmt::join(r.shape, ", "), fmt::join(p.shape, ", "), p.name, what);
        if (s != none) fail_at<ConfigError>(s, "{}", msg);
        fail<ConfigError>("memory reference {}: {}", id, msg);
      }
  }

  void value(ValueId id) {
    auto const& v = k_.values[id];
    if (!valid(v.op)) fail("tile value {} has unknown op {}", id, static_cast<int>(v.op));
    const auto name = value_op_name(v.op);
    if (!valid(v.dtype)) fail("tile value {} ({}) has unknown dtype {}", id, name, static_cast<int>(v.dtype));
    if (dtype_is_packed_code(v.dtype))
      fail("tile value {} ({}) is {}, a storage type (packed FP4, FP6 or NVFP4 scale codes): TMA and tcgen05_copy_scales move it, "
           "tcgen05_mma reads it; no tile holds it",
           id, name, dtype_name(v.dtype));
    // Rank 0 is a single element: a store to a fully indexed SMEM view.
    if (v.shape.size() > static_cast<std::size_t>(max_alloc_rank))
      fail("tile value {} ({}) has rank {}, expected at most {}", id, name, v.shape.size(), max_alloc_rank);
    if (auto n = checked_product(v.shape, 8); !n || *n > max_gmem_bytes)
      fail("tile value {} ({}) has shape ({}): every extent must be at least 1, and the tile not too large", id, name, fmt::join(v.shape, ", "));
    const bool leaf = v.op == ValueOp::load || v.op == ValueOp::load_tmem || v.op == ValueOp::scalar || v.op == ValueOp::iota || v.op == ValueOp::index;
    std::int64_t leaf_size = 1;  // a load's expansion includes its index expressions
    const bool binary = value_is_binary(v.op);
    auto sub = [&](ValueId c) -> Value const& {
      if (c < 0 || c >= id) fail("tile value {} ({}) refers to value {}, which is not defined before it", id, name, c);
      return k_.values[c];
    };
    const bool compare = value_is_compare(v.op), ternary = value_is_ternary(v.op);
    if (leaf && (v.a != none || v.b != none || v.c != none)) fail("tile value {} ({}) has operands, but takes none", id, name);
    if (!leaf && !binary && !compare && !ternary && v.b != none) fail("tile value {} ({}) has a second operand, but takes one", id, name);
    if (!ternary && v.c != none) fail("tile value {} ({}) has a third operand, but takes at most two", id, name);
    // Masks are 0 or 1: only comparisons make them, select reads them, cast turns them into numbers.
    if (v.dtype == DType::pred && !compare && v.op != ValueOp::scalar && v.op != ValueOp::cast && v.op != ValueOp::broadcast &&
        !value_is_view(v.op))
      fail("tile value {} ({}) computes a pred tile, but only comparisons, casts, fills, broadcasts and views give masks", id, name);
    if ((v.op == ValueOp::index) != (v.index != none)) fail("tile value {} ({}) {} an index expression", id, name, v.index == none ? "needs" : "has");
    if ((v.op == ValueOp::load || v.op == ValueOp::load_tmem) != (v.ref != none))
      fail("tile value {} ({}) {} a memory reference", id, name, v.ref == none ? "needs" : "has");
    if (v.op != ValueOp::scalar && !value_has_axis(v.op) && !value_is_view(v.op) && v.scalar != 0) fail("tile value {} ({}) carries a scalar, which it does not use", id, name);
    // An axis indexes the larger of the operand's and the result's shapes (the operand's for a
    // reduction, the result's for broadcast and iota).
    auto axis_of = [&](std::size_t rank) -> std::size_t {
      if (!(v.scalar >= 0 && v.scalar < static_cast<double>(rank)) || v.scalar != std::floor(v.scalar))
        fail("tile value {} ({}) has axis {}, expected an integer in [0, {})", id, name, v.scalar, rank);
      return static_cast<std::size_t>(v.scalar);
    };
    auto without = [](std::vector<std::int64_t> s, std::size_t axis) {
      s.erase(s.begin() + static_cast<std::ptrdiff_t>(axis));
      return s;
    };
    if (v.op == ValueOp::load || v.op == ValueOp::load_tmem) {
      if (v.ref < 0 || v.ref >= static_cast<RefId>(k_.refs.size())) fail("tile value {} ({}) reads memory reference {}, which does not exist", id, name, v.ref);
      auto const& r = k_.refs[v.ref];
      if (v.op == ValueOp::load_tmem && (r.base != RefBase::alloc || ref_kind(r) != AllocKind::tmem))
        fail("tile value {}: async_load_tmem reads a TMEM reference", id);
      if (v.op == ValueOp::load && r.base == RefBase::alloc && ref_kind(r) != AllocKind::smem && ref_kind(r) != AllocKind::accumulator)
        fail("tile value {} loads from allocation {}, a {}: only SMEM, GMEM and accumulators are loaded", id, r.id, alloc_kind_name(ref_kind(r)));
      if (ref_dtype(r) != v.dtype || r.shape != v.shape)
        fail("tile value {} loads {} ({}) from memory of {} ({})", id, dtype_name(v.dtype), fmt::join(v.shape, ", "), dtype_name(ref_dtype(r)),
             fmt::join(r.shape, ", "));
      if (!r.stride.empty())
        fail("tile value {} loads a strided GMEM block ({}): element strides are a TMA traversal, only copy_gmem_to_smem takes them", id,
             fmt::join(r.stride, ", "));
      if (v.op == ValueOp::load) whole_blocks(v.ref, "a generic load");
      value_vars_[id] = ref_vars_[v.ref];
      leaf_size = 1 + ref_size(r);
    } else if (v.op == ValueOp::scalar) {
      // Backends convert the scalar (any C++ arithmetic value the user wrote, as a double) to
      // f32 or to a 64-bit integer before applying the tile's type; outside those ranges the
      // conversion is undefined. (Rounding and wrapping inside them are the tile type's own.)
      if (dtype_is_float(v.dtype)) {
        if (std::isfinite(v.scalar) && std::abs(v.scalar) > static_cast<double>(std::numeric_limits<float>::max()))
          fail("tile value {}: the scalar {} is outside the range of f32", id, v.scalar);
      } else if (!(v.scalar >= -0x1p63 && v.scalar < 0x1p63)) {
        fail("tile value {}: the scalar {} does not convert to a 64-bit integer", id, v.scalar);
      }
    } else if (v.op == ValueOp::iota) {
      (void)axis_of(v.shape.size());
    } else if (v.op == ValueOp::index) {
      if (v.index < 0 || v.index >= static_cast<ExprId>(k_.exprs.size()))
        fail("tile value {} (index) holds index expression {}, which does not exist", id, v.index);
      value_vars_[id] = expr_vars_[v.index];
      leaf_size = 1 + expr_size_[v.index];
    } else if (compare) {
      auto const& a = sub(v.a);
      auto const& b = sub(v.b);
      if (a.dtype != b.dtype || a.shape != v.shape || b.shape != v.shape || a.dtype == DType::pred)
        fail("tile value {} ({}): Expected a comparison of two non-pred tiles of shape ({}), got {}({}) and {}({})", id, name,
             fmt::join(v.shape, ", "), dtype_name(a.dtype), fmt::join(a.shape, ", "), dtype_name(b.dtype), fmt::join(b.shape, ", "));
      if (v.dtype != DType::pred) fail("tile value {} ({}) is a comparison of dtype {}, expected pred", id, name, dtype_name(v.dtype));
    } else if (ternary) {
      auto const& a = sub(v.a);
      auto const& b = sub(v.b);
      auto const& c = sub(v.c);
      const bool select = v.op == ValueOp::select;
      if ((select ? a.dtype != DType::pred : a.dtype != v.dtype) || b.dtype != v.dtype || c.dtype != v.dtype || a.shape != v.shape ||
          b.shape != v.shape || c.shape != v.shape)
        fail("tile value {} ({}): Expected {} and two {} operands of shape ({}), got {}({}), {}({}) and {}({})", id, name,
             select ? "a pred mask" : "three", dtype_name(v.dtype), fmt::join(v.shape, ", "), dtype_name(a.dtype), fmt::join(a.shape, ", "),
             dtype_name(b.dtype), fmt::join(b.shape, ", "), dtype_name(c.dtype), fmt::join(c.shape, ", "));
      if (v.dtype == DType::pred) fail("tile value {} ({}) of pred tiles: combine masks with comparisons of their casts", id, name);
      if (!select && !dtype_is_float(v.dtype)) fail("tile value {}: fma of an integer tile", id);
    } else if (binary) {
      auto const& a = sub(v.a);
      auto const& b = sub(v.b);
      if (a.dtype != v.dtype || b.dtype != v.dtype || a.shape != v.shape || b.shape != v.shape || v.dtype == DType::pred)
        fail("tile value {} ({}): Expected dtypes and shapes to match (and not pred), got {}({}) and {}({})", id, name, dtype_name(a.dtype),
             fmt::join(a.shape, ", "), dtype_name(b.dtype), fmt::join(b.shape, ", "));
    } else if (value_is_view(v.op)) {
      auto const& a = sub(v.a);
      if (a.dtype != v.dtype) fail("tile value {} ({}) changes the dtype", id, name);
      if (auto d = decode_tile_view(v.op, v.scalar, v.shape, a.shape); !d.view)
        fail("tile value {} ({}, parameter {}) of ({}) as ({}) is no view: {}", id, name, v.scalar, fmt::join(a.shape, ", "),
             fmt::join(v.shape, ", "), d.error);
    } else if (value_is_reduction(v.op) || v.op == ValueOp::broadcast) {
      auto const& a = sub(v.a);
      const bool reduce = value_is_reduction(v.op);
      auto const& wide = reduce ? a.shape : v.shape;
      auto const& narrow = reduce ? v.shape : a.shape;
      if (wide.size() < 2) fail("tile value {} ({}) needs a tile of rank at least 2 on its wide side, got ({})", id, name, fmt::join(wide, ", "));
      if (without(wide, axis_of(wide.size())) != narrow)
        fail("tile value {} ({}<{}>) maps shape ({}) to ({}), which is not that axis removed or inserted", id, name, v.scalar,
             fmt::join(a.shape, ", "), fmt::join(v.shape, ", "));
      if (a.dtype != v.dtype) fail("tile value {} ({}) changes the dtype", id, name);
    } else {
      auto const& a = sub(v.a);
      if (a.shape != v.shape) fail("tile value {} ({}) changes the shape", id, name);
      if (v.op != ValueOp::cast && a.dtype != v.dtype) fail("tile value {} ({}) changes the dtype", id, name);
      if (value_is_math(v.op) && v.op != ValueOp::abs && !dtype_is_float(v.dtype)) fail("tile value {}: {} of an integer tile", id, name);
    }
    std::int64_t size = leaf_size;
    int depth = 1;
    for (ValueId c : {v.a, v.b, v.c}) {
      if (c == none) continue;
      size += value_size_[c];
      depth = std::max(depth, value_depth_[c] + 1);
      value_vars_[id] = merge(value_vars_[id], value_vars_[c]);
    }
    value_size_[id] = std::min(size, max_tree_nodes + 1);
    value_depth_[id] = depth;
    if (value_size_[id] > max_tree_nodes || depth > max_tree_depth)
      fail("tile value {} expands to more than {} nodes or {} levels", id, max_tree_nodes, max_tree_depth);
    if (value_vars_[id].size() > static_cast<std::size_t>(max_nesting))
      fail("tile value {} reads {} loop variables, more than loops can nest", id, value_vars_[id].size());
  }

  // A semaphore operation's counter (refs[0]): the front end builds it from semaphores(name,
  // shape) (memory/semaphore.hpp), one counter of a kernel-owned i32 array.
  void semaphore_counter(StmtId s) const {
    auto const& r = k_.refs[k_.stmts[s].refs[0]];
    if (r.base != RefBase::param) fail_at(s, "takes a scratch allocation, but a semaphore is a counter in GMEM (semaphores(name, shape))");
    auto const& p = k_.params[r.id];
    if (!p.workspace || p.dtype != DType::i32)
      fail_at(s, "takes parameter '{}' ({}{}), but a semaphore is a counter of a kernel-owned i32 array (semaphores(name, shape)), zero at "
              "launch", p.name, p.workspace ? "workspace " : "", dtype_name(p.dtype));
    if (r.block.size() != p.shape.size() || std::any_of(r.shape.begin(), r.shape.end(), [](std::int64_t e) { return e != 1; }))
      fail_at(s, "takes a block of shape ({}) of '{}', but a semaphore operation takes one counter: sem(i, ...) with one index per "
              "dimension", fmt::join(r.shape, ", "), p.name);
  }
  // Where an atomic leaves what its counter held (ops/atomic.hpp): i32 SMEM of shape (R, 1) or (1), unswizzled.
  static bool atomic_slot_alloc(Alloc const& a) {
    return a.kind == AllocKind::smem && a.dtype == DType::i32 && !a.shape.empty() && a.shape.size() <= 2 && a.shape.back() == 1 && a.swizzle == 0 &&
           a.tiling.empty();
  }

  // ---- statements: the fields of each op, then its operands ---------------------------------------
  void stmt_fields(StmtId s) {
    auto const& x = k_.stmts[s];
    if (!valid(x.op)) fail("statement #{} has unknown op {}", s, static_cast<int>(x.op));
    const bool control = x.op == StmtOp::seq || x.op == StmtOp::for_ || x.op == StmtOp::if_;
    if (!control && !x.body.empty()) fail_at(s, "has {} child statements, but takes none", x.body.size());
    if (x.op != StmtOp::for_ && x.var != none) fail_at(s, "binds variable v{}, but only loops bind variables", x.var);
    const bool named = x.op == StmtOp::named_barrier_sync || x.op == StmtOp::named_barrier_arrive;
    const bool semaphore = counts_semaphore(x.op);
    const bool uses_e0 = x.op == StmtOp::for_ || x.op == StmtOp::if_ || x.op == StmtOp::tcgen05_mma || named || semaphore || x.op == StmtOp::break_if ||
                         x.op == StmtOp::tcgen05_cp;  // tcgen05_cp: its column group (optional)
    if (!uses_e0 && x.e0 != none) fail_at(s, "has an index expression ({}), which it does not use", x.e0);
    const bool cas = x.op == StmtOp::atomic_fetch && atomic_code_ok(x.n) && atomic_of(x.n).op == Atomic::cas;
    if (x.op != StmtOp::for_ && !cas && x.e1 != none) fail_at(s, "has a second index expression ({}), which it does not use", x.e1);
    if (x.op == StmtOp::atomic_fetch && !atomic_code_ok(x.n))
      fail_at(s, "carries n = {}, which names no atomic (bits 0-3: add, min, max, exch, cas; 4-5: the memory order; 6: .sys)", x.n);
    const bool uses_value = x.op == StmtOp::store || x.op == StmtOp::wgmma;
    if (!uses_value && x.value != none) fail_at(s, "has a tile value ({}), which it does not use", x.value);
    const bool reduces = x.op == StmtOp::store || x.op == StmtOp::copy_smem_to_gmem;  // n: the ir::Reduce
    const bool uses_n = x.op == StmtOp::wait_group || x.op == StmtOp::wgmma_wait || x.op == StmtOp::tcgen05_mma || x.op == StmtOp::tcgen05_commit_arrive || named ||
                        reduces || x.op == StmtOp::copy_gmem_to_smem || semaphore;  // a load's n: its CTA group (2: the pair leader's barrier); a semaphore op's: its scope
    if (!uses_n && x.n != 0) fail_at(s, "carries n = {}, which it does not use", x.n);
    if (reduces && (x.n < 0 || x.n > static_cast<std::int64_t>(last_reduce)))
      fail_at(s, "reduces with n = {}, which names no reduction (0 none, 1 add, 2 min, 3 max)", x.n);
    if (x.op != StmtOp::wait_group && x.op != StmtOp::tcgen05_mma && x.flag) fail_at(s, "carries a flag, which it does not use");
    if (x.op != StmtOp::copy_gmem_to_smem && !(x.op == StmtOp::tcgen05_commit_arrive && x.n == 2) && !x.axes.empty())
      fail_at(s, "has multicast axes, which only copy_gmem_to_smem and the pair's tcgen05_commit_arrive take");
    if (x.op != StmtOp::wgmma && x.op != StmtOp::tcgen05_mma && x.transpose != 0)
      fail_at(s, "carries transpose bits, which only wgmma and tcgen05_mma take");
    if (x.transpose > 3) fail_at(s, "transpose = {}, but only bits 0 (A) and 1 (B) exist", x.transpose);
    for (auto c : x.body)
      if (c < 0 || c >= static_cast<StmtId>(k_.stmts.size())) fail_at(s, "refers to statement {}, which does not exist", c);
    for (std::size_t i = 0; i < x.refs.size(); ++i) {
      const bool optional = x.op == StmtOp::wgmma && i == 1;  // A from registers
      if ((x.refs[i] != none || !optional) && (x.refs[i] < 0 || x.refs[i] >= static_cast<RefId>(k_.refs.size())))
        fail_at(s, "refers to memory reference {}, which does not exist", x.refs[i]);
      // Element strides are what TMA loads traverse: a plain (non-multicast) load's source only.
      if (x.refs[i] != none && !k_.refs[x.refs[i]].stride.empty() && !(x.op == StmtOp::copy_gmem_to_smem && i == 0 && x.axes.empty()))
        fail_at(s, "takes a strided GMEM block (element strides ({})), but only a TMA load without multicast (copy_gmem_to_smem) traverses one",
                fmt::join(k_.refs[x.refs[i]].stride, ", "));
      // A fill is what a generic load predicates in; TMA fills and drops by itself: zeros, or
      // NaN where the tensor map asks for it (a TMA load's masked(NAN) source), on loads only.
      if (x.refs[i] != none && k_.refs[x.refs[i]].fill && !(x.op == StmtOp::store && i == 0)) {
        auto const& r = k_.refs[x.refs[i]];
        const double f = *r.fill;
        if (x.op != StmtOp::copy_gmem_to_smem || i != 0)
          fail_at(s, "takes a masked GMEM tile (fill {}), but only generic loads and stores predicate their elements (a TMA copy may overhang "
                  "the array without a mask: use x.block(...))", f);
        auto const& p = k_.params[r.id];
        if (!std::isnan(f) && f != 0.0)
          fail_at<ConfigError>(s, "fills the overhang of its TMA block of parameter '{}' with {}, but TMA fills with zeros or NaN only (the tensor "
                               "map's OOB fill mode): use masked(0.0) or masked(NAN), or a generic load of x.tile(shape, masked({}), ...)", p.name, f, f);
        if (std::isnan(f) && p.dtype != DType::f32 && p.dtype != DType::f16 && p.dtype != DType::bf16)
          fail_at<ConfigError>(s, "asks TMA to fill the overhang of parameter '{}' with NaN, but its dtype {} has no NaN fill (TMA's "
                               "OOB_FILL_NAN_REQUEST_ZERO_FMA is for f32, f16 and bf16 tensor maps)", p.name, dtype_name(p.dtype));
        for (std::size_t d = 0; d < p.shape.size(); ++d)
          if (r.shape[d] > p.shape[d])
            fail_at<ConfigError>(s, "copies a TMA block of shape ({}) from parameter '{}' of shape ({}): a TMA box must fit in the array, "
                                 "masked or not", fmt::join(r.shape, ", "), p.name, fmt::join(p.shape, ", "));
      }
    }
    for (ExprId e : {x.e0, x.e1})
      if (e != none && (e < 0 || e >= static_cast<ExprId>(k_.exprs.size()))) fail_at(s, "refers to index expression {}, which does not exist", e);
    if (x.value != none && (x.value < 0 || x.value >= static_cast<ValueId>(k_.values.size())))
      fail_at(s, "refers to tile value {}, which does not exist", x.value);

    auto need_refs = [&](std::size_t n) {
      if (x.refs.size() != n) fail_at(s, "takes {} memory operands, got {}", n, x.refs.size());
    };
    auto need_expr = [&](ExprId e, const char* what) {
      if (e == none) fail_at(s, "needs {}", what);
    };
    switch (x.op) {
      case StmtOp::seq: need_refs(0); return;
      case StmtOp::for_:
        need_refs(0);
        need_expr(x.e0, "a lower bound");
        need_expr(x.e1, "an upper bound");
        if (x.body.size() != 1) fail_at(s, "a loop has exactly one body, got {}", x.body.size());
        if (x.var < 0 || x.var >= k_.num_vars) fail_at(s, "binds variable v{}, but the kernel has {} variables", x.var, k_.num_vars);
        return;
      case StmtOp::if_:
        need_refs(0);
        need_expr(x.e0, "a condition");
        if (x.body.empty() || x.body.size() > 2) fail_at(s, "has a then and at most one else branch, got {} bodies", x.body.size());
        return;
      case StmtOp::copy_gmem_to_smem:
      case StmtOp::copy_smem_to_gmem: copy(s, x); return;
      case StmtOp::commit_group:
      case StmtOp::commit_smem: need_refs(0); return;
      case StmtOp::wait_group:
        need_refs(0);
        if (x.n < 0 || x.n > 63) fail_at(s, "n must be in [0, 63], got {}", x.n);
        return;
      case StmtOp::named_barrier_sync:
      case StmtOp::named_barrier_arrive: {
        need_refs(0);
        need_expr(x.e0, "a barrier id");
        // The front end checks these statically (ops/named_barrier.hpp); hand-built and decoded
        // IR meets the same rules here, with the same words.
        const std::int64_t total = block_threads(k_);
        if (k_.role_warps.empty() && (x.n <= 0 || x.n % named_barrier_granule != 0 || x.n > total))
          fail_at(s, "counts {} threads, but a named barrier's thread count must be a positive multiple of {} (whole warpgroups take "
                  "part) and at most the kernel's {} threads ({} warpgroups)", x.n, named_barrier_granule, total, k_.roles);
        if (!k_.role_warps.empty() && (x.n <= 0 || x.n % 32 != 0 || x.n > total))
          fail_at(s, "counts {} threads, but a named barrier's thread count must be a positive multiple of 32 (whole warps take part) "
                  "and at most the kernel's {} threads ({} warps)", x.n, total, block_warps(k_));
        if (auto const& e = k_.exprs[x.e0]; e.op == ExprOp::constant && (e.value < 0 || e.value >= max_named_barriers))
          fail_at(s, "uses named barrier id {}, but ids are 0 to {} (hardware ids {} to 15; 0 is __syncthreads and 1 to {} are the "
                  "warpgroups' own barriers)", e.value, max_named_barriers - 1, first_named_barrier, first_named_barrier - 1);
        return;
      }
      case StmtOp::barrier_arrive:
      case StmtOp::barrier_wait:
        need_refs(1);
        barrier_operand(s, x.refs[0]);
        return;
      case StmtOp::break_if:
        need_refs(0);
        need_expr(x.e0, "a condition");
        return;  // that a loop encloses it: tree()
      case StmtOp::try_cancel: {
        need_refs(2);
        if (k_.target != Target::sm_100a)
          fail_at<ConfigError>(s, "cluster launch control (clusterlaunchcontrol.try_cancel) is a Blackwell instruction, but the kernel targets {}",
                               target_name(k_.target));
        clc_response(s, k_.refs[x.refs[0]]);
        barrier_operand(s, x.refs[1]);
        if (k_.allocs[k_.refs[x.refs[1]].id].kind != AllocKind::barrier)
          fail_at(s, "completes on a cluster barrier, but a try_cancel's 16 bytes complete on a barrier of its own CTA");
        return;
      }
      case StmtOp::atomic_fetch: {
        need_refs(2);
        need_expr(x.e0, "an operand");
        if (atomic_of(x.n).op == Atomic::cas) need_expr(x.e1, "the value compare_exchange expects");
        semaphore_counter(s);
        // The slot: one i32 of an unswizzled SMEM allocation (R, 1) or (1) (ops/atomic.hpp).
        auto const& r = k_.refs[x.refs[1]];
        if (r.base != RefBase::alloc) fail_at(s, "writes what the counter held to a parameter, but an atomic's slot is one i32 of SMEM");
        if (!atomic_slot_alloc(k_.allocs[r.id]) || std::any_of(r.shape.begin(), r.shape.end(), [](std::int64_t e) { return e != 1; }))
          fail_at(s, "writes what the counter held to {} ({} [{}]), but an atomic's slot is one i32 of an unswizzled SMEM allocation of shape "
                  "(stages, 1) or (1)", alloc_name(k_, r.id), dtype_name(k_.allocs[r.id].dtype), fmt::join(r.shape, ", "));
        return;
      }
      case StmtOp::semaphore_signal:
      case StmtOp::semaphore_wait: {
        need_refs(1);
        need_expr(x.e0, "a value");
        semaphore_counter(s);
        if (auto const& e = k_.exprs[x.e0]; e.op == ExprOp::constant && !semaphore_value_ok(e.value))
          fail_at(s, "uses the value {}, but a semaphore's value must be 1 to 2^31 - 1 (a signal adds it, a wait takes it)", e.value);
        if (x.n != 0 && x.n != 1) fail_at(s, "has scope code {}, but a semaphore op's scope is 0 (.gpu) or 1 (.sys)", x.n);
        return;
      }
      case StmtOp::store: {
        need_refs(1);
        auto const& r = k_.refs[x.refs[0]];
        if (r.base == RefBase::alloc) alloc_of(s, r, {AllocKind::smem, AllocKind::accumulator, AllocKind::tmem}, "the destination");
        if (x.value == none) fail_at(s, "stores no tile value");
        auto const& v = k_.values[x.value];
        if (r.base == RefBase::alloc && k_.allocs[r.id].kind == AllocKind::tmem) {
          // store_tmem: tcgen05.st of a whole (128, columns) allocation, 16- or 32-bit elements.
          if (k_.target != Target::sm_100a) fail_at<ConfigError>(s, "store_tmem writes TMEM, which exists on Blackwell only, but the kernel targets {}", target_name(k_.target));
          // A whole (lanes, columns) allocation, or one stage d[s] of a ring (stages, lanes, columns).
          const bool ring = k_.allocs[r.id].shape.size() == 3;
          if (!r.block.empty() || r.index.size() != (ring ? 1u : 0u)) fail_at(s, "store_tmem writes a whole TMEM allocation or one stage of a ring, not a view of one");
          if (k_.allocs[r.id].shape.size() != 2 && !ring) fail_at(s, "store_tmem writes a (lanes, columns) TMEM allocation or a stage of a ring (stages, lanes, columns)");
          const int bits = dtype_bits(k_.allocs[r.id].dtype);
          if (bits != 16 && bits != 32)
            fail_at(s, "store_tmem writes 16- or 32-bit elements (two or one to a 32-bit TMEM column), but the TMEM allocation is {}", dtype_name(k_.allocs[r.id].dtype));
        }
        whole_blocks(x.refs[0], "a generic store", s);
        reduction(s, x, r);
        if (v.dtype != ref_dtype(r)) fail_at(s, "Expected dtypes to match but src had type {} and dst had type {}", dtype_name(v.dtype), dtype_name(ref_dtype(r)));
        if (v.shape != r.shape)
          fail_at(s, "Expected shapes to match, but src had shape ({}) and dst had shape ({})", fmt::join(v.shape, ", "), fmt::join(r.shape, ", "));
        return;
      }
      case StmtOp::wgmma:
      case StmtOp::wgmma_commit:
      case StmtOp::wgmma_wait:
        if (k_.target != Target::sm_90a) fail_at<ConfigError>(s, "wgmma is a Hopper instruction, but the kernel targets {}", target_name(k_.target));
        if (x.op == StmtOp::wgmma) {
          need_refs(3);
          alloc_of(s, k_.refs[x.refs[0]], {AllocKind::accumulator}, "the accumulator");
          if (x.refs[1] == none) {
            if (x.value == none) fail_at(s, "takes A from registers, but has no tile value");
          } else {
            if (x.value != none) fail_at(s, "takes A from SMEM and from registers");
            alloc_of(s, k_.refs[x.refs[1]], {AllocKind::smem}, "A");
          }
          alloc_of(s, k_.refs[x.refs[2]], {AllocKind::smem}, "B");
          (void)wgmma::plan_of(k_, x);  // shapes, dtypes and operand layouts the instruction can describe
        } else {
          need_refs(0);
          if (x.op == StmtOp::wgmma_wait && (x.n < 0 || x.n > 7)) fail_at(s, "n must be in [0, 7], got {}", x.n);
        }
        return;
      case StmtOp::tcgen05_mma:
      case StmtOp::tcgen05_commit_arrive:
        if (k_.target != Target::sm_100a) fail_at<ConfigError>(s, "tcgen05 is a Blackwell instruction, but the kernel targets {}", target_name(k_.target));
        if (x.n != 0 && x.n != 2) fail_at(s, "n = {} names no CTA group: 0 is cta_group::1, 2 is cta_group::2", x.n);
        if (x.n == 2 && k_.cluster[0] % 2 != 0)
          fail_at<ConfigError>(s, "a pair MMA (cta_group::2) runs on the two CTAs of a pair, cluster ranks 2p and 2p + 1 along axis 0, but the "
                                  "kernel's cluster has extent {} there (declare cluster(2_c))",
                               k_.cluster[0]);
        // PTX: one .cta_group for every tcgen05 instruction of a kernel.
        if (tc_group_ < 0) tc_group_ = static_cast<int>(x.n);
        else if (tc_group_ != x.n)
          fail_at<ConfigError>(s, "every tcgen05 MMA and commit of a kernel uses one CTA group (PTX: one .cta_group per kernel): this kernel "
                                  "mixes cta_group::2 (tcgen05_mma_2cta, tcgen05_commit_arrive_2cta) with cta_group::1");
        if (x.op == StmtOp::tcgen05_mma) {
          const std::size_t operands = x.flag ? 5 : 3;  // block-scaled (flag): the scales of A and B follow B
          if (x.refs.size() != operands && x.refs.size() != operands + 1)
            fail_at(s, "takes {} or {} memory operands, got {}", operands, operands + 1, x.refs.size());
          alloc_of(s, k_.refs[x.refs[0]], {AllocKind::tmem}, "the accumulator");
          alloc_of(s, k_.refs[x.refs[1]], {AllocKind::smem, AllocKind::tmem}, "A");
          alloc_of(s, k_.refs[x.refs[2]], {AllocKind::smem}, "B");
          // tcgen05 descriptors are built from whole views (backends/*/tcgen05.cpp): a sub-view has no descriptor there yet.
          for (std::size_t i = 1; i < 3; ++i)
            if (!k_.refs[x.refs[i]].block.empty())
              fail_at(s, "{} is a sub-view ({}) of an SMEM view, which tcgen05_mma does not read: pass a whole view (index a stage)", i == 1 ? "A" : "B",
                      fmt::join(k_.refs[x.refs[i]].shape, ", "));
          if (x.flag)
            for (std::size_t i : {3u, 4u}) alloc_of(s, k_.refs[x.refs[i]], {AllocKind::tmem}, i == 3 ? "the scales of A" : "the scales of B");
          if (const auto bar = tcgen05::mma_commit_barrier(x); bar != none) barrier_operand(s, bar, true);
          need_expr(x.e0, "an accumulate condition");
          (void)tcgen05::plan_of(k_, x);  // shapes, dtypes and operand layouts the instruction can describe
        } else {
          need_refs(1);
          barrier_operand(s, x.refs[0], true);
          // The pair commit's other pairs: axis 0 is the pair's own, which it always reaches.
          for (int ax : x.axes)
            if (ax < 1 || ax >= k_.cluster_rank)
              fail_at(s, "a pair commit arrives in the pairs along cluster axes 1 or 2 the cluster has ({} dimensions), but names axis {}", k_.cluster_rank, ax);
          if (!distinct(x.axes)) fail_at(s, "names a multicast axis twice: ({})", fmt::join(x.axes, ", "));
        }
        if (x.n == 2 && k_.allocs[k_.refs[x.refs.back()].id].kind == AllocKind::cluster_barrier &&
            (x.op == StmtOp::tcgen05_commit_arrive || tcgen05::mma_commit_barrier(x) != none))
          fail_at(s, "a pair commit arrives on a barrier(...) of each CTA of the pair, not on a cluster_barrier");
        return;
      case StmtOp::tcgen05_cp: {
        if (k_.target != Target::sm_100a) fail_at<ConfigError>(s, "tcgen05.cp is a Blackwell instruction, but the kernel targets {}", target_name(k_.target));
        need_refs(2);
        if (x.n != 0) fail_at(s, "carries n = {}: tcgen05.cp is modelled for cta_group::1", x.n);
        if (tc_group_ < 0) tc_group_ = 0;
        else if (tc_group_ != 0) fail_at<ConfigError>(s, "copies scales with cta_group::1 in a kernel whose MMAs use cta_group::2 (PTX: one .cta_group per kernel)");
        // The source: one 512-byte block of u8 scale codes, (32, 16) or (512), contiguous and
        // unswizzled: 32 rows of 16 bytes, row r the scales of rows r, r + 32, r + 64, r + 96.
        auto const& src = k_.refs[x.refs[0]];
        alloc_of(s, src, {AllocKind::smem}, "the source");
        auto const& sa = k_.allocs[src.id];
        std::int64_t bytes = 1;
        for (auto e : src.shape) bytes *= e;
        const bool codes = sa.dtype == DType::u8 || sa.dtype == DType::ue4m3;  // ue8m0 or ue4m3 scale codes
        if (!codes || bytes != tcgen05::cp_rows * tcgen05::cp_row_bytes || sa.swizzle != 0 || !src.block.empty() || !sa.tiling.empty())
          fail_at(s, "copies one unswizzled, untiled 512-byte block of u8 scale codes (32 rows of 16 bytes: a whole view, e.g. a stage of smem<u8>(shape(S, 32, 16))), "
                     "but the source is {} ({}){}",
                  dtype_name(sa.dtype), fmt::join(src.shape, ", "), sa.swizzle != 0 ? fmt::format(", swizzled {} B", sa.swizzle) : std::string());
        auto const& dst = k_.refs[x.refs[1]];
        alloc_of(s, dst, {AllocKind::tmem}, "the destination");
        auto const& da = k_.allocs[dst.id];
        const bool ok_view = (da.shape.size() == 2 && dst.index.empty()) || (da.shape.size() == 3 && dst.index.size() == 1);
        if (da.dtype != sa.dtype || !ok_view || !dst.block.empty() || da.shape.back() < tcgen05::cp_row_bytes)
          fail_at(s, "copies into a {} TMEM allocation (or one stage of a ring) of at least 16 bytes per lane (4 columns), but the destination is {} ({})",
                  dtype_name(sa.dtype), dtype_name(da.dtype), fmt::join(dst.shape, ", "));
        // e0: the 4-column group of the destination it writes (none: group 0), a constant.
        if (x.e0 != none) {
          auto const& g = k_.exprs[static_cast<std::size_t>(x.e0)];
          if (g.op != ExprOp::constant || g.value < 0 || (g.value + 1) * tcgen05::cp_row_bytes > da.shape.back())
            fail_at(s, "copies into column group {} of {} ({} bytes per lane: groups 0 to {}), but the group is a constant from 0 to {}",
                    g.op == ExprOp::constant ? fmt::format("{}", g.value) : std::string("(not a constant)"), alloc_name(k_, static_cast<int>(dst.id)),
                    da.shape.back(), da.shape.back() / tcgen05::cp_row_bytes - 1, da.shape.back() / tcgen05::cp_row_bytes - 1);
        }
        return;
      }
      case StmtOp::tmem_dealloc:
        if (k_.target != Target::sm_100a) fail_at<ConfigError>(s, "TMEM exists on Blackwell only, but the kernel targets {}", target_name(k_.target));
        need_refs(1);
        alloc_of(s, k_.refs[x.refs[0]], {AllocKind::tmem}, "the operand");
        if (!k_.refs[x.refs[0]].index.empty()) fail_at(s, "frees a whole TMEM allocation, not a view of one");
        return;
    }
  }

  // A reducing store (n: an ir::Reduce, in range by stmt_fields): GMEM only, a dtype its
  // instruction takes. (The front end says the same at compile time: ops/reduce.hpp.)
  void reduction(StmtId s, Stmt const& x, Ref const& dst) const {
    if (x.n == 0) return;
    const auto op = static_cast<Reduce>(x.n);
    if (dst.base != RefBase::param)
      fail_at(s, "reduces ({}) into {}, but reductions go to GMEM only (red.global, cp.reduce.async.bulk.tensor): a CTA's own SMEM or "
              "registers need no atomics, a plain store of the combined value does it", reduce_name(op), alloc_name(k_, dst.id));
    if (!reduce_takes(op, ref_dtype(dst)))
      fail_at(s, "reduces ({}) into parameter '{}' of dtype {}, but {} takes {} only{}", reduce_name(op), k_.params[dst.id].name,
              dtype_name(ref_dtype(dst)), reduce_name(op), op == Reduce::add ? "f32, i32 and u32" : "i32 and u32",
              op == Reduce::add ? "" : " (red and the TMA reduce have no f32 min or max)");
  }

  void copy(StmtId s, Stmt const& x) const {
    const bool load = x.op == StmtOp::copy_gmem_to_smem;
    if (x.refs.size() != (load ? 3u : 2u)) fail_at(s, "takes {} memory operands, got {}", load ? 3 : 2, x.refs.size());
    auto const& g = k_.refs[x.refs[load ? 0 : 1]];
    auto const& m = k_.refs[x.refs[load ? 1 : 0]];
    if (g.base != RefBase::param) fail_at(s, "the {} must be a GMEM reference", load ? "source" : "destination");
    alloc_of(s, m, {AllocKind::smem}, load ? "the destination" : "the source");
    if (ref_dtype(g) != ref_dtype(m))
      fail_at(s, "Expected dtypes to match but src had type {} and dst had type {}", dtype_name(ref_dtype(load ? g : m)),
              dtype_name(ref_dtype(load ? m : g)));
    if (g.shape != m.shape)
      fail_at(s, "Expected shapes to match, but src had shape ({}) and dst had shape ({})", fmt::join((load ? g : m).shape, ", "),
              fmt::join((load ? m : g).shape, ", "));
    if (m.shape.empty() || m.shape.size() > max_tma_rank) fail_at(s, "TMA copies are 1- to 5-dimensional, got rank {}", m.shape.size());
    if (dtype_is_unit_packed(ref_dtype(g))) {
      // CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B / 16U4_ALIGN16B (the CUDA driver API's
      // cuTensorMapEncodeTiled): packed GMEM, the innermost extent a multiple of 128 elements (so
      // rows are multiples of 96 or 64 bytes, the 32-byte strides it needs), SMEM swizzled 128 B or
      // not at all; loads only (16U4_ALIGN16B stores nothing; FP6's store reads SMEM in another
      // format, .b6p2x16, which nothing here models).
      auto const& p = k_.params[g.id];
      if (!load) fail_at(s, "TMA stores of {} are not modelled: it moves GMEM to SMEM only (the tensor core reads it there)", dtype_name(p.dtype));
      if (p.shape.back() % 128 != 0)
        fail_at<ConfigError>(s, "TMA reads {} parameter '{}' of shape ({}) packed ({}), which needs its innermost extent a multiple of 128 "
                                "elements, not {}",
                             dtype_name(p.dtype), p.name, fmt::join(p.shape, ", "), unit_tma_type(p.dtype), p.shape.back());
      const int sw = k_.allocs[m.id].swizzle;
      if (sw != 0 && sw != 128)
        fail_at(s, "TMA expands {} into SMEM swizzled 128 B or unswizzled only ({}), but the allocation is swizzled {} B", dtype_name(p.dtype),
                unit_tma_type(p.dtype), sw);
      if (!g.stride.empty()) fail_at(s, "a strided TMA traversal of {} is not modelled", dtype_name(p.dtype));
    }
    {  // cuTensorMapEncodeTiled's globalStrides: every row of the array starts on a 16-byte boundary
      auto const& p = k_.params[g.id];
      std::int64_t stride = packed_bits(p.dtype);  // bits, then bytes from the first row on
      for (std::size_t d = p.shape.size(); d-- > 1;) {
        stride = d + 1 == p.shape.size() ? stride * p.shape[d] / 8 : stride * p.shape[d];
        if (stride % 16 != 0)
          fail_at<ConfigError>(s, "TMA addresses parameter '{}' of shape ({}) and dtype {} in rows of 16-byte units, but its dimension {} "
                               "steps {} bytes (make dimension {}'s extent a multiple of {})",
                               p.name, fmt::join(p.shape, ", "), dtype_name(p.dtype), d - 1, stride, d,
                               16 / std::gcd<std::int64_t>(16, stride / p.shape[d]));
      }
    }
    if (!m.block.empty()) {  // the front end's rules (ops/copy.hpp), for IR built by hand
      auto const& a = k_.allocs[m.id];
      if (!sub_view_contiguous(m))
        fail_at(s, "a TMA box is dense in SMEM, but the sub-view ({}) of allocation {} leaves gaps between its rows", fmt::join(m.shape, ", "), m.id);
      if (a.swizzle != 0 && m.shape.back() != a.shape.back())
        fail_at(s, "the SMEM array is swizzled ({} B), and TMA moves whole swizzled rows, but the sub-view ({}) cuts its rows inside a swizzle atom",
                a.swizzle, fmt::join(m.shape, ", "));
    }
    // The view lies inside a verified allocation: its byte count cannot overflow.
    const auto bytes = std::accumulate(m.shape.begin(), m.shape.end(), std::int64_t{1}, std::multiplies<>()) * dtype_bits(ref_dtype(m)) / 8;
    if (bytes % 16 != 0 || m.shape.back() * dtype_bits(ref_dtype(m)) / 8 % 16 != 0)
      fail_at(s, "TMA copies move a multiple of 16 bytes in total and per row, got {} bytes", bytes);
    if (load) barrier_operand(s, x.refs[2]);
    if (!load) reduction(s, x, g);
    if (load && x.n != 0) {  // .cta_group::2: the arrival and the bytes go to the pair leader's barrier
      if (x.n != 2) fail_at(s, "n = {} names no CTA group: 0 completes on this CTA's barrier, 2 on the pair leader's (.cta_group::2)", x.n);
      if (k_.target != Target::sm_100a)
        fail_at<ConfigError>(s, "a pair_leader copy is a Blackwell TMA load (.cta_group::2), but the kernel targets {}", target_name(k_.target));
      if (k_.cluster[0] % 2 != 0)
        fail_at<ConfigError>(s, "a pair_leader copy completes on its barrier in the even CTA of the CTA pair, cluster ranks 2p and 2p + 1 along "
                                "axis 0, but the kernel's cluster has extent {} there (declare cluster(2_c))",
                             k_.cluster[0]);
    }
    for (int ax : x.axes)
      if (ax < 0 || ax >= k_.cluster_rank) fail_at(s, "multicasts over cluster axis {}, but the cluster has {} dimensions", ax, k_.cluster_rank);
    if (!distinct(x.axes)) fail_at(s, "names a multicast axis twice: ({})", fmt::join(x.axes, ", "));
    if (!g.stride.empty()) {  // the box TMA traverses is the footprint
      std::vector<std::int64_t> foot(g.shape);
      for (std::size_t d = 0; d < foot.size() && d < g.stride.size(); ++d) foot[d] *= g.stride[d];
      tma_box(s, foot, x.axes);
    }
    tma_box(s, m.shape, x.axes);
  }

  // A sub-view's elements are one run of bytes: past its first cut dimension every dimension is
  // whole, before it every extent is 1 (smem.hpp's contiguous_in, on the IR).
  bool sub_view_contiguous(Ref const& r) const {
    auto const& a = k_.allocs[r.id];
    const std::size_t lead = r.index.size(), n = r.shape.size();
    std::size_t cut = n;
    for (std::size_t d = 0; d < n; ++d)
      if (r.shape[d] != a.shape[lead + d]) {
        cut = d;
        break;
      }
    for (std::size_t d = 0; d < n; ++d)
      if ((d < cut && r.shape[d] != 1) || (d > cut && r.shape[d] != a.shape[lead + d])) return false;
    return true;
  }

  // cuTensorMapEncodeTiled takes at most 256 elements per box dimension; a multicast copy's box
  // is one CTA's share of the rows.
  void tma_box(StmtId s, std::vector<std::int64_t> const& shape, std::vector<int> const& axes) const {
    std::int64_t share = 1;
    for (int ax : axes) share *= k_.cluster[ax];
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const auto e = d == 0 ? shape[0] / share : shape[d];
      if (e > max_tma_box)
        fail_at(s, "a TMA box has at most {} elements per dimension, but the box ({}) has {} in dimension {}{}", max_tma_box,
                fmt::join(shape, ", "), e, d, d == 0 && share > 1 ? fmt::format(" (per CTA of the multicast over {})", share) : "");
    }
  }

  Alloc const& alloc_of(StmtId s, Ref const& r, std::initializer_list<AllocKind> kinds, const char* role) const {
    if (r.base != RefBase::alloc) fail_at(s, "{} must be a {} reference, but it is the parameter '{}'", role, alloc_kind_name(*kinds.begin()), k_.params[r.id].name);
    auto const& a = k_.allocs[r.id];
    for (auto k : kinds)
      if (a.kind == k) return a;
    fail_at(s, "{} must be a {} reference, but it is a {}", role, alloc_kind_name(*kinds.begin()), alloc_kind_name(a.kind));
  }

  // A cluster launch control response (ops/clc.hpp): one 16-byte row of a u32 SMEM allocation of
  // rows of 4 (unswizzled: the hardware writes it as one 16-byte unit).
  void clc_response(StmtId s, Ref const& r) const {
    auto const& a = alloc_of(s, r, {AllocKind::smem}, "the response");
    if (a.dtype != DType::u32 || a.shape.empty() || a.shape.size() > 2 || a.shape.back() != 4 || a.swizzle != 0 || !a.tiling.empty())
      fail_at(s, "writes its response into {} ({} [{}]), but a cluster launch control response is 16 bytes: a row of 4 u32 of an "
              "unswizzled SMEM allocation of rank 1 or 2 (smem<u32>(shape(stages, 4_c)))", alloc_name(k_, r.id), dtype_name(a.dtype), fmt::join(a.shape, ", "));
    if (r.shape != std::vector<std::int64_t>{4} || r.index.size() + 1 != a.shape.size() || !r.block.empty())
      fail_at(s, "writes its response into a view of shape ({}), but a response is one row of 4 u32: resp[s]", fmt::join(r.shape, ", "));
  }

  void barrier_operand(StmtId s, RefId id, bool need_tc = false) const {
    auto const& r = k_.refs[id];
    auto const& a = alloc_of(s, r, {AllocKind::barrier, AllocKind::cluster_barrier}, "the barrier operand");
    if (r.index.size() != a.shape.size())
      fail_at(s, "Attempting to operate on barrier without indexing, but num_barriers = {}",
              std::accumulate(a.shape.begin() + static_cast<std::ptrdiff_t>(r.index.size()), a.shape.end(), std::int64_t{1}, std::multiplies<>()));
    if (need_tc && !a.orders_tensor_core) fail_at(s, "MMA barrier must have orders_tensor_core set to True.");
  }

  // ---- the statement tree: reachability, single parents, variable scopes --------------------------
  // An explicit stack instead of recursion: the depth of a corrupted tree is bounded only by its
  // size, and the verifier must report it, not overflow on it.
  void tree() {
    if (k_.body < 0 || k_.body >= static_cast<StmtId>(k_.stmts.size())) fail("the body is statement {}, which does not exist", k_.body);
    std::vector<bool> seen(k_.stmts.size(), false), bound(static_cast<std::size_t>(k_.num_vars), false);
    in_scope_.assign(static_cast<std::size_t>(k_.num_vars), false);
    struct frame {
      StmtId s;
      bool leaving;
    };
    std::vector<frame> stack{{k_.body, false}};
    int depth = 0;
    while (!stack.empty()) {
      const auto [s, leaving] = stack.back();
      stack.pop_back();
      auto const& x = k_.stmts[s];
      if (leaving) {
        if (x.op == StmtOp::for_) in_scope_[x.var] = false;
        --depth;
        continue;
      }
      if (seen[s]) fail_at(s, "is used twice in the tree");
      seen[s] = true;
      if (++depth > max_nesting) fail_at(s, "is nested {} statements deep, beyond the limit of {}", depth, max_nesting);
      uses(s, x);
      if (x.op == StmtOp::break_if && std::none_of(stack.begin(), stack.end(), [&](frame const& f) { return f.leaving && k_.stmts[f.s].op == StmtOp::for_; }))
        fail_at(s, "is in no loop: break_if leaves the innermost enclosing for_");
      if (x.op == StmtOp::for_) {
        if (bound[x.var]) fail_at(s, "binds variable v{} twice", x.var);
        bound[x.var] = true;
        in_scope_[x.var] = true;
      }
      stack.push_back({s, true});
      for (auto c = x.body.rbegin(); c != x.body.rend(); ++c) stack.push_back({*c, false});
    }
    for (std::size_t i = 0; i < seen.size(); ++i)
      if (!seen[i]) fail("statement #{} is not reachable from the body", i);
  }

  // ---- TMEM lifetimes: what the statement tree shows (the interpreter checks the rest) ----------
  // Every TMEM allocation is freed by a tmem_dealloc; none is freed inside a loop that may run it
  // twice; nothing that follows a dealloc in the same sequence (run by the same warpgroups after
  // it) uses the allocation. Runs after tree(): nesting is bounded, so recursion is. What each
  // value and statement touches is one bit per TMEM allocation (the 512-column budget, checked
  // before, leaves at most 16), computed in one pass over each arena: linear however shared.
  void tmem_lifetimes() {
    std::vector<StmtId> dealloc_of(k_.allocs.size(), none);
    std::vector<int> bit(k_.allocs.size(), -1);
    int bits = 0;
    for (std::size_t a = 0; a < k_.allocs.size(); ++a)
      if (k_.allocs[a].kind == AllocKind::tmem && bits < 32) bit[a] = bits++;
    if (bits == 0) return;
    for (std::size_t i = 0; i < k_.stmts.size(); ++i)
      if (k_.stmts[i].op == StmtOp::tmem_dealloc) dealloc_of[static_cast<std::size_t>(k_.refs[k_.stmts[i].refs[0]].id)] = static_cast<StmtId>(i);
    for (std::size_t a = 0; a < k_.allocs.size(); ++a)
      if (bit[a] >= 0 && dealloc_of[a] == none) {
        const auto l = alloc_where(k_, static_cast<int>(a));
        throw ProtocolError(fmt::format("kernel '{}': TMEM allocation {} is never freed: add tmem_dealloc({}) once every tcgen05_mma into it and every "
                                        "async_load_tmem of it is done (a kernel frees all its TMEM before it exits){}",
                                        k_.name, alloc_name(k_, static_cast<int>(a)), alloc_name(k_, static_cast<int>(a)),
                                        l.empty() ? std::string() : fmt::format("\n  at {}: tmem {}", l, alloc_name(k_, static_cast<int>(a)))),
                            "tmem-not-freed");
      }
    auto ref_bit = [&](RefId r) -> std::uint32_t {
      if (r == none || k_.refs[r].base != RefBase::alloc || bit[static_cast<std::size_t>(k_.refs[r].id)] < 0) return 0;
      return 1u << bit[static_cast<std::size_t>(k_.refs[r].id)];
    };
    std::vector<std::uint32_t> value_mask(k_.values.size(), 0);
    for (std::size_t i = 0; i < k_.values.size(); ++i) {
      auto const& v = k_.values[i];
      if (v.op == ValueOp::load_tmem) value_mask[i] |= ref_bit(v.ref);
      for (auto c : {v.a, v.b, v.c})
        if (c != none) value_mask[i] |= value_mask[static_cast<std::size_t>(c)];
    }
    // Statements are not ordered children-first: fold bodies in a post-order walk of the tree.
    stmt_tmem_.assign(k_.stmts.size(), 0);
    fold_tmem(k_.body, value_mask, ref_bit);
    tmem_bit_ = std::move(bit);
    std::vector<StmtId> freed(k_.allocs.size(), none);
    lifetime_walk(k_.body, none, freed);
  }
  template <class F>
  std::uint32_t fold_tmem(StmtId s, std::vector<std::uint32_t> const& value_mask, F const& ref_bit) {
    auto const& x = k_.stmts[s];
    std::uint32_t m = x.value != none ? value_mask[static_cast<std::size_t>(x.value)] : 0;
    for (auto r : x.refs) m |= ref_bit(r);
    for (auto c : x.body) m |= fold_tmem(c, value_mask, ref_bit);
    return stmt_tmem_[static_cast<std::size_t>(s)] = m;
  }
  bool runs_once(Stmt const& loop) const {
    auto const& lo = k_.exprs[loop.e0];
    auto const& hi = k_.exprs[loop.e1];
    return lo.op == ExprOp::constant && hi.op == ExprOp::constant && hi.value - lo.value <= 1;
  }
  // loop: the innermost loop around s that may run more than once with s on every iteration
  // (none: no such loop). freed[a]: the dealloc of a that every path to s has run.
  void lifetime_walk(StmtId s, StmtId loop, std::vector<StmtId>& freed) const {
    auto const& x = k_.stmts[s];
    if (x.op != StmtOp::seq)
      for (std::size_t a = 0; a < k_.allocs.size(); ++a)
        if (freed[a] != none && tmem_bit_[a] >= 0 && (stmt_tmem_[static_cast<std::size_t>(s)] >> tmem_bit_[a] & 1u))
          protocol_at(s, "tmem-use-after-dealloc", fmt::format("uses TMEM {} after op #{} (tmem_dealloc) freed it: free it after its last use",
                                                              alloc_name(k_, static_cast<int>(a)), freed[a]));
    switch (x.op) {
      case StmtOp::tmem_dealloc:
        if (loop != none)
          protocol_at(s, "tmem-dealloc-in-loop",
                      fmt::format("frees TMEM {} inside the loop op #{}, whose next iteration would free it again: free it after the loop",
                                  alloc_name(k_, k_.refs[x.refs[0]].id), loop));
        freed[static_cast<std::size_t>(k_.refs[x.refs[0]].id)] = s;
        return;
      case StmtOp::seq:
        for (auto c : x.body) lifetime_walk(c, loop, freed);
        return;
      case StmtOp::for_: {
        // What the body frees is freed after the loop only if it runs; inside, once per iteration.
        auto inner = freed;
        lifetime_walk(x.body[0], runs_once(x) ? loop : s, inner);
        return;
      }
      case StmtOp::if_: {
        // A branch's dealloc frees on that path only, and a loop may take it once (the last
        // iteration's): the interpreter judges what follows and how often it runs.
        for (auto c : x.body) {
          auto inner = freed;
          lifetime_walk(c, none, inner);
        }
        return;
      }
      default: return;
    }
  }

  void in_scope(StmtId s, var_set const& vars) const {
    for (auto v : vars)
      if (v >= k_.num_vars || !in_scope_[static_cast<std::size_t>(v)]) fail_at(s, "uses index variable v{} outside the loop that binds it", v);
  }

  // The variables a statement's operands read must be bound by enclosing loops (a loop's own
  // bounds are evaluated before it binds its variable).
  // Also counts what printing and generating the statement expands, which must stay bounded
  // (max_expanded_nodes) however the operands share subexpressions.
  void uses(StmtId s, Stmt const& x) {
    for (ExprId e : {x.e0, x.e1})
      if (e != none) {
        in_scope(s, expr_vars_[e]);
        expanded_ += expr_size_[e];
      }
    for (auto r : x.refs)
      if (r != none) {
        in_scope(s, ref_vars_[r]);
        expanded_ += ref_size(k_.refs[r]);
      }
    if (x.value != none) {
      in_scope(s, value_vars_[x.value]);
      expanded_ += value_size_[x.value];
    }
    if (expanded_ > max_expanded_nodes)
      fail_at(s, "brings the expressions the kernel's statements expand to past {} nodes", max_expanded_nodes);
  }

  Kernel const& k_;
  int alloc_context_ = -1;
  std::vector<var_set> expr_vars_, ref_vars_, value_vars_;
  std::vector<std::int64_t> expr_size_, value_size_;
  std::vector<int> expr_depth_, value_depth_;
  std::vector<bool> in_scope_;
  std::int64_t expanded_ = 0;
  std::vector<StmtId> expr_user_, ref_user_, value_user_;
  StmtId context_ = none;
  int tc_group_ = -1;  // the CTA group (ir::Stmt::n) of the first tcgen05 MMA or commit, -1: none yet
  std::vector<std::uint32_t> stmt_tmem_;  // tmem_lifetimes: the TMEM allocations each statement touches, a bit each
  std::vector<int> tmem_bit_;             // per allocation: its bit (-1: not TMEM)
};

}  // namespace

void verify(Kernel const& k) { Verifier(k).run(); }

namespace {
// Walks the allocations in order, aligning each (as smem_decl::alignment does at compile time).
// Saturates instead of wrapping: also called on kernels that have not been verified (to print
// them), where a corrupted shape must give a huge total, never a small one.
constexpr std::int64_t huge = std::int64_t{1} << 60;  // sums of two stay far from overflow

template <class F>
std::int64_t lay_out_smem(Kernel const& k, F&& at) {
  auto sat_mul = [](std::int64_t a, std::int64_t b) {
    std::int64_t r;
    return a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) || r > huge ? huge : r;
  };
  std::int64_t off = 0;
  for (auto const& a : k.allocs) {
    std::int64_t n = 1;
    for (auto e : a.shape) n = sat_mul(n, e);
    std::int64_t bytes = 0, align = 1;
    if (a.kind == AllocKind::smem) {
      bytes = sat_mul(n, std::max(dtype_bits(a.dtype), 8)) / 8;
      align = a.swizzle == 32 || a.swizzle == 64 || a.swizzle == 128 ? 8 * a.swizzle : 128;
    } else if (a.kind == AllocKind::barrier || a.kind == AllocKind::cluster_barrier) {
      bytes = sat_mul(n, 8);
      align = 8;
    } else {
      at(std::int64_t{-1});
      continue;
    }
    off = std::min((off + align - 1) / align * align, huge);
    at(off);
    off = std::min(off + bytes, huge);
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

std::int64_t tmem_alloc_columns(std::int64_t columns) {
  std::int64_t n = 32;
  while (n < columns && n < huge) n *= 2;
  return n;
}

std::int64_t tmem_stages(Alloc const& a) {
  if (a.shape.size() == 2) return 1;
  return a.shape.size() == 3 && a.shape[0] >= 0 ? a.shape[0] : -1;
}

std::int64_t tmem_stage_columns(Alloc const& a) {
  if (a.shape.size() != 2 && a.shape.size() != 3) return -1;
  std::int64_t bits;
  if (a.shape.back() < 0 || __builtin_mul_overflow(a.shape.back(), std::int64_t{dtype_bits(a.dtype)}, &bits)) return -1;
  return bits / 32;
}

std::int64_t tmem_total_columns(Alloc const& a) {
  const std::int64_t per = tmem_stage_columns(a), stages = tmem_stages(a);
  std::int64_t c;
  return per < 0 || stages < 0 || __builtin_mul_overflow(per, stages, &c) ? -1 : c;
}

std::int64_t tmem_columns(Kernel const& k) {
  std::int64_t cols = 0;
  for (auto const& a : k.allocs)
    if (a.kind == AllocKind::tmem) {
      if (a.shape.size() != 2 && a.shape.size() != 3) continue;  // a rank the verifier refuses
      const std::int64_t c = tmem_total_columns(a);
      if (c < 0) return huge;
      // What tcgen05.alloc hands out for it: a power of two, at least 32 columns.
      cols = std::min(cols + tmem_alloc_columns(c), huge);
    }
  return cols;
}

}  // namespace stagecraft::ir
