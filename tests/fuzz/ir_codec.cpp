#include "ir_codec.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <tuple>
#include <utility>

namespace stagecraft::fuzz {
namespace {

class writer {
 public:
  void u(std::uint64_t v) {
    while (v >= 0x80) {
      out_ += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    out_ += static_cast<char>(v);
  }
  void s(std::int64_t v) { u((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63)); }
  template <class E>
  void e(E v) { u(static_cast<std::uint8_t>(v)); }
  void str(std::string const& v) {
    u(v.size());
    out_ += v;
  }
  template <class T, class F>
  void list(std::vector<T> const& v, F&& one) {
    u(v.size());
    for (auto const& x : v) one(x);
  }
  void ints(std::vector<std::int64_t> const& v) { list(v, [&](std::int64_t x) { s(x); }); }
  void ints(std::vector<std::int32_t> const& v) { list(v, [&](std::int32_t x) { s(x); }); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class reader {
 public:
  reader(std::uint8_t const* p, std::size_t n) : p_(p), end_(p + n) {}
  std::uint64_t u() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
      const std::uint8_t b = *p_++;
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    return v;
  }
  std::int64_t s() {
    const auto z = u();
    return static_cast<std::int64_t>(z >> 1) ^ -static_cast<std::int64_t>(z & 1);
  }
  // 32-bit fields keep the low bits (C++20 defines the conversion as modular).
  std::int32_t s32() { return static_cast<std::int32_t>(s()); }
  template <class E>
  E e() { return static_cast<E>(static_cast<std::uint8_t>(u())); }
  bool flag() { return u() & 1; }
  // A count never exceeds the bytes left: every element reads at least one byte unless the
  // input has ended, so decoding allocates O(input) memory whatever the counts say.
  std::size_t count() { return static_cast<std::size_t>(std::min<std::uint64_t>(u(), static_cast<std::uint64_t>(end_ - p_))); }
  std::string str() {
    const auto n = count();
    std::string v(reinterpret_cast<char const*>(p_), n);
    p_ += n;
    return v;
  }
  template <class T, class F>
  std::vector<T> list(F&& one) {
    std::vector<T> v(count());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = one();  // not a range-for: vector<bool>
    return v;
  }
  std::vector<std::int64_t> ints() { return list<std::int64_t>([&] { return s(); }); }
  std::vector<std::int32_t> ints32() { return list<std::int32_t>([&] { return s32(); }); }
  std::vector<int> ints_int() { return list<int>([&] { return static_cast<int>(s32()); }); }

 private:
  std::uint8_t const* p_;
  std::uint8_t const* end_;
};

}  // namespace

std::string encode(ir::Kernel const& k) {
  writer w;
  w.str(k.name);
  w.e(k.target);
  for (auto g : k.grid) w.s(g);
  w.s(k.grid_rank);
  for (auto c : k.cluster) w.s(c);
  w.s(k.cluster_rank);
  w.u(k.cluster_nonportable);
  w.s(k.roles);
  w.list(k.params, [&](ir::Param const& p) {
    w.str(p.name);
    w.e(p.dtype);
    w.ints(p.shape);
    w.list(p.dynamic, [&](bool b) { w.u(b); });
  });
  w.list(k.allocs, [&](ir::Alloc const& a) {
    w.e(a.kind);
    w.e(a.dtype);
    w.ints(a.shape);
    w.ints(a.tiling);
    w.s(a.swizzle);
    w.s(a.arrivals);
    w.u(a.orders_tensor_core);
    w.list(a.collective_axes, [&](int x) { w.s(x); });
  });
  w.list(k.exprs, [&](ir::Expr const& e) {
    w.e(e.op);
    w.s(e.value);
    w.s(e.a);
    w.s(e.b);
  });
  w.list(k.refs, [&](ir::Ref const& r) {
    w.e(r.base);
    w.s(r.id);
    w.ints(r.index);
    w.ints(r.block);
    w.ints(r.shape);
  });
  w.list(k.values, [&](ir::Value const& v) {
    w.e(v.op);
    w.e(v.dtype);
    w.ints(v.shape);
    w.s(v.a);
    w.s(v.b);
    w.s(v.ref);
    w.u(std::bit_cast<std::uint64_t>(v.scalar));
  });
  w.list(k.stmts, [&](ir::Stmt const& s) {
    w.e(s.op);
    w.ints(s.body);
    w.s(s.var);
    w.s(s.e0);
    w.s(s.e1);
    w.ints(s.refs);
    w.s(s.value);
    w.s(s.n);
    w.u(s.flag);
    w.list(s.axes, [&](int x) { w.s(x); });
  });
  w.s(k.body);
  w.s(k.num_vars);
  // Third operands (select, fma) last: corpus entries written before they existed end above,
  // and decode with none.
  w.list(k.values, [&](ir::Value const& v) { w.s(v.c); });
  // Workspace flags after them, for the same reason, and only when there is one: the encoding
  // of every kernel without a workspace stays what the corpus holds.
  // Each later section is written when it or one after it carries something.
  const bool roles = !k.role_warps.empty();
  const bool run_time = roles || !k.extents.empty() ||
                        std::ranges::any_of(k.params, [](ir::Param const& p) { return !p.extent.empty() || p.segments_extent != ir::none; }) ||
                        std::ranges::any_of(k.grid_expr, [](ir::ExprId g) { return g != ir::none; });
  const bool indexed = run_time || std::ranges::any_of(k.values, [](ir::Value const& v) { return v.index != ir::none; });
  const bool segmented = indexed || std::ranges::any_of(k.params, [](ir::Param const& p) { return p.segments != -1; });
  const bool windowed = segmented || std::ranges::any_of(k.refs, [](ir::Ref const& x) { return x.row_lo != ir::none || x.row_hi != ir::none; });
  const bool masked = windowed || std::ranges::any_of(k.refs, [](ir::Ref const& x) { return x.fill.has_value(); });
  const bool transposed = masked || std::ranges::any_of(k.stmts, [](ir::Stmt const& s) { return s.transpose != 0; });
  const bool strided = transposed || std::ranges::any_of(k.refs, [](ir::Ref const& x) { return !x.stride.empty(); });
  if (strided || std::ranges::any_of(k.params, [](ir::Param const& p) { return p.workspace; }))
    w.list(k.params, [&](ir::Param const& p) { w.u(p.workspace); });
  // TMA element strides of GMEM blocks after them, likewise only when some block has them.
  if (strided) w.list(k.refs, [&](ir::Ref const& x) { w.ints(x.stride); });
  // MMA operand transposes last: before them the codec dropped them, so every wgmma and tcgen05
  // kernel decoded K-major (a different kernel from the one encoded).
  if (transposed) w.list(k.stmts, [&](ir::Stmt const& s) { w.u(s.transpose); });
  // Masked GMEM tiles' fills after them (a flag, then the double's bits), the same way.
  if (masked)
    w.list(k.refs, [&](ir::Ref const& x) {
      w.u(x.fill.has_value());
      w.u(std::bit_cast<std::uint64_t>(x.fill.value_or(0.0)));
    });
  // Windows of rows (x.rows(lo, hi)) last, the same way.
  if (windowed)
    w.list(k.refs, [&](ir::Ref const& x) {
      w.s(x.row_lo);
      w.s(x.row_hi);
    });
  // Segment tables last.
  if (segmented) w.list(k.params, [&](ir::Param const& p) { w.s(p.segments); });
  // Index tiles' expressions (ValueOp::index) last.
  if (indexed) w.list(k.values, [&](ir::Value const& v) { w.s(v.index); });
  // Run-time extents last: their names and values, each parameter's extent ids, the grid's
  // expressions.
  if (run_time) {
    w.list(k.extents, [&](ir::Extent const& x) {
      w.str(x.name);
      w.s(x.value);
    });
    w.list(k.params, [&](ir::Param const& p) { w.ints(p.extent); });
    w.ints(std::vector<std::int32_t>(k.grid_expr.begin(), k.grid_expr.end()));
    w.list(k.params, [&](ir::Param const& p) { w.s(p.segments_extent); });
  }
  // Roles of one warp (threads(warpgroup, warp, ...)) last.
  if (roles) w.list(k.role_warps, [&](int x) { w.s(x); });
  return w.take();
}

ir::Kernel decode(std::uint8_t const* data, std::size_t size) {
  reader r(data, size);
  ir::Kernel k;
  k.name = r.str();
  k.target = r.e<ir::Target>();
  for (auto& g : k.grid) g = r.s();
  k.grid_rank = r.s32();
  for (auto& c : k.cluster) c = r.s();
  k.cluster_rank = r.s32();
  k.cluster_nonportable = r.flag();
  k.roles = r.s32();
  k.params = r.list<ir::Param>([&] {
    ir::Param p;
    p.name = r.str();
    p.dtype = r.e<ir::DType>();
    p.shape = r.ints();
    p.dynamic = r.list<bool>([&] { return r.flag(); });
    return p;
  });
  k.allocs = r.list<ir::Alloc>([&] {
    ir::Alloc a{r.e<ir::AllocKind>()};
    a.dtype = r.e<ir::DType>();
    a.shape = r.ints();
    a.tiling = r.ints();
    a.swizzle = r.s32();
    a.arrivals = r.s32();
    a.orders_tensor_core = r.flag();
    a.collective_axes = r.ints_int();
    return a;
  });
  k.exprs = r.list<ir::Expr>([&] {
    ir::Expr e{r.e<ir::ExprOp>()};
    e.value = r.s();
    e.a = r.s32();
    e.b = r.s32();
    return e;
  });
  k.refs = r.list<ir::Ref>([&] {
    ir::Ref x{r.e<ir::RefBase>()};
    x.id = r.s32();
    x.index = r.ints32();
    x.block = r.ints32();
    x.shape = r.ints();
    return x;
  });
  k.values = r.list<ir::Value>([&] {
    ir::Value v{r.e<ir::ValueOp>()};
    v.dtype = r.e<ir::DType>();
    v.shape = r.ints();
    v.a = r.s32();
    v.b = r.s32();
    v.ref = r.s32();
    v.scalar = std::bit_cast<double>(r.u());
    return v;
  });
  k.stmts = r.list<ir::Stmt>([&] {
    ir::Stmt s{r.e<ir::StmtOp>()};
    s.body = r.ints32();
    s.var = r.s32();
    s.e0 = r.s32();
    s.e1 = r.s32();
    s.refs = r.ints32();
    s.value = r.s32();
    s.n = r.s();
    s.flag = r.flag();
    s.axes = r.ints_int();
    return s;
  });
  k.body = r.s32();
  k.num_vars = r.s32();
  const auto third = r.ints32();
  for (std::size_t i = 0; i < third.size() && i < k.values.size(); ++i) k.values[i].c = third[i];
  const auto workspace = r.list<bool>([&] { return r.flag(); });
  for (std::size_t i = 0; i < workspace.size() && i < k.params.size(); ++i) k.params[i].workspace = workspace[i];
  const auto strides = r.list<std::vector<std::int64_t>>([&] { return r.ints(); });
  for (std::size_t i = 0; i < strides.size() && i < k.refs.size(); ++i) k.refs[i].stride = strides[i];
  const auto transposes = r.list<std::uint8_t>([&] { return static_cast<std::uint8_t>(r.u()); });
  for (std::size_t i = 0; i < transposes.size() && i < k.stmts.size(); ++i) k.stmts[i].transpose = transposes[i];
  const auto fills = r.list<std::optional<double>>([&]() -> std::optional<double> {
    const bool has = r.flag();
    const double f = std::bit_cast<double>(r.u());
    return has ? std::optional<double>{f} : std::nullopt;
  });
  for (std::size_t i = 0; i < fills.size() && i < k.refs.size(); ++i) k.refs[i].fill = fills[i];
  const auto windows = r.list<std::pair<ir::ExprId, ir::ExprId>>([&] {
    const auto lo = r.s32();
    return std::pair{lo, r.s32()};
  });
  for (std::size_t i = 0; i < windows.size() && i < k.refs.size(); ++i) std::tie(k.refs[i].row_lo, k.refs[i].row_hi) = windows[i];
  const auto segments = r.list<std::int64_t>([&] { return r.s(); });
  for (std::size_t i = 0; i < segments.size() && i < k.params.size(); ++i) k.params[i].segments = segments[i];
  const auto indices = r.ints32();
  for (std::size_t i = 0; i < indices.size() && i < k.values.size(); ++i) k.values[i].index = indices[i];
  k.extents = r.list<ir::Extent>([&] {
    ir::Extent x;
    x.name = r.str();
    x.value = r.s();
    return x;
  });
  const auto extent_ids = r.list<std::vector<std::int32_t>>([&] { return r.ints32(); });
  for (std::size_t i = 0; i < extent_ids.size() && i < k.params.size(); ++i) k.params[i].extent = extent_ids[i];
  const auto grid_expr = r.ints32();
  for (std::size_t i = 0; i < grid_expr.size() && i < k.grid_expr.size(); ++i) k.grid_expr[i] = grid_expr[i];
  const auto segments_extent = r.ints32();
  for (std::size_t i = 0; i < segments_extent.size() && i < k.params.size(); ++i) k.params[i].segments_extent = segments_extent[i];
  k.role_warps = r.ints_int();
  return k;
}

}  // namespace stagecraft::fuzz
