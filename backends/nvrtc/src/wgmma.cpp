// The code generator's Hopper tensor-core engine: wgmma (descriptors from ir::wgmma, A from SMEM
// or from registers, the host backend's form under SC_HOST), the register accumulators it writes
// (a per-thread array in the D fragment layout, ir::wgmma::accumulator_element), the stores that
// walk that fragment (the epilogue, with the SMEM bank conflicts counted from the addresses each
// lane forms), and where a wgmma.fence is needed. Members of detail::emitter (emitter.hpp).
#include "emitter.hpp"

namespace stagecraft::nvrtc::detail {

bool emitter::touch_after(ir::StmtId id, bool t) const {
  auto const& s = k_.stmts[id];
  switch (s.op) {
    case ir::StmtOp::seq:
      for (auto c : s.body) t = touch_after(c, t);
      return t;
    case ir::StmtOp::for_: return touch_loop_head(id, t);
    case ir::StmtOp::if_: return touch_after(s.body[0], t) || (s.body.size() > 1 ? touch_after(s.body[1], t) : t);
    case ir::StmtOp::store: return t || touches_acc(s);
    case ir::StmtOp::wgmma: return false;
    default: return t;
  }
}

bool emitter::touch_loop_head(ir::StmtId id, bool t) const {
  auto& memo = touch_head_memo_[{id, t}];
  if (memo == 0) {
    auto const& body = k_.stmts[id].body[0];
    memo = t || touch_after(body, t || touch_after(body, t)) ? 2 : 1;
  }
  return memo == 2;
}


// store(acc, v), or a store whose value loads an accumulator: every thread computes the elements
// of its own fragment, (64 * mb + row, col) for each m64 block mb and register i. Every operand
// is addressed at that element, so all of them must have the accumulator's (M, N) shape.
// The bank conflicts of a fragment store into SMEM: each lane's address as element() computes
// it (view at index 0, the allocation's swizzle applied to its offset: smem_base is 1024-byte
// aligned), instruction by instruction, for each of the four warps.
void emitter::count_banks(ir::StmtId id, std::int64_t blocks, std::int64_t regs, int step, int width) {
  auto const& s = k_.stmts[id];
  const std::int64_t cols = k_.refs[s.refs[0]].shape.back(), per_block = regs / step;
  // Instruction a of a thread: m64 block a / per_block, its register (a % per_block) * step.
  banks_.push_back(bank_count(id, s.refs[0], blocks * per_block, width, [&](int thread, std::int64_t a) {
    const auto e = ir::wgmma::accumulator_element(thread, static_cast<int>(a % per_block * step));
    return (64 * (a / per_block) + e.row) * cols + e.col;
  }));
}

// stmatrix_store emits the same formula in the generated code's terms (`lane` there is the
// thread of the warpgroup); codegen_tests "[stmatrix]" evaluates that text for every lane.
ir::wgmma::coord emitter::stmatrix_lane_row(int thread, int i) {
  const int lane = thread % 32;
  return ir::wgmma::accumulator_element(thread - lane + 4 * (lane % 8), i + 2 * (lane / 8));
}

bool emitter::stmatrix_fits_fragment() {
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 256; i += 8)
      for (int m = 0; m < 4; ++m) {
        const int lane = t % 32, r = lane / 4, k = lane % 4;
        const auto row = stmatrix_lane_row(t - lane + 8 * m + r, i);  // the row lane 8 m + r addresses
        const auto x = ir::wgmma::accumulator_element(t, i + 2 * m);
        if (row.col % 8 != 0 || x.row != row.row || x.col != row.col + 2 * k) return false;
      }
  return pairs_adjacent();
}

// The view may start wherever its run-time indices and origin put it, so the rows are checked
// at its start 0 and the start is required to be a multiple of 8 elements (16 bytes): moving a
// row by whole 16-byte units keeps it aligned, the swizzle permutes whole 16-byte chunks, and in
// tiles of a multiple of 8 columns a row aligned at 0 stays within one tile row.
bool emitter::stmatrix_layout(ir::RefId rid, std::vector<std::int64_t> const& shape) const {
  auto const& r = k_.refs[rid];
  if (r.base != ir::RefBase::alloc) return false;
  auto const& al = k_.allocs[r.id];
  if (al.kind != ir::AllocKind::smem || ir::dtype_bits(al.dtype) != 16 || shape.size() != 2 || shape[1] % 16 != 0) return false;
  if (al.shape.back() % 8 != 0 || (tiled(r.id) && al.tiling[1] % 8 != 0)) return false;
  // What every value of an index expression is known to be a multiple of (0: only 0).
  std::function<std::int64_t(ir::ExprId)> multiple = [&](ir::ExprId id) -> std::int64_t {
    auto const& e = k_.exprs[id];
    switch (e.op) {
      case ir::ExprOp::constant: return e.value < 0 ? -e.value : e.value;
      case ir::ExprOp::mul: return multiple(e.a) * multiple(e.b);
      case ir::ExprOp::add: case ir::ExprOp::sub: return std::gcd(multiple(e.a), multiple(e.b));
      default: return 1;
    }
  };
  std::int64_t stride = product(al.shape);
  for (std::size_t d = 0; d < r.index.size(); ++d)
    if (stride /= al.shape[d]; multiple(r.index[d]) * stride % 8 != 0) return false;
  for (std::size_t j = 0; j < r.block.size(); ++j)
    if (stride /= al.shape[r.index.size() + j]; multiple(r.block[j]) * stride % 8 != 0) return false;
  const int bytes = 2;
  auto address = [&](std::int64_t f) {
    const std::int64_t at = tiled(r.id) ? ir::tiled_element(view_element(rid, f), al.shape.back(), al.tiling[0], al.tiling[1]) : view_element(rid, f);
    return ir::swizzle_address(static_cast<std::uint32_t>(offsets_[r.id] + at * bytes), al.swizzle);
  };
  const std::int64_t cols = shape[1];
  for (std::int64_t mb = 0; mb < shape[0] / 64; ++mb)
    for (int i = 0; i < cols / 2; i += 8)
      for (int t = 0; t < 128; ++t) {
        const auto e = stmatrix_lane_row(t, i);
        const std::int64_t f = (64 * mb + e.row) * cols + e.col;
        const std::uint32_t first = address(f);
        if (first % 16 != 0) return false;
        for (int c = 1; c < 8; ++c)
          if (address(f + c) != first + static_cast<std::uint32_t>(bytes * c)) return false;
      }
  return true;
}

