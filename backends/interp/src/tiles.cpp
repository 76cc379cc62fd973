// Tile values: elementwise math and casts over whole tiles, and generic stores of them, streamed
// row by row when every node is floating point.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "machine.hpp"
#include "stagecraft/ir/math.hpp"
#include "stagecraft/ir/tile_view.hpp"

namespace stagecraft::interp::detail {
namespace {
// The shared implementations (stagecraft/ir/math.hpp): what NVRTC's prelude compiles too. Fast
// mode: the same header's fast functions over the C library's versions of the SFU
// instructions (STAGECRAFT_APPROX_HOST_FN), which the host backend compiles too.
float unary(ir::ValueOp op, float x, ir::math_mode mode) {
  if (mode == ir::math_mode::fast) switch (op) {
      case ir::ValueOp::exp: return ir::fast_exp(x);
      case ir::ValueOp::exp2: return ir::fast_exp2(x);
      case ir::ValueOp::log: return ir::fast_log(x);
      case ir::ValueOp::rsqrt: return ir::fast_rsqrt(x);
      case ir::ValueOp::tanh: return ir::fast_tanh(x);
      default: break;
    }
  switch (op) {
    case ir::ValueOp::neg: return -x;
    case ir::ValueOp::exp: return ir::math_exp(x);
    case ir::ValueOp::exp2: return ir::math_exp2(x);
    case ir::ValueOp::log: return ir::math_log(x);
    case ir::ValueOp::rsqrt: return ir::math_rsqrt(x);
    case ir::ValueOp::tanh: return ir::math_tanh(x);
    case ir::ValueOp::abs: return ir::math_abs(x);
    default: return x;
  }
}
// One step of a reduction: fmaxf/fminf semantics (a NaN operand loses), as on the GPU.
float fold(ir::ValueOp op, float r, float y) {
  return op == ir::ValueOp::reduce_sum ? r + y : op == ir::ValueOp::reduce_max ? std::fmax(r, y) : std::fmin(r, y);
}
}  // namespace

// A tile value, computed whole (the path for integer tiles and anything not streamable).
tile_buf machine::value(agent_state& a, ir::ValueId id) {
  auto const& v = k_.values[id];
  const auto n = static_cast<std::size_t>(std::accumulate(v.shape.begin(), v.shape.end(), std::int64_t{1}, std::multiplies<>()));
  const bool fp = ir::dtype_is_float(v.dtype);
  switch (v.op) {
    case ir::ValueOp::load: {
      note_acc_read(a, v.ref);
      const region g = view_of(a, v.ref, a.cta);
      if (auto const& fill = k_.refs[v.ref].fill) return read_masked(g, *fill, a.vc, own_stamp(a), a.comp);
      return read_region(g, a.vc, own_stamp(a), a.comp, nullptr);
    }
    case ir::ValueOp::scalar: {
      tile_buf t = acquire(n, fp);
      if (fp) std::fill_n(t.f, n, round_to(v.dtype, static_cast<float>(v.scalar)));
      else std::fill_n(t.i, n, wrap_to(v.dtype, static_cast<std::int64_t>(v.scalar)));
      return t;
    }
    case ir::ValueOp::index: {  // converted as the generated code converts a long long
      const std::int64_t x = eval(a, v.index);
      tile_buf t = acquire(n, fp);
      if (fp) std::fill_n(t.f, n, round_to(v.dtype, static_cast<float>(x)));
      else std::fill_n(t.i, n, wrap_to(v.dtype, x));
      return t;
    }
    case ir::ValueOp::cast: {
      tile_buf x = value(a, v.a);
      tile_buf t = acquire(n, fp);
      if (fp) {
        for (std::size_t i = 0; i < n; ++i) t.f[i] = round_to(v.dtype, x.fp ? x.f[i] : static_cast<float>(x.i[i]));
      } else {
        // cvt.rzi with saturation for float -> int, as the GPU converts; a mask (pred) is the
        // truncated value's truth, as the generated code's `!= 0`, not a saturation to [0, 1].
        const auto [lo, hi] = ir::range_of(v.dtype == ir::DType::pred ? ir::DType::i32 : v.dtype);
        for (std::size_t i = 0; i < n; ++i) {
          if (x.fp) {
            const float f = x.f[i];
            t.i[i] = wrap_to(v.dtype, std::isnan(f) ? 0 : static_cast<std::int64_t>(std::clamp(std::trunc(static_cast<double>(f)), lo, hi)));
          } else {
            t.i[i] = wrap_to(v.dtype, x.i[i]);
          }
        }
      }
      release(std::move(x));
      return t;
    }
    case ir::ValueOp::neg:
    case ir::ValueOp::exp: case ir::ValueOp::exp2: case ir::ValueOp::log: case ir::ValueOp::rsqrt: case ir::ValueOp::tanh:
    case ir::ValueOp::abs: {
      tile_buf t = value(a, v.a);
      if (t.fp) {
        if (v.op == ir::ValueOp::exp) note_exp_args(t.f, n);
        for (std::size_t i = 0; i < n; ++i) t.f[i] = round_to(v.dtype, unary(v.op, t.f[i], o_.math));
      } else {
        const bool neg = v.op == ir::ValueOp::neg;
        for (std::size_t i = 0; i < n; ++i) t.i[i] = wrap_to(v.dtype, neg || t.i[i] < 0 ? -t.i[i] : t.i[i]);
      }
      return t;
    }
    case ir::ValueOp::load_tmem: {
      // tcgen05.ld.32x32b then tcgen05.wait::ld: thread t of the warpgroup reads lane t
      // (ir::tcgen05::ld_32x32b), so the warpgroup's tile is D row for row. The wait is part of
      // the value, so the read is complete before the agent's next op.
      tmem_live(a, v.ref, "async_load_tmem reads");
      const region g = view_of(a, v.ref, a.cta);
      note_tmem_read(a, g, v.ref);
      return read_region(g, a.vc, own_stamp(a), a.comp, nullptr);
    }
    case ir::ValueOp::reduce_sum: case ir::ValueOp::reduce_max: case ir::ValueOp::reduce_min: {
      // (outer, len, inner) around the axis; each output element folds its len inputs from
      // index 0 upward, in f32 or 64 bits, and rounds once: what the generated code does too.
      auto const& in = k_.values[v.a].shape;
      const auto axis = static_cast<std::size_t>(v.scalar);
      const auto len = static_cast<std::size_t>(in[axis]);
      std::size_t inner = 1;
      for (std::size_t d = axis + 1; d < in.size(); ++d) inner *= static_cast<std::size_t>(in[d]);
      tile_buf x = value(a, v.a);
      tile_buf t = acquire(n, fp);
      for (std::size_t o = 0; o < n; ++o) {
        const std::size_t base = (o / inner) * len * inner + o % inner;
        if (fp) {
          float r = x.f[base];
          for (std::size_t k = 1; k < len; ++k) r = fold(v.op, r, x.f[base + k * inner]);
          t.f[o] = round_to(v.dtype, r);
        } else {
          std::int64_t r = x.i[base];
          for (std::size_t k = 1; k < len; ++k) {
            const std::int64_t y = x.i[base + k * inner];
            r = v.op == ir::ValueOp::reduce_sum ? static_cast<std::int64_t>(static_cast<std::uint64_t>(r) + static_cast<std::uint64_t>(y))
                : v.op == ir::ValueOp::reduce_max ? std::max(r, y) : std::min(r, y);
          }
          t.i[o] = wrap_to(v.dtype, r);
        }
      }
      release(std::move(x));
      return t;
    }
    case ir::ValueOp::broadcast: {
      const auto axis = static_cast<std::size_t>(v.scalar);
      const auto len = static_cast<std::size_t>(v.shape[axis]);
      std::size_t inner = 1;
      for (std::size_t d = axis + 1; d < v.shape.size(); ++d) inner *= static_cast<std::size_t>(v.shape[d]);
      tile_buf x = value(a, v.a);
      tile_buf t = acquire(n, fp);
      for (std::size_t o = 0; o < n; ++o) {
        const std::size_t from = (o / (len * inner)) * inner + o % inner;
        if (fp) t.f[o] = x.f[from];
        else t.i[o] = x.i[from];
      }
      release(std::move(x));
      return t;
    }
    case ir::ValueOp::iota: {
      const auto axis = static_cast<std::size_t>(v.scalar);
      const auto len = static_cast<std::size_t>(v.shape[axis]);
      std::size_t inner = 1;
      for (std::size_t d = axis + 1; d < v.shape.size(); ++d) inner *= static_cast<std::size_t>(v.shape[d]);
      tile_buf t = acquire(n, fp);
      for (std::size_t o = 0; o < n; ++o) {
        const auto c = static_cast<std::int64_t>((o / inner) % len);
        if (fp) t.f[o] = round_to(v.dtype, static_cast<float>(c));
        else t.i[o] = wrap_to(v.dtype, c);
      }
      return t;
    }
    case ir::ValueOp::permute: case ir::ValueOp::reshape: case ir::ValueOp::slice: {
      // A gather by the shared decoding (ir/tile_view.hpp), which the code generator also emits.
      const auto view = *ir::decode_tile_view(v.op, v.scalar, v.shape, k_.values[v.a].shape).view;
      tile_buf x = value(a, v.a);
      tile_buf t = acquire(n, fp);
      const auto inner = ir::row_major_strides(v.shape);
      for (std::size_t o = 0; o < n; ++o) {
        auto from = view.offset;
        for (std::size_t d = 0; d < v.shape.size(); ++d)
          from += ((static_cast<std::int64_t>(o) / inner[d]) % v.shape[d]) * view.stride[d];
        if (fp) t.f[o] = x.f[from];
        else t.i[o] = x.i[from];
      }
      release(std::move(x));
      return t;
    }
    case ir::ValueOp::lt: case ir::ValueOp::le: case ir::ValueOp::gt: case ir::ValueOp::ge: case ir::ValueOp::eq: case ir::ValueOp::ne: {
      tile_buf x = value(a, v.a), y = value(a, v.b);
      tile_buf t = acquire(n, false);
      auto holds = [op = v.op](auto p, auto q) {
        switch (op) {
          case ir::ValueOp::lt: return p < q;
          case ir::ValueOp::le: return p <= q;
          case ir::ValueOp::gt: return p > q;
          case ir::ValueOp::ge: return p >= q;
          case ir::ValueOp::eq: return p == q;
          default: return p != q;  // NaN != NaN holds, as IEEE (and setp.neu) has it
        }
      };
      for (std::size_t i = 0; i < n; ++i) t.i[i] = x.fp ? holds(x.f[i], y.f[i]) : holds(x.i[i], y.i[i]);
      release(std::move(x));
      release(std::move(y));
      return t;
    }
    case ir::ValueOp::select: {
      tile_buf m = value(a, v.a), x = value(a, v.b), y = value(a, v.c);
      for (std::size_t i = 0; i < n; ++i) {
        if (m.i[i] != 0) continue;
        if (fp) x.f[i] = y.f[i];
        else x.i[i] = y.i[i];
      }
      release(std::move(m));
      release(std::move(y));
      return x;
    }
    case ir::ValueOp::fma: {
      tile_buf x = value(a, v.a), y = value(a, v.b), z = value(a, v.c);
      for (std::size_t i = 0; i < n; ++i) x.f[i] = round_to(v.dtype, std::fma(x.f[i], y.f[i], z.f[i]));
      release(std::move(y));
      release(std::move(z));
      return x;
    }
    default: break;
  }
  // Binary: a scalar operand is applied as a constant, not materialised as a tile.
  auto const& vb = k_.values[v.b];
  tile_buf x = value(a, v.a);
  if (x.fp) {
    tile_buf y;
    const bool scalar_b = vb.op == ir::ValueOp::scalar;
    if (!scalar_b) y = value(a, v.b);
    const float c = scalar_b ? round_to(v.dtype, static_cast<float>(vb.scalar)) : 0.0f;
    float* p = x.f;
    const float* q = y.f;
    switch (v.op) {
      case ir::ValueOp::add: if (scalar_b) for (std::size_t i = 0; i < n; ++i) p[i] += c; else for (std::size_t i = 0; i < n; ++i) p[i] += q[i]; break;
      case ir::ValueOp::sub: if (scalar_b) for (std::size_t i = 0; i < n; ++i) p[i] -= c; else for (std::size_t i = 0; i < n; ++i) p[i] -= q[i]; break;
      case ir::ValueOp::mul: if (scalar_b) for (std::size_t i = 0; i < n; ++i) p[i] *= c; else for (std::size_t i = 0; i < n; ++i) p[i] *= q[i]; break;
      case ir::ValueOp::div: if (scalar_b) for (std::size_t i = 0; i < n; ++i) p[i] /= c; else for (std::size_t i = 0; i < n; ++i) p[i] /= q[i]; break;
      case ir::ValueOp::min: for (std::size_t i = 0; i < n; ++i) p[i] = std::fmin(p[i], scalar_b ? c : q[i]); break;
      case ir::ValueOp::max: for (std::size_t i = 0; i < n; ++i) p[i] = std::fmax(p[i], scalar_b ? c : q[i]); break;
      default: break;
    }
    if (v.dtype != ir::DType::f32)
      for (std::size_t i = 0; i < n; ++i) p[i] = round_to(v.dtype, p[i]);
    if (!scalar_b) release(std::move(y));
  } else {
    tile_buf y = value(a, v.b);
    auto* p = x.i;
    auto const* q = y.i;
    for (std::size_t i = 0; i < n; ++i) {
      switch (v.op) {
        case ir::ValueOp::add: p[i] = p[i] + q[i]; break;
        case ir::ValueOp::sub: p[i] = p[i] - q[i]; break;
        // Modular, like the GPU's mul.lo: operands are already wrapped to their type, so the low
        // bits are the type's own product, where int64 would overflow (UB) for u32 x u32.
        case ir::ValueOp::mul: p[i] = static_cast<std::int64_t>(static_cast<std::uint64_t>(p[i]) * static_cast<std::uint64_t>(q[i])); break;
        case ir::ValueOp::div: p[i] = q[i] == 0 ? -1 : p[i] / q[i]; break;  // the GPU's div.s32 by zero gives -1
        case ir::ValueOp::min: p[i] = std::min(p[i], q[i]); break;
        case ir::ValueOp::max: p[i] = std::max(p[i], q[i]); break;
        default: break;
      }
      p[i] = wrap_to(v.dtype, p[i]);
    }
    release(std::move(y));
  }
  return x;
}

// Floating-point tile expressions stream row by row through L1-sized buffers: every leaf
// row is read, every node computed, and the result row written before the next row, so a
// store costs one pass over its operands instead of one pass per node.
bool machine::streamable(ir::ValueId id) const {
  auto const& v = k_.values[id];
  if (!ir::dtype_is_float(v.dtype)) return false;
  switch (v.op) {
    case ir::ValueOp::load: return !k_.refs[v.ref].fill;  // a masked tile's rows are partly fill
    case ir::ValueOp::scalar: return true;
    case ir::ValueOp::index: return false;  // its value needs the agent's variables (value())
    case ir::ValueOp::neg: case ir::ValueOp::exp: case ir::ValueOp::exp2: case ir::ValueOp::log: case ir::ValueOp::rsqrt:
    case ir::ValueOp::tanh: case ir::ValueOp::abs:
      return streamable(v.a);
    // Shapes change along the way: rows of the result are not rows of the operands.
    case ir::ValueOp::reduce_sum: case ir::ValueOp::reduce_max: case ir::ValueOp::reduce_min: case ir::ValueOp::broadcast:
    case ir::ValueOp::iota: case ir::ValueOp::permute: case ir::ValueOp::reshape: case ir::ValueOp::slice:
    case ir::ValueOp::select: case ir::ValueOp::fma:  // three operands: the row walk takes two
      return false;
    case ir::ValueOp::cast: return ir::dtype_is_float(k_.values[v.a].dtype) && streamable(v.a);
    case ir::ValueOp::load_tmem: return false;
    default: return streamable(v.a) && streamable(v.b);
  }
}

void machine::postorder(ir::ValueId id, std::vector<ir::ValueId>& out) const {
  auto const& v = k_.values[id];
  if (v.a != ir::none) postorder(v.a, out);
  if (v.b != ir::none) postorder(v.b, out);
  if (v.c != ir::none) postorder(v.c, out);
  out.push_back(id);
}

void machine::store_streaming(agent_state& a, ir::Stmt const& s) {
  std::vector<ir::ValueId> nodes;
  postorder(s.value, nodes);
  const region dst = view_of(a, s.refs[0], a.cta);
  const auto len = static_cast<std::size_t>(dst.box.back());
  std::vector<std::vector<std::int64_t>> leaf_rows(nodes.size());
  std::vector<memory*> leaf_mem(nodes.size(), nullptr);
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    auto const& v = k_.values[nodes[n]];
    if (v.op != ir::ValueOp::load) continue;
    note_acc_read(a, v.ref);
    const region g = view_of(a, v.ref, a.cta);
    if (o_.checks) access(g, false, a.vc, own_stamp(a), a.comp, nullptr);
    leaf_mem[n] = g.mem;
    g.rows([&](std::int64_t off, std::int64_t, std::int64_t) { leaf_rows[n].push_back(off); });
  }
  if (o_.checks) access(dst, true, a.vc, own_stamp(a), a.comp, nullptr);
  std::vector<std::int64_t> dst_rows;
  dst.rows([&](std::int64_t off, std::int64_t, std::int64_t) { dst_rows.push_back(off); });
  // Views of one allocation with the same shape are identical or disjoint (indexing fixes
  // leading dimensions; GMEM blocks sit at multiples of their shape), so computing row r fully
  // before reading row r+1 reads exactly what a whole-tile load would.
  tile_buf scratch = acquire(len * nodes.size(), true);
  // A value shared by two operands appears in the post-order once per use; its first place is
  // the one computed before every reader (a later one would be read before it is computed: a
  // null row on the first row and the previous row's values on the others).
  constexpr std::size_t unset = ~std::size_t{0};
  std::vector<std::size_t> index_of(k_.values.size(), unset);
  for (std::size_t n = 0; n < nodes.size(); ++n)
    if (index_of[nodes[n]] == unset) index_of[nodes[n]] = n;
  std::vector<float*> row(nodes.size());
  tile_buf row_view;  // aliases a row for read_elems / write_elems
  row_view.fp = true;
  const std::size_t root = nodes.size() - 1;
  const bool root_in_place = dst.mem->dtype == ir::DType::f32 && !dst.mem->mapped && k_.values[nodes[root]].op != ir::ValueOp::load;
  for (std::size_t r = 0; r < dst_rows.size(); ++r) {
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      auto const& v = k_.values[nodes[n]];
      // f32 operands are used where they live and an f32 result is computed into its
      // destination: no copies for the common case.
      if (v.op == ir::ValueOp::load && leaf_mem[n]->dtype == ir::DType::f32 && !leaf_mem[n]->mapped)
        row[n] = reinterpret_cast<float*>(leaf_mem[n]->data) + leaf_rows[n][r];
      else if (n == root && root_in_place)
        row[n] = reinterpret_cast<float*>(dst.mem->data) + dst_rows[r];
      else
        row[n] = scratch.f + n * len;
      float* out = row[n];
      const float* x = v.a != ir::none ? row[index_of[v.a]] : nullptr;
      const float* y = v.b != ir::none ? row[index_of[v.b]] : nullptr;
      switch (v.op) {
        case ir::ValueOp::load:
          if (leaf_mem[n]->dtype != ir::DType::f32 || leaf_mem[n]->mapped) {
            row_view.f = out;
            read_elems(*leaf_mem[n], leaf_rows[n][r], static_cast<std::int64_t>(len), row_view, 0);
          }
          break;
        case ir::ValueOp::scalar: std::fill_n(out, len, round_to(v.dtype, static_cast<float>(v.scalar))); break;
        case ir::ValueOp::add: for (std::size_t i = 0; i < len; ++i) out[i] = x[i] + y[i]; break;
        case ir::ValueOp::sub: for (std::size_t i = 0; i < len; ++i) out[i] = x[i] - y[i]; break;
        case ir::ValueOp::mul: for (std::size_t i = 0; i < len; ++i) out[i] = x[i] * y[i]; break;
        case ir::ValueOp::div: for (std::size_t i = 0; i < len; ++i) out[i] = x[i] / y[i]; break;
        case ir::ValueOp::min: for (std::size_t i = 0; i < len; ++i) out[i] = std::fmin(x[i], y[i]); break;
        case ir::ValueOp::max: for (std::size_t i = 0; i < len; ++i) out[i] = std::fmax(x[i], y[i]); break;
        case ir::ValueOp::neg: for (std::size_t i = 0; i < len; ++i) out[i] = -x[i]; break;
        case ir::ValueOp::exp: case ir::ValueOp::exp2: case ir::ValueOp::log: case ir::ValueOp::rsqrt: case ir::ValueOp::tanh:
        case ir::ValueOp::abs:
          if (v.op == ir::ValueOp::exp) note_exp_args(x, len);
          for (std::size_t i = 0; i < len; ++i) out[i] = unary(v.op, x[i], o_.math);
          break;
        case ir::ValueOp::cast: std::copy_n(x, len, out); break;
        default: break;
      }
      if (v.dtype != ir::DType::f32 && v.op != ir::ValueOp::load)
        for (std::size_t i = 0; i < len; ++i) out[i] = round_to(v.dtype, out[i]);
    }
    if (!root_in_place) {
      row_view.f = row[root];
      write_elems(*dst.mem, dst_rows[r], static_cast<std::int64_t>(len), row_view, 0);
    }
  }
  row_view.f = nullptr;
  release(std::move(scratch));
}

