// Memory: views of GMEM blocks and SMEM allocations, element I/O between memories and tiles,
// and the shadow memories behind the race, proxy-fence and poison checks (FastTrack-style
// epochs per shadow cell, read sets for unordered readers).
#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "machine.hpp"
#include "stagecraft/ir/mx_formats.hpp"

namespace stagecraft::interp::detail {

namespace {
// One element at a time, at its physical address: swizzled and tiled SMEM (memory::mapped).
// Such allocations are what TMA fills and wgmma reads; generic accesses to them are epilogues
// and fix-ups, so they pay an address computation per element and the row-major path stays
// as fast as before.
void read_mapped(memory const& m, std::int64_t off, std::int64_t n, tile_buf& t, std::int64_t at) {
  for (std::int64_t k = 0; k < n; ++k) {
    std::byte const* p = m.data + m.byte_of(off + k);
    std::uint16_t h;
    switch (m.dtype) {
      case ir::DType::f32: std::memcpy(t.f + at + k, p, 4); break;
      case ir::DType::f16: std::memcpy(&h, p, 2); t.f[at + k] = f16_to_f32(h); break;
      case ir::DType::bf16: std::memcpy(&h, p, 2); t.f[at + k] = bf16_to_f32(h); break;
      case ir::DType::i32: { std::int32_t v; std::memcpy(&v, p, 4); t.i[at + k] = v; break; }
      case ir::DType::u32: { std::uint32_t v; std::memcpy(&v, p, 4); t.i[at + k] = v; break; }
      case ir::DType::i8: { std::int8_t v; std::memcpy(&v, p, 1); t.i[at + k] = v; break; }
      case ir::DType::u8: case ir::DType::e2m1x2: case ir::DType::ue4m3: case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1: { std::uint8_t v; std::memcpy(&v, p, 1); t.i[at + k] = v; break; }
      case ir::DType::e4m3: t.f[at + k] = ir::e4m3_to_f32(static_cast<unsigned char>(*p)); break;
      case ir::DType::e5m2: t.f[at + k] = ir::e5m2_to_f32(static_cast<unsigned char>(*p)); break;
      case ir::DType::pred: { std::uint8_t v; std::memcpy(&v, p, 1); t.i[at + k] = v != 0; break; }  // never memory (verifier)
    }
  }
}
void write_mapped(memory& m, std::int64_t off, std::int64_t n, tile_buf const& t, std::int64_t at) {
  for (std::int64_t k = 0; k < n; ++k) {
    std::byte* p = m.data + m.byte_of(off + k);
    switch (m.dtype) {
      case ir::DType::f32: std::memcpy(p, t.f + at + k, 4); break;
      case ir::DType::f16: { const std::uint16_t h = f32_to_f16(t.f[at + k]); std::memcpy(p, &h, 2); break; }
      case ir::DType::bf16: { const std::uint16_t h = f32_to_bf16(t.f[at + k]); std::memcpy(p, &h, 2); break; }
      case ir::DType::i32: { const auto v = static_cast<std::int32_t>(wrap_to(ir::DType::i32, t.i[at + k])); std::memcpy(p, &v, 4); break; }
      case ir::DType::u32: { const auto v = static_cast<std::uint32_t>(t.i[at + k]); std::memcpy(p, &v, 4); break; }
      case ir::DType::i8: { const auto v = static_cast<std::int8_t>(wrap_to(ir::DType::i8, t.i[at + k])); std::memcpy(p, &v, 1); break; }
      case ir::DType::u8: case ir::DType::e2m1x2: case ir::DType::ue4m3: case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1: { const auto v = static_cast<std::uint8_t>(t.i[at + k]); std::memcpy(p, &v, 1); break; }
      case ir::DType::e4m3: *p = static_cast<std::byte>(ir::f32_to_e4m3(t.f[at + k])); break;
      case ir::DType::e5m2: *p = static_cast<std::byte>(ir::f32_to_e5m2(t.f[at + k])); break;
      case ir::DType::pred: { const std::uint8_t v = t.i[at + k] != 0; std::memcpy(p, &v, 1); break; }
    }
  }
}
}  // namespace

// Element I/O converts between a memory's dtype and the tile's compute type (f32 or int64).
void read_elems(memory const& m, std::int64_t off, std::int64_t n, tile_buf& t, std::int64_t at) {
  if (m.mapped) return read_mapped(m, off, n, t, at);
  auto const* p = m.data;
  switch (m.dtype) {
    case ir::DType::f32: std::memcpy(t.f + at, p + off * 4, static_cast<std::size_t>(n) * 4); return;
    case ir::DType::f16: {
      auto const* h = reinterpret_cast<std::uint16_t const*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) t.f[at + k] = f16_to_f32(h[k]);
      return;
    }
    case ir::DType::bf16: {
      auto const* h = reinterpret_cast<std::uint16_t const*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) t.f[at + k] = bf16_to_f32(h[k]);
      return;
    }
    case ir::DType::i32: {
      auto const* v = reinterpret_cast<std::int32_t const*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) t.i[at + k] = v[k];
      return;
    }
    case ir::DType::u32: {
      auto const* v = reinterpret_cast<std::uint32_t const*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) t.i[at + k] = v[k];
      return;
    }
    case ir::DType::i8: {
      auto const* v = reinterpret_cast<std::int8_t const*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) t.i[at + k] = v[k];
      return;
    }
    case ir::DType::u8: case ir::DType::e2m1x2: case ir::DType::ue4m3: case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1: {
      auto const* v = reinterpret_cast<std::uint8_t const*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) t.i[at + k] = v[k];
      return;
    }
    case ir::DType::e4m3: case ir::DType::e5m2: {
      auto const* q = reinterpret_cast<unsigned char const*>(p) + off;
      if (m.dtype == ir::DType::e4m3) for (std::int64_t k = 0; k < n; ++k) t.f[at + k] = ir::e4m3_to_f32(q[k]);
      else for (std::int64_t k = 0; k < n; ++k) t.f[at + k] = ir::e5m2_to_f32(q[k]);
      return;
    }
    case ir::DType::pred: {  // no memory has it (the verifier's rule): one byte, 0 or 1, for completeness
      auto const* v = reinterpret_cast<std::uint8_t const*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) t.i[at + k] = v[k] != 0;
      return;
    }
  }
}