void emitter::count_stmatrix_banks(ir::StmtId id, std::int64_t blocks, std::int64_t regs) {
  auto const& s = k_.stmts[id];
  const std::int64_t cols = k_.refs[s.refs[0]].shape.back(), per_block = regs / 8;
  auto b = bank_count(id, s.refs[0], blocks * per_block, 16, [&](int thread, std::int64_t a) {
    const auto e = stmatrix_lane_row(thread, static_cast<int>(a % per_block * 8));
    return (64 * (a / per_block) + e.row) * cols + e.col;
  });
  b.stmatrix = true;
  banks_.push_back(b);
}


void emitter::fragment_store(ir::StmtId id, int a, std::string const& ind, std::string& out) {
  auto const& s = k_.stmts[id];
  auto line = [&](std::string const& t) { out += ind + t + "\n"; };
  // Leading unit extents place nothing: a (1, 64, 64) block of a (B, S, D) array is walked as the
  // (64, 64) fragment, at the same flat indices.
  const auto shape = ir::drop_leading_units(k_.refs[s.refs[0]].shape);
  if (!check_walk_operands(id, a, shape)) return row_store(id, a, ind, out);
  const bool to_registers = is_acc(s.refs[0]);
  acc_touched_ = true;
  sync_if_touches_memory(s, id, line);
  const std::int64_t blocks = shape[0] / 64, regs = shape[1] / 2;
  auto const& r = k_.refs[s.refs[0]];
  const auto dt = r.base == ir::RefBase::param ? k_.params[r.id].dtype : k_.allocs[r.id].dtype;
  // Registers i and i + 1 (i even) hold row neighbours (c, c + 1), c even: one store of both
  // elements when the destination keeps them adjacent and aligned (the swizzle moves whole
  // 16-byte chunks; a GMEM row of even length keeps pairs on pair boundaries).
  const bool pairs = !to_registers && pairs_adjacent() && !predicated(s.refs[0]) &&  // predicated element by element
                     (reduce_ == ir::Reduce::none || vector_reduction(dt)) &&       // a reduction as red.global.add.v2.f32 only
                     (r.base == ir::RefBase::alloc || rows_keep_vectors(s.refs[0], 2)) &&
                     (!tiled_ref(s.refs[0]) || k_.allocs[r.id].tiling.back() % 2 == 0);  // a pair within one tile row
  if (to_registers && acc_f8(static_cast<std::size_t>(r.id))) return packed8_store(id, r.id, shape[1] / 2, ind, out);
  // An f16 or bf16 accumulator is written a register (two elements) at a time.
  const bool packed = to_registers && acc_f16(static_cast<std::size_t>(a));
  if (packed && !pairs_adjacent()) unsupported_op(id, "a 16-bit accumulator whose fragment does not keep element pairs adjacent");
  const bool half = dt == ir::DType::bf16 || dt == ir::DType::f16;
  // 16-bit pairs into SMEM go four 8 x 8 matrices per warp instruction (stmatrix) where every
  // row it addresses is 16 contiguous, aligned bytes; elsewhere one 4-byte store per pair. The
  // fragment store runs in every thread of the warpgroup, so each warp is converged at the
  // .sync.aligned instruction (a statement runs under warpgroup-uniform conditions only).
  const bool stsm = pairs && half && reduce_ == ir::Reduce::none && stmatrix_fits_fragment() && stmatrix_layout(s.refs[0], shape);
  const int step = stsm ? 8 : pairs || packed ? 2 : 1;
  if (stsm) count_stmatrix_banks(id, blocks, regs);
  else if (!to_registers && r.base == ir::RefBase::alloc) count_banks(id, blocks, regs, step, ir::dtype_bits(dt) / 8 * step);
  line(fmt::format("{{  // op #{}: store over the fragment of a{} ({}, {}): {} block(s) x {} elements per thread{}", id, a, shape[0], shape[1], blocks,
                   regs, stsm ? ", eight at a time by stmatrix" : pairs ? ", two at a time" : ""));
  line("  #pragma unroll");
  line(fmt::format("  for (int mb = 0; mb < {}; ++mb) {{", blocks));
  hoist_rows(s.value, shape, line);
  line("    #pragma unroll");
  line(fmt::format("    for (int i = 0; i < {}; i += {}) {{", regs, step));
  if (stsm) {
    stmatrix_store(id, regs, ind, out);
  } else {
    line("      const sc::coord e = sc::accumulator_element(lane, i);");
    line(fmt::format("      const long long f = static_cast<long long>(64 * mb + e.row) * {} + e.col;", shape[1]));
    line("      (void)f;  // unused when nothing but the accumulator is addressed");
    fragment_index_ = fmt::format("mb * {} + i", regs);
    walk_reg_ = "i";
    walk_shape_ = shape;
    walk_coords_ = {{"f", {"64 * mb + e.row", "e.col"}}, {"(f + 1)", {"64 * mb + e.row", "e.col + 1"}}};  // (f + 1): the pair's right neighbour
    // Register i is in the thread's row i / 2 % 2 of the block (rows_by_quad checks it).
    row_mb_ = "mb", row_half_ = "i / 2 % 2", walk_rows_ = shape[0];
    if (packed) {
      const std::string lo = value(s.value, "f");
      fragment_index_ = fmt::format("mb * {} + i + 1", regs);
      walk_reg_ = "i + 1";
      line(fmt::format("      acc{}[(mb * {} + i) / 2] = {};", a, regs, acc_pack(static_cast<std::size_t>(a), lo, value(s.value, "(f + 1)"))));
    } else if (to_registers) {
      line(fmt::format("      acc{}[mb * {} + i] = {};", a, regs, value(s.value, "f")));
    } else if (!pairs) {
      line("      " + assign(s.refs[0], "f", store_conv(dt, value(s.value, "f"))));
    } else {
      const int bytes = ir::dtype_bits(dt) / 8;
      const char* pair_type = bytes == 4 ? "uint2" : bytes == 2 ? "unsigned" : "unsigned short";
      const ir::ValueId stored = pair_value(s.value, dt);
      if (half) {
        const std::string lo = value(stored, "f");
        fragment_index_ = fmt::format("mb * {} + i + 1", regs);
        walk_reg_ = "i + 1";
        line(fmt::format("      *reinterpret_cast<unsigned*>(&{}) = sc::f32x2_to_{}x2({}, {});", element(s.refs[0], "f"), ir::dtype_name(dt), lo,
                         value(stored, "(f + 1)")));
      } else {
        line(fmt::format("      alignas(8) {} out[2];", ctype(dt)));
        line(fmt::format("      out[0] = {};", store_conv(dt, value(stored, "f"))));
        fragment_index_ = fmt::format("mb * {} + i + 1", regs);
        walk_reg_ = "i + 1";
        line(fmt::format("      out[1] = {};", store_conv(dt, value(stored, "(f + 1)"))));
        if (reduce_ != ir::Reduce::none) line(fmt::format("      sc::red_add_v2(&{}, out);", element(s.refs[0], "f")));
        else line(fmt::format("      *reinterpret_cast<{0}*>(&{1}) = *reinterpret_cast<const {0}*>(out);", pair_type, element(s.refs[0], "f")));
      }
    }
  }
  end_fragment_walk(ind, out);
}