// What `run` compares with a tolerance: the K an accumulator had summed when it is read.
void machine::note_acc_read(agent_state const& a, ir::RefId rid) {
  auto const& r = k_.refs[rid];
  if (r.base == ir::RefBase::alloc && k_.allocs[r.id].kind == ir::AllocKind::accumulator)
    mma_k_ = std::max(mma_k_, a.acc_k[static_cast<std::size_t>(r.id)]);
}

std::int64_t machine::acc_k_of(agent_state const& a, ir::ValueId v) const {
  if (v == ir::none) return 0;
  auto const& x = k_.values[v];
  if ((x.op == ir::ValueOp::load || x.op == ir::ValueOp::load_tmem) && x.ref != ir::none) {
    auto const& r = k_.refs[x.ref];
    if (r.base != ir::RefBase::alloc) return 0;
    if (k_.allocs[r.id].kind == ir::AllocKind::accumulator) return a.acc_k[static_cast<std::size_t>(r.id)];
    if (k_.allocs[r.id].kind == ir::AllocKind::tmem) {  // the largest K of its stages (a ring's reader is known only by view)
      std::int64_t k = 0;
      for (std::int64_t s = 0; s < ir::tmem_stages(k_.allocs[r.id]); ++s)
        k = std::max(k, ctas_[a.cta].tmem_k[static_cast<std::size_t>(tmem_stage_column(r.id, s))]);
      return k;
    }
    return 0;
  }
  return std::max({acc_k_of(a, x.a), acc_k_of(a, x.b), acc_k_of(a, x.c)});
}