void write_elems(memory& m, std::int64_t off, std::int64_t n, tile_buf const& t, std::int64_t at) {
  if (m.mapped) return write_mapped(m, off, n, t, at);
  auto* p = m.data;
  switch (m.dtype) {
    case ir::DType::f32: std::memcpy(p + off * 4, t.f + at, static_cast<std::size_t>(n) * 4); return;
    case ir::DType::f16: {
      auto* h = reinterpret_cast<std::uint16_t*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) h[k] = f32_to_f16(t.f[at + k]);
      return;
    }
    case ir::DType::bf16: {
      auto* h = reinterpret_cast<std::uint16_t*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) h[k] = f32_to_bf16(t.f[at + k]);
      return;
    }
    case ir::DType::i32: {
      auto* v = reinterpret_cast<std::int32_t*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) v[k] = static_cast<std::int32_t>(wrap_to(ir::DType::i32, t.i[at + k]));
      return;
    }
    case ir::DType::u32: {
      auto* v = reinterpret_cast<std::uint32_t*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) v[k] = static_cast<std::uint32_t>(t.i[at + k]);
      return;
    }
    case ir::DType::i8: {
      auto* v = reinterpret_cast<std::int8_t*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) v[k] = static_cast<std::int8_t>(wrap_to(ir::DType::i8, t.i[at + k]));
      return;
    }
    case ir::DType::u8: case ir::DType::e2m1x2: case ir::DType::ue4m3: case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1: {
      auto* v = reinterpret_cast<std::uint8_t*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) v[k] = static_cast<std::uint8_t>(t.i[at + k]);
      return;
    }
    case ir::DType::e4m3: case ir::DType::e5m2: {
      auto* q = reinterpret_cast<unsigned char*>(p) + off;
      if (m.dtype == ir::DType::e4m3) for (std::int64_t k = 0; k < n; ++k) q[k] = ir::f32_to_e4m3(t.f[at + k]);
      else for (std::int64_t k = 0; k < n; ++k) q[k] = ir::f32_to_e5m2(t.f[at + k]);
      return;
    }
    case ir::DType::pred: {
      auto* v = reinterpret_cast<std::uint8_t*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) v[k] = t.i[at + k] != 0;
      return;
    }
  }
}

// The region a ref names: a GMEM block or an SMEM view in CTA `cta`, run-time indices checked.
region machine::view_of(agent_state const& a, ir::RefId rid, int cta, gmem_use use) {
  auto const& r = k_.refs[rid];
  region g;
  if (r.base == ir::RefBase::param) {
    auto& m = gmem_[r.id];
    g.mem = &m;
    for (auto e : r.shape) g.box.push_back(e);
    for (auto e : r.stride) g.step.push_back(e);
    // A window of rows [lo, hi) (x.rows(lo, hi)): dimension 0 counts from lo and ends at hi.
    std::int64_t lo = 0, hi = m.shape[0];
    if (r.windowed()) {
      lo = eval(a, r.row_lo), hi = eval(a, r.row_hi);
      if (lo < 0 || hi < lo || hi > m.shape[0]) {
        report(check::index_out_of_range, cur_op_, a,
               fmt::format("GMEM window out of range: {} takes rows [{}, {}) of '{}', which has {} rows (a window is 0 <= lo <= hi <= rows)",
                           who(a), lo, hi, m.name, m.shape[0]));
        lo = hi = 0;
      }
      if (r.fill) g.row_end = hi;  // masked: the rows after the window are padding, as outside the array
    }
    for (std::size_t d = 0; d < r.block.size(); ++d) {
      const auto c = eval(a, r.block[d]);
      // A strided block's coordinates count footprints: shape * stride elements. A TMA box
      // may overhang the end (ceil), a generic block may not (the verifier makes them equal).
      const auto foot = r.shape[d] * (r.stride.empty() ? 1 : r.stride[d]);
      const bool overhangs = use != gmem_use::generic || r.fill;  // TMA boxes and masked tiles
      const auto extent = d == 0 ? hi - lo : m.shape[d];
      const auto blocks = overhangs ? (extent + foot - 1) / foot : extent / foot;
      const bool in_range = c >= 0 && c < blocks;
      const auto base = d == 0 ? lo : 0;
      // no overflow before the check; a store's box wholly past the end writes nothing
      g.origin.push_back(in_range ? base + c * foot : c >= blocks && use == gmem_use::tma_store ? m.shape[d] : base);
      if (c < 0 || (c >= blocks && use != gmem_use::tma_store))
        report(check::index_out_of_range, cur_op_, a,
               fmt::format("GMEM block out of range: {} addresses block {} of '{}' in dimension {}, but {}({}) blocks of ({}){} cover "
                           "only [0, {}) there{}",
                           who(a), c, m.name, d, d == 0 && r.windowed() ? fmt::format("in the window of rows [{}, {}) of ", lo, hi) : "",
                           fmt::join(m.shape, ", "), fmt::join(r.shape, ", "),
                           r.stride.empty() ? "" : fmt::format(" strided ({})", fmt::join(r.stride, ", ")), blocks,
                           use == gmem_use::tma_load && c >= 0 ? " (the TMA box would lie wholly outside the array and load only its fill)"
                           : r.fill && c >= 0 && d == 0 && r.windowed() ? " (the masked tile would lie wholly outside the window: none of its rows is the segment's)"
                           : r.fill && c >= 0                  ? " (the masked tile would lie wholly outside the array: nothing of it is the array's)"
                                                               : ""));
    }
    return g;
  }
  const auto kind = k_.allocs[r.id].kind;
  if (kind != ir::AllocKind::smem && kind != ir::AllocKind::accumulator && kind != ir::AllocKind::tmem)
    report(check::unsupported, cur_op_, a,
           fmt::format("loads and stores of {} t{} are not modelled by the interpreter yet", ir::alloc_kind_name(kind), r.id));
  // An accumulator is the asking warpgroup's own registers, whichever CTA is named.
  auto& m = kind == ir::AllocKind::accumulator ? agents_[static_cast<std::size_t>(a.comp)].acc[static_cast<std::size_t>(r.id)] : ctas_[cta].smem[r.id];
  g.mem = &m;
  for (std::size_t d = 0; d < m.shape.size(); ++d) {
    if (d < r.index.size()) {
      const auto i = eval(a, r.index[d]);
      if (i < 0 || i >= m.shape[d])
        report(check::index_out_of_range, cur_op_, a,
               fmt::format("SMEM index out of range: {} indexes {} with {} in dimension {}, which has {} elements", who(a), m.name, i, d,
                           m.shape[d]));
      g.origin.push_back(i);
      g.box.push_back(1);
    } else if (!r.block.empty()) {  // a sub-view: its origin (run-time starts checked here) and extent
      const auto j = d - r.index.size();
      const auto o = eval(a, r.block[j]), n = r.shape[j];
      const bool inside = o >= 0 && o <= m.shape[d] - n;
      if (!inside)
        report(check::index_out_of_range, cur_op_, a,
               fmt::format("SMEM offset is out of bounds: {} takes a sub-view of {} elements from {} in dimension {} of {}, which has {} elements", who(a),
                           n, o, d, m.name, m.shape[d]));
      g.origin.push_back(inside ? o : 0);  // no access outside the memory after the report
      g.box.push_back(n);
    } else {
      g.origin.push_back(0);
      g.box.push_back(m.shape[d]);
    }
  }
  return g;
}