// Leaves a fragment walk (fragment_store's loops over m blocks and registers): its state reset,
// the two loops and the statement's block closed.
void emitter::end_fragment_walk(std::string const& ind, std::string& out) {
  fragment_index_.clear();
  walk_reg_.clear();
  walk_coords_.clear();
  row_mb_.clear(), row_half_.clear();
  row_hoisted_.clear();
  out += ind + "    }\n" + ind + "  }\n" + ind + "}\n";
}

// Two elements converted to an 8-bit type, lo in bits 0-7 and hi in 8-15 of an unsigned: one
// cvt.rn.satfinite.<t>x2 in fast mode, two scalar conversions in exact (the same bits). Every
// 8-bit A and every 8-bit register tile packs its pairs here, so a tile kept for a later A
// rounds as A computed in place would. (An 8-bit integer type converts element by element.)
std::string emitter::fp8_pair(ir::DType dt, std::string const& lo, std::string const& hi) const {
  if (ir::dtype_is_fp8(dt) && o_.math == ir::math_mode::fast) return fmt::format("static_cast<unsigned>(sc::cvt_{}x2({}, {}))", ir::dtype_name(dt), lo, hi);
  auto byte = [&](std::string const& x) { return fmt::format("static_cast<unsigned>(static_cast<unsigned char>({}))", store_conv(dt, x)); };
  return fmt::format("({} | {} << 8)", byte(lo), byte(hi));
}

// A store into an e4m3 / e5m2 register tile a, of `regs` elements per m64 block and thread: per
// 8 D elements i8 .. i8 + 7 (two 8-column groups, both row halves), the four pairs i8 + 2u, each
// converted as register_a8 converts an A pair (fp8_pair), into registers (i8 / 4) and
// (i8 / 4 + 1) in sc::acc8_word's order.
void emitter::packed8_store(ir::StmtId id, int a, std::int64_t regs, std::string const& ind, std::string& out) {
  auto const& s = k_.stmts[id];
  auto line = [&](std::string const& t) { out += ind + t + "\n"; };
  auto const& shape = k_.refs[s.refs[0]].shape;
  const auto dt = k_.allocs[static_cast<std::size_t>(a)].dtype;
  if (!pairs_adjacent()) unsupported_op(id, "an 8-bit register tile whose fragment does not keep element pairs adjacent");
  if (regs % 8 != 0) unsupported_op(id, fmt::format("an 8-bit register tile of {} columns (a multiple of 16 packs whole registers)", shape[1]));
  // cast<e4m3>(x) stored as e4m3 is one rounding of x: convert x.
  auto const& v = k_.values[s.value];
  const ir::ValueId stored = v.op == ir::ValueOp::cast && v.dtype == dt && ir::dtype_is_float(k_.values[v.a].dtype) ? v.a : s.value;
  line(fmt::format("{{  // op #{}: store over the fragment of a{} ({}, {}): {} block(s) x {} elements per thread, four to a register ({})", id, a, shape[0],
                   shape[1], shape[0] / 64, regs, ir::dtype_name(dt)));
  line("  #pragma unroll");
  line(fmt::format("  for (int mb = 0; mb < {}; ++mb) {{", shape[0] / 64));
  hoist_rows(s.value, shape, line);
  line("    #pragma unroll");
  line(fmt::format("    for (int i8 = 0; i8 < {}; i8 += 8) {{", regs));
  line("      unsigned short h8[4];  // the pair i8 + 2 u");
  line("      #pragma unroll");
  line("      for (int u = 0; u < 4; ++u) {");
  line("        const int i = i8 + 2 * u;");
  line("        const sc::coord e = sc::accumulator_element(lane, i);");
  line(fmt::format("        const long long f = static_cast<long long>(64 * mb + e.row) * {} + e.col;", shape[1]));
  line("        (void)f;  // unused when nothing but the accumulator is addressed");
  walk_shape_ = shape;
  walk_coords_ = {{"f", {"64 * mb + e.row", "e.col"}}, {"(f + 1)", {"64 * mb + e.row", "e.col + 1"}}};
  row_mb_ = "mb", row_half_ = "i / 2 % 2", walk_rows_ = shape[0];
  fragment_index_ = fmt::format("mb * {} + i", regs), walk_reg_ = "i";
  const std::string lo = value(stored, "f");
  fragment_index_ = fmt::format("mb * {} + i + 1", regs), walk_reg_ = "i + 1";
  const std::string hi = value(stored, "(f + 1)");
  line(fmt::format("        h8[u] = static_cast<unsigned short>({});", fp8_pair(dt, lo, hi)));
  line("      }");
  line(fmt::format("      acc{0}[(mb * {1} + i8) / 4] = static_cast<unsigned>(h8[0]) | static_cast<unsigned>(h8[2]) << 16;", a, regs));
  line(fmt::format("      acc{0}[(mb * {1} + i8) / 4 + 1] = static_cast<unsigned>(h8[1]) | static_cast<unsigned>(h8[3]) << 16;", a, regs));
  end_fragment_walk(ind, out);
}

