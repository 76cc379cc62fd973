// ir::Kernel -> CUDA C++: generate(), and the emitter's core (emitter.hpp says what it does and
// where its engines are).
#include "emitter.hpp"

namespace stagecraft::nvrtc {
namespace detail {


generated emitter::run() {
  layout();
  loop_ranges();
  collect_maps();
  tc_ = tcgen05_gen::uses_tcgen05(k_);
  if (tc_) tmem_ = tcgen05_gen::plan_tmem(k_, smem_end_);
  generated g;
  g.entry = entry_name(k_.name);
  g.maps = maps_;
  g.smem_bytes = tc_ ? tmem_.smem_end : smem_end_;
  g.block_threads = ir::block_threads(k_);
  roles_ = ir::stmt_roles(k_);
  warp_roles_ = ir::warp_role_set(k_);
  g.options = o_;
  std::string body;
  stmt(k_.body, 1, body);
  std::string head = tc_ ? tcgen05_gen::prelude_head() + detail::prelude + tcgen05_gen::prelude_tail(tmem_.cta_group, tcgen05_gen::has_pair_copies(k_)) + header()
                         : std::string(detail::prelude) + header();
  for (auto& o : spans_) o.begin += head.size(), o.end += head.size();
  std::sort(spans_.begin(), spans_.end(), [](op_span const& a, op_span const& b) { return a.op < b.op; });
  g.ops = std::move(spans_);
  g.banks = std::move(banks_);
  g.source = std::move(head) + body + footer();
  return g;
}

[[noreturn]] void emitter::unsupported_op(ir::StmtId s, std::string const& what) const {
  throw unsupported(fmt::format("kernel '{}', op #{} ({}): {} is not supported by the NVRTC backend yet", k_.name, s,
                                ir::stmt_name(k_.stmts[s].op), what));
}


// ---- shared memory layout: ir::smem_offsets, shared with the verifier and every backend ----
void emitter::layout() {
  offsets_ = ir::smem_offsets(k_);
  smem_end_ = ir::smem_bytes(k_);
  std::int64_t bar_index = 0;
  for (std::size_t a = 0; a < k_.allocs.size(); ++a) {
    auto const& al = k_.allocs[a];
    if (tiled(static_cast<int>(a)) && (al.tiling.size() != 2 || al.shape.size() < 2))
      throw unsupported(fmt::format("kernel '{}': allocation {} ([{}]) uses tiling({}): the NVRTC backend tiles the two innermost "
                                    "dimensions, tiling(rows, columns)", k_.name, ir::alloc_name(k_, static_cast<int>(a)),
                                    fmt::join(al.shape, ", "), fmt::join(al.tiling, ", ")));
    if (al.kind == ir::AllocKind::accumulator && al.shape.size() == 1 && (al.dtype != ir::DType::f32 || al.shape[0] % 64 != 0))
      throw unsupported(fmt::format("kernel '{}': row-vector accumulator {} ({} [{}]): the NVRTC backend generates f32 row vectors of 64 m rows",
                                    k_.name, ir::alloc_name(k_, static_cast<int>(a)), ir::dtype_name(al.dtype), fmt::join(al.shape, ", ")));
    if (al.kind == ir::AllocKind::accumulator && al.shape.size() != 1 &&
        ((al.dtype != ir::DType::f32 && al.dtype != ir::DType::f16 && al.dtype != ir::DType::bf16 && al.dtype != ir::DType::i32 &&
          !acc_f8(a)) ||
         al.shape.size() != 2 || al.shape[0] % 64 != 0 || al.shape[1] % (acc_f8(a) ? 16 : 8) != 0))
      throw unsupported(fmt::format("kernel '{}': accumulator {} ({} [{}]): the NVRTC backend generates f32, f16, bf16 or i32 accumulators of (64 m, 8 n) "
                                    "fragments, and e4m3 or e5m2 register tiles of (64 m, 16 n)", k_.name, ir::alloc_name(k_, static_cast<int>(a)),
                                    ir::dtype_name(al.dtype), fmt::join(al.shape, ", ")));
    const bool is_barrier = al.kind == ir::AllocKind::barrier || al.kind == ir::AllocKind::cluster_barrier;
    bar_first_.push_back(is_barrier ? bar_index : -1);
    if (is_barrier) bar_index += product(al.shape);
    scopes_.push_back(ir::cluster_barrier_scope(k_, static_cast<int>(a)));
  }
  bar_elements_ = bar_index;
  tiled_uses();
}

// Element offset (a C++ expression) of element `e` of a view of a tiled allocation: the view's
// logical start plus e, through sc::tiled (ir/swizzle.hpp, the interpreter's layout too).
std::string emitter::tiled_element(ir::RefId rid, std::string const& e) const {
  auto const& al = k_.allocs[k_.refs[rid].id];
  const std::string start = view_start(rid, 1);
  return fmt::format("sc::tiled<{}u, {}u, {}u>(static_cast<unsigned>({} + {}))", al.shape.back(), al.tiling[0], al.tiling[1], start, e);
}

// A TMA copy moves a tiled view one TR x TC box per tile (the hardware's box is one dense,
// swizzled run): the view must be whole tiles of a whole (rows, columns) slab, and the GMEM
// block plain rank 2, so tile t lands at slab + t tiles and at block + (row, column) of t.
bool emitter::tma_tiled(ir::StmtId id, ir::RefId sref, ir::RefId gref) const {
  if (!tiled_ref(sref)) return false;
  auto const& m = k_.refs[sref];
  auto const& al = k_.allocs[m.id];
  auto const& g = k_.refs[gref];
  const std::vector<std::int64_t> slab(al.shape.end() - 2, al.shape.end());
  if (m.shape != slab || !m.block.empty() || g.shape.size() != 2 || !g.stride.empty())
    unsupported_op(id, fmt::format("a TMA copy between GMEM block ({}) and view ({}) of {} in tiling({}): a tiled view is copied one tile "
                                   "per TMA box, so it must be a whole ({}) slab of its allocation and the block a plain rank-2 one",
                                   fmt::join(g.shape, ", "), fmt::join(m.shape, ", "), ir::alloc_name(k_, m.id), fmt::join(al.tiling, ", "),
                                   fmt::join(slab, ", ")));
  if (!k_.stmts[id].axes.empty()) unsupported_op(id, "a multicast TMA copy into tiled SMEM");
  return true;
}

// Tiled SMEM is addressed element by element (element()) and copied by TMA; an MMA or TMEM
// operand reads a descriptor of the layout, which the generator does not build for tiling.
void emitter::tiled_uses() const {
  for (std::size_t i = 0; i < k_.stmts.size(); ++i) {
    auto const& s = k_.stmts[i];
    const auto id = static_cast<ir::StmtId>(i);
    for (auto rid : s.refs) {
      if (rid == ir::none || !tiled_ref(rid)) continue;
      if (s.op == ir::StmtOp::store) continue;
      if (s.op == ir::StmtOp::copy_gmem_to_smem) tma_tiled(id, s.refs[1], s.refs[0]);
      else if (s.op == ir::StmtOp::copy_smem_to_gmem) tma_tiled(id, s.refs[0], s.refs[1]);
      else unsupported_op(id, fmt::format("SMEM in tiling({}) ({}) as its operand", fmt::join(k_.allocs[k_.refs[rid].id].tiling, ", "),
                                          ir::alloc_name(k_, k_.refs[rid].id)));
    }
  }
}


// ---- TMA descriptors: one per (parameter, box, swizzle) ------------------------------------
int emitter::map_for(ir::RefId gref, ir::RefId sref, std::vector<std::int64_t> box) {
  auto const& g = k_.refs[gref];
  auto const& s = k_.refs[sref];
  // A strided block: the box is its footprint, traversed every stride-th element.
  for (std::size_t d = 0; d < g.stride.size() && d < box.size(); ++d) box[d] *= g.stride[d];
  tensor_map_spec spec{g.id, k_.params[g.id].dtype, k_.params[g.id].shape, std::move(box), k_.allocs[s.id].swizzle, g.stride,
                       g.fill && std::isnan(*g.fill)};
  for (std::size_t i = 0; i < maps_.size(); ++i)
    if (maps_[i] == spec) return static_cast<int>(i);
  maps_.push_back(spec);
  return static_cast<int>(maps_.size() - 1);
}

void emitter::collect_maps() {
  for (std::size_t i = 0; i < k_.stmts.size(); ++i) {
    auto const& s = k_.stmts[i];
    if (s.op == ir::StmtOp::copy_gmem_to_smem) {
      auto box = k_.refs[s.refs[0]].shape;
      tma_smem_aligned(static_cast<ir::StmtId>(i), s.refs[1]);
      if (!s.axes.empty()) {  // each CTA loads its share of the rows
        const int n = group_size(s.axes);
        const auto bytes = product(box) * ir::dtype_bits(k_.params[k_.refs[s.refs[0]].id].dtype) / 8;
        const auto align = tma_alignment(k_.allocs[k_.refs[s.refs[1]].id]);
        if (box[0] % n != 0 || (bytes / n) % align != 0)
          unsupported_op(static_cast<ir::StmtId>(i), fmt::format("a multicast over {} CTAs of a block with {} rows ({} B) (each share must be whole rows "
                                                                 "and a multiple of {} bytes, the TMA SMEM address alignment{})", n, box[0], bytes, align,
                                                                 align > 128 ? " of this swizzle" : ""));
        box[0] /= n;
      }
      if (tiled_ref(s.refs[1])) box = k_.allocs[k_.refs[s.refs[1]].id].tiling;
      map_of_[static_cast<int>(i)] = map_for(s.refs[0], s.refs[1], box);
    } else if (s.op == ir::StmtOp::copy_smem_to_gmem) {
      tma_smem_aligned(static_cast<ir::StmtId>(i), s.refs[0]);
      map_of_[static_cast<int>(i)] =
          map_for(s.refs[1], s.refs[0], tiled_ref(s.refs[0]) ? k_.allocs[k_.refs[s.refs[0]].id].tiling : k_.refs[s.refs[1]].shape);
    }
  }
}

void emitter::tma_smem_aligned(ir::StmtId s, ir::RefId sref) const {
  auto const& r = k_.refs[sref];
  auto const& al = k_.allocs[r.id];
  // The boundary the view is known to start on: constant indices at their offsets, others at
  // any multiple of their dimension's stride (allocations start aligned).
  std::int64_t known = tma_alignment(al), stride = product(al.shape) * ir::dtype_bits(al.dtype) / 8;
  auto step = [&](ir::ExprId id) {
    auto const& e = k_.exprs[id];
    if (e.op != ir::ExprOp::constant) known = std::gcd(known, stride);
    else if (e.value != 0) known = std::gcd(known, e.value * stride);
  };
  for (std::size_t d = 0; d < r.index.size(); ++d) {
    stride /= al.shape[d];
    step(r.index[d]);
  }
  for (std::size_t j = 0; j < r.block.size(); ++j) {  // a sub-view's origin moves its start too
    stride /= al.shape[r.index.size() + j];
    step(r.block[j]);
  }
  if (known % tma_alignment(al) != 0)
    unsupported_op(s, fmt::format("a TMA copy of a view of s{} known to start only on {}-byte boundaries (TMA needs {}-byte aligned "
                                  "SMEM addresses{})", r.id, known, tma_alignment(al), al.swizzle ? fmt::format(" with a {}-byte swizzle", al.swizzle) : ""));
}

int emitter::group_size(std::vector<int> const& axes) const {
  int n = 1;
  for (int ax : axes) n *= static_cast<int>(k_.cluster[ax]);
  return n;
}


// ---- kernel head and tail --------------------------------------------------------------------
std::string emitter::header() const {
  std::vector<std::string> params;
  for (std::size_t i = 0; i < maps_.size(); ++i) params.push_back(fmt::format("const __grid_constant__ sc::tmap_t tmap{}", i));
  for (auto const& p : k_.params) params.push_back(fmt::format("{}* __restrict__ p_{}", ctype(p.dtype), p.name));
  for (auto const& x : k_.extents) params.push_back(fmt::format("const long long ext_{}", x.name));  // run-time extents, after the pointers
  // With setmaxnreg, ptxas must know the register count at entry: one CTA per SM fixes it
  // (without it ptxas may report "setmaxnreg ignored; unable to determine register count at
  // entry" and cap every thread at 65536 / threads).
  const bool split = register_split().first != 0 && std::any_of(k_.stmts.begin(), k_.stmts.end(), [&](ir::Stmt const& s) { return producer_branch(s); });
  // With roles of one warp, every thread may take 65536 / threads registers at one CTA per SM
  // (255 for gemm_blackwell's 192); setmaxnreg, which moves registers between whole warpgroups,
  // is for kernels of warpgroups (register_split).
  const bool one_cta = split || ir::has_warp_roles(k_);
  std::string h = fmt::format("\nextern \"C\" __global__ void __launch_bounds__({}{}) {}({}) {{\n", ir::block_threads(k_), one_cta ? ", 1" : "",
                              entry_name(k_.name), fmt::join(params, ", "));
  h += "  SC_DYNAMIC_SMEM(smem);\n";
  if (!ir::has_warp_roles(k_)) {
    h += "  const int wg = static_cast<int>(threadIdx.x) / 128;\n  const int lane = static_cast<int>(threadIdx.x) % 128;\n";
  } else {
    // thread_id() is the role; `lane` counts the thread within its role (0-127 in a warpgroup,
    // 0-31 in a warp); `wg` is the hardware warpgroup, whose bar.sync id a warpgroup role meets at.
    std::string role = fmt::format("{}", k_.roles - 1), first = fmt::format("{}", ir::first_warp(k_, k_.roles - 1)), layout;
    for (int r = k_.roles - 2; r >= 0; --r) {
      role = fmt::format("warp < {} ? {} : {}", ir::first_warp(k_, r + 1), r, role);
      first = fmt::format("warp < {} ? {} : {}", ir::first_warp(k_, r + 1), ir::first_warp(k_, r), first);
    }
    for (int r = 0; r < k_.roles; ++r) layout += fmt::format("{}{} {}", r ? ", " : "", r, ir::role_name(k_, r));
    h += "  const int wg = static_cast<int>(threadIdx.x) / 128;\n  const int warp = static_cast<int>(threadIdx.x) / 32;\n";
    h += fmt::format("  const int role = {};  // {}\n", role, layout);
    h += fmt::format("  const int lane = static_cast<int>(threadIdx.x) - 32 * ({});\n", first);
    h += fmt::format("  const bool role_warp = ((0x{:x}u >> role) & 1u) != 0;  // a role of one warp\n  (void)role_warp;\n", warp_roles_);
  }
  h += "  const unsigned smem_base = sc::smem_addr(smem);\n";
  // Every tensor map into the descriptor cache at once, by one thread (prefetch.tensormap).
  if (!maps_.empty()) {
    h += "  if (threadIdx.x == 0) {";
    for (std::size_t i = 0; i < maps_.size(); ++i) h += fmt::format(" sc::prefetch_tmap(&tmap{});", i);
    h += " }\n";
  }
  for (std::size_t a = 0; a < k_.allocs.size(); ++a) {
    auto const& al = k_.allocs[a];
    if (al.kind != ir::AllocKind::accumulator) continue;
    // Indexed only by constants once the fragment loops are unrolled, so it lives in registers.
    if (al.shape.size() == 1) {
      h += fmt::format("  float acc{}[{}];  // ({}) f32 row vector: the 2 rows of each m64 block this thread's D fragment holds\n", a, acc_registers(a),
                       al.shape[0]);
      continue;
    }
    h += fmt::format("  {} acc{}[{}];  // ({}, {}) {} accumulator: {} m64 block(s) x {} registers per thread\n",
                     acc_f16(a) || acc_f8(a) ? "unsigned" : al.dtype == ir::DType::i32 ? "int" : "float",
                     a, acc_registers(a), al.shape[0], al.shape[1], ir::dtype_name(al.dtype), al.shape[0] / 64, acc_registers(a) / (al.shape[0] / 64));
  }
  if (bar_elements_ > 0) {
    h += "  if (threadIdx.x == 0) {\n";
    for (std::size_t a = 0; a < k_.allocs.size(); ++a) {
      auto const& al = k_.allocs[a];
      if (al.kind != ir::AllocKind::barrier && al.kind != ir::AllocKind::cluster_barrier) continue;
      const int per_phase = al.arrivals * (al.kind == ir::AllocKind::cluster_barrier ? group_size(al.collective_axes) : 1);
      h += fmt::format("    for (int e = 0; e < {}; ++e) sc::mbar_init(smem_base + {} + 8 * e, {});  // {}\n", product(al.shape), offsets_[a],
                       per_phase, bar_label(static_cast<int>(a)));
      if (al.kind == ir::AllocKind::cluster_barrier)
        h += fmt::format("    // {}: .{} scope, as {}\n", bar_label(static_cast<int>(a)), scopes_[a].cta ? "cta" : "cluster", scopes_[a].why);
    }
    h += "    sc::mbar_fence_init();\n  }\n";
    // One parity bit per barrier element and thread: the phase it waits for next (32-bit words:
    // with up to 32 barrier elements a single register).
    h += fmt::format("  unsigned parity[{}] = {{}};\n", (bar_elements_ + 31) / 32);
    // The watchdog's report names the completion a wait is for, so it counts them.
    if (o_.watchdog_ms) h += fmt::format("  unsigned completions[{}] = {{}};\n", bar_elements_);
  }
  if (tc_) h += tcgen05_gen::alloc_before_sync(k_, tmem_);
  h += k_.cluster_rank > 0 ? "  sc::cluster_sync();  // peers' barriers are initialised before anyone arrives on them\n"
                           : "  __syncthreads();\n";
  if (tc_) h += tcgen05_gen::after_first_sync(k_, tmem_);
  return h;
}

std::string emitter::footer() const {
  // A CTA must not exit (and release its SMEM) while cluster peers may still arrive on it.
  return k_.cluster_rank > 0 ? "  sc::cluster_sync();\n}\n" : "}\n";
}

emitter::range_t emitter::make_range(__int128 lo, __int128 hi) {
  constexpr __int128 min = std::numeric_limits<std::int64_t>::min(), max = std::numeric_limits<std::int64_t>::max();
  if (lo < min || hi > max) return std::nullopt;
  return interval{static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi)};
}

bool emitter::fits_i32(range_t r) {
  return r && r->lo >= std::numeric_limits<std::int32_t>::min() && r->hi <= std::numeric_limits<std::int32_t>::max();
}

emitter::range_t emitter::range(ir::ExprId id) const {
  auto& memo = range_memo_[static_cast<std::size_t>(id)];
  if (!memo.first) memo = {true, compute_range(id)};
  return memo.second;
}

emitter::range_t emitter::compute_range(ir::ExprId id) const {
  auto const& e = k_.exprs[id];
  switch (e.op) {
    case ir::ExprOp::constant: return interval{e.value, e.value};
    case ir::ExprOp::var:
      return e.value >= 0 && static_cast<std::size_t>(e.value) < var_range_.size() ? var_range_[static_cast<std::size_t>(e.value)] : std::nullopt;
    case ir::ExprOp::program_id:  // a grid over run-time extents: as large as CUDA allows
      if (e.value < 0 || e.value >= 3) return std::nullopt;
      if (k_.grid_expr[static_cast<std::size_t>(e.value)] != ir::none) return interval{0, (e.value == 0 ? ir::max_grid_x : ir::max_grid_yz) - 1};
      return interval{0, k_.grid[static_cast<std::size_t>(e.value)] - 1};
    case ir::ExprOp::extent: return interval{1, std::numeric_limits<std::int32_t>::max()};
    case ir::ExprOp::cluster_idx: return e.value >= 0 && e.value < 3 ? range_t(interval{0, k_.cluster[static_cast<std::size_t>(e.value)] - 1}) : std::nullopt;
    case ir::ExprOp::thread_id: return interval{0, k_.roles - 1};
    case ir::ExprOp::lt: case ir::ExprOp::le: case ir::ExprOp::gt: case ir::ExprOp::ge: case ir::ExprOp::eq: case ir::ExprOp::ne:
    case ir::ExprOp::land: case ir::ExprOp::lor: case ir::ExprOp::lnot: return interval{0, 1};
    case ir::ExprOp::fetched: return interval{std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};  // an i32
    case ir::ExprOp::clc_result: {  // canceled: 0 or 1; a ctaid: the grid's extent along its axis
      const auto axis = static_cast<std::size_t>(e.value % 4 - 1);
      if (e.value % 4 == 0) return interval{0, 1};
      if (k_.grid_expr[axis] != ir::none) return interval{0, (axis == 0 ? ir::max_grid_x : ir::max_grid_yz) - 1};
      return interval{0, k_.grid[axis] - 1};
    }
    case ir::ExprOp::load:  // whatever the table's dtype holds
      return k_.params[static_cast<std::size_t>(e.value)].dtype == ir::DType::u32
                 ? interval{0, std::numeric_limits<std::uint32_t>::max()}
                 : interval{std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    default: break;
  }
  const auto a = range(e.a), b = range(e.b);
  if (!a || !b) return std::nullopt;
  const __int128 al = a->lo, ah = a->hi, bl = b->lo, bh = b->hi;
  switch (e.op) {
    case ir::ExprOp::add: return make_range(al + bl, ah + bh);
    case ir::ExprOp::sub: return make_range(al - bh, ah - bl);
    case ir::ExprOp::mul: {
      const __int128 c[] = {al * bl, al * bh, ah * bl, ah * bh};
      return make_range(*std::min_element(std::begin(c), std::end(c)), *std::max_element(std::begin(c), std::end(c)));
    }
    case ir::ExprOp::div:  // truncation is monotonic in the dividend for a positive divisor
      if (bl <= 0) return std::nullopt;
      return make_range(std::min(al / bl, al / bh), std::max(ah / bl, ah / bh));
    case ir::ExprOp::mod:
      if (bl <= 0 || al < 0) return std::nullopt;
      return make_range(0, std::min(ah, bh - 1));
    case ir::ExprOp::min: return make_range(std::min(al, bl), std::min(ah, bh));
    case ir::ExprOp::max: return make_range(std::max(al, bl), std::max(ah, bh));
    default: return std::nullopt;
  }
}

// Every loop variable's range, outer loops first (a loop's bounds name only the variables of
// the loops around it); the memo is dropped as each one is learnt.
void emitter::loop_ranges() {
  var_range_.assign(static_cast<std::size_t>(std::max(k_.num_vars, 0)), std::nullopt);
  range_memo_.assign(k_.exprs.size(), {false, std::nullopt});
  std::function<void(ir::StmtId)> walk = [&](ir::StmtId id) {
    if (id == ir::none) return;
    auto const& s = k_.stmts[id];
    if (s.op == ir::StmtOp::for_ && s.var >= 0 && static_cast<std::size_t>(s.var) < var_range_.size()) {
      const auto lo = range(s.e0), hi = range(s.e1);
      if (lo && hi && hi->hi > lo->lo) var_range_[static_cast<std::size_t>(s.var)] = interval{lo->lo, hi->hi - 1};
      range_memo_.assign(k_.exprs.size(), {false, std::nullopt});
    }
    for (auto c : s.body) walk(c);
  };
  walk(k_.body);
}


// ---- index expressions (64-bit) --------------------------------------------------------------
std::string emitter::expr(ir::ExprId id) const {
  auto const& e = k_.exprs[id];
  auto bin = [&](const char* op) { return fmt::format("({} {} {})", expr(e.a), op, expr(e.b)); };
  // both operands in [0, 2^31): the same quotient or remainder from 32-bit unsigned arithmetic
  auto narrow = [&](const char* op) {
    if (!fits_u31(range(e.a)) || !fits_u31(range(e.b)) || range(e.b)->lo == 0) return bin(op);
    auto const& d = k_.exprs[e.b];
    // a constant that is not a power of two: a multiply and a shift (ir/udiv_magic.hpp says
    // why and why it is exact); NVVM's own masks and shifts are best for powers of two
    if (d.op == ir::ExprOp::constant && !std::has_single_bit(static_cast<std::uint64_t>(d.value))) {
      const auto magic = ir::udiv_magic_of(static_cast<std::uint32_t>(d.value));
      const auto x = fmt::format("static_cast<unsigned>({})", expr(e.a));
      const auto q = fmt::format("static_cast<unsigned>(static_cast<unsigned long long>({}) * 0x{:x}ull >> {})", x, magic.multiplier, magic.shift);
      return op[0] == '/' ? fmt::format("static_cast<long long>({})", q) : fmt::format("static_cast<long long>({} - {} * {}u)", x, q, d.value);
    }
    const auto divisor = d.op == ir::ExprOp::constant ? fmt::format("{}u", d.value) : fmt::format("static_cast<unsigned>({})", expr(e.b));
    return fmt::format("static_cast<long long>(static_cast<unsigned>({}) {} {})", expr(e.a), op, divisor);
  };
  switch (e.op) {
    // -9223372036854775808LL is not a literal (the minus applies to a value LL cannot hold).
    case ir::ExprOp::constant:
      return e.value == std::numeric_limits<std::int64_t>::min() ? "(-9223372036854775807LL - 1)" : fmt::format("{}LL", e.value);
    case ir::ExprOp::var: return fmt::format("v{}", e.value);
    case ir::ExprOp::program_id: return fmt::format("static_cast<long long>(blockIdx.{})", "xyz"[e.value]);
    case ir::ExprOp::cluster_idx: return fmt::format("static_cast<long long>({})", cluster_ctaid(k_, static_cast<int>(e.value)));
    case ir::ExprOp::thread_id: return ir::has_warp_roles(k_) ? "static_cast<long long>(role)" : "static_cast<long long>(wg)";
    case ir::ExprOp::add: return bin("+");
    case ir::ExprOp::sub: return bin("-");
    case ir::ExprOp::mul: return bin("*");
    case ir::ExprOp::div: return narrow("/");
    case ir::ExprOp::mod: return narrow("%");
    case ir::ExprOp::min: return fmt::format("min({}, {})", expr(e.a), expr(e.b));
    case ir::ExprOp::max: return fmt::format("max({}, {})", expr(e.a), expr(e.b));
    case ir::ExprOp::lt: return bin("<");
    case ir::ExprOp::le: return bin("<=");
    case ir::ExprOp::gt: return bin(">");
    case ir::ExprOp::ge: return bin(">=");
    case ir::ExprOp::eq: return bin("==");
    case ir::ExprOp::ne: return bin("!=");
    case ir::ExprOp::land: return bin("&&");
    case ir::ExprOp::lor: return bin("||");
    case ir::ExprOp::lnot: return fmt::format("(!{})", expr(e.a));
    // Through the read-only cache: nothing in the kernel writes an index table (verify).
    case ir::ExprOp::load: return fmt::format("static_cast<long long>(sc::ld_index(p_{} + ({})))", k_.params[static_cast<std::size_t>(e.value)].name, expr(e.a));
    case ir::ExprOp::extent: return fmt::format("ext_{}", k_.extents[static_cast<std::size_t>(e.value)].name);
    case ir::ExprOp::fetched:  // the slot's i32, from the generic pointer (an unswizzled allocation)
      return fmt::format("static_cast<long long>(*reinterpret_cast<const int*>(smem + {}u + 4u * static_cast<unsigned>({})))",
                         offsets_[static_cast<std::size_t>(e.value)], expr(e.a));
    case ir::ExprOp::clc_result:  // the response row's shared-window address; what: 0 canceled, 1-3 ctaid x, y, z
      return fmt::format("static_cast<long long>(sc::clc_query<{}>(smem_base + {}u + 4u * static_cast<unsigned>({})))", e.value % 4,
                         offsets_[static_cast<std::size_t>(e.value / 4)], expr(e.a));
  }
  return "0";
}


// ---- memory references -----------------------------------------------------------------------
// Flat index of a barrier element (within all barrier elements of the CTA) and its address.
std::string emitter::bar_index(ir::RefId rid) const {
  auto const& r = k_.refs[rid];
  auto const& al = k_.allocs[r.id];
  std::string flat = "0LL";
  for (std::size_t d = 0; d < al.shape.size(); ++d) flat = fmt::format("({} * {} + {})", flat, al.shape[d], expr(r.index[d]));
  return fmt::format("({} + {})", bar_first_[r.id], flat);
}

std::string emitter::bar_addr(ir::RefId rid) const {
  auto const& r = k_.refs[rid];
  return fmt::format("(smem_base + {}u + 8u * static_cast<unsigned>({} - {}))", offsets_[r.id], bar_index(rid), bar_first_[r.id]);
}

// ---- register accumulators -------------------------------------------------------------------
bool emitter::is_acc(ir::RefId rid) const {
  auto const& r = k_.refs[rid];
  return r.base == ir::RefBase::alloc && k_.allocs[r.id].kind == ir::AllocKind::accumulator;
}

std::string emitter::acc_read(std::size_t a, std::string const& e) const {
  return fmt::format("sc::acc_{}(acc{}, {})", ir::dtype_name(k_.allocs[a].dtype), a, e);
}
std::string emitter::acc_pack(std::size_t a, std::string const& lo, std::string const& hi) const {
  // bf16 by the pair conversion (one F2FP), f16 by two (the form the f16 D's tests pin)
  if (k_.allocs[a].dtype == ir::DType::bf16) return fmt::format("sc::f32x2_to_bf16x2({}, {})", lo, hi);
  return fmt::format("sc::pack_f16({}, {})", lo, hi);
}

// 32-bit registers per thread: N/2 elements per m64 block, two of them per register in f16 and
// bf16, four in e4m3 and e5m2.
std::int64_t emitter::acc_registers(std::size_t a) const {
  if (k_.allocs[a].shape.size() == 1) return k_.allocs[a].shape[0] / 64 * 2;
  return k_.allocs[a].shape[0] / 64 * (k_.allocs[a].shape[1] / (acc_f8(a) ? 8 : acc_f16(a) ? 4 : 2));
}

// The accumulator a store walks the fragment of: its destination, else the first it loads; -1: none.
int emitter::fragment_acc(ir::Stmt const& s) const {
  if (is_acc(s.refs[0])) return k_.refs[s.refs[0]].id;
  std::vector<ir::ValueId> leaves;
  loads_of(s.value, leaves);
  for (auto l : leaves)
    if (is_acc(k_.values[l].ref)) return k_.refs[k_.values[l].ref].id;
  return -1;
}

// A wgmma whose A from registers is computed from SMEM or GMEM by every lane.
bool emitter::reads_memory_into_a(ir::Stmt const& s) const {
  if (s.refs[1] != ir::none) return false;
  std::vector<ir::ValueId> leaves;
  loads_of(s.value, leaves);
  for (auto l : leaves)
    if (!is_acc(k_.values[l].ref)) return true;
  return false;
}

// A store that writes or reads SMEM or GMEM (not only accumulator registers).
bool emitter::touches_memory(ir::Stmt const& s) const {
  if (!is_acc(s.refs[0])) return true;
  std::vector<ir::ValueId> leaves;
  loads_of(s.value, leaves);
  for (auto l : leaves)
    if (!is_acc(k_.values[l].ref)) return true;
  return false;
}

// Empty asm statements that pin every register of accumulator a at this point of the program.
void emitter::pin_registers(int a, std::string const& ind, std::string& out) const {
  out += ind + "#pragma unroll\n";
  out += ind + fmt::format("for (int r = 0; r < {}; ++r) sc::reg_fence(acc{}[r]);\n", acc_registers(static_cast<std::size_t>(a)), a);
}


// Byte offset of an SMEM view's first element within its allocation (a sub-view's origin included).
std::string emitter::view_offset(ir::RefId rid) const {
  return fmt::format("static_cast<unsigned>({})", view_start(rid, ir::dtype_bits(k_.allocs[k_.refs[rid].id].dtype) / 8));
}

// The same in units of `unit` bytes (1: elements), as a long long expression.
std::string emitter::view_start(ir::RefId rid, std::int64_t unit) const {
  auto const& r = k_.refs[rid];
  auto const& al = k_.allocs[r.id];
  std::string flat = "0LL";
  for (std::size_t d = 0; d < r.index.size(); ++d) flat = fmt::format("({} * {} + {})", flat, al.shape[d], expr(r.index[d]));
  std::int64_t rest = 1;
  for (std::size_t d = r.index.size(); d < al.shape.size(); ++d) rest *= al.shape[d];
  std::string at = fmt::format("{} * {}", flat, rest * unit);
  for (std::size_t j = 0; j < r.block.size(); ++j) {
    rest /= al.shape[r.index.size() + j];
    at += fmt::format(" + ({}) * {}", expr(r.block[j]), rest * unit);
  }
  return at;
}

std::vector<emitter::view_dim> emitter::view_dims(ir::RefId rid) const {
  auto const& r = k_.refs[rid];
  auto const& al = k_.allocs[r.id];
  std::vector<view_dim> dims;
  std::int64_t inner = 1, stride = 1;
  for (int d = static_cast<int>(r.shape.size()) - 1; d >= 0; --d) {
    if (r.shape[d] != 1) dims.push_back({inner, r.shape[d], stride});
    inner *= r.shape[d];
    stride *= al.shape[r.index.size() + static_cast<std::size_t>(d)];
  }
  return dims;
}

std::string emitter::view_element(ir::RefId rid, std::string const& i) const {
  if (k_.refs[rid].block.empty()) return fmt::format("({})", i);
  std::string off = "0LL";
  for (auto const& d : view_dims(rid)) off = fmt::format("{} + ((static_cast<long long>({}) / {}) % {}) * {}", off, i, d.inner, d.extent, d.stride);
  return fmt::format("({})", off);
}

// The same on the host, for a known i (count_banks).
std::int64_t emitter::view_element(ir::RefId rid, std::int64_t i) const {
  if (k_.refs[rid].block.empty()) return i;
  std::int64_t off = 0;
  for (auto const& d : view_dims(rid)) off += i / d.inner % d.extent * d.stride;
  return off;
}


// Whether element `i` of a masked GMEM tile lies inside its array (every dimension's
// coordinate below the extent, the block's origin included) and its window's rows; "" for
// other views.
std::string emitter::inside(ir::RefId rid, std::string const& i) const {
  auto const& r = k_.refs[rid];
  if (!predicated(rid)) return "";
  const auto at = array_coords(rid, i);
  std::string in;
  for (int d = static_cast<int>(at.size()) - 1; d >= 0; --d)
    in += fmt::format("{}({} < {})", in.empty() ? "" : " && ", at[d], param_extent(k_.params[r.id], static_cast<std::size_t>(d)));
  if (r.windowed()) in += fmt::format(" && ({} < {})", at[0], expr(r.row_hi));
  return in;
}

// Whether vectors of v elements along a GMEM block's rows stay v-aligned: rows of a multiple
// of v, and no window moving a rank-1 array's start by a run-time number of elements.
bool emitter::rows_keep_vectors(ir::RefId rid, std::int64_t v) const {
  auto const& r = k_.refs[rid];
  auto const& p = k_.params[r.id];
  return !p.run_time(p.shape.size() - 1) && p.shape.back() % v == 0 && !(r.windowed() && p.shape.size() == 1);
}

// A parameter's extent along d in generated code: the literal, or for a run-time extent the
// kernel argument that carries it (the code then serves every value: the JIT cache key has none).
std::string emitter::param_extent(ir::Param const& p, std::size_t d) const {
  return p.run_time(d) ? fmt::format("ext_{}", k_.extents[static_cast<std::size_t>(p.extent[d])].name) : fmt::format("{}LL", p.shape[d]);
}

// Where a GMEM block starts along dimension d, in elements: a window's first row plus the
// block's coordinate times `unit` (its footprint there).
std::string emitter::block_origin(ir::RefId rid, std::size_t d, std::int64_t unit) const {
  auto const& r = k_.refs[rid];
  const auto at = fmt::format("{} * {}", expr(r.block[d]), unit);
  return d == 0 && r.windowed() ? fmt::format("({} + {})", expr(r.row_lo), at) : at;
}

// Whether a view's elements need a bounds predicate: a masked GMEM tile that does not divide
// its array. One that divides it lies wholly inside or wholly outside, and wholly outside is
// the interpreter's index-out-of-range, so it compiles as a plain tile (vectors and pairs too):
// a kernel may mask every tile and pay only where the sizes leave a tail.
bool emitter::predicated(ir::RefId rid) const {
  auto const& r = k_.refs[rid];
  if (r.base != ir::RefBase::param || !r.fill) return false;
  if (r.windowed()) return true;  // the window's end is known only at run time
  auto const& p = k_.params[r.id];
  for (std::size_t d = 0; d < r.shape.size(); ++d)
    if (p.run_time(d) || p.shape[d] % r.shape[d] != 0) return true;  // a run-time extent may leave a tail
  return false;
}

// `element(rid, i) = rhs;`, a masked tile's under its bounds predicate (nothing outside is written).
// In a reducing store (reduce_), the element is combined instead: sc::red_add(&element, rhs).
std::string emitter::assign(ir::RefId rid, std::string const& i, std::string const& rhs) const {
  const std::string in = inside(rid, i);
  if (reduce_ != ir::Reduce::none)
    return fmt::format("{}sc::red_{}(&{}, {});", in.empty() ? "" : "if (" + in + ") ", ir::reduce_name(reduce_), element(rid, i), rhs);
  return fmt::format("{}{} = {};", in.empty() ? "" : "if (" + in + ") ", element(rid, i), rhs);
}

// The array coordinates of element `i` (row-major over the block) of a GMEM block, one C++
// expression per dimension: the block's origin plus the element's place in it.
std::vector<std::string> emitter::array_coords(ir::RefId rid, std::string const& i) const {
  auto const& r = k_.refs[rid];
  std::vector<std::string> at(r.shape.size());
  // Inside a walk of a fragment of the block's shape: the walk's own row and column (as iota
  // takes them). From the flat index, each element paid a 64-bit division and modulo, and
  // gemm_grouped's masked epilogue spilled 872 bytes (255 registers; 150 and no spill with these).
  if (auto const* w = walk_coords(i, r.shape)) {
    at[0] = fmt::format("({} + static_cast<long long>({}))", block_origin(rid, 0, r.shape[0]), w->first);
    at[1] = fmt::format("({} + static_cast<long long>({}))", block_origin(rid, 1, r.shape[1]), w->second);
    return at;
  }
  std::int64_t inner = 1;
  for (int d = static_cast<int>(r.shape.size()) - 1; d >= 0; --d) {
    at[d] = fmt::format("({} + ((({}) / {}) % {}))", block_origin(rid, static_cast<std::size_t>(d), r.shape[d]), i, inner, r.shape[d]);
    inner *= r.shape[d];
  }
  return at;
}

// Element `i`'s offset in its GMEM parameter (a long long expression).
std::string emitter::param_offset(ir::RefId rid, std::string const& i) const {
  auto const& p = k_.params[k_.refs[rid].id];
  std::string off = "0LL";
  const auto at = array_coords(rid, i);
  for (std::size_t d = 0; d < at.size(); ++d) off = fmt::format("({} * {} + {})", off, param_extent(p, d), at[d]);
  return off;
}

// Element `i` (a C++ expression) of a view, as an lvalue of its storage type.
std::string emitter::element(ir::RefId rid, std::string const& i) const {
  auto const& r = k_.refs[rid];
  if (r.base == ir::RefBase::param) return fmt::format("p_{}[{}]", k_.params[r.id].name, param_offset(rid, i));
  auto const& al = k_.allocs[r.id];
  if (al.kind != ir::AllocKind::smem) throw unsupported(fmt::format("kernel '{}': only SMEM and GMEM views are generated yet", k_.name));
  // An unswizzled, untiled element is addressed from the generic pointer: no shared-window round trip.
  if (al.swizzle == 0 && !tiled(r.id))
    return fmt::format("*reinterpret_cast<{}*>(smem + {} + {} + static_cast<unsigned>({} * {}))", ctype(al.dtype), offsets_[r.id],
                       view_offset(rid), view_element(rid, i), ir::dtype_bits(al.dtype) / 8);
  return fmt::format("*reinterpret_cast<{}*>(smem + ({} - smem_base))", ctype(al.dtype), smem_address(rid, i));
}

// The shared-window address of element `i` of an SMEM view (an unsigned expression): what
// element() dereferences, and what an instruction given addresses (stmatrix) takes.
std::string emitter::smem_address(ir::RefId rid, std::string const& i) const {
  auto const& r = k_.refs[rid];
  auto const& al = k_.allocs[r.id];
  const int bytes = ir::dtype_bits(al.dtype) / 8;
  const std::string e = view_element(rid, i);
  if (tiled(r.id)) {
    const std::string at = fmt::format("smem_base + {}u + {} * {}u", offsets_[r.id], tiled_element(rid, e), bytes);
    return al.swizzle ? fmt::format("sc::swz<{}>({})", al.swizzle, at) : at;
  }
  const std::string at = fmt::format("smem_base + {}u + {} + static_cast<unsigned>({} * {})", offsets_[r.id], view_offset(rid), e, bytes);
  // TMA swizzles by the absolute SMEM address (bits 4-6 XOR bits 7-9), and 32/64-byte swizzled
  // allocations are only 128-byte aligned, so swizzle the shared-window address, not the offset.
  return al.swizzle ? fmt::format("sc::swz<{}>({})", al.swizzle, at) : at;
}


// ---- tile values: element i, computed in f32 (floats) or 64-bit integers ---------------------
std::string emitter::value(ir::ValueId id, std::string const& i) const {
  auto const& v = k_.values[id];
  // A value a caller already named: a TMEM leaf's register, or a row statement's fold, row
  // vector or row/column (tcgen05_gen). A load's override is the element it reads, converted below.
  if (v.op != ir::ValueOp::load)
    if (auto o = leaf_override_.find(id); o != leaf_override_.end()) return o->second;
  const bool fp = ir::dtype_is_float(v.dtype);
  auto round = [&](std::string x) -> std::string {
    switch (v.dtype) {
      case ir::DType::f16: return fmt::format("sc::round_f16({})", x);
      case ir::DType::bf16: return fmt::format("sc::round_bf16({})", x);
      case ir::DType::e4m3: return fmt::format("sc::round_e4m3({})", x);
      case ir::DType::e5m2: return fmt::format("sc::round_e5m2({})", x);
      case ir::DType::i32: return fmt::format("static_cast<long long>(static_cast<int>({}))", x);
      case ir::DType::u32: return fmt::format("static_cast<long long>(static_cast<unsigned>({}))", x);
      case ir::DType::i8: return fmt::format("static_cast<long long>(static_cast<signed char>({}))", x);
      case ir::DType::u8: case ir::DType::e2m1x2: case ir::DType::ue4m3: case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1: return fmt::format("static_cast<long long>(static_cast<unsigned char>({}))", x);
      case ir::DType::pred: return fmt::format("static_cast<long long>(({}) != 0)", x);
      default: return x;
    }
  };
  switch (v.op) {
    case ir::ValueOp::load: {
      auto const& r = k_.refs[v.ref];
      if (is_acc(v.ref)) {
        // A row vector: the register of the row the walk is at (both halves of a quad's rows
        // are in every lane of the quad, so no lane needs another's).
        if (k_.allocs[r.id].shape.size() == 1) {
          if (row_mb_.empty())
            throw unsupported(fmt::format("kernel '{}': row-vector accumulator a{} is read outside a store or wgmma that walks the D fragment's rows",
                                          k_.name, r.id));
          return fmt::format("acc{}[({}) * 2 + ({})]", r.id, row_mb_, row_half_);
        }
        // Only reached inside a walk of a fragment (the callers check shapes): the element the
        // walk is at is one of this thread's registers.
        if (fragment_index_.empty())
          throw unsupported(fmt::format("kernel '{}': accumulator a{} is read outside a store or wgmma that walks its fragment", k_.name, r.id));
        if (acc_f16(static_cast<std::size_t>(r.id)) || acc_f8(static_cast<std::size_t>(r.id))) return acc_read(static_cast<std::size_t>(r.id), fragment_index_);
        return fmt::format("acc{}[{}]", r.id, fragment_index_);
      }
      const auto dt = r.base == ir::RefBase::param ? k_.params[r.id].dtype : k_.allocs[r.id].dtype;
      auto o = leaf_override_.find(id);
      const std::string x = o != leaf_override_.end() ? o->second : element(v.ref, i);
      std::string read;
      if (dt == ir::DType::f16) read = fmt::format("sc::f16_to_f32({})", x);
      else if (dt == ir::DType::bf16) read = fmt::format("sc::bf16_to_f32({})", x);
      else if (dt == ir::DType::e4m3) read = fmt::format("sc::e4m3_to_f32({})", x);
      else if (dt == ir::DType::e5m2) read = fmt::format("sc::e5m2_to_f32({})", x);
      else read = fp ? fmt::format("static_cast<float>({})", x) : fmt::format("static_cast<long long>({})", x);
      // A masked tile reads memory only inside the array (the conditional evaluates one arm):
      // outside, the fill as the element type holds it (round() of the load's own dtype).
      if (const std::string in = inside(v.ref, i); !in.empty() && o == leaf_override_.end())
        return fmt::format("(({}) ? {} : {})", in, read, round(fp ? float_literal(*r.fill) : fmt::format("{}LL", static_cast<long long>(*r.fill))));
      return read;
    }
    case ir::ValueOp::scalar: return round(fp ? float_literal(v.scalar) : fmt::format("{}LL", static_cast<long long>(v.scalar)));
    // The 64-bit index converted as a scalar is (round-to-nearest to f32, then the dtype's own rounding).
    case ir::ValueOp::index: return round(fp ? fmt::format("static_cast<float>({})", expr(v.index)) : expr(v.index));
    case ir::ValueOp::neg: return round(fmt::format("(-{})", value(v.a, i)));
    case ir::ValueOp::exp: case ir::ValueOp::exp2: case ir::ValueOp::log: case ir::ValueOp::rsqrt: case ir::ValueOp::tanh:
      // Exact: the prelude's copies of stagecraft/ir/math.hpp, not CUDA's expf & co, so the
      // interpreter computes the same bits (docs/interpreter.md, numerics). Fast: one SFU
      // instruction each (sc::fast_*, the same header's fast mode).
      return round(fmt::format("sc::{}_{}({})", o_.math == ir::math_mode::fast ? "fast" : "math", ir::value_op_name(v.op), value(v.a, i)));
    case ir::ValueOp::abs: {
      const std::string x = value(v.a, i);
      return round(fp ? fmt::format("sc::math_abs({})", x) : fmt::format("([](long long y) {{ return y < 0 ? -y : y; }}({}))", x));
    }
    case ir::ValueOp::iota: {
      // Inside a walk of a fragment of the same shape: the walk's own row or column, which
      // NVVM folds to a constant plus lane bits (from the flat index it computed a 64-bit
      // division and modulo per element: attention's 64 x 128 causal triangle spilled).
      if (auto const* w = walk_coords(i, v.shape)) {
        const std::string c = fmt::format("static_cast<long long>({})", v.scalar == 0 ? w->first : w->second);
        return round(fp ? fmt::format("static_cast<float>({})", c) : c);
      }
      const auto [len, inner] = around_axis(v.shape, static_cast<std::size_t>(v.scalar));
      const std::string c = fmt::format("((static_cast<long long>({}) / {}LL) % {}LL)", i, inner, len);
      return round(fp ? fmt::format("static_cast<float>({})", c) : c);
    }
    case ir::ValueOp::broadcast: {
      // Computed once per row before the walk of the fragment's columns (hoist_rows).
      if (auto h = row_hoisted_.find(id); h != row_hoisted_.end() && !row_half_.empty()) return fmt::format("{}[{}]", h->second, row_half_);
      // Element i of the result is element (i / (len * inner)) * inner + i % inner of the operand.
      // A row vector spread along a fragment's rows is the thread's own register for the row
      // the walk is at: no data moves.
      if (reads_accumulator(v.a) && !(in_row_walk(v.shape) && v.scalar == 1))
        refuse_exchange(id, "a broadcast that is not a row vector spread along the columns of the D fragment being walked");
      const auto [len, inner] = around_axis(v.shape, static_cast<std::size_t>(v.scalar));
      return value(v.a, fmt::format("((static_cast<long long>({0}) / {1}LL) * {2}LL + static_cast<long long>({0}) % {2}LL)", i, len * inner, inner));
    }
    case ir::ValueOp::permute: case ir::ValueOp::reshape: case ir::ValueOp::slice: {
      // No instruction: the operand is read at the element the view names (ir/tile_view.hpp),
      // so a transpose, reshape or slice costs only the address arithmetic of that read.
      if (const auto c0 = acc_column_slice(id); c0 >= 0 && !walk_reg_.empty()) {
        auto const& acc = k_.refs[k_.values[v.a].ref];
        return fmt::format("acc{}[mb * {} + {} + {}]", acc.id, k_.allocs[acc.id].shape[1] / 2, c0 / 2, walk_reg_);
      }
      // A row vector given leading unit extents ((64) as (1, 64)) is the same registers.
      if (v.op == ir::ValueOp::reshape && !row_mb_.empty() && k_.values[v.a].shape.size() == 1 && ir::drop_leading_units(v.shape) == k_.values[v.a].shape)
        return value(v.a, i);
      // So is a fragment given leading unit extents ((64, 64) as (1, 64, 64), a block of a 3-D
      // array), inside a walk of that fragment: the same flat index, the same register.
      if (v.op == ir::ValueOp::reshape && !walk_reg_.empty() && ir::drop_leading_units(v.shape) == walk_shape_ && k_.values[v.a].shape == walk_shape_)
        return value(v.a, i);
      if (reads_accumulator(v.a)) refuse_exchange(id, "a view (permute, reshape or slice) of the D fragment");
      const auto view = *ir::decode_tile_view(v.op, v.scalar, v.shape, k_.values[v.a].shape).view;
      const auto inner = ir::row_major_strides(v.shape);
      if (v.op == ir::ValueOp::reshape) return value(v.a, i);  // row-major order kept: the same flat index
      std::string from = fmt::format("{}LL", view.offset);
      for (std::size_t d = 0; d < v.shape.size(); ++d)
        if (v.shape[d] > 1) from += fmt::format(" + ((static_cast<long long>({}) / {}LL) % {}LL) * {}LL", i, inner[d], v.shape[d], view.stride[d]);
      return value(v.a, "(" + from + ")");
    }
    case ir::ValueOp::lt: case ir::ValueOp::le: case ir::ValueOp::gt: case ir::ValueOp::ge: case ir::ValueOp::eq: case ir::ValueOp::ne: {
      static constexpr const char* sym[] = {"<", "<=", ">", ">=", "==", "!="};
      return fmt::format("(({}) {} ({}) ? 1LL : 0LL)", value(v.a, i), sym[static_cast<int>(v.op) - static_cast<int>(ir::ValueOp::lt)], value(v.b, i));
    }
    case ir::ValueOp::select: return fmt::format("(({}) != 0 ? {} : {})", value(v.a, i), value(v.b, i), value(v.c, i));
    // One rounding, as std::fma in the interpreter (--fmad=false leaves explicit fmaf alone).
    case ir::ValueOp::fma: return round(fmt::format("fmaf({}, {}, {})", value(v.a, i), value(v.b, i), value(v.c, i)));
    case ir::ValueOp::reduce_sum: case ir::ValueOp::reduce_max: case ir::ValueOp::reduce_min: {
      // The thread that owns output element i folds its operand elements itself, from index 0
      // upward (the interpreter's order, so the sums agree bit for bit): operands are read from
      // memory at any index, so no element crosses lanes and there is nothing to exchange.
      // The identities leave the first element as it is: -0 + x == x, fmaxf(NaN, x) == x.
      auto const& in = k_.values[v.a].shape;
      if (v.scalar == 1 && in_row_walk(in)) return round(fragment_fold(v));
      if (reads_accumulator(v.a)) refuse_exchange(id, "a reduction that is not along the rows of the D fragment being walked");
      const auto [len, inner] = around_axis(in, static_cast<std::size_t>(v.scalar));
      const int n = reduction_depth_++;
      const char* type = fp ? "float" : "long long";
      const std::string init = fp ? (v.op == ir::ValueOp::reduce_sum ? "-0.0f" : "__int_as_float(0x7fc00000)")
                                  : (v.op == ir::ValueOp::reduce_sum ? "0LL" : v.op == ir::ValueOp::reduce_max ? "(-9223372036854775807LL - 1)" : "9223372036854775807LL");
      const std::string j = fmt::format("rj{}", n);
      const std::string x = value(v.a, j);
      std::string step;
      switch (v.op) {
        case ir::ValueOp::reduce_sum: step = fp ? fmt::format("r{0} = r{0} + {1};", n, x) : fmt::format("r{0} = static_cast<long long>(static_cast<unsigned long long>(r{0}) + static_cast<unsigned long long>({1}));", n, x); break;
        case ir::ValueOp::reduce_max: step = fmt::format("r{0} = {2}(r{0}, {1});", n, x, fp ? "fmaxf" : "max"); break;
        default: step = fmt::format("r{0} = {2}(r{0}, {1});", n, x, fp ? "fminf" : "min"); break;
      }
      --reduction_depth_;
      return round(fmt::format("([&]() {{ const long long rb{0} = (static_cast<long long>({1}) / {3}LL) * {4}LL + static_cast<long long>({1}) % {3}LL; {2} r{0} = {5}; "
                               "for (long long rk{0} = 0; rk{0} < {6}LL; ++rk{0}) {{ const long long {7} = rb{0} + rk{0} * {3}LL; {8} }} return r{0}; }}())",
                               n, i, type, inner, len * inner, init, len, j, step));
    }
    case ir::ValueOp::cast: {
      const bool from_fp = ir::dtype_is_float(k_.values[v.a].dtype);
      const std::string x = value(v.a, i);
      if (fp) return round(from_fp ? x : fmt::format("static_cast<float>({})", x));
      if (!from_fp) return round(x);
      // float -> int: truncate toward zero and saturate (the __float2*_rz intrinsics); i8 and u8
      // saturate to [-128, 127] and [0, 255] like the interpreter, instead of wrapping the i32 result.
      if (ir::dtype_is_int8(v.dtype)) {
        const auto [lo, hi] = ir::range_of(v.dtype);
        return fmt::format("static_cast<long long>(max({}, min({}, __float2int_rz({}))))", static_cast<int>(lo), static_cast<int>(hi), x);
      }
      return round(fmt::format("static_cast<long long>({}({}))", v.dtype == ir::DType::u32 ? "__float2uint_rz" : "__float2int_rz", x));
    }
    case ir::ValueOp::load_tmem:  // only inside a store from TMEM, which names its registers (above)
      throw unsupported(fmt::format("kernel '{}': async_load_tmem outside a store of it", k_.name));
    default: break;
  }
  const std::string a = value(v.a, i), b = value(v.b, i);
  switch (v.op) {
    case ir::ValueOp::add: return round(fmt::format("({} + {})", a, b));
    case ir::ValueOp::sub: return round(fmt::format("({} - {})", a, b));
    case ir::ValueOp::mul:
      // Integer tiles are computed in 64 bits, where a u32 x u32 product (up to 2^64) overflows
      // a signed long long: multiply in the type's own (modular) arithmetic instead.
      if (v.dtype == ir::DType::u32) return round(fmt::format("(static_cast<unsigned>({}) * static_cast<unsigned>({}))", a, b));
      return round(fmt::format("({} * {})", a, b));
    case ir::ValueOp::div:  // integer division by zero gives -1 (as div.s32 does and the interpreter models); in C++ it is UB
      // Fast: div.full.f32 (2 ulp) instead of the correctly rounded division's Newton sequence.
      if (fp && o_.math == ir::math_mode::fast) return round(fmt::format("sc::fast_div({}, {})", a, b));
      return round(fp ? fmt::format("({} / {})", a, b) : fmt::format("sc::idiv({}, {})", a, b));
    case ir::ValueOp::min: return round(fp ? fmt::format("fminf({}, {})", a, b) : fmt::format("min({}, {})", a, b));
    case ir::ValueOp::max: return round(fp ? fmt::format("fmaxf({}, {})", a, b) : fmt::format("max({}, {})", a, b));
    default: return "0";
  }
}


// (extent, product of the extents after it) of axis `axis` of `shape`: element i's coordinate
// along the axis is (i / inner) % extent in a row-major tile.
std::pair<std::int64_t, std::int64_t> emitter::around_axis(std::vector<std::int64_t> const& shape, std::size_t axis) {
  std::int64_t inner = 1;
  for (std::size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  return {shape[axis], inner};
}

// A 32 x 32 SMEM tile of 4-byte elements, 128-byte swizzled: one side of transpose32.
bool emitter::transpose32_view(ir::RefId rid) const {
  auto const& r = k_.refs[rid];
  if (r.base != ir::RefBase::alloc) return false;
  auto const& al = k_.allocs[r.id];
  return al.kind == ir::AllocKind::smem && al.swizzle == 128 && ir::dtype_bits(al.dtype) == 32 && r.shape == std::vector<std::int64_t>{32, 32};
}

// store(out, f(transpose(load(in)))) with both views transpose32 tiles: written in the order of
// ir/transpose_order.hpp. Any order is correct (each element is computed where it is stored);
// this one is the one without bank conflicts.
bool emitter::transpose32(ir::Stmt const& s) const {
  if (!transpose32_view(s.refs[0])) return false;
  bool found = false;
  std::vector<ir::ValueId> stack{s.value};
  while (!stack.empty()) {
    auto const& v = k_.values[stack.back()];
    stack.pop_back();
    if (v.op == ir::ValueOp::permute && v.shape.size() == 2 && k_.values[v.a].op == ir::ValueOp::load &&
        transpose32_view(k_.values[v.a].ref))
      found = true;
    else if (ir::value_is_reduction(v.op) || v.op == ir::ValueOp::broadcast || ir::value_is_view(v.op))
      return false;  // other element movements: their banks are not counted for this order
    for (auto c : {v.a, v.b, v.c})
      if (c != ir::none) stack.push_back(c);
  }
  return found;
}

bool emitter::moves_elements(ir::ValueId id) const {
  auto const& v = k_.values[id];
  // A reshape keeps every element's flat index, so v consecutive elements of the result are v
  // consecutive elements of its operand: it may take part in a vector load.
  if (ir::value_is_reduction(v.op) || v.op == ir::ValueOp::broadcast || v.op == ir::ValueOp::permute || v.op == ir::ValueOp::slice) return true;
  return (v.a != ir::none && moves_elements(v.a)) || (v.b != ir::none && moves_elements(v.b)) || (v.c != ir::none && moves_elements(v.c));
}

// slice<1>(load(acc), c0, w) of an f32 (rows, W) accumulator with c0 and w multiples of 8: the
// columns of whole 8-column groups of the D fragment, i.e. registers c0 / 2 .. (c0 + w) / 2 of
// each m64 block. A fragment walk over the slice's (rows, w) shape reads register
// mb * W / 2 + c0 / 2 + i where the whole accumulator's walk reads mb * W / 2 + i: the epilogue
// stores C a column subtile at a time without moving a register. Returns c0, or -1.
std::int64_t emitter::acc_column_slice(ir::ValueId id) const {
  auto const& v = k_.values[id];
  if (v.op != ir::ValueOp::slice || v.a == ir::none) return -1;
  auto const& l = k_.values[v.a];
  if (l.op != ir::ValueOp::load || !is_acc(l.ref)) return -1;
  auto const& al = k_.allocs[k_.refs[l.ref].id];
  if (al.dtype != ir::DType::f32 || al.shape.size() != 2 || !k_.refs[l.ref].index.empty()) return -1;
  const auto code = static_cast<std::int64_t>(v.scalar);
  const std::int64_t axis = code % 8, start = code / 8;
  if (axis != 1 || start % 8 != 0 || v.shape.size() != 2 || v.shape[1] % 8 != 0 || v.shape[0] != al.shape[0]) return -1;
  return start;
}

// Inside a walk of an accumulator's fragment an accumulator element is this thread's register
// at the walk's position, whatever index is asked for: an op that reads other elements than
// the one it computes can take one only in the forms the D layout makes cheap: a row reduction
// (fragment_fold), a row broadcast (the thread's own row register) and a column slice of whole
// 8-column groups (acc_column_slice, above).
bool emitter::reads_accumulator(ir::ValueId id) const {
  std::vector<ir::ValueId> leaves;
  loads_of(id, leaves);
  return std::any_of(leaves.begin(), leaves.end(), [&](ir::ValueId l) { return is_acc(k_.values[l].ref); });
}

// Whether a (rows, cols) tile lines up with the D fragment rows being walked.
bool emitter::in_row_walk(std::vector<std::int64_t> const& shape) const {
  return !row_mb_.empty() && shape.size() == 2 && shape[0] == walk_rows_ && shape[1] % 8 == 0;
}

[[noreturn]] void emitter::refuse_exchange(ir::ValueId id, const char* what) const {
  std::vector<ir::ValueId> leaves;
  loads_of(id, leaves);
  int a = -1;
  for (auto l : leaves)
    if (is_acc(k_.values[l].ref)) a = k_.refs[k_.values[l].ref].id;
  throw unsupported(fmt::format("kernel '{}': tile value {} ({}) reads accumulator a{} at other elements than its own in {}; only row reductions "
                                "(sum/max/min<1>) and row broadcasts (broadcast<1>) inside a walk of the D fragment are generated "
                                "(store the accumulator to SMEM first)",
                                k_.name, id, ir::value_op_name(k_.values[id].op), a, what));
}


// The D fragment puts row r of an m64 block in the 4 lanes of one quad (lanes 4q .. 4q + 3 of
// a warp), each holding n/4 of its columns in registers 4j + 2h + {0, 1} (h: which of the
// thread's two rows). A row reduction folds the thread's registers in that order, then
// combines the quad with two butterfly shuffles (xor 1, xor 2): every lane ends with the same
// bits, since the combination is ((p0 + p1) + (p2 + p3)) in each, up to commutation. This is
// another association than the interpreter's left-to-right fold: max and min agree bit for
// bit; sums agree within the bound docs/codegen.md gives. rows_by_quad() checks the
// description these register and lane numbers are read from.
std::string emitter::fragment_fold(ir::Value const& v) const {
  if (!rows_by_quad()) throw unsupported(fmt::format("kernel '{}': the D fragment layout does not keep each row within a quad", k_.name));
  auto const& in = k_.values[v.a].shape;
  const bool fp = ir::dtype_is_float(v.dtype);
  const int n = reduction_depth_++;
  const char* type = fp ? "float" : "long long";
  const std::string init = fp ? (v.op == ir::ValueOp::reduce_sum ? "-0.0f" : "__int_as_float(0x7fc00000)")
                              : (v.op == ir::ValueOp::reduce_sum ? "0LL" : v.op == ir::ValueOp::reduce_max ? "(-9223372036854775807LL - 1)" : "9223372036854775807LL");
  auto combine = [&](std::string const& x) {
    switch (v.op) {
      case ir::ValueOp::reduce_sum:
        return fp ? fmt::format("r{0} = r{0} + {1};", n, x)
                  : fmt::format("r{0} = static_cast<long long>(static_cast<unsigned long long>(r{0}) + static_cast<unsigned long long>({1}));", n, x);
      case ir::ValueOp::reduce_max: return fmt::format("r{0} = {2}(r{0}, {1});", n, x, fp ? "fmaxf" : "max");
      default: return fmt::format("r{0} = {2}(r{0}, {1});", n, x, fp ? "fminf" : "min");
    }
  };
  const std::int64_t regs = in[1] / 2;  // f32 registers per m64 block of an (M, in[1]) fragment
  std::string body = fmt::format("{} r{} = {};", type, n, init);
  const std::string saved = fragment_index_;
  for (std::int64_t j = 0; j < in[1] / 8; ++j)
    for (int b = 0; b < 2; ++b) {
      const std::string reg = fmt::format("({} + 2 * ({}))", 4 * j + b, row_half_);
      fragment_index_ = fmt::format("({}) * {} + {}", row_mb_, regs, reg);
      const std::string f = fmt::format("(static_cast<long long>(64 * ({0}) + sc::accumulator_element(lane, {1}).row) * {2}LL + sc::accumulator_element(lane, {1}).col)",
                                        row_mb_, reg, in[1]);
      body += " " + combine(value(v.a, f));
    }
  fragment_index_ = saved;
  for (int x : {1, 2}) body += " " + combine(fmt::format("__shfl_xor_sync(0xffffffffu, r{}, {})", n, x));
  --reduction_depth_;
  return fmt::format("([&]() {{ {} return r{}; }}())", body, n);
}

// Checked on the one description: register i holds a row of half i / 2 % 2 (the row register
// 2h holds); the lanes of a quad hold the same rows; the quad's registers of a row cover its
// columns exactly once.
bool emitter::rows_by_quad() {
  constexpr int cols = 256, regs = cols / 2;
  for (int t = 0; t < 128; ++t)
    for (int h = 0; h < 2; ++h) {
      std::vector<int> seen(cols, 0);
      for (int q = 0; q < 4; ++q) {
        const int u = (t & ~3) | q;
        if (ir::wgmma::accumulator_element(u, 2 * h).row != ir::wgmma::accumulator_element(t, 2 * h).row) return false;
        for (int i = 0; i < regs; ++i) {
          const auto e = ir::wgmma::accumulator_element(u, i);
          if (e.row != ir::wgmma::accumulator_element(u, 2 * (i / 2 % 2)).row) return false;
          if (i / 2 % 2 == h) ++seen[e.col];
        }
      }
      if (std::any_of(seen.begin(), seen.end(), [](int c) { return c != 1; })) return false;
    }
  return true;
}


void emitter::loads_of(ir::ValueId id, std::vector<ir::ValueId>& out) const {
  auto const& v = k_.values[id];
  if (v.op == ir::ValueOp::load) out.push_back(id);
  if (v.a != ir::none) loads_of(v.a, out);
  if (v.b != ir::none) loads_of(v.b, out);
  if (v.c != ir::none) loads_of(v.c, out);
}


int emitter::widest_load(ir::ValueId id) const {
  auto const& v = k_.values[id];
  int w = 0;
  if (v.op == ir::ValueOp::load) {
    auto const& r = k_.refs[v.ref];
    w = ir::dtype_bits(r.base == ir::RefBase::param ? k_.params[r.id].dtype : k_.allocs[r.id].dtype) / 8;
  }
  if (v.a != ir::none) w = std::max(w, widest_load(v.a));
  if (v.b != ir::none) w = std::max(w, widest_load(v.b));
  if (v.c != ir::none) w = std::max(w, widest_load(v.c));
  return w;
}


std::string emitter::store_conv(ir::DType dt, std::string const& x) const {
  switch (dt) {
    case ir::DType::f16: return fmt::format("sc::f32_to_f16({})", x);
    case ir::DType::bf16: return fmt::format("sc::f32_to_bf16({})", x);
    case ir::DType::e4m3: return fmt::format("sc::f32_to_e4m3({})", x);
    case ir::DType::e5m2: return fmt::format("sc::f32_to_e5m2({})", x);
    default: return fmt::format("static_cast<{}>({})", ctype(dt), x);
  }
}


// TMA coordinates (innermost first) of a GMEM block, plus an optional row offset (multicast).
std::string emitter::coords(ir::RefId gref, std::string const& row_extra) const {
  auto const& g = k_.refs[gref];
  std::vector<std::string> c;
  for (int d = static_cast<int>(g.shape.size()) - 1; d >= 0; --d)
    c.push_back(fmt::format("static_cast<int>({}{})", block_origin(gref, static_cast<std::size_t>(d), g.shape[d] * (g.stride.empty() ? 1 : g.stride[d])),
                            d == 0 ? row_extra : ""));
  return fmt::format("{{{}}}", fmt::join(c, ", "));
}


// ---- warpgroup synchronisation between tile statements ----------------------------------------
// A store is one warpgroup-wide op (the interpreter runs it atomically), but its elements are
// spread over lanes by a vector width that depends on the dtypes and shapes involved, so two
// stores may touch the same bytes from different lanes (RAW/WAR/WAW). A store that may follow
// another without a warpgroup barrier in between gets one. after() is the "dirty" state after a
// statement given the state before it (true: a store ran since the last barrier).
bool emitter::after(ir::StmtId id, bool d) const {
  auto const& s = k_.stmts[id];
  switch (s.op) {
    case ir::StmtOp::seq:
      for (auto c : s.body) d = after(c, d);
      return d;
    case ir::StmtOp::for_: return loop_head(id, hoists_sync(id, d) ? false : d) || (has_break(s.body[0]) && may_dirty(s.body[0]));  // a break leaves mid-body
    case ir::StmtOp::if_: return after(s.body[0], d) || (s.body.size() > 1 ? after(s.body[1], d) : d);
    case ir::StmtOp::store: return touches_memory(s) || d;  // registers are no lane's business but their own
    case ir::StmtOp::wgmma: return reads_memory_into_a(s);  // starts with sc::wg_sync when needed
    case ir::StmtOp::copy_gmem_to_smem:
    case ir::StmtOp::copy_smem_to_gmem:
    case ir::StmtOp::barrier_arrive:
    case ir::StmtOp::wait_group:
    case ir::StmtOp::tcgen05_mma:
    case ir::StmtOp::tcgen05_cp:
    case ir::StmtOp::tmem_dealloc: return false;  // these start with sc::wg_sync
    case ir::StmtOp::named_barrier_sync: return false;  // every lane of the warpgroup meets there
    case ir::StmtOp::semaphore_signal:
    case ir::StmtOp::semaphore_wait:
    case ir::StmtOp::atomic_fetch: return false;  // these sync the warpgroup around the elected thread's atomic
    default: return d;
  }
}

// Whether a break_if in `id` leaves the loop around it (not one of its own inner loops).
bool emitter::has_break(ir::StmtId id) const {
  auto const& s = k_.stmts[id];
  if (s.op == ir::StmtOp::break_if) return true;
  if (s.op == ir::StmtOp::for_) return false;
  return std::any_of(s.body.begin(), s.body.end(), [&](ir::StmtId c) { return has_break(c); });
}
// Whether some statement in `id` can leave the warpgroup dirty (after()'s stores).
bool emitter::may_dirty(ir::StmtId id) const {
  auto const& s = k_.stmts[id];
  if (s.op == ir::StmtOp::store || s.op == ir::StmtOp::wgmma) return after(id, false);
  return std::any_of(s.body.begin(), s.body.end(), [&](ir::StmtId c) { return may_dirty(c); });
}

// State at a loop's head: entered with d, or coming back from the end of the body (fixpoint).
// Memoised per (loop, d): each level calls after() on its body twice, which is exponential in
// the nesting depth otherwise.
bool emitter::loop_head(ir::StmtId id, bool d) const {
  auto& memo = loop_head_memo_[{id, d}];
  if (memo == 0) {
    auto const& body = k_.stmts[id].body[0];
    memo = d || after(body, d || after(body, d)) ? 2 : 1;
  }
  return memo == 2;
}

// A loop entered dirty whose body leaves its own stores met (clean at the head when entered
// clean): the entry's stores would cost a barrier in every trip, at the body's first barrier
// point, where one before the loop does. Not when the body has no barrier point at all (register
// stores alone, say): then the loop needs none.
bool emitter::hoists_sync(ir::StmtId id, bool d) const {
  if (!d) return false;
  auto& memo = hoist_memo_[id];  // memoised as loop_head is
  if (memo == 0) memo = !loop_head(id, false) && may_meet(k_.stmts[id].body[0]) ? 2 : 1;
  return memo == 2;
}

// Whether some statement in `id` meets at the warpgroup's barrier when it finds the warpgroup
// dirty: a store that touches memory, and whatever after() says leaves it clean.
bool emitter::may_meet(ir::StmtId id) const {
  auto const& s = k_.stmts[id];
  switch (s.op) {
    case ir::StmtOp::seq:
    case ir::StmtOp::for_:
    case ir::StmtOp::if_: return std::any_of(s.body.begin(), s.body.end(), [&](ir::StmtId c) { return may_meet(c); });
    case ir::StmtOp::store: return touches_memory(s);
    default: return !after(id, true);
  }
}

// A (128) view of an SMEM row vector: a whole innermost row of 128 elements of a plain
// (unswizzled, untiled) array, picked by indexing its leading dimensions. Its element i is at
// the same offset from a multiple of 128 in every such view, so thread `lane`'s elements of two
// views of one array are never another lane's.
bool emitter::row_vector_ref(ir::RefId r) const {
  auto const& ref = k_.refs[r];
  if (ref.base != ir::RefBase::alloc || ref.shape != std::vector<std::int64_t>{128} || !ref.block.empty() || !ref.stride.empty() || ref.windowed())
    return false;
  auto const& al = k_.allocs[ref.id];
  return al.kind == ir::AllocKind::smem && al.swizzle == 0 && al.tiling.empty() && !al.shape.empty() && al.shape.back() == 128 &&
         ref.index.size() + 1 == al.shape.size();
}

// Whether value v, read at element `lane` of a (128) row (`row`) or along row `lane` of a
// (128, C) TMEM tile (`tile`), reads only memory its thread owns.
bool emitter::lane_private_value(ir::ValueId v, lane_ctx at) const {
  if (v == ir::none) return true;
  auto const& x = k_.values[v];
  switch (x.op) {
    case ir::ValueOp::scalar:
    case ir::ValueOp::iota:
    case ir::ValueOp::index: return true;  // no memory
    case ir::ValueOp::load: return at == lane_ctx::row && row_vector_ref(x.ref);
    case ir::ValueOp::load_tmem: return at == lane_ctx::tile && x.shape.size() == 2 && x.shape[0] == 128;
    case ir::ValueOp::broadcast:  // a row vector spread along the tile's rows: read at `lane`
      return at == lane_ctx::tile && x.scalar == 1 && k_.values[x.a].shape == std::vector<std::int64_t>{128} && lane_private_value(x.a, lane_ctx::row);
    case ir::ValueOp::reduce_sum:
    case ir::ValueOp::reduce_max:
    case ir::ValueOp::reduce_min:  // a row of the tile folded into element `lane`
      return at == lane_ctx::row && x.scalar == 1 && k_.values[x.a].shape.size() == 2 && k_.values[x.a].shape[0] == 128 &&
             lane_private_value(x.a, lane_ctx::tile);
    default:
      if (ir::value_is_view(x.op)) return false;  // elements move
      return lane_private_value(x.a, at) && lane_private_value(x.b, at) && lane_private_value(x.c, at);
  }
}

// A store of a warpgroup role (lane 0..127) whose destination and reads are the thread's own:
// into a (128) SMEM row vector at element `lane` (a generic store of 128 elements puts element i
// on lane i; a row statement writes element `lane`), or into TMEM along row `lane`.
bool emitter::lane_private(ir::StmtId id) const {
  auto const& s = k_.stmts[id];
  if (s.op != ir::StmtOp::store || one_warp_ || static_cast<ir::Reduce>(s.n) != ir::Reduce::none) return false;
  const auto who = roles_[static_cast<std::size_t>(id)];
  if (!who || (who & warp_roles_)) return false;
  if (tcgen05_gen::writes_tmem(k_, s)) return k_.refs[s.refs[0]].shape.size() == 2 && lane_private_value(s.value, lane_ctx::tile);
  return row_vector_ref(s.refs[0]) && lane_private_value(s.value, lane_ctx::row);
}

bool emitter::quiet(ir::StmtId id) const {
  auto const& s = k_.stmts[id];
  switch (s.op) {
    case ir::StmtOp::barrier_wait: return true;
    case ir::StmtOp::seq:
    case ir::StmtOp::for_:
    case ir::StmtOp::if_: return std::all_of(s.body.begin(), s.body.end(), [&](ir::StmtId c) { return quiet(c); });
    default: return false;
  }
}

// ---- statements ------------------------------------------------------------------------------
void emitter::stmt(ir::StmtId id, int depth, std::string& out) {
  const auto begin = out.size();
  const auto outer = cur_;
  cur_ = id;
  // A run of lane-private stores continues through barrier waits (a wait orders nothing between
  // this warpgroup's lanes) and sequences, and through stores that take part in it; anything
  // else may store or meet on a path the run cannot see, so the run ends before and after it.
  auto const op = k_.stmts[id].op;
  const bool keeps_run = op == ir::StmtOp::seq || op == ir::StmtOp::store || quiet(id);
  if (!keeps_run) private_run_ = false;
  emit(id, depth, out);
  if (!keeps_run || (op == ir::StmtOp::store && !lane_private(id))) private_run_ = false;
  cur_ = outer;
  if (k_.stmts[id].op != ir::StmtOp::seq) spans_.push_back({static_cast<int>(id), k_.stmts[id].op, begin, out.size()});
}

void emitter::emit_seq(ir::Stmt const& s, int depth, std::string& out) {
  // A tcgen05 MMA, commit or scale copy, or a sequence of nothing else (each<DC>'s calls): one
  // elected block takes a run of them, where a nested sequence used to end the run (a commit
  // after each<2>'s two MMAs elected again: 7 elects per attention_blackwell MMA-warp loop trip).
  std::function<bool(ir::StmtId)> issue_only = [&](ir::StmtId c) {
    auto const& x = k_.stmts[c];
    if (x.op == ir::StmtOp::seq) return !x.body.empty() && std::all_of(x.body.begin(), x.body.end(), issue_only);
    return x.op == ir::StmtOp::tcgen05_mma || x.op == ir::StmtOp::tcgen05_commit_arrive || x.op == ir::StmtOp::tcgen05_cp;
  };
  auto issue = [&](ir::StmtId c) { return !elected_ && issue_only(c); };
  for (std::size_t i = 0; i < s.body.size();) {
    if (const std::size_t n = tc_ ? tcgen05_gen::row_run(k_, s.body, i, [&](ir::StmtId id) { return lane_private(id); }) : 0; n >= 2) {
      // Row statements over the same TMEM tiles: one pass over the row (tcgen05.cpp, fused_rows).
      const std::vector<ir::StmtId> ids(s.body.begin() + static_cast<std::ptrdiff_t>(i), s.body.begin() + static_cast<std::ptrdiff_t>(i + n));
      const std::string ind(static_cast<std::size_t>(depth) * 2, ' ');
      const auto begin = out.size();
      const auto outer = cur_;
      cur_ = ids.front();
      for (auto id : ids) meet_before_store(id, [&](std::string const& t) { out += ind + t + "\n"; });
      tcgen05_gen::fused_rows(tc_context(), ids, ind, out);
      for (auto id : ids) spans_.push_back({static_cast<int>(id), ir::StmtOp::store, begin, out.size()});
      cur_ = outer;
      i += n;
      continue;
    }
    if (const std::size_t n = shared_a8_run(s.body, i); n >= 2) {
      // One gather of 8-bit A for the run (shuffles are collectives the compiler does not
      // merge), in the seq's scope, before the first wgmma's block.
      const auto first = s.body[i];
      const ir::wgmma::plan p = ir::wgmma::plan_of(k_, k_.stmts[first]);
      const std::string name = fmt::format("sa{}_", first), ind(static_cast<std::size_t>(depth) * 2, ' ');
      out += fmt::format("{}// ops #{}-#{}: one A from registers for {} wgmmas\n", ind, first, s.body[i + n - 1], n);
      cur_ = first;
      for (std::int64_t mb = 0; mb < p.m_blocks(); ++mb)
        for (std::int64_t ks = 0; ks < p.k_steps(); ++ks) register_a8(first, p, mb, ks, out, ind.empty() ? ind : ind.substr(2), name);
      for (std::size_t e = i; e < i + n; ++e) a_regs_[s.body[e]] = name;
      for (std::size_t e = i; e < i + n; ++e) stmt(s.body[e], depth, out);
      i += n;
      continue;
    }
    std::size_t j = i;
    while (j < s.body.size() && issue(s.body[j])) ++j;
    if (j - i < 2) {
      stmt(s.body[i], depth, out);
      ++i;
      continue;
    }
    // The MMA's own sync (an earlier store's lanes done) comes before the elected block.
    cur_ = s.body[i];
    sync_before_issue([&](std::string const& t) { out += std::string(static_cast<std::size_t>(depth) * 2, ' ') + t + "\n"; });
    dirty_ = false;
    out += fmt::format("{}if ({}) {{  // ops #{}-#{}: one thread issues the MMAs and commits\n", std::string(static_cast<std::size_t>(depth) * 2, ' '),
                       issuer(), s.body[i], s.body[j - 1]);
    elected_ = true;
    for (; i < j; ++i) stmt(s.body[i], depth + 1, out);
    elected_ = false;
    out += std::string(static_cast<std::size_t>(depth) * 2, ' ') + "}\n";
  }
}

std::string emitter::issuer() const {
  const auto who = cur_ == ir::none ? ir::role_set{0} : roles_[static_cast<std::size_t>(cur_)];
  return who && (who & ~warp_roles_) == 0 ? "sc::elect_one()" : elected_issuer;
}

std::string emitter::role_sync() const {
  if (one_warp_) return "sc::warp_sync();";  // the data mover's other warps are not there
  const auto who = cur_ == ir::none ? ir::role_set{0} : roles_[static_cast<std::size_t>(cur_)];
  if (!warp_roles_ || (who & warp_roles_) == 0) return "sc::wg_sync(wg);";
  return (who & ~warp_roles_) == 0 ? "sc::warp_sync();" : "sc::role_sync(wg, role_warp);";
}

// ---- warp specialization ---------------------------------------------------------------------
// `if (thread_id == c) ...` whose branch only issues TMA loads and waits on and arrives at
// barriers: the producer of a warp-specialized pipeline. It may also take tickets (an atomic
// whose slot its lanes then read: one warp syncs around it) and leave its loops by them.
bool emitter::data_mover(ir::StmtId id) const {
  auto const& s = k_.stmts[id];
  switch (s.op) {
    case ir::StmtOp::seq:
    case ir::StmtOp::for_:
    case ir::StmtOp::if_:
      return std::all_of(s.body.begin(), s.body.end(), [&](ir::StmtId c) { return data_mover(c); });
    case ir::StmtOp::copy_gmem_to_smem:
    case ir::StmtOp::barrier_wait:
    case ir::StmtOp::barrier_arrive:
    case ir::StmtOp::atomic_fetch:
    case ir::StmtOp::break_if: return true;
    default: return false;
  }
}

bool emitter::producer_branch(ir::Stmt const& s) const {
  // With roles of one warp the producer is a warp of its own (ir/roles.hpp).
  if (k_.roles < 2 || s.op != ir::StmtOp::if_ || ir::has_warp_roles(k_)) return false;
  auto const& c = k_.exprs[s.e0];
  if (c.op != ir::ExprOp::eq) return false;
  auto const& l = k_.exprs[c.a];
  auto const& r = k_.exprs[c.b];
  const bool per_warpgroup = (l.op == ir::ExprOp::thread_id && r.op == ir::ExprOp::constant) ||
                             (r.op == ir::ExprOp::thread_id && l.op == ir::ExprOp::constant);
  return per_warpgroup && data_mover(s.body[0]);
}

// Registers per thread for the producer and for everyone else, 0: leave as is. The SM's 64 K
// registers are shared: 128 x 24 for the producer (TMA issue and barrier waits fit; FA3 gives
// its producer 24 beside two consumers too), the rest split evenly (multiples of 8, as
// setmaxnreg wants): 240 for two consumer warpgroups, where 40 left them 232 and
// attention_hopper D=256 causal spilled 64 bytes. Only with three or more warpgroups: with two,
// ptxas may already give each thread 255, and an "inc" below the current count is undefined.
// The watchdog's bounded waits (%globaltimer, the report's printf) take the producer past 40
// (ws_copy's spilled once setmaxnreg took effect), so it gets 56 there.
std::pair<int, int> emitter::register_split() const {
  const int w = k_.roles;
  if (w < 3 || ir::has_warp_roles(k_)) return {0, 0};
  const int producer = o_.watchdog_ms ? 56 : 24;
  const int rest = std::min(240, (65536 - 128 * producer) / (128 * (w - 1)) / 8 * 8);
  return {producer, rest};
}

void emitter::emit(ir::StmtId id, int depth, std::string& out) {
  auto const& s = k_.stmts[id];
  const std::string ind(static_cast<std::size_t>(depth) * 2, ' ');
  auto line = [&](std::string const& t) { out += ind + t + "\n"; };
  switch (s.op) {
    case ir::StmtOp::seq:
      emit_seq(s, depth, out);
      return;
    case ir::StmtOp::for_: {
      if (hoists_sync(id, dirty_)) {
        line(fmt::format("{}  // op #{}: once before the loop, not in each trip (its body leaves its own stores met)", role_sync(), id));
        dirty_ = false;
      }
      const bool head = loop_head(id, dirty_);
      const bool touched = touch_loop_head(id, acc_touched_);
      if (fits_i32(range(s.e0)) && fits_i32(range(s.e1)))  // an int counter: one 32-bit add and compare per trip
        line(fmt::format("for (int v{0} = static_cast<int>({1}), v{0}_end = static_cast<int>({2}); v{0} < v{0}_end; ++v{0}) {{  // op #{3}", s.var,
                         expr(s.e0), expr(s.e1), id));
      else
        line(fmt::format("for (long long v{0} = {1}, v{0}_end = {2}; v{0} < v{0}_end; ++v{0}) {{  // op #{3}", s.var, expr(s.e0), expr(s.e1), id));
      dirty_ = head;
      acc_touched_ = touched;
      stmt(s.body[0], depth + 1, out);
      line("}");
      dirty_ = head;
      acc_touched_ = touched;
      return;
    }
    case ir::StmtOp::if_: {
      const bool before = dirty_, touched_before = acc_touched_;
      const bool producer = producer_branch(s);
      line(fmt::format("if ({}) {{  // op #{}{}", expr(s.e0), id, producer ? ": a warpgroup that only moves data" : ""));
      if (producer) {
        // Its TMA copies and arrivals are lane 0's and its waits need no other lane, so one
        // warp runs it; with three or more warpgroups it hands its registers to the others.
        if (dirty_) line("  sc::wg_sync(wg);");
        dirty_ = false;
        if (const auto r = register_split(); r.first) line(fmt::format("  sc::setmaxnreg_dec<{}>();", r.first));
        line("  if (lane < 32) {");
        one_warp_ = true;
        stmt(s.body[0], depth + 2, out);
        one_warp_ = false;
        line("  }");
      } else {
        stmt(s.body[0], depth + 1, out);
      }
      bool d = dirty_, t = acc_touched_;
      dirty_ = before;
      acc_touched_ = touched_before;
      if (s.body.size() > 1) {
        line("} else {");
        if (const auto r = register_split(); producer && r.second) line(fmt::format("  sc::setmaxnreg_inc<{}>();", r.second));
        stmt(s.body[1], depth + 1, out);
      }
      dirty_ = d || dirty_;
      acc_touched_ = t || acc_touched_;
      line("}");
      return;
    }
    case ir::StmtOp::copy_gmem_to_smem: {
      auto const& g = k_.refs[s.refs[0]];
      auto const& m = k_.refs[s.refs[1]];
      const auto bytes = product(m.shape) * ir::dtype_bits(k_.allocs[m.id].dtype) / 8;
      const int map = map_of_.at(id);
      line(fmt::format("// op #{}: copy_gmem_to_smem {} -> {} ({} B)", id, k_.params[g.id].name, ir::alloc_name(k_, m.id), bytes));
      sync_before_issue(line);
      line(fmt::format("if ({}) {{", issuer()));
      line(fmt::format("  const unsigned bar = {};", bar_addr(s.refs[2])));
      // The pair's load (.cta_group::2, Stmt::n == 2): only the even CTA arrives, expecting both
      // CTAs' bytes; each CTA's copy completes them on the even CTA's barrier (sc::tma_load_pair).
      const bool pair = s.n == 2;
      if (pair) {
        line(fmt::format("  const unsigned leader = ({}) & ~1u;  // the pair's even CTA: cluster ranks are x-fastest, axis 0's extent even",
                         fmt::format("{} + {}u * {} + {}u * {}", cluster_ctaid(k_, 0), k_.cluster[0], cluster_ctaid(k_, 1), k_.cluster[0] * k_.cluster[1],
                                     cluster_ctaid(k_, 2))));
        line(fmt::format("  if (({} & 1u) == 0u) sc::mbar_arrive_expect_tx(bar, {}u);  // this CTA's {} B and its odd CTA's", cluster_ctaid(k_, 0),
                         2 * bytes, bytes));
      } else {
        line(fmt::format("  sc::mbar_arrive_expect_tx(bar, {}u);", bytes));
      }
      const std::string dst = fmt::format("smem_base + {}u + {}", offsets_[m.id], view_offset(s.refs[1]));
      if (pair && tma_tiled(id, s.refs[1], s.refs[0])) unsupported_op(id, "a pair_leader copy of tiled SMEM");
      if (tma_tiled(id, s.refs[1], s.refs[0])) {
        tiled_boxes(s.refs[1], s.refs[0], line, [&](std::string const& at) { return fmt::format("sc::tma_load({}, &tmap{}, bar, 2, c);", at, map); });
      } else if (s.axes.empty()) {
        line(fmt::format("  const int c[] = {};", coords(s.refs[0], "")));
        if (pair) line(fmt::format("  sc::tma_load_pair({}, &tmap{}, bar, leader, {}, c);", dst, map, g.shape.size()));
        else line(fmt::format("  sc::tma_load({}, &tmap{}, bar, {}, c);", dst, map, g.shape.size()));
      } else {
        // Collective copy: this CTA loads rows [pos * share, (pos + 1) * share) and multicasts
        // them to every CTA of its group (the CTAs that differ from it only along the copy's
        // axes), at the same SMEM offset. Cluster ranks are x-fastest, so the group's ranks are
        // rank_base plus a fixed pattern and pos is linear in the coordinates: both are
        // emitted as constants, which is what tests/nvrtc/test_codegen_numbers.cpp checks.
        const int n = group_size(s.axes);
        const auto share_rows = g.shape[0] / n;
        const auto share_bytes = bytes / n;
        auto const& cl = k_.cluster;
        const std::int64_t stride[3] = {1, cl[0], cl[0] * cl[1]};
        auto collective = [&](int d) { return std::find(s.axes.begin(), s.axes.end(), d) != s.axes.end(); };
        std::int64_t base_coef[3], pos_coef[3], pos_step = 1;
        for (int d = 0; d < 3; ++d) {
          base_coef[d] = collective(d) ? 0 : stride[d];
          pos_coef[d] = collective(d) ? pos_step : 0;
          if (collective(d)) pos_step *= cl[d];
        }
        unsigned pattern = 0;  // the group of the CTA at the cluster's origin
        for (std::int64_t r = 0; r < cl[0] * cl[1] * cl[2]; ++r) {
          const std::int64_t c[3] = {r % cl[0], r / cl[0] % cl[1], r / (cl[0] * cl[1])};
          bool origin = true;
          for (int d = 0; d < 3; ++d) origin = origin && (collective(d) || c[d] == 0);
          if (origin) pattern |= 1u << r;
        }
        auto linear = [this](std::int64_t const* coef) {
          return fmt::format("{}u * {} + {}u * {} + {}u * {}", coef[0], cluster_ctaid(k_, 0), coef[1], cluster_ctaid(k_, 1), coef[2], cluster_ctaid(k_, 2));
        };
        line(fmt::format("  const unsigned rank_base = {};", linear(base_coef)));
        line(fmt::format("  const unsigned short mask = static_cast<unsigned short>(0x{:04x}u << rank_base);", pattern));
        line(fmt::format("  const int pos = static_cast<int>({});", linear(pos_coef)));
        line(fmt::format("  const int c[] = {};", coords(s.refs[0], fmt::format(" + pos * {}", share_rows))));
        line(fmt::format("  sc::tma_load_multicast{}({} + static_cast<unsigned>(pos * {}), &tmap{}, bar, {}mask, {}, c);", pair ? "_pair" : "", dst,
                         share_bytes, map, pair ? "leader, " : "", g.shape.size()));
      }
      line("}");
      dirty_ = false;
      return;
    }
    case ir::StmtOp::copy_smem_to_gmem: {
      auto const& m = k_.refs[s.refs[0]];
      auto const& g = k_.refs[s.refs[1]];
      // A TMA reduce (Stmt::n) is the same copy with a combining write: cp.reduce.async.bulk.tensor.
      const auto reduce = static_cast<ir::Reduce>(s.n);
      const std::string fn = reduce == ir::Reduce::none ? "sc::tma_store" : fmt::format("sc::tma_reduce<sc::reduce_{}, {}>", ir::reduce_name(reduce), ctype(k_.params[g.id].dtype));
      line(fmt::format("// op #{}: copy_smem_to_gmem{} {} -> {}", id, reduce == ir::Reduce::none ? "" : fmt::format(" (reduce {})", ir::reduce_name(reduce)),
                       ir::alloc_name(k_, m.id), k_.params[g.id].name));
      sync_before_issue(line);
      line("if (lane == 0) {");
      if (tma_tiled(id, s.refs[0], s.refs[1])) {
        tiled_boxes(s.refs[0], s.refs[1], line, [&](std::string const& at) { return fmt::format("{}(&tmap{}, {}, 2, c);", fn, map_of_.at(id), at); });
      } else {
        line(fmt::format("  const int c[] = {};", coords(s.refs[1], "")));
        line(fmt::format("  {}(&tmap{}, smem_base + {}u + {}, {}, c);", fn, map_of_.at(id), offsets_[m.id], view_offset(s.refs[0]), g.shape.size()));
      }
      line("}");
      dirty_ = false;
      return;
    }
    case ir::StmtOp::commit_group:
      line(fmt::format("if (lane == 0) sc::bulk_commit();  // op #{}", id));
      return;
    case ir::StmtOp::wait_group:
      line(fmt::format("if (lane == 0) sc::bulk_wait{}<{}>();  // op #{}", s.flag ? "_read" : "", s.n, id));
      line(role_sync());
      dirty_ = false;
      return;
    case ir::StmtOp::commit_smem:
      line(fmt::format("sc::fence_proxy_async{}();  // op #{}", gmem_cross_proxy() ? "_all" : "", id));
      return;
    case ir::StmtOp::barrier_arrive: {
      auto const& r = k_.refs[s.refs[0]];
      auto const& al = k_.allocs[r.id];
      line(fmt::format("// op #{}: barrier_arrive on {}", id, bar_label(k_.refs[s.refs[0]].id)));
      sync_before_issue(line);
      if (al.kind == ir::AllocKind::cluster_barrier) {
        std::vector<std::string> same;
        const char* names[] = {"x", "y", "z"};
        for (int d = 0; d < 3; ++d)
          if (std::find(al.collective_axes.begin(), al.collective_axes.end(), d) == al.collective_axes.end())
            same.push_back(fmt::format("{} == static_cast<int>({})", names[d], cluster_ctaid(k_, d)));
        line(fmt::format("if ({}) {{", issuer()));
        line(fmt::format("  for (int r = 0; r < {}; ++r) {{", k_.cluster[0] * k_.cluster[1] * k_.cluster[2]));
        line(fmt::format("    const int x = r % {0}, y = r / {0} % {1}, z = r / ({0} * {1});", k_.cluster[0], k_.cluster[1]));
        line(fmt::format("    (void)x; (void)y; (void)z;"));
        line(fmt::format("    if ({}) sc::mbar_arrive_remote<{}>({}, static_cast<unsigned>(r));",
                         same.empty() ? std::string("true") : fmt::format("{}", fmt::join(same, " && ")), !scopes_[r.id].cta, bar_addr(s.refs[0])));
        line("  }");
        line("}");
      } else {
        line(fmt::format("if ({}) sc::mbar_arrive({});", issuer(), bar_addr(s.refs[0])));
      }
      dirty_ = false;
      return;
    }
    case ir::StmtOp::barrier_wait: {
      auto const& r = k_.refs[s.refs[0]];
      const bool cluster = !scopes_[r.id].cta;  // an .acquire.cluster wait
      line(fmt::format("{{  // op #{}: barrier_wait on {}", id, bar_label(r.id)));
      // unsigned: a barrier element's number is small and never negative (the interpreter checks it)
      line(fmt::format("  const unsigned e = static_cast<unsigned>({});", bar_index(s.refs[0])));
      const std::string word = bar_elements_ <= 32 ? "parity[0]" : "parity[e / 32]";
      line(fmt::format("  const unsigned p = ({} >> (e % 32)) & 1u;", word));
      if (o_.watchdog_ms) {
        // e counts every barrier element of the CTA; the report names the array's own element.
        line(fmt::format("  sc::mbar_wait_watchdog<{}>({}, p, \"{}\", {}, \"{}\", static_cast<long long>(e) - {}, completions[e]++, {}ull);", cluster, bar_addr(s.refs[0]),
                         k_.name, id, bar_label(r.id), bar_first_[r.id], std::uint64_t{o_.watchdog_ms} * 1000000));
      } else {
        line(fmt::format("  sc::mbar_wait{}({}, p);", cluster ? "_cluster" : "", bar_addr(s.refs[0])));
      }
      line(fmt::format("  {} ^= 1u << (e % 32);", word));
      line("}");
      return;
    }
    case ir::StmtOp::store: {
      auto const& r = k_.refs[s.refs[0]];
      const auto dt = r.base == ir::RefBase::param ? k_.params[r.id].dtype : k_.allocs[r.id].dtype;
      const reducing red(*this, static_cast<ir::Reduce>(s.n));
      if (const int a = fragment_acc(s); a >= 0) {
        fragment_store(id, a, ind, out);
        return;
      }
      if (tcgen05_gen::writes_tmem(k_, s)) {
        // Its SMEM reads are ordinary loads: other lanes' earlier stores must be done. And each
        // warp waits only for its own tcgen05.st: the next barrier_arrive (or MMA) must start
        // with the warpgroup's barrier, whose tcgen05 fences order all four warps' stores.
        meet_before_store(id, line);
        tcgen05_gen::tmem_write(tc_context(), id, ind, out);
        return;
      }
      if (tcgen05_gen::reads_tmem(k_, s.value)) {
        meet_before_store(id, line);
        tcgen05_gen::tmem_store(tc_context(), id, ind, out);
        return;
      }
      if (transpose32(s)) {
        // A layout conversion, and the only one the generator makes: the destination is written
        // in the order of ir/transpose_order.hpp (why, banks counted, is there), not row-major.
        if (dirty_) line(fmt::format("sc::wg_sync(wg);  // op #{}: an earlier store may have touched these bytes from other lanes", id));
        dirty_ = true;
        line(fmt::format("#pragma unroll\n{}for (int u = 0; u < 8; ++u) {{  // op #{}: store; layout conversion: transpose32 order, "
                         "bank-conflict free on both sides", ind, id));
        line("  const int i = sc::transpose32_element(lane, u);");
        line(fmt::format("  {} = {};", element(s.refs[0], "i"), store_conv(dt, value(s.value, "i"))));
        line("}");
        return;
      }
      const auto n = product(r.shape);
      // Each thread takes v consecutive elements (16 bytes of the widest type involved): v
      // elements never cross a row (the innermost extents are multiples of v) and start on a
      // 16-byte boundary (swizzling permutes whole 16-byte chunks), so when every operand has
      // the destination's width they move as single 16-byte loads and stores.
      const int dst_width = ir::dtype_bits(dt) / 8;
      const int width = std::max(dst_width, widest_load(s.value));
      int v = 16 / width;
      std::vector<ir::ValueId> leaves;
      loads_of(s.value, leaves);
      // A fully indexed view (rank 0) is one element: no innermost extent to vectorise over.
      bool aligned = !r.shape.empty() && r.shape.back() % v == 0 && n % (128LL * v) == 0;
      bool same_width = true;
      auto check_ref = [&](ir::RefId rr) {
        auto const& ref = k_.refs[rr];
        if (ref.shape.empty() || ref.shape.back() % v != 0) aligned = false;
        if (ref.base == ir::RefBase::param && !rows_keep_vectors(rr, v)) aligned = false;
        if (predicated(rr)) aligned = false;  // element by element
        // A sub-view's rows start where its origin puts them: vectors stay 16-byte aligned when
        // the parent's rows and the column origin are multiples of v (rows then start aligned too).
        if (ref.base == ir::RefBase::alloc && !ref.block.empty()) {
          auto const& al = k_.allocs[ref.id];
          auto const& col = k_.exprs[ref.block.back()];
          if (al.shape.back() % v != 0 || col.op != ir::ExprOp::constant || col.value % v != 0) aligned = false;
        }
        // A tiled layout keeps only a tile's row contiguous: a vector must not cross into the next tile.
        if (tiled_ref(rr) && k_.allocs[ref.id].tiling.back() % v != 0) aligned = false;
        const auto t = ref.base == ir::RefBase::param ? k_.params[ref.id].dtype : k_.allocs[ref.id].dtype;
        if (ir::dtype_bits(t) / 8 != dst_width) same_width = false;
      };
      check_ref(s.refs[0]);
      for (auto l : leaves) check_ref(k_.values[l].ref);
      // A reduction or broadcast reads its operands at other indices than the store's: no
      // operand row is the destination's, so none is read as the destination's vector.
      if (moves_elements(s.value)) same_width = false;
      // A reduction moves as a vector only as red.global.add.v4.f32 (sm_90: no integer or
      // min/max vectors); otherwise one red per element.
      if (!aligned || (reduce_ != ir::Reduce::none && !vector_reduction(dt))) v = 1;
      meet_before_store(id, line);
      line(fmt::format("for (int i0 = lane * {0}; i0 < {1}; i0 += {2}) {{  // op #{3}: store, {0} element(s) per thread", v, n, 128 * v, id));
      if (v > 1 && same_width) {
        for (std::size_t l = 0; l < leaves.size(); ++l) {
          line(fmt::format("  const uint4 raw{} = *reinterpret_cast<const uint4*>(&{});", l, element(k_.values[leaves[l]].ref, "i0")));
          // read the raw bits as the leaf's own type (same width as dt, not necessarily the same type)
          leaf_override_[leaves[l]] = fmt::format("reinterpret_cast<const {}*>(&raw{})[u]", ctype(k_.values[leaves[l]].dtype), l);
        }
        line(fmt::format("  {} out[{}];", ctype(dt), v));
        line("  #pragma unroll");
        line(fmt::format("  for (int u = 0; u < {}; ++u) out[u] = {};", v, store_conv(dt, value(s.value, "(i0 + u)"))));
        if (reduce_ != ir::Reduce::none) line(fmt::format("  sc::red_add_v4(&{}, out);", element(s.refs[0], "i0")));
        else line(fmt::format("  *reinterpret_cast<uint4*>(&{}) = *reinterpret_cast<const uint4*>(out);", element(s.refs[0], "i0")));
        leaf_override_.clear();
      } else {
        line("  #pragma unroll");
        line(fmt::format("  for (int u = 0; u < {}; ++u) {{", v));
        line("    const int i = i0 + u;");
        line("    " + assign(s.refs[0], "i", store_conv(dt, value(s.value, "i"))));
        line("  }");
      }
      line("}");
      return;
    }
    case ir::StmtOp::wgmma:
      emit_wgmma(id, ind, out);
      return;
    case ir::StmtOp::try_cancel: {
      // The elected thread arrives expecting the response's 16 bytes, then asks (ops/clc.hpp).
      line(fmt::format("// op #{}: try_cancel -> {}", id, ir::alloc_name(k_, k_.refs[s.refs[0]].id)));
      sync_before_issue(line);
      line(fmt::format("if ({}) {{", issuer()));
      line(fmt::format("  const unsigned bar = {};", bar_addr(s.refs[1])));
      line("  sc::mbar_arrive_expect_tx(bar, 16u);");
      line(fmt::format("  sc::clc_try_cancel(smem_base + {}u + {}, bar);", offsets_[k_.refs[s.refs[0]].id], view_offset(s.refs[0])));
      line("}");
      dirty_ = false;
      return;
    }
    case ir::StmtOp::break_if:
      line(fmt::format("if ({}) break;  // op #{}: break_if", expr(s.e0), id));
      return;
    case ir::StmtOp::wgmma_commit:
      line(fmt::format("sc::wgmma_commit();  // op #{}", id));
      return;
    case ir::StmtOp::wgmma_wait:
      line(fmt::format("sc::wgmma_wait<{}>();  // op #{}", s.n, id));
      // Which groups are still in flight is not known here, so no accumulator is read early.
      // One that no statement names is never written: its pins would only pad the PTX
      // (attention_hopper at D = 64, O1 to O3: 118 -> 97 KB; ptxas dropped them anyway).
      for (std::size_t a = 0; a < k_.allocs.size(); ++a)
        if (k_.allocs[a].kind == ir::AllocKind::accumulator &&
            std::any_of(k_.refs.begin(), k_.refs.end(), [&](ir::Ref const& r) { return r.base == ir::RefBase::alloc && r.id == static_cast<std::int32_t>(a); }))
          pin_registers(static_cast<int>(a), ind, out);
      return;
    case ir::StmtOp::tcgen05_mma:
      // The tensor core reads SMEM through the async proxy: other lanes' generic stores must be
      // done (their proxy fence is the kernel's own commit_smem()).
      sync_before_issue(line);
      dirty_ = false;
      tcgen05_gen::mma(tc_context(), id, ind, out);
      return;
    case ir::StmtOp::tcgen05_commit_arrive:
      tcgen05_gen::commit(tc_context(), id, s.refs[0], ind, out);
      return;
    case ir::StmtOp::tcgen05_cp:
      // The copy reads SMEM through the async proxy, as the MMA does.
      sync_before_issue(line);
      dirty_ = false;
      tcgen05_gen::copy_scales(tc_context(), id, ind, out);
      return;
    case ir::StmtOp::tmem_dealloc:
      tcgen05_gen::dealloc(tc_context(), id, ind, out);
      dirty_ = false;  // it starts with the warpgroup's barrier
      return;
    case ir::StmtOp::named_barrier_sync:
    case ir::StmtOp::named_barrier_arrive: {
      // User id u is hardware id first_named_barrier + u (ir/types.hpp): 0 is __syncthreads and
      // 1..8 are sc::wg_sync's. Every thread of the warpgroup runs it, no elected lane.
      const bool sync = s.op == ir::StmtOp::named_barrier_sync;
      const char* fn = sync ? "sc::named_bar_sync" : "sc::named_bar_arrive";
      auto const& e = k_.exprs[s.e0];
      if (e.op == ir::ExprOp::constant)
        line(fmt::format("{}<{}u, {}u>();  // op #{}: {}({}, {})", fn, ir::first_named_barrier + e.value, s.n, id, ir::stmt_name(s.op), e.value, s.n));
      else
        line(fmt::format("{}<{}u>(static_cast<unsigned>({}) + {}u);  // op #{}: {}", fn, s.n, expr(s.e0), ir::first_named_barrier, id,
                         ir::stmt_name(s.op)));
      // A sync is a barrier for this warpgroup's lanes too: their stores are ordered with what follows.
      if (sync) dirty_ = false;
      return;
    }
    case ir::StmtOp::semaphore_signal:
    case ir::StmtOp::semaphore_wait: {
      // One thread does the atomic for the warpgroup. A signal first meets every lane, so all
      // that the warpgroup did (reads included: a later CTA may overwrite what it read) is
      // ordered before the release, which is cumulative; after a wait the lanes meet the thread
      // whose acquire they are then ordered after.
      const bool signal = s.op == ir::StmtOp::semaphore_signal;
      auto const& r = k_.refs[s.refs[0]];
      // A 32-bit offset (a semaphore array is at most ir::max_workspace_bytes): the 64-bit index
      // math of a GMEM element cost a register spill around the wait's branch (ptxas, CUDA 13.0).
      const std::string name = k_.params[r.id].name, off = fmt::format("static_cast<int>({})", param_offset(s.refs[0], "0"));
      const std::string at = fmt::format("(p_{} + {})", name, off);
      const int scope = static_cast<int>(s.n);  // ir::MemoryScope: 0 .gpu, 1 .sys
      line(fmt::format("// op #{}: {} on semaphore '{}'{}", id, ir::stmt_name(s.op), name, scope == 1 ? " (.sys)" : ""));
      if (signal) line(role_sync());
      if (!signal && o_.watchdog_ms)
        line(fmt::format("if ({}) sc::sem_wait_watchdog<{}>({}, static_cast<int>({}), \"{}\", {}, \"{}\", {}, {}ull);", issuer(), scope, at, expr(s.e0), k_.name,
                         id, name, off, std::uint64_t{o_.watchdog_ms} * 1000000));
      else
        line(fmt::format("if ({}) sc::{}<{}>({}, static_cast<int>({}));", issuer(), signal ? "sem_signal" : "sem_wait", scope, at, expr(s.e0)));
      if (!signal) line(role_sync());
      dirty_ = false;
      return;
    }
    case ir::StmtOp::atomic_fetch: {
      // As a semaphore op: every lane meets (its reads of the slot's last value are done, and
      // for a release all it did comes first), one thread does the atomic and writes what the
      // counter held into the slot, and the lanes meet again, so every one reads the new value.
      const auto a = ir::atomic_of(s.n);
      auto const& r = k_.refs[s.refs[0]];
      const std::string name = k_.params[r.id].name, off = fmt::format("static_cast<int>({})", param_offset(s.refs[0], "0"));
      line(fmt::format("// op #{}: atom.{}.{}.global.{} on semaphore '{}' -> {}", id, ir::memory_order_name(a.order), a.scope == ir::MemoryScope::sys ? "sys" : "gpu",
                       ir::atomic_name(a.op), name, ir::alloc_name(k_, k_.refs[s.refs[1]].id)));
      line(role_sync());
      line(fmt::format("if ({}) {} = sc::atom_fetch<{}, {}, {}>(p_{} + {}, static_cast<int>({}), static_cast<int>({}));", issuer(), element(s.refs[1], "0"),
                       static_cast<int>(a.op), static_cast<int>(a.order), static_cast<int>(a.scope), name, off, expr(s.e0),
                       s.e1 == ir::none ? "0" : expr(s.e1)));
      line(role_sync());
      dirty_ = false;
      return;
    }
  }
}


// commit_smem() fences GMEM too (DESIGN.md, docs/interpreter.md): needed only where a TMA copy
// touches a parameter that ordinary stores also write; elsewhere the SMEM-only fence is enough.
bool emitter::gmem_cross_proxy() const {
  std::vector<bool> generic(k_.params.size(), false), tma(k_.params.size(), false);
  for (auto const& s : k_.stmts) {
    if (s.op == ir::StmtOp::store && k_.refs[s.refs[0]].base == ir::RefBase::param) generic[k_.refs[s.refs[0]].id] = true;
    if (s.op == ir::StmtOp::copy_gmem_to_smem) tma[k_.refs[s.refs[0]].id] = true;
    if (s.op == ir::StmtOp::copy_smem_to_gmem) tma[k_.refs[s.refs[1]].id] = true;
  }
  for (std::size_t p = 0; p < generic.size(); ++p)
    if (generic[p] && tma[p]) return true;
  return false;
}


tcgen05_gen::context emitter::tc_context() {
  return {k_, offsets_, tmem_, [this](ir::ExprId e) { return expr(e); }, [this](ir::RefId r) { return bar_addr(r); },
          [this](ir::RefId r) { return view_offset(r); }, [this](ir::RefId r, std::string const& i, std::string const& x) { return assign(r, i, x); },
          [this](ir::ValueId v, std::string const& i) { return value(v, i); },
          [this](ir::DType t, std::string const& x) { return store_conv(t, x); }, leaf_override_,
          [this](ir::RefId r, std::string const& i) { return element(r, i); },
          [this](ir::RefId r, std::int64_t v) { return smem_vectors(r, v); },
          [this](ir::StmtId id, ir::RefId r, std::int64_t n, std::int64_t v) { count_row_banks(id, r, n, v); },
          issuer(), role_sync(), elected_, o_.math == ir::math_mode::fast};
}

// v consecutive elements of every row of SMEM view `rid` are one aligned 16-byte chunk: rows are
// whole multiples of v, a tiled layout keeps a tile's row contiguous and v divides its width, and
// a sub-view starts its columns on a multiple of v (swizzling permutes whole 16-byte chunks).
bool emitter::smem_vectors(ir::RefId rid, std::int64_t v) const {
  auto const& ref = k_.refs[rid];
  if (ref.base != ir::RefBase::alloc || ref.shape.empty() || ref.shape.back() % v != 0) return false;
  auto const& al = k_.allocs[ref.id];
  if (al.shape.back() % v != 0) return false;
  if (tiled_ref(rid) && al.tiling.back() % v != 0) return false;
  if (!ref.block.empty()) {
    auto const& col = k_.exprs[ref.block.back()];
    if (col.op != ir::ExprOp::constant || col.value % v != 0) return false;
  }
  return true;
}

// The bank conflicts of a store whose thread t of the warpgroup writes row t of an (128, n) SMEM
// view, v elements per instruction (a store from TMEM, 32x32b: TMEM lane t is row t): each
// lane's address as element() computes it, warp by warp, as count_banks does for fragments.
void emitter::count_row_banks(ir::StmtId id, ir::RefId rid, std::int64_t n, std::int64_t v) {
  const int width = static_cast<int>(v) * ir::dtype_bits(k_.allocs[k_.refs[rid].id].dtype) / 8;
  auto b = bank_count(id, rid, n / v, width, [&](int thread, std::int64_t a) { return thread * n + a * v; });
  b.source = "rows loaded from TMEM";
  banks_.push_back(b);
}

// A barrier array as comments and the watchdog's report name it: the user's name, else b<N>
// (cluster barriers included, as this backend has always printed them).
std::string emitter::bar_label(int alloc) const {
  if (static_cast<std::size_t>(alloc) < k_.debug.alloc_names.size() && !k_.debug.alloc_names[alloc].empty())
    return k_.debug.alloc_names[alloc];
  return fmt::format("b{}", alloc);
}

// The (row, column) of flat index i inside such a walk, when `shape` is the 2-D shape walked;
// null elsewhere (then the flat index's division and modulo give them).
std::pair<std::string, std::string> const* emitter::walk_coords(std::string const& i, std::vector<std::int64_t> const& shape) const {
  auto w = walk_coords_.find(i);
  return w != walk_coords_.end() && shape == walk_shape_ && shape.size() == 2 ? &w->second : nullptr;
}

}  // namespace detail

using detail::emitter;


std::string cluster_ctaid(ir::Kernel const& k, int axis) { return fmt::format("sc::cluster_ctaid<{}u>({})", k.cluster[axis], axis); }

generated generate(ir::Kernel const& k, codegen_options const& o) {
  ir::verify(k);
  return emitter(k, o).run();
}

}  // namespace stagecraft::nvrtc