// Happens-before: is the access `e` ordered before a thread whose clock is `vc`?
bool machine::hb(epoch e, vclock const& vc) const {
  if (e.clock == 0) return true;
  if (e.cluster() != cluster_id()) return vc.foreign && foreign_hb(e, vc);
  if (is_set(e)) {  // every read (reduction) of the set must be ordered before
    auto const& set = shared_[e.clock - 1].c;
    for (std::size_t i = 0; i < set.size(); ++i)
      if (set[i] > vc.c[i]) return false;
    return true;
  }
  return vc.c[e.comp()] >= e.clock;
}

// Checks one access of a whole region and leaves `stamp` behind. Rows nearly always carry
// one epoch throughout (one copy or one store wrote them), so a row is first tested for
// uniformity (a vectorised scan) and then judged once and overwritten in bulk; mixed rows
// go element by element, judging an epoch only where it changes.
void machine::access(region const& g, bool write, vclock const& vc, epoch stamp, int agent_for_msg, const char* what) {
  auto& m = *g.mem;
  if (!m.sw || g.elements() == 0) return;  // (the part inside the array of a box wholly outside it)
  fit(g);
  epoch memo_in{~0u, ~0u}, memo_out{};  // the last read epoch transformed by next_read
  auto next_for = [&](epoch r) {
    if (!same(r, memo_in)) {
      memo_in = r;
      memo_out = next_read(r, vc, stamp);
    }
    return memo_out;
  };
  // A verdict depends on the epoch alone (the element only names it in the message), and one
  // that passed passes again: rows nearly always repeat the epoch of the row before.
  epoch passed_w{~0u, ~0u}, passed_r{~0u, ~0u};
  auto judge_write = [&](std::int64_t elem, epoch w) {
    if (same(w, passed_w)) return;
    judge_write_epoch(m, elem, w, write, vc, agent_for_msg, what);
    passed_w = w;
  };
  auto judge_read_epoch = [&](std::int64_t elem, epoch r) {
    if (!write || r.clock == 0 || same(r, passed_r)) return;
    if (!hb(r, vc)) race(m, elem, culprit(r, vc), "write", agent_for_msg, what, false);
    passed_r = r;
  };
  const std::int64_t grain = m.grain;
  g.rows([&](std::int64_t first, std::int64_t, std::int64_t elems) {
    // In cells: `off` is the first cell, `len` how many, cell k starts at element (off + k) * grain.
    const std::int64_t off = first / grain, len = elems / grain;
    epoch* cw = m.sw + off;
    epoch* cr = m.sr ? m.sr + off : nullptr;
    if (uniform(cw, len) && (!cr || uniform(cr, len))) {
      judge_write(off * grain, cw[0]);
      if (cr) judge_read_epoch(off * grain, cr[0]);
      if (write) {
        std::fill_n(cw, len, stamp);
        if (cr) std::fill_n(cr, len, epoch{});
      } else if (cr) {
        std::fill_n(cr, len, next_for(cr[0]));
      }
      return;
    }
    epoch last = cw[0];
    judge_write(off * grain, last);
    for (std::int64_t k = 0; k < len; ++k) {
      if (!same(cw[k], last)) {
        last = cw[k];
        judge_write((off + k) * grain, last);
      }
      if (write) cw[k] = stamp;
    }
    if (!cr) return;
    epoch lr = cr[0];
    judge_read_epoch(off * grain, lr);
    epoch next = write ? epoch{} : next_for(lr);
    for (std::int64_t k = 0; k < len; ++k) {
      if (!same(cr[k], lr)) {
        lr = cr[k];
        judge_read_epoch((off + k) * grain, lr);
        next = write ? epoch{} : next_for(lr);
      }
      cr[k] = next;
    }
  });
}

// Makes the cells of g's memory no wider than g's rows, so that the shadow sees exactly the
// elements an access touches (one element, a multicast share of a row).
void machine::fit(region const& g) {
  auto& m = *g.mem;
  const std::int64_t start = g.origin.back(), width = g.box.back();
  if (start % m.grain == 0 && width % m.grain == 0) return;
  m.refine(std::gcd(m.grain, std::gcd(start, width)));
}

bool machine::uniform(epoch const* e, std::int64_t len) {
  static_assert(sizeof(epoch) == sizeof(std::uint64_t));
  std::uint64_t first, x;
  std::memcpy(&first, e, 8);
  std::uint64_t diff = 0;
  for (std::int64_t k = 1; k < len; ++k) {
    std::memcpy(&x, e + k, 8);
    diff |= x ^ first;
  }
  return diff == 0;
}