// cast<bf16>(x) stored as bf16 is one rounding of x (rounding a value that already is a bf16
// changes nothing), and a 16-bit pair converts in one instruction: the value a pair store
// converts is x, not the cast.
ir::ValueId emitter::pair_value(ir::ValueId value, ir::DType dt) const {
  auto const& v = k_.values[value];
  const bool half = dt == ir::DType::bf16 || dt == ir::DType::f16;
  return half && v.op == ir::ValueOp::cast && v.dtype == dt && k_.values[v.a].dtype == ir::DType::f32 ? v.a : value;
}

// The body of a fragment walk by stmatrix (inside `for mb`, `for i` in steps of 8): register q
// of the instruction is the pair i + 2 q of this thread, the 8 x 8 matrix q (stmatrix_lane_row
// and stmatrix_fits_fragment say which rows and columns); this lane gives the address of the
// row stmatrix_lane_row names.
void emitter::stmatrix_store(ir::StmtId id, std::int64_t regs, std::string const& ind, std::string& out) {
  auto const& s = k_.stmts[id];
  auto line = [&](std::string const& t) { out += ind + t + "\n"; };
  auto const& r = k_.refs[s.refs[0]];
  const auto dt = k_.allocs[r.id].dtype;
  const std::int64_t cols = r.shape[1];
  const ir::ValueId stored = pair_value(s.value, dt);
  line("      unsigned sm[4];  // matrix q: the pair in register i + 2 q, rows 8 (q % 2).. and columns 2 i + 8 (q / 2).. of the warp's 16 rows");
  line("      #pragma unroll");
  line("      for (int q = 0; q < 4; ++q) {");
  line("        const sc::coord e = sc::accumulator_element(lane, i + 2 * q);");
  line(fmt::format("        const long long f = static_cast<long long>(64 * mb + e.row) * {} + e.col;", cols));
  line("        (void)f;  // unused when nothing but the accumulator is addressed");
  walk_shape_ = r.shape;
  walk_coords_ = {{"f", {"64 * mb + e.row", "e.col"}}, {"(f + 1)", {"64 * mb + e.row", "e.col + 1"}}};  // (f + 1): the pair's right neighbour
  row_mb_ = "mb", row_half_ = "(i + 2 * q) / 2 % 2", walk_rows_ = r.shape[0];
  fragment_index_ = fmt::format("mb * {} + i + 2 * q", regs);
  walk_reg_ = "i + 2 * q";
  const std::string lo = value(stored, "f");
  fragment_index_ = fmt::format("mb * {} + i + 2 * q + 1", regs);
  walk_reg_ = "i + 2 * q + 1";
  line(fmt::format("        sm[q] = sc::f32x2_to_{}x2({}, {});", ir::dtype_name(dt), lo, value(stored, "(f + 1)")));
  line("      }");
  // The row this lane addresses: row lane % 8 of matrix lane % 32 / 8, whose first pair lane
  // 4 (lane % 8) of the warp holds in register i + 2 (lane % 32 / 8).
  line("      const sc::coord er = sc::accumulator_element(lane / 32 * 32 + lane % 8 * 4, i + lane % 32 / 8 * 2);");
  line(fmt::format("      const long long fr = static_cast<long long>(64 * mb + er.row) * {} + er.col;", cols));
  line(fmt::format("      sc::stmatrix_x4({}, sm[0], sm[1], sm[2], sm[3]);", smem_address(s.refs[0], "fr")));
}

// The operands a fragment walk of a store addresses at the element it is at (all but those
// under a reduction or broadcast, which fragment_fold and the row registers place) must have
// the walked shape. False: the destination is a row vector, walked by row_store.
bool emitter::check_walk_operands(ir::StmtId id, int a, std::vector<std::int64_t> const& full) const {
  auto const& s = k_.stmts[id];
  // Leading unit extents place nothing: a (1, 64) row of a (B, S) array is a (64) row vector.
  const auto shape = ir::drop_leading_units(full);
  auto check = [&](ir::RefId rid, const char* role) {
    auto const& r = k_.refs[rid];
    if (is_acc(rid) && !r.index.empty()) unsupported_op(id, fmt::format("an indexed view of accumulator a{}", r.id));
    if (ir::drop_leading_units(r.shape) != shape)
      unsupported_op(id, fmt::format("a store mixing accumulator a{} ({}) with {} of shape ({}) (every operand must have the {}'s shape)", a,
                                     fmt::join(shape, ", "), role, fmt::join(r.shape, ", "), is_acc(s.refs[0]) ? "accumulator" : "destination"));
  };
  const bool rows = shape.size() == 1;
  if (rows ? shape[0] % 64 != 0 : shape.size() != 2 || shape[0] % 64 != 0 || shape[1] % 8 != 0)
    unsupported_op(id, fmt::format("a store of shape ({}) involving accumulator a{} (a walk of the D fragment covers (64 m, 8 n) tiles or "
                                   "(64 m) row vectors)", fmt::join(shape, ", "), a));
  check(s.refs[0], "a destination");
  std::vector<ir::ValueId> leaves;
  direct_loads_of(s.value, leaves);
  for (auto l : leaves) {
    if (k_.values[l].op != ir::ValueOp::slice) {
      check(k_.values[l].ref, "a load");
    } else if (k_.values[l].shape != shape) {  // a column slice (acc_column_slice: of an f32 accumulator)
      unsupported_op(id, fmt::format("a store mixing a column slice ({}) of accumulator a{} with a walk of shape ({}) (the slice must have the "
                                     "destination's shape)", fmt::join(k_.values[l].shape, ", "), a, fmt::join(shape, ", ")));
    }
  }
  return !rows;
}