std::int64_t machine::promoted_k(agent_state const& a, int dst, ir::ValueId v) const {
  if (k_.allocs[static_cast<std::size_t>(dst)].shape.size() < 2) return 0;  // a row vector (m, l): no MMA sum
  bool reads_dst = false;
  std::int64_t others = 0;
  std::vector<int> seen;  // each other D fragment counted once, however often it is read
  std::vector<ir::ValueId> stack{v};
  while (!stack.empty()) {
    const ir::ValueId id = stack.back();
    stack.pop_back();
    if (id == ir::none) continue;
    auto const& x = k_.values[id];
    if (x.op == ir::ValueOp::load && x.ref != ir::none) {
      auto const& r = k_.refs[x.ref];
      if (r.base != ir::RefBase::alloc || k_.allocs[r.id].kind != ir::AllocKind::accumulator || k_.allocs[r.id].shape.size() < 2) continue;
      if (r.id == dst) reads_dst = true;
      else if (std::find(seen.begin(), seen.end(), r.id) == seen.end()) seen.push_back(r.id), others += a.acc_k[static_cast<std::size_t>(r.id)];
      continue;
    }
    for (auto c : {x.a, x.b, x.c}) stack.push_back(c);
  }
  // Not a promotion (store(acc, 0), a rescale O = O * alpha): K starts again from 0, as before.
  if (others == 0) return 0;
  return others + (reads_dst ? a.acc_k[static_cast<std::size_t>(dst)] : 0);
}