// `what` non-null: the access is a copy engine's (async proxy), which must also find every
// ordinary store it is ordered after fenced.
void machine::judge_write_epoch(memory const& m, std::int64_t elem, epoch w, bool write, vclock const& vc, int agent, const char* what,
                                const char* now) {
  if (!now) now = write ? "write" : "read";
  if (is_poison(w)) {
    if (!write) poison_read(m, elem, agent, what);
  } else if (w.comp() == reductions) {
    if (!hb(w, vc)) race(m, elem, culprit(w, vc), now, agent, what, true, false, "reduction");
  } else if (!hb(w, vc)) {
    // A TMA store's GMEM write that the accessor is ordered after only through the store's
    // SMEM read: a wait_smem_to_gmem(n, read_only) where the full wait was needed.
    const int na = static_cast<int>(agents_.size()), s = static_cast<int>(w.comp()) - na - static_cast<int>(ctas_.size()) * static_cast<int>(bar_count_);
    const bool read_only_wait = w.cluster() == cluster_id() && w.comp() < shared_reads && s >= 0 && s % 2 == 1 && s / 2 < na &&
                                (mma_base_ < 0 || static_cast<int>(w.comp()) < mma_base_) &&
                                vc.c[static_cast<std::size_t>(agents_[s / 2].store_r_comp)] >= w.clock;
    race(m, elem, w, now, agent, what, true, read_only_wait);
  } else if (what && !m.registers && !m.tmem && w.clock != 0 && w.comp() < agents_.size()) {
    // (TMEM that store_tmem wrote is no proxy's: tcgen05.wait::st and the tcgen05 fences the
    // generator puts at every thread barrier order it before the MMA, with the barrier itself.)
    check_fenced(m, elem, w, write, vc, agent, what);
  }
}

// For a read set, the first reader the access is not ordered after (for the message).
epoch machine::culprit(epoch r, vclock const& vc) const {
  if (!is_set(r) || r.cluster() != cluster_id()) return r;
  auto const& set = shared_[r.clock - 1].c;
  for (std::size_t i = 0; i < set.size(); ++i)
    if (set[i] > vc.c[i]) return epoch::make(set[i], static_cast<std::uint32_t>(i), r.cluster());
  return r;
}

// The read epoch an element keeps after a read stamped `stamp`.
// Unordered reads within a cluster become a read set (FastTrack's read-shared state): a
// vector clock of every reader, which a later write must be ordered after entirely.
epoch machine::next_read(epoch r, vclock const& vc, epoch stamp) {
  if (r.clock == 0 || hb(r, vc)) return stamp;
  if (r.cluster() != stamp.cluster()) return epoch::make(r.clock, r.comp(), many_clusters);  // any later write races
  vclock set;
  if (r.comp() == shared_reads) {
    set = shared_[r.clock - 1];
  } else {
    set.c.assign(agents_.empty() ? 0 : agents_[0].vc.c.size(), 0);
    set.c[r.comp()] = r.clock;
  }
  set.c[stamp.comp()] = std::max(set.c[stamp.comp()], stamp.clock);
  shared_.push_back(std::move(set));
  return epoch::make(static_cast<std::uint32_t>(shared_.size()), shared_reads, stamp.cluster());
}

// A reducing store's check, cell by cell (reductions are rare next to copies, so no row fast
// path): the last plain write and every read must be ordered before it, as for a write, but an
// earlier reduction need not be (atomic combines commute). It leaves a reduction set behind.
void machine::reduce_access(region const& g, vclock const& vc, epoch stamp, int agent_for_msg, const char* what) {
  auto& m = *g.mem;
  if (!m.sw || g.elements() == 0) return;
  fit(g);
  const std::int64_t grain = m.grain;
  epoch memo_in{~0u, ~0u}, memo_out{};
  g.rows([&](std::int64_t first, std::int64_t, std::int64_t elems) {
    const std::int64_t off = first / grain, len = elems / grain;
    for (std::int64_t k = 0; k < len; ++k) {
      epoch& w = m.sw[off + k];
      const std::int64_t elem = (off + k) * grain;
      if (w.comp() != reductions) judge_write_epoch(m, elem, w, true, vc, agent_for_msg, what, "reduction");
      if (m.sr) {
        const epoch r = m.sr[off + k];
        if (r.clock != 0 && !hb(r, vc)) race(m, elem, culprit(r, vc), "reduction", agent_for_msg, what, false);
        m.sr[off + k] = epoch{};
      }
      if (!same(w, memo_in)) {
        memo_in = w;
        memo_out = next_reduction(w, vc, stamp);
      }
      w = memo_out;
    }
  });
}

// The write epoch an element keeps after a reduction stamped `stamp`: the set of its reducers
// since the last plain write (which the reducer is ordered after: reduce_access checked).
epoch machine::next_reduction(epoch w, vclock const& vc, epoch stamp) {
  if (w.comp() == reductions && (w.cluster() != stamp.cluster() || w.cluster() == many_clusters))
    return epoch::make(w.clock, reductions, many_clusters);  // reducers in several clusters: no plain access is ordered after all
  vclock set;
  if (w.comp() == reductions && !hb(w, vc)) set = shared_[w.clock - 1];
  else set.c.assign(agents_.empty() ? 0 : agents_[0].vc.c.size(), 0);
  set.c[stamp.comp()] = std::max(set.c[stamp.comp()], stamp.clock);
  shared_.push_back(std::move(set));
  return epoch::make(static_cast<std::uint32_t>(shared_.size()), reductions, stamp.cluster());
}

void machine::reduce_region(region const& g, tile_buf const& t, ir::Reduce op) {
  auto& m = *g.mem;
  tile_buf row = acquire(static_cast<std::size_t>(g.box.back()), t.fp);
  g.rows([&](std::int64_t off, std::int64_t at, std::int64_t len) {
    read_elems(m, off, len, row, 0);
    for (std::int64_t e = 0; e < len; ++e) {
      const auto u = static_cast<std::size_t>(e), v = static_cast<std::size_t>(at + e);
      if (t.fp) {  // f32 add only (ir::reduce_takes)
        row.f[u] = ir::reduce_add_f32(row.f[u], t.f[v]);
      } else {
        const std::int64_t a = row.i[u], b = t.i[v];
        row.i[u] = wrap_to(m.dtype, op == ir::Reduce::add ? a + b : op == ir::Reduce::min ? std::min(a, b) : std::max(a, b));
      }
    }
    write_elems(m, off, len, row, 0);
  });
  release(std::move(row));
}