// The operands a walk addresses at its element: loads, and column slices of an accumulator's
// load (acc_column_slice), which the walk reads at a register offset.
void emitter::direct_loads_of(ir::ValueId id, std::vector<ir::ValueId>& out) const {
  auto const& v = k_.values[id];
  if (acc_column_slice(id) >= 0) {
    out.push_back(id);
    return;
  }
  if (v.op == ir::ValueOp::load) out.push_back(id);
  if (ir::value_is_reduction(v.op) || v.op == ir::ValueOp::broadcast) return;
  for (auto c : {v.a, v.b, v.c})
    if (c != ir::none) direct_loads_of(c, out);
}

// A store of shape (M), or (1, ..., 1, M), that involves an accumulator: every thread computes
// the rows its D fragment holds, two per m64 block; the four lanes of a quad compute the same
// row (the shuffles of a row reduction need all of them), and one of them writes it to memory.
void emitter::row_store(ir::StmtId id, int a, std::string const& ind, std::string& out) {
  auto const& s = k_.stmts[id];
  auto line = [&](std::string const& t) { out += ind + t + "\n"; };
  auto const& r = k_.refs[s.refs[0]];
  const auto rows = r.shape.back();  // (M), or (1, ..., 1, M)
  const bool to_registers = is_acc(s.refs[0]);
  const auto dt = r.base == ir::RefBase::param ? k_.params[r.id].dtype : k_.allocs[r.id].dtype;
  acc_touched_ = true;
  sync_if_touches_memory(s, id, line);
  line(fmt::format("{{  // op #{}: store over the D fragment's rows ({}) of a{}: {} block(s) x 2 rows per thread", id, rows, a, rows / 64));
  line("  #pragma unroll");
  line(fmt::format("  for (int mb = 0; mb < {}; ++mb) {{", rows / 64));
  line("    #pragma unroll");
  line("    for (int h = 0; h < 2; ++h) {");
  line("      const long long f = 64 * mb + sc::accumulator_element(lane, 2 * h).row;");
  line("      (void)f;  // unused when nothing but registers is addressed");
  row_mb_ = "mb", row_half_ = "h", walk_rows_ = rows;
  const std::string x = value(s.value, "f");
  row_mb_.clear(), row_half_.clear();
  line(fmt::format("      const auto x = {};", x));
  if (to_registers) {
    line(fmt::format("      acc{}[mb * 2 + h] = x;", r.id));
  } else {
    // The lane holding the row's column 0: one per quad.
    line("      if (sc::accumulator_element(lane, 0).col == 0) " + assign(s.refs[0], "f", store_conv(dt, "x")));
  }
  line("    }");
  line("  }");
  line("}");
}

// Whether accumulator_element puts register i + 1 right of register i (i even) in every thread:
// checked on the one description rather than assumed.
bool emitter::pairs_adjacent() {
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 256; i += 2) {
      const auto x = ir::wgmma::accumulator_element(t, i), y = ir::wgmma::accumulator_element(t, i + 1);
      if (y.row != x.row || y.col != x.col + 1 || x.col % 2 != 0) return false;
    }
  return true;
}


// The register of accumulator a (shape (M, n_acc)) that holds element i of the k16 step ks's A
// fragment in every thread, if one does: what lets P = f(S) feed P * V without a shuffle.
int emitter::a_from_accumulator(std::int64_t n_acc, int i, std::int64_t ks) const {
  for (int j = 0; j < n_acc / 2; ++j) {
    bool all = true;
    for (int t = 0; t < 128 && all; ++t) {
      const auto d = ir::wgmma::accumulator_element(t, j);
      const auto x = ir::wgmma::a_element(t, i);
      all = d.row == x.row && d.col == x.col + 16 * ks;
    }
    if (all) return j;
  }
  return -1;
}


// The 16- or 8-bit register tile whose registers A from registers is, unchanged (the 8-bit one's
// through the quad's gather): the value is load(a) or
// cast<a_type>(load(a)) of a whole, unindexed accumulator of A's type and shape; -1: none.
int emitter::packed_a_source(ir::ValueId top, ir::DType a_type) const {
  ir::ValueId x = top;
  if (k_.values[x].op == ir::ValueOp::cast && k_.values[x].dtype == a_type) x = k_.values[x].a;
  auto const& v = k_.values[x];
  if (v.op != ir::ValueOp::load || !is_acc(v.ref) || !k_.refs[v.ref].index.empty()) return -1;
  const int a = k_.refs[v.ref].id;
  auto const& al = k_.allocs[a];
  if (al.dtype != a_type || !(acc_f16(static_cast<std::size_t>(a)) || acc_f8(static_cast<std::size_t>(a))) || al.shape != k_.values[top].shape) return -1;
  return a;
}


// The row (0 or 1) of the thread's D fragment rows that holds A-from-registers element i, in
// every thread; -1: none does.
int emitter::a_row_half(int i) {
  for (int h = 0; h < 2; ++h) {
    bool all = true;
    for (int t = 0; t < 128 && all; ++t) all = ir::wgmma::a_element(t, i).row == ir::wgmma::accumulator_element(t, 2 * h).row;
    if (all) return h;
  }
  return -1;
}