void machine::note_reduced_k(region const& g, std::int64_t k) {
  const auto p = static_cast<std::size_t>(g.mem - gmem_.data());
  if (reduced_k_.size() <= p) reduced_k_.resize(p + 1);
  auto& sum = reduced_k_[p];
  if (sum.empty()) sum.assign(static_cast<std::size_t>(g.mem->elements()), 0);
  g.rows([&](std::int64_t off, std::int64_t, std::int64_t len) {
    for (std::int64_t e = off; e < off + len; ++e) mma_k_ = std::max(mma_k_, sum[static_cast<std::size_t>(e)] += k);
  });
}

void machine::do_store(agent_state& a, ir::Stmt const& s) {
  {  // a generic write starts a new sum (store(acc, 0)), except a promotion: a D fragment
     // that reads another D fragment's sum (acc = fma(part, scale, acc), the blockwise fp8
     // GEMM's) holds the K of both
    auto const& r = k_.refs[s.refs[0]];
    if (r.base == ir::RefBase::alloc && k_.allocs[r.id].kind == ir::AllocKind::accumulator)
      a.acc_k[static_cast<std::size_t>(r.id)] = promoted_k(a, r.id, s.value);
  }
  {  // store_tmem: tcgen05.st, then tcgen05.wait::st (the generator places it), so the write is
     // complete before this agent's next op; thread t writes lane t, which is row t of the tile.
    auto const& r = k_.refs[s.refs[0]];
    if (r.base == ir::RefBase::alloc && k_.allocs[r.id].kind == ir::AllocKind::tmem) {
      tmem_live(a, s.refs[0], "store_tmem writes");
      tile_buf t = value(a, s.value);
      const region g = view_of(a, s.refs[0], a.cta);
      tmem_k_at(a.cta, g, r.id) = 0;  // no MMA sum in it now
      if (o_.checks) access(g, true, a.vc, own_stamp(a), a.comp, nullptr);
      write_region(g, t);
      release(std::move(t));
      return;
    }
  }
  const bool masked = k_.refs[s.refs[0]].fill.has_value();
  if (s.n != 0) {  // a reducing store (red.global): GMEM only, the verifier's rule
    tile_buf t = value(a, s.value);
    const region g = view_of(a, s.refs[0], a.cta);
    reduce_generic(g, t, masked, static_cast<ir::Reduce>(s.n), a.vc, own_stamp(a), a.comp);
    // An accumulator's partial sum reduced into GMEM (split-K): the elements hold the K of every
    // partial reduced into them. (Through SMEM and a TMA reduce the K is not followed.)
    if (const auto k = acc_k_of(a, s.value); k > 0) note_reduced_k(masked ? g.inside() : g, k);
    release(std::move(t));
    return;
  }
  if (!masked && streamable(s.value)) return store_streaming(a, s);
  tile_buf t = value(a, s.value);
  const region g = view_of(a, s.refs[0], a.cta);
  if (masked) {
    write_masked(g, t, a.vc, own_stamp(a), a.comp);
    release(std::move(t));
    return;
  }
  if (o_.checks) access(g, true, a.vc, own_stamp(a), a.comp, nullptr);
  write_region(g, t);
  release(std::move(t));
}

}  // namespace stagecraft::interp::detail