void machine::poison_read(memory const& m, std::int64_t elem, int agent, const char* what) {
  report(check::poison_read, cur_op_, agent,
         fmt::format("{} reads {}[{}] (element {}), which nothing has written: {}", accessor(agent, what), m.name,
                     fmt::join(unflatten(m, elem), ", "), elem,
                     m.registers ? "an accumulator starts undefined (zero it with store(acc, 0) before the first wgmma)"
                     : m.tmem && what && std::strcmp(what, "a tcgen05 MMA reading A") == 0
                         ? "A in TMEM starts undefined: store_tmem writes it, and the MMA issuer must wait on a barrier the storing warpgroup "
                           "arrives on after the store before it issues the MMA"
                     : m.tmem    ? "TMEM starts undefined: the first tcgen05_mma into it must not accumulate (pass k > 0 as its accumulate "
                                   "condition), and async_load_tmem must wait for the barrier its tcgen05_commit_arrive arrives on"
                                 : "SMEM starts undefined"));
}

void machine::race(memory const& m, std::int64_t elem, epoch prev, const char* now, int agent, const char* what, bool prev_is_write,
                   bool after_read_only_wait, const char* prev_kind) {
  // An access racing a wgmma that has not been waited for: name the fix.
  const bool by_mma = prev.cluster() == cluster_id() && prev.comp() < reductions && mma_base_ >= 0 &&
                      static_cast<int>(prev.comp()) >= mma_base_;
  // A tcgen05 MMA overwriting D that an epilogue's async_load_tmem read: the reverse hand-off.
  const bool mma_over_load = has_tcgen05_ && m.tmem && !prev_is_write && !by_mma && what && std::strcmp(what, "a tcgen05 MMA") == 0;
  const char* hint = !by_mma ? ""
                     : has_tcgen05_ ? ": wait on the barrier that a tcgen05_commit_arrive after that MMA arrives on before reading its TMEM or "
                                      "refilling its SMEM operands"
                                    : ": wait for that group with wgmma_wait before touching its accumulator or its A/B stage";
  // A wgmma whose group was never closed: wgmma_wait waits only for committed groups, so the
  // wait the author wrote is there but covers nothing. Say so, naming the wgmma.
  std::string uncommitted;
  // The earlier access was the wgmma's (an access after it races it), or this one is (it lands
  // after an access the author meant to order before it).
  agent_state const* issuer = nullptr;
  std::int64_t group = -1;
  if (by_mma && !has_tcgen05_) {
    issuer = &agents_[static_cast<int>(prev.comp()) - mma_base_];
    group = static_cast<std::int64_t>(prev.clock) - 1;
  } else if (completing_wgmma_group_ >= 0 && agent >= 0 && agent < static_cast<int>(agents_.size())) {
    issuer = &agents_[agent];
    group = completing_wgmma_group_;
  }
  if (issuer) {
    if (issuer->mma_committed <= group && issuer->last_mma != ir::none)
      uncommitted = fmt::format(": op #{} ({}) was never committed: wgmma_wait(n) waits only for groups that wgmma_commit() closed, so put "
                                "wgmma_commit() after the wgmma, before the wgmma_wait",
                                issuer->last_mma, ir::describe(k_, issuer->last_mma));
  }
  if (!uncommitted.empty()) hint = uncommitted.c_str();
  // The earlier access's agent, when it was a generic one or a bulk store's GMEM write (the two
  // kinds a .cta-scoped arrival does not carry to a peer CTA).
  const int na = static_cast<int>(agents_.size());
  int prev_agent = -1;
  if (prev.cluster() == cluster_id() && !is_set(prev)) {
    if (static_cast<int>(prev.comp()) < na) prev_agent = static_cast<int>(prev.comp());
    for (auto const& g : agents_)
      if (g.store_w_comp == static_cast<int>(prev.comp())) prev_agent = g.comp;
  }
  std::vector<std::string> weak;  // the cluster barriers at .cta scope, when the race crosses CTAs
  if (prev_agent >= 0 && agent >= 0 && agent < na && agents_[prev_agent].cta != agents_[agent].cta)
    for (std::size_t al = 0; al < k_.allocs.size(); ++al)
      if (k_.allocs[al].kind == ir::AllocKind::cluster_barrier && cta_scope_[al]) weak.push_back(ir::alloc_name(k_, static_cast<int>(al)));
  if (after_read_only_wait && weak.empty())
    hint = ": it is ordered after that store's SMEM read only (a wait_smem_to_gmem with read_only); the issuer must wait for the "
           "whole group, wait_smem_to_gmem(n) without read_only, before the release that publishes the GMEM bytes (no proxy fence "
           "is needed: the store's completion carries one)";
  if (mma_over_load)
    hint = ": the MMA overwrites D while that async_load_tmem may still be reading it; the reader must arrive on a barrier the MMA "
           "issuer waits for before it issues into the same TMEM";
  // A multicast refill lands in the other CTAs of its group too: the loading CTA must be ordered
  // after their last use of the stage, not only its own CTA's.
  std::string into;
  if (multicast_into_ >= 0 && !by_mma && !mma_over_load)
    into = fmt::format(": this multicast load writes the SMEM of CTA {} as well, so the loading CTA may refill the stage only after "
                       "every reader of it there is done{}",
                       ctas_[static_cast<std::size_t>(multicast_into_)].linear,
                       has_tcgen05_ ? " (with CTA pairs: each pair's commit must arrive in the other pairs' CTAs too, "
                                      "tcgen05_commit_arrive_2cta(empty[s], collective_axes(...)), with empty[s] counting one arrival per pair)"
                                    : "");
  else if (multicast_into_ >= 0 && by_mma && has_tcgen05_)
    into = " (a multicast load writes the other pairs' CTAs: each pair's commit must arrive in them, tcgen05_commit_arrive_2cta(empty[s], "
           "collective_axes(...)))";
  // A tcgen05 MMA reading A from TMEM that a store_tmem wrote, with no barrier between them.
  if (m.tmem && prev_is_write && !by_mma && what && std::strcmp(what, "a tcgen05 MMA reading A") == 0)
    hint = ": the MMA reads TMEM that store_tmem may still be writing; the storing warpgroup must arrive on a barrier the MMA issuer "
           "waits for before it issues the MMA";
  // A store_tmem over columns an MMA reads (A) or writes (D) before that MMA is known complete.
  // (A store's reads of TMEM are async_load_tmem's, which keep the hint above: only its write.)
  if (by_mma && m.tmem && !what && std::strcmp(now, "write") == 0 && cur_op_ != ir::none &&
      k_.stmts[static_cast<std::size_t>(cur_op_)].op == ir::StmtOp::store)
    hint = ": store_tmem overwrites TMEM that tcgen05 MMA may still be reading; wait on the barrier a tcgen05_commit_arrive after that MMA "
           "arrives on before storing into it";
  // Another CTA's generic access or bulk-store write, in a kernel whose cluster barriers arrive
  // at .cta scope: say that the scope is why (--cta-scopes, or a case ir::cluster_barrier_scope missed).
  std::string scope;
  if (!weak.empty())
    scope = fmt::format(" (the two CTAs synchronize through {}, which arrive{} at .cta scope{}: such an arrival orders only completed "
                        "asynchronous accesses for a peer CTA, never generic loads and stores or bulk stores' GMEM writes; .cluster scope "
                        "would order this one)",
                        fmt::join(weak, ", "), weak.size() == 1 ? "s" : "", o_.all_cta_scopes ? " under --cta-scopes" : "");
  // A reduction against a plain access: reductions commute with each other only.
  if ((prev_kind && std::strcmp(prev_kind, "reduction") == 0) || std::strcmp(now, "reduction") == 0)
    hint = prev.cluster() != cluster_id()
               ? ": reductions (reduce_add, reduce_min, reduce_max) combine atomically with each other, but a plain read or write of an "
                 "element must be ordered with every reduction into it, and nothing inside a kernel orders CTAs of different clusters: "
                 "read the result after the kernel, or keep what this CTA needs in its own memory"
               : ": reductions combine atomically with each other, but a plain read or write of an element must be ordered with every "
                 "reduction into it (a barrier both sides take part in, after the reducing CTA's own bulk-group wait for a TMA reduce)";
  report(check::data_race, cur_op_, agent,
         fmt::format("data race on {} {}[{}]: {} ({}) is not ordered after the earlier {} by {}{}{}{}",
                     m.registers ? "the accumulator" : m.tmem ? "TMEM" : m.smem ? "SMEM" : "GMEM", m.name, fmt::join(unflatten(m, elem), ", "),
                     accessor(agent, what), now, prev_kind ? prev_kind : prev_is_write ? "write" : "read", comp_name(prev), hint, into, scope));
}