bool emitter::quad_gather8_matches() {
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 16; ++i) {
      const auto want = ir::wgmma::a_element8(t, i);  // within the k32 step
      const int r = i / 4, b = i % 4, h = r % 2, q = r / 2;
      // lane 2 (t % 2) + b / 2 of t's quad; the low or high half (t / 2 % 2) of its word q: the
      // pair of its D registers for row half h in 8-column group 2 q + t / 2 % 2
      const int src = (t & ~3) | (2 * (t & 1) + b / 2), group = 2 * q + (t >> 1 & 1);
      const auto got = ir::wgmma::accumulator_element(src, 4 * group + 2 * h + b % 2);
      if (got.row != want.row || got.col != want.col) return false;
    }
  return true;
}


bool emitter::same_value(ir::ValueId a, ir::ValueId b) const {
  if (a == b) return true;
  if (a == ir::none || b == ir::none) return false;
  auto const &x = k_.values[a], &y = k_.values[b];
  if (x.op != y.op || x.dtype != y.dtype || x.shape != y.shape || x.scalar != y.scalar || x.index != y.index) return false;
  if ((x.ref == ir::none) != (y.ref == ir::none) || (x.ref != ir::none && !(k_.refs[x.ref] == k_.refs[y.ref]))) return false;
  return same_value(x.a, y.a) && same_value(x.b, y.b) && same_value(x.c, y.c);
}


std::size_t emitter::shared_a8_run(std::vector<ir::StmtId> const& body, std::size_t i) const {
  auto eight_bit_a = [&](ir::StmtId id) {
    auto const& s = k_.stmts[id];
    return s.op == ir::StmtOp::wgmma && s.refs[1] == ir::none && ir::dtype_bits(k_.values[s.value].dtype) == 8 && !reads_memory_into_a(s);
  };
  if (!eight_bit_a(body[i])) return 0;
  auto const& first = k_.stmts[body[i]];
  std::vector<ir::ValueId> leaves;
  direct_loads_of(first.value, leaves);
  std::size_t j = i;
  for (; j < body.size() && eight_bit_a(body[j]) && same_value(k_.stmts[body[j]].value, first.value); ++j) {
    const int acc = k_.refs[k_.stmts[body[j]].refs[0]].id;
    for (auto l : leaves)
      if (k_.refs[k_.values[l].ref].id == acc) return 0;  // A reads what one of them writes
  }
  return j - i;
}


void emitter::register_a8(ir::StmtId id, ir::wgmma::plan const& p, std::int64_t mb, std::int64_t ks, std::string& out, std::string const& ind,
                          std::string const& name) {
  static const bool gather_ok = quad_gather8_matches();
  if (!gather_ok) unsupported_op(id, "8-bit A from registers (sc::quad_gather8 disagrees with ir/wgmma.hpp's fragments: an internal error)");
  auto const& s = k_.stmts[id];
  auto line = [&](std::string const& t) { out += ind + t + "\n"; };
  auto const& v = k_.values[s.value];
  // A read whole from an 8-bit register tile of A's type and shape: its registers are already
  // the gather's input words (sc::acc8_word), no conversion.
  if (const int packed = packed_a_source(s.value, p.a_type); packed >= 0) {
    const std::int64_t words = k_.allocs[packed].shape[1] / 8;  // registers per m64 block
    line(fmt::format("  unsigned {}{}_{}[4];  // A of m block {}, k step {}: gathered from the quad's a{} registers", name, mb, ks, mb, ks, packed));
    for (int q = 0; q < 2; ++q)
      for (int h = 0; h < 2; ++h)
        line(fmt::format("  {}{}_{}[{}] = sc::quad_gather8(acc{}[{}], lane);", name, mb, ks, h + 2 * q, packed, mb * words + (2 * ks + q) * 2 + h));
    line("  #pragma unroll");
    line(fmt::format("  for (int r = 0; r < 4; ++r) sc::reg_fence({}{}_{}[r]);", name, mb, ks));
    return;
  }
  // A cast from f32 to the operand's fp8 type is the packing conversion itself (one rounding
  // either way); fast mode packs two per instruction (cvt.rn.satfinite.e4m3x2.f32).
  const bool fp8 = ir::dtype_is_fp8(p.a_type);
  const bool strip = fp8 && v.op == ir::ValueOp::cast && v.dtype == p.a_type && ir::dtype_is_float(k_.values[v.a].dtype);
  const ir::ValueId top = strip ? v.a : s.value;
  std::vector<ir::ValueId> direct;
  direct_loads_of(top, direct);
  // Element (row, col) of A where the D fragment's register j (of this m block) lies.
  auto element = [&](std::int64_t j) {
    row_mb_ = fmt::format("{}", mb), row_half_ = fmt::format("{}", j / 2 % 2), walk_rows_ = v.shape[0];
    for (auto l : direct) {
      auto const& r = k_.refs[k_.values[l].ref];
      if (!is_acc(k_.values[l].ref)) continue;
      auto const& sh = k_.allocs[r.id].shape;
      if (sh != v.shape)
        unsupported_op(id, fmt::format("A from registers computed from accumulator a{} ({}), which is not A's shape ({})", r.id, fmt::join(sh, ", "),
                                       fmt::join(v.shape, ", ")));
      fragment_index_ = fmt::format("{}", mb * (sh[1] / 2) + j);
    }
    const std::string f = fmt::format("(static_cast<long long>({} + sc::accumulator_element(lane, {}).row) * {} + sc::accumulator_element(lane, {}).col)",
                                      64 * mb, j, p.k, j);
    std::string x = value(top, f);
    fragment_index_.clear();
    row_mb_.clear(), row_half_.clear();
    return x;
  };
  auto pair = [&](std::int64_t j) { return fp8_pair(p.a_type, element(j), element(j + 1)); };
  line(fmt::format("  unsigned {}{}_{}[4];  // A of m block {}, k step {}: 8-bit, from the quad's D fragments", name, mb, ks, mb, ks));
  for (int q = 0; q < 2; ++q)
    for (int h = 0; h < 2; ++h) {
      // 8-column groups 4 ks + 2 q (low half) and 4 ks + 2 q + 1 (high) of row half h
      const std::int64_t lo = 4 * (4 * ks + 2 * q) + 2 * h, hi = lo + 4;
      line(fmt::format("  {}{}_{}[{}] = sc::quad_gather8({} | {} << 16, lane);", name, mb, ks, h + 2 * q, pair(lo), pair(hi)));
    }
  line("  #pragma unroll");
  line(fmt::format("  for (int r = 0; r < 4; ++r) sc::reg_fence({}{}_{}[r]);", name, mb, ks));
}