std::vector<std::int64_t> machine::unflatten(memory const& m, std::int64_t elem) const {
  std::vector<std::int64_t> idx(m.shape.size());
  for (int d = static_cast<int>(m.shape.size()) - 1; d >= 0; --d) {
    idx[d] = elem % m.shape[d];
    elem /= m.shape[d];
  }
  return idx;
}

std::string machine::comp_name(epoch e) const {
  if (e.cluster() != cluster_id()) return "another cluster (a different CTA, with no ordering at all)";
  const int na = static_cast<int>(agents_.size());
  const int comp = static_cast<int>(e.comp());
  if (e.comp() == shared_reads) return "one of several unordered readers";
  if (e.comp() == reductions) return "one of several unordered reducers";
  if (comp < na) return who(agents_[comp]);
  const int nb = static_cast<int>(ctas_.size()) * static_cast<int>(bar_count_);
  if (comp < na + nb) {
    const int ci = (comp - na) / static_cast<int>(bar_count_);
    auto const& b = ctas_[ci].barriers[(comp - na) % bar_count_];
    // What lands on a barrier's completion: TMA loads, or the responses of try_cancels on it.
    const bool clc = std::any_of(k_.stmts.begin(), k_.stmts.end(), [&](ir::Stmt const& s) {
      return s.op == ir::StmtOp::try_cancel && k_.refs[static_cast<std::size_t>(s.refs[1])].id == b.alloc;
    });
    return fmt::format("the {} completing {} of CTA {} (completion #{})", clc ? "try_cancel response" : "TMA load", bar_name(b), ctas_[ci].linear, e.clock);
  }
  const int s = comp - na - nb;
  if (mma_base_ >= 0 && comp >= mma_base_ && has_tcgen05_) {
    auto const& issuer = agents_[comp - mma_base_];
    const bool copy = std::binary_search(issuer.tc_copies.begin(), issuer.tc_copies.end(), static_cast<std::int64_t>(e.clock));
    return fmt::format("{} #{} issued by {} (known complete only through the barrier a later tcgen05_commit_arrive arrives on)",
                       copy ? "the tcgen05 scale copy (tcgen05_copy_scales), tcgen05 op" : "tcgen05 MMA", e.clock, who(issuer));
  }
  if (mma_base_ >= 0 && comp >= mma_base_)
    return fmt::format("the wgmma group #{} issued by {} (completes at the wgmma_wait that covers it)", e.clock, who(agents_[comp - mma_base_]));
  return fmt::format("a TMA store {} issued by {} (bulk group #{})", s % 2 ? "writing GMEM" : "reading SMEM", who(agents_[s / 2]), e.clock);
}

// Generic writes must be fenced (commit_smem: fence.proxy.async) before the async proxy
// touches the same bytes, in SMEM and in GMEM alike. Reading them, the copy may see the old
// contents; writing them, the generic store may land after the copy and overwrite its bytes.
// (The other way round needs no proxy fence: a TMA load's bytes are visible to whoever
// observes its mbarrier completion, and a generic read before a refill only has to be
// ordered before the copy's issue.) `w` is the ordinary store, which the copy (issued at
// `vc`) is ordered after: its writer must have fenced since, and the issuer seen the fence;
// or the issuer itself fenced after it had seen the store, before the issue (a fence on the
// causality path from write to copy either way: docs/interpreter.md, "GMEM between proxies").
void machine::check_fenced(memory const& m, std::int64_t elem, epoch w, bool copy_writes, vclock const& vc, int agent, const char* what) {
  auto const& f = agents_[w.comp()].fences;
  auto it = std::lower_bound(f.begin(), f.end(), w.clock);
  if (it != f.end() && *it < vc.c[w.comp()]) return;
  if (issuer_fence_ && issuer_fence_->c[w.comp()] >= w.clock) return;
  if (std::strcmp(what, "a wgmma") == 0 || std::strcmp(what, "a tcgen05 MMA") == 0)  // the tensor core reads SMEM through the async proxy too
    report(check::missing_fence, cur_op_, agent,
           fmt::format("{} reads SMEM {}[{}] as an operand, written by {} through ordinary stores with no commit_smem() "
                       "(fence.proxy.async) between that write and the MMA: the tensor core may read stale data",
                       what[2] == 'w' ? "wgmma" : "tcgen05_mma", m.name, fmt::join(unflatten(m, elem), ", "), who(agents_[w.comp()])));
  report(check::missing_fence, cur_op_, agent,
         fmt::format("the TMA engine {} {} {}[{}], written by {} through ordinary stores with no commit_smem() "
                     "(fence.proxy.async) between that write and this copy: {}",
                     copy_writes ? "writes" : "reads", m.smem ? "SMEM" : "GMEM", m.name, fmt::join(unflatten(m, elem), ", "),
                     who(agents_[w.comp()]),
                     copy_writes ? "the ordinary store may land after the copy's bytes and overwrite them" : "the copy may read stale data"));
}

// Tile buffers come from a small pool (see tile_buf): a hot loop allocates nothing.
tile_buf machine::acquire(std::size_t n, bool fp) {
  tile_buf t;
  for (std::size_t k = 0; k < spare_.size(); ++k)
    if (spare_[k].fp == fp && spare_[k].cap >= n) {
      t = std::move(spare_[k]);
      spare_.erase(spare_.begin() + static_cast<std::ptrdiff_t>(k));
      break;
    }
  if (t.cap < n) {
    t.fp = fp;
    t.cap = n;
    if (fp) t.fbuf.reset(new float[n]);
    else t.ibuf.reset(new std::int64_t[n]);
    t.f = t.fbuf.get();
    t.i = t.ibuf.get();
  }
  t.n = n;
  return t;
}

void machine::release(tile_buf&& t) {
  if (t.cap && spare_.size() < 16) spare_.push_back(std::move(t));
}

tile_buf machine::read_region(region const& g, vclock const& vc, epoch stamp, int agent, const char* what) {
  if (o_.checks) access(g, false, vc, stamp, agent, what);
  tile_buf t = acquire(static_cast<std::size_t>(g.elements()), ir::dtype_is_float(g.mem->dtype));
  g.rows([&](std::int64_t off, std::int64_t at, std::int64_t len) { read_elems(*g.mem, off, len, t, at); });
  return t;
}

// What TMA writes where an overhanging box lies outside its array: zeros of the element type.
void machine::fill_zero(region const& g) {
  if (const int bits = ir::unit_bits(g.mem->dtype)) {  // code 0 into each element's bits of its SMEM unit
    auto* base = reinterpret_cast<std::uint8_t*>(g.mem->data);
    g.rows([&](std::int64_t off, std::int64_t, std::int64_t len) {
      for (std::int64_t e = 0; e < len; ++e) ir::mx::unit_smem_set(bits, base, g.mem->byte_of(off + e), 0);
    });
    return;
  }
  tile_buf z = acquire(static_cast<std::size_t>(g.elements()), ir::dtype_is_float(g.mem->dtype));
  if (z.fp) std::fill_n(z.f, z.n, 0.0f);
  else std::fill_n(z.i, z.n, std::int64_t{0});
  write_region(g, z);
  release(std::move(z));
}

// The same with TMA's NaN fill (OOB_FILL_NAN_REQUEST_ZERO_FMA): its bits exactly (ir/types.hpp),
// not a NaN rounded through the dtype's conversion, so the host backend's bytes are the same.
void machine::fill_nan(region const& g) {
  auto& m = *g.mem;
  const auto eb = ir::dtype_bits(m.dtype) / 8;
  g.rows([&](std::int64_t off, std::int64_t, std::int64_t len) {
    for (std::int64_t k = 0; k < len; ++k) {
      std::byte* p = m.data + m.byte_of(off + k);
      if (eb == 4) std::memcpy(p, &ir::tma_oob_nan_f32, 4);
      else std::memcpy(p, &ir::tma_oob_nan_16, 2);
    }
  });
}

std::vector<std::byte> machine::region_bytes(region const& g) const {
  auto const& m = *g.mem;
  const auto eb = static_cast<std::size_t>(ir::dtype_bits(m.dtype) / 8);
  std::vector<std::byte> out(static_cast<std::size_t>(g.elements()) * eb);
  g.rows([&](std::int64_t off, std::int64_t at, std::int64_t len) {
    if (!m.mapped) std::memcpy(out.data() + static_cast<std::size_t>(at) * eb, m.data + off * static_cast<std::int64_t>(eb), static_cast<std::size_t>(len) * eb);
    else
      for (std::int64_t k = 0; k < len; ++k) std::memcpy(out.data() + static_cast<std::size_t>(at + k) * eb, m.data + m.byte_of(off + k), eb);
  });
  return out;
}

void machine::write_bytes(region const& g, std::vector<std::byte> const& bytes) {
  auto& m = *g.mem;
  const auto eb = static_cast<std::size_t>(ir::dtype_bits(m.dtype) / 8);
  g.rows([&](std::int64_t off, std::int64_t at, std::int64_t len) {
    if (!m.mapped) std::memcpy(m.data + off * static_cast<std::int64_t>(eb), bytes.data() + static_cast<std::size_t>(at) * eb, static_cast<std::size_t>(len) * eb);
    else
      for (std::int64_t k = 0; k < len; ++k) std::memcpy(m.data + m.byte_of(off + k), bytes.data() + static_cast<std::size_t>(at + k) * eb, eb);
  });
}