// The four registers of A from registers for m block mb, k step ks of wgmma `id`.
void emitter::register_a(ir::StmtId id, ir::wgmma::plan const& p, std::int64_t mb, std::int64_t ks, std::string& out, std::string const& ind) {
  if (ir::dtype_bits(p.a_type) == 8) return register_a8(id, p, mb, ks, out, ind);
  auto const& s = k_.stmts[id];
  auto line = [&](std::string const& t) { out += ind + t + "\n"; };
  auto const& v = k_.values[s.value];
  // A read whole from a 16-bit accumulator of A's own type and shape (a register tile such as
  // attention's P, kept packed for the next P V): its registers are A's, no conversion.
  if (const int packed = packed_a_source(s.value, p.a_type); packed >= 0) {
    const std::int64_t half_n = k_.allocs[packed].shape[1] / 2;
    std::vector<std::string> reg(4);
    for (int r = 0; r < 4; ++r) {
      const int j = a_from_accumulator(k_.allocs[packed].shape[1], 2 * r, ks);
      if (j < 0 || j % 2 != 0 || a_from_accumulator(k_.allocs[packed].shape[1], 2 * r + 1, ks) != j + 1)
        unsupported_op(id, fmt::format("A from registers of accumulator a{}: its fragment does not hold A's register {} whole", packed, r));
      reg[r] = fmt::format("acc{}[{}]", packed, (mb * half_n + j) / 2);
    }
    line(fmt::format("  unsigned ra{}_{}[4] = {{{}, {}, {}, {}}};  // A of m block {}, k step {}: a{}'s packed registers", mb, ks, reg[0], reg[1], reg[2],
                     reg[3], mb, ks, packed));
    line("  #pragma unroll");
    line(fmt::format("  for (int r = 0; r < 4; ++r) sc::reg_fence(ra{}_{}[r]);", mb, ks));
    return;
  }
  std::vector<std::string> elem(8);
  for (int i = 0; i < 8; ++i) {
    // A's element i is in row half a_row_half(i) of the thread's D rows: row vectors
    // broadcast into A read that register.
    if (const int h = a_row_half(i); h >= 0) row_mb_ = fmt::format("{}", mb), row_half_ = fmt::format("{}", h), walk_rows_ = v.shape[0];
    std::vector<ir::ValueId> direct;
    direct_loads_of(s.value, direct);
    for (auto l : direct) {
      auto const& r = k_.refs[k_.values[l].ref];
      if (!is_acc(k_.values[l].ref)) continue;
      auto const& sh = k_.allocs[r.id].shape;
      const int j = sh == v.shape ? a_from_accumulator(sh[1], i, ks) : -1;
      if (j < 0)
        unsupported_op(id, fmt::format("A from registers computed from accumulator a{} ({}), which is not A's shape ({})", r.id, fmt::join(sh, ", "),
                                       fmt::join(v.shape, ", ")));
      fragment_index_ = fmt::format("{}", mb * (sh[1] / 2) + j);
    }
    const std::string f = fmt::format("(static_cast<long long>({} + sc::a_element(lane, {}).row) * {} + {} + sc::a_element(lane, {}).col)", 64 * mb, i,
                                      p.k, 16 * ks, i);
    elem[i] = store_conv(p.a_type, value(s.value, f));
    fragment_index_.clear();
    row_mb_.clear(), row_half_.clear();
  }
  line(fmt::format("  unsigned ra{}_{}[4] = {{  // A of m block {}, k step {}", mb, ks, mb, ks));
  for (int r = 0; r < 4; ++r)
    line(fmt::format("    static_cast<unsigned>({}) | static_cast<unsigned>({}) << 16{}", elem[2 * r], elem[2 * r + 1], r < 3 ? "," : ""));
  line("  };");
  line("  #pragma unroll");
  line(fmt::format("  for (int r = 0; r < 4; ++r) sc::reg_fence(ra{}_{}[r]);", mb, ks));
}


void emitter::emit_wgmma(ir::StmtId id, std::string const& ind, std::string& out) {
  auto const& s = k_.stmts[id];
  auto line = [&](std::string const& t) { out += ind + t + "\n"; };
  const ir::wgmma::plan p = ir::wgmma::plan_of(k_, s);
  const int acc = k_.refs[s.refs[0]].id;
  if (!k_.refs[s.refs[0]].index.empty()) unsupported_op(id, fmt::format("an indexed view of accumulator a{}", acc));
  // 32-bit D registers per m64 block: N/2 f32 elements, or N/2 f16 elements two to a register.
  const bool d_f16 = p.acc == ir::DType::f16;
  const std::int64_t regs = p.n / (d_f16 ? 4 : 2);
  const bool sixteen = ir::dtype_bits(p.b_type) == 16;  // only 16-bit kinds take the transpose immediates
  const bool integer = p.acc == ir::DType::i32;         // .s32.s8.s8: no scale immediates, s32 registers
  line(fmt::format("{{  // op #{}: wgmma, {} m64 block(s) x {} k step(s) of {}", id, p.m_blocks(), p.k_steps(), p.shape_suffix()));
  // Generic SMEM stores of other lanes must be complete before the tensor core reads (their
  // proxy fence is commit_smem(), the kernel's own).
  if (dirty_) line("  sc::wg_sync(wg);");
  dirty_ = reads_memory_into_a(s);
  // A from registers is computed for every instruction before the fence: registers a wgmma
  // reads must be written before wgmma.fence, or ptxas injects a warpgroup.arrive per
  // instruction (C7519), which inside a warpgroup's branch serializes them (C7520).
  const std::string ra = a_regs_of(id);
  if (p.a_in_registers && ra == "ra")  // (else gathered once before this run of wgmmas)
    for (std::int64_t mb = 0; mb < p.m_blocks(); ++mb)
      for (std::int64_t ks = 0; ks < p.k_steps(); ++ks) register_a(id, p, mb, ks, out, ind);
  if (acc_touched_ || p.a_in_registers) {
    pin_registers(acc, ind + "  ", out);
    line("  sc::wgmma_fence();  // ordinary code touched these registers since the last wgmma");
  }
  acc_touched_ = false;
  // The operands' addresses are the same in every lane: warp_uniform says so to ptxas, which
  // then keeps the descriptors in uniform registers (gemm_hopper's K-loop: 86 -> 69 SASS
  // instructions, bench/perf_static.sh).
  auto address = [&](ir::RefId rid) { return fmt::format("sc::warp_uniform(smem_base + {}u + {})", offsets_[k_.refs[rid].id], view_offset(rid)); };
  if (!p.a_in_registers) line(fmt::format("  const unsigned a_addr = {};", address(s.refs[1])));
  line(fmt::format("  const unsigned b_addr = {};", address(s.refs[2])));
  // Each operand's descriptor is built once; an instruction's is that plus its start offset
  // >> 4 (ir::wgmma::descriptor_step: an add, where rebuilding it costs a shift, two logic ops
  // and a move per instruction). The ISA's start-address field is (addr & 0x3FFFF) >> 4; a
  // shared::cta address is below 2^18 (228 KB of SMEM per SM on sm_90a and sm_100a, and the
  // verifier caps a kernel's), so the mask is left out: two uniform LOP3s fewer per K-step
  // (gemm_hopper's K-loop 62 -> 60 SASS, bench/perf_static.sh).
  if (!p.a_in_registers)
    line(fmt::format("  const unsigned long long da0 = 0x{:016x}ull | (a_addr >> 4);", ir::wgmma::descriptor_constant(p.a)));
  line(fmt::format("  const unsigned long long db0 = 0x{:016x}ull | (b_addr >> 4);", ir::wgmma::descriptor_constant(p.b)));
  // Registers d of the instruction, then its other operands.
  std::string d;
  for (std::int64_t r = 0; r < regs; ++r) d += fmt::format("{}%{}", r ? ", " : "", r);
  const std::string imm_b = sixteen ? fmt::format(", {}", p.b.major == ir::wgmma::Major::mn ? 1 : 0) : "";
  const std::string imm_a = sixteen && !p.a_in_registers ? fmt::format(", {}", p.a.major == ir::wgmma::Major::mn ? 1 : 0) : "";
  for (std::int64_t mb = 0; mb < p.m_blocks(); ++mb) {
    for (std::int64_t ks = 0; ks < p.k_steps(); ++ks) {
      line(fmt::format("  {{  // m block {}, k step {}", mb, ks));
      line(fmt::format("    const unsigned long long db = db0 + {}ull;  // + {} B", ir::wgmma::descriptor_step(p.b_start(ks)), p.b_start(ks)));
      std::string a_operand, a_inputs;
      if (p.a_in_registers) {
        a_operand = fmt::format("{{%{}, %{}, %{}, %{}}}", regs, regs + 1, regs + 2, regs + 3);
        a_inputs = fmt::format("\"r\"({2}{0}_{1}[0]), \"r\"({2}{0}_{1}[1]), \"r\"({2}{0}_{1}[2]), \"r\"({2}{0}_{1}[3]), ", mb, ks, ra);
      } else {
        line(fmt::format("    const unsigned long long da = da0 + {}ull;  // + {} B", ir::wgmma::descriptor_step(p.a_start(mb, ks)), p.a_start(mb, ks)));
        a_operand = fmt::format("%{}", regs);
        a_inputs = "\"l\"(da), ";
      }
      const std::int64_t next = regs + (p.a_in_registers ? 4 : 1);
      std::string outs;
      for (std::int64_t r = 0; r < regs; ++r) outs += fmt::format("{}\"+{}\"(acc{}[{}])", r ? ", " : "", d_f16 || integer ? 'r' : 'f', acc, mb * regs + r);
      // scale-d is 1: D accumulates (a kernel zeroes its accumulator with store(acc, 0)). The
      // float kinds take imm-scale-a and imm-scale-b (1: no negation); the integer kind has none.
      // The host backend (backends/host) runs this source on the CPU, where the instruction is
      // a call into its runtime with the same operands (sc_host_prelude.h).
      out += "#ifndef SC_HOST\n";
      line(fmt::format("    asm volatile(\"{{\\n .reg .pred p;\\n setp.ne.b32 p, %{}, 0;\\n wgmma.mma_async.sync.aligned.{} {{{}}}, {}, %{}, p{}{}{};\\n}}\"",
                       next + 1, p.shape_suffix(), d, a_operand, next, integer ? "" : ", 1, 1", imm_a, imm_b));
      line(fmt::format("                 : {}", outs));
      line(fmt::format("                 : {}\"l\"(db), \"r\"(1));", a_inputs));
      out += "#else\n";
      line(fmt::format("    sc::wgmma_host({{{}, {}, {}, {}, {}, {}}}, &acc{}[{}], {}, {}, db);  // {}", p.n, static_cast<int>(p.a_type),
                       static_cast<int>(p.b_type), static_cast<int>(p.acc), p.a_in_registers ? 0 : static_cast<int>(p.a.major),
                       static_cast<int>(p.b.major), acc, mb * regs, p.a_in_registers ? "0ull" : "da",
                       p.a_in_registers ? fmt::format("{}{}_{}", ra, mb, ks) : "nullptr", p.shape_suffix()));
      out += "#endif\n";
      line("  }");
    }
  }
  line("}");
}

}  // namespace stagecraft::nvrtc::detail