namespace {
// f(index in g's box, index in `in`'s box, length) for every innermost row of `in`, a corner of
// g (region::inside): the same element has a row-major index in each box.
template <class F>
void corner_rows(region const& g, region const& in, F&& f) {
  const std::size_t r = g.box.size();
  if (in.elements() == 0) return;
  std::array<std::int64_t, 8> idx{};
  const std::int64_t len = in.box[r - 1];
  for (std::int64_t at = 0; at < in.elements(); at += len) {
    std::int64_t full = 0;
    for (std::size_t d = 0; d + 1 < r; ++d) full = full * g.box[d] + idx[d];
    f(full * g.box[r - 1], at, len);
    for (int d = static_cast<int>(r) - 2; d >= 0; --d) {  // next row of `in`
      if (++idx[static_cast<std::size_t>(d)] < in.box[static_cast<std::size_t>(d)]) break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
}
}  // namespace

tile_buf machine::read_masked(region const& g, double fill, vclock const& vc, epoch stamp, int agent) {
  const region in = g.inside();
  tile_buf part = read_region(in, vc, stamp, agent, nullptr);
  tile_buf t = acquire(static_cast<std::size_t>(g.elements()), part.fp);
  const auto dt = g.mem->dtype;
  if (t.fp) std::fill_n(t.f, t.n, round_to(dt, static_cast<float>(fill)));
  else std::fill_n(t.i, t.n, wrap_to(dt, static_cast<std::int64_t>(fill)));
  corner_rows(g, in, [&](std::int64_t to, std::int64_t from, std::int64_t len) {
    if (t.fp) std::copy_n(part.f + from, len, t.f + to);
    else std::copy_n(part.i + from, len, t.i + to);
  });
  release(std::move(part));
  return t;
}

void machine::write_masked(region const& g, tile_buf const& t, vclock const& vc, epoch stamp, int agent) {
  const region in = g.inside();
  if (o_.checks) access(in, true, vc, stamp, agent, nullptr);
  tile_buf part = acquire(static_cast<std::size_t>(in.elements()), t.fp);
  corner_rows(g, in, [&](std::int64_t from, std::int64_t to, std::int64_t len) {
    if (t.fp) std::copy_n(t.f + from, len, part.f + to);
    else std::copy_n(t.i + from, len, part.i + to);
  });
  write_region(in, part);
  release(std::move(part));
}

// A TMA reduce's GMEM side: the staged box combined into g (GMEM, 4-byte elements: ir::reduce_takes).
void machine::reduce_bytes(region const& g, std::vector<std::byte> const& bytes, ir::Reduce op) {
  auto& m = *g.mem;
  auto combine = [op](auto x, auto y) -> decltype(x) {
    if constexpr (std::is_same_v<decltype(x), float>) return ir::reduce_add_f32(x, y);  // f32: add only
    else return op == ir::Reduce::add ? static_cast<decltype(x)>(x + y) : op == ir::Reduce::min ? std::min(x, y) : std::max(x, y);
  };
  auto each = [&](auto zero) {
    using T = decltype(zero);
    g.rows([&](std::int64_t off, std::int64_t at, std::int64_t len) {
      for (std::int64_t e = 0; e < len; ++e) {
        T x, y;
        std::byte* p = m.data + (off + e) * 4;
        std::memcpy(&x, p, 4);
        std::memcpy(&y, bytes.data() + (at + e) * 4, 4);
        x = combine(x, y);
        std::memcpy(p, &x, 4);
      }
    });
  };
  // Integers add with wraparound: as unsigned, whose bits are the same for i32.
  if (m.dtype == ir::DType::f32) each(0.0f);
  else if (m.dtype == ir::DType::i32 && op != ir::Reduce::add) each(std::int32_t{0});
  else each(std::uint32_t{0});
}

// A generic reducing store: checked as a reduction, combined element by element; of a masked
// tile only the elements inside the array.
void machine::reduce_generic(region const& g, tile_buf const& t, bool masked, ir::Reduce op, vclock const& vc, epoch stamp, int agent) {
  if (!masked) {
    if (o_.checks) reduce_access(g, vc, stamp, agent, nullptr);
    reduce_region(g, t, op);
    return;
  }
  const region in = g.inside();
  if (o_.checks) reduce_access(in, vc, stamp, agent, nullptr);
  tile_buf part = acquire(static_cast<std::size_t>(in.elements()), t.fp);
  corner_rows(g, in, [&](std::int64_t from, std::int64_t to, std::int64_t len) {
    if (t.fp) std::copy_n(t.f + from, len, part.f + to);
    else std::copy_n(t.i + from, len, part.i + to);
  });
  reduce_region(in, part, op);
  release(std::move(part));
}

// Same-shaped boxes of the same dtype (TMA loads): row by row, no staging.
void machine::copy_region(region const& from, region const& to) {
  const auto bytes = ir::dtype_bits(from.mem->dtype) / 8;
  if (const int bits = ir::unit_bits(from.mem->dtype)) {
    // TMA's 16U6_ALIGN16B / 16U4_ALIGN16B: packed GMEM codes (element e at bit `bits` e) into
    // SMEM's 16-byte units, each element at its 8-bit slot's unit (ir/types.hpp). The units'
    // padding is not written.
    rows_scratch_.clear();
    to.rows([&](std::int64_t off, std::int64_t, std::int64_t) { rows_scratch_.push_back(off); });
    std::size_t r = 0;
    auto const* src = reinterpret_cast<std::uint8_t const*>(from.mem->data);
    auto* dst = reinterpret_cast<std::uint8_t*>(to.mem->data);
    from.rows([&](std::int64_t off, std::int64_t, std::int64_t len) {
      const std::int64_t row = rows_scratch_[r++];
      for (std::int64_t e = 0; e < len; ++e) ir::mx::unit_smem_set(bits, dst, to.mem->byte_of(row + e), ir::mx::unit_get(bits, src, off + e));
    });
    return;
  }
  if (from.mem->mapped || to.mem->mapped) {  // swizzled or tiled SMEM: element by element, at their addresses
    rows_scratch_.clear();
    to.rows([&](std::int64_t off, std::int64_t, std::int64_t) { rows_scratch_.push_back(off); });
    std::size_t r = 0;
    from.rows([&](std::int64_t off, std::int64_t, std::int64_t len) {
      const std::int64_t dst = rows_scratch_[r++];
      for (std::int64_t e = 0; e < len; ++e)
        std::memcpy(to.mem->data + to.mem->byte_of(dst + e), from.mem->data + from.mem->byte_of(off + e), static_cast<std::size_t>(bytes));
    });
    return;
  }
  rows_scratch_.clear();
  to.rows([&](std::int64_t off, std::int64_t, std::int64_t) { rows_scratch_.push_back(off); });
  std::size_t r = 0;
  from.rows([&](std::int64_t off, std::int64_t, std::int64_t len) {
    std::memcpy(to.mem->data + rows_scratch_[r++] * bytes, from.mem->data + off * bytes, static_cast<std::size_t>(len * bytes));
  });
}

void machine::write_region(region const& g, tile_buf const& t) {
  g.rows([&](std::int64_t off, std::int64_t at, std::int64_t len) { write_elems(*g.mem, off, len, t, at); });
}

}  // namespace stagecraft::interp::detail
