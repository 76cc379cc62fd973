// tcgen05 plans: the instructions one tcgen05_mma statement issues, their instruction
// descriptor, and the layouts of the SMEM operands (ir::wgmma's canonical layouts).
#include "stagecraft/ir/tcgen05.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stagecraft/ir/kernel.hpp"
#include "stagecraft/ir/mx_formats.hpp"

namespace stagecraft::ir::tcgen05 {

std::string plan::shape_suffix() const {
  const std::string types = kind == Kind::tf32 ? std::string("tf32")
                            : kind_mixes(kind) ? fmt::format("{}.{}", dtype_name(a_type), dtype_name(b_type))
                                               : std::string(dtype_name(a_type));
  return fmt::format("{}{} m{}n{}k{} {}", cta_group == 2 ? "cta_group::2 " : "", kind_name(kind), m, n, ik * values_per_element(b_type), types);
}

void operand_values(DType t, std::byte const* p, std::uint32_t address, float* out) {
  if (dtype_is_unit_packed(t)) {
    const auto slot = static_cast<std::int64_t>(address % 16);  // the element's place in its 16-byte unit
    out[0] = mx::decode(mx::unit_format(t), mx::unit_get(unit_bits(t), reinterpret_cast<std::uint8_t const*>(p) - slot, slot));
  } else if (t == DType::e2m1x2) {
    const auto byte = static_cast<std::uint8_t>(*p);
    out[0] = mx::decode(mx::e2m1, mx::unpack_e2m1(byte, 0));
    out[1] = mx::decode(mx::e2m1, mx::unpack_e2m1(byte, 1));
  } else {
    out[0] = wgmma::operand_value(t, p);
  }
}

std::int32_t mma_commit_barrier(Stmt const& s) {
  const std::size_t operands = s.flag ? 5 : 3;
  return s.refs.size() > operands ? s.refs[operands] : none;
}

plan plan_of(Kernel const& k, Stmt const& s) {
  const auto id = static_cast<StmtId>(&s - k.stmts.data());
  auto fail = [&](std::string const& what) -> plan {
    throw VerifyError(fmt::format("kernel '{}': op #{} (tcgen05_mma): {}", k.name, id, what));
  };
  const std::size_t operands = s.flag ? 5 : 3;
  if (s.op != StmtOp::tcgen05_mma || (s.refs.size() != operands && s.refs.size() != operands + 1))
    return fail(s.flag ? "not a block-scaled tcgen05_mma statement with 5 or 6 memory operands (D, A, B, the scales of A and B, a barrier)"
                       : "not a tcgen05_mma statement with 3 or 4 memory operands");
  auto const& d_ref = k.refs[s.refs[0]];
  auto const& d = k.allocs[d_ref.id];
  // D: a whole (lanes, columns) allocation, or one stage of a ring, d[s] (the stage's columns:
  // the code generator and the interpreter add s * columns to the TMEM address).
  const bool whole = d.shape.size() == 2 && d_ref.index.empty(), stage = d.shape.size() == 3 && d_ref.index.size() == 1;
  if (d.kind != AllocKind::tmem || (!whole && !stage) || !d_ref.block.empty())
    return fail("D is a whole TMEM allocation (lanes, columns) or one stage d[s] of a ring (stages, lanes, columns)");
  auto const& a_ref = k.refs[s.refs[1]];
  const bool a_tmem = a_ref.base == RefBase::alloc && k.allocs[a_ref.id].kind == AllocKind::tmem;

  plan p;
  p.a_tmem = a_tmem;
  p.cta_group = s.n == 2 ? 2 : 1;
  p.d = d.dtype;
  p.m = d.shape[d.shape.size() - 2];  // this CTA's rows; the pair's instruction covers both CTAs' (below)
  p.n = d.shape.back();
  // Types first, in the front end's order: which layouts are describable depends on the kind.
  p.a_type = k.allocs[k.refs[s.refs[1]].id].dtype;
  p.b_type = k.allocs[k.refs[s.refs[2]].id].dtype;
  if (dtype_is_f8f6f4(p.a_type) != dtype_is_f8f6f4(p.b_type))
    fail(fmt::format("an fp8 operand pairs only with an fp8 one (e4m3 or e5m2; tcgen05 also e2m3, e3m2 or e2m1), but A is {} and B is {}", dtype_name(p.a_type),
                     dtype_name(p.b_type)));
  if (dtype_is_int8(p.a_type) != dtype_is_int8(p.b_type))
    fail(fmt::format("an 8-bit integer operand pairs only with an 8-bit integer one (i8 or u8), but A is {} and B is {}", dtype_name(p.a_type),
                     dtype_name(p.b_type)));
  if (p.a_type != p.b_type && !dtype_is_f8f6f4(p.a_type) && !dtype_is_int8(p.a_type))
    fail(fmt::format("Expected dtypes to match but A had type {} and B had type {}", dtype_name(p.a_type), dtype_name(p.b_type)));
  p.kind = kind_of(p.b_type);
  p.scaled = s.flag;
  const bool fp4 = p.b_type == DType::e2m1x2;
  if (fp4 && !p.scaled)
    fail("e2m1x2 (packed FP4) operands are read by the block-scaled MMA only (kind::mxf4 / kind::mxf4nvf4): give tcgen05_mma a block_scale(sfa, sfb)");
  if (p.scaled) {
    // The scales' type picks the kind: ue8m0 codes (u8) for MXFP8 and MXFP4, ue4m3 for NVFP4.
    const DType sf = s.refs.size() > 4 ? k.allocs[k.refs[s.refs[3]].id].dtype : DType::u8;
    if (fp4) p.kind = sf == DType::ue4m3 ? Kind::mxf4nvf4 : Kind::mxf4;
    else if (p.kind == Kind::f8f6f4 && sf != DType::ue4m3) p.kind = Kind::mxf8f6f4;
    else
      fail(fmt::format("block scaling is modelled for e4m3, e5m2, e2m3, e3m2 and e2m1 operands with ue8m0 (u8) scales (kind::mxf8f6f4, one per 32 of K) and for "
                       "e2m1x2 operands with ue8m0 (u8) scales (kind::mxf4, one per 32 of K) or ue4m3 scales (kind::mxf4nvf4, one per 16 of K), "
                       "but A is {}, B is {} and the scales are {}",
                       dtype_name(p.a_type), dtype_name(p.b_type), dtype_name(sf)));
    p.scale_vec = scale_vec_of(p.kind);
  }
  if (ab_format(p.kind, p.a_type) < 0 || ab_format(p.kind, p.b_type) < 0)
    fail(fmt::format("the kinds modelled take f16, bf16 (kind::f16), f32 read as tf32 (kind::tf32), e4m3/e5m2/e2m3/e3m2/e2m1 (kind::f8f6f4), i8/u8 "
                     "(kind::i8) or, block-scaled, e2m1x2 (kind::mxf4, kind::mxf4nvf4), but A and B are {}",
                     dtype_name(p.b_type)));
  const bool sub_byte = dtype_is_unit_packed(p.a_type) || dtype_is_unit_packed(p.b_type);
  if (sub_byte && (s.transpose & 1 || !(s.transpose & 2)))
    fail(fmt::format("FP6 and FP4 operands of kind::f8f6f4 are read K-major only: A stored (M, K) as it is, B stored (N, K) as transpose(b), but A is {}{} and B {}{}",
                     dtype_name(p.a_type), (s.transpose & 1) ? " M-major" : "", dtype_name(p.b_type), (s.transpose & 2) ? "" : " N-major"));
  const bool mn_8bit = kind_mixes(p.kind);  // f8f6f4 and i8 read their 8-bit operands MN-major too
  auto view = [&](RefId rid, Major major, const char* role) { return wgmma::smem_operand_of(k, id, rid, major, "tcgen05_mma", role, mn_8bit); };
  // As wgmma: B stored (K, N) is N-major; transpose(b) of an (N, K) buffer is K-major.
  const wgmma::smem_operand b = view(s.refs[2], (s.transpose & 2) ? Major::k : Major::mn, "B");
  p.b = b.layout;
  std::int64_t a_m = 0, a_k = 0;
  if (a_tmem) {
    // The [a_tmem] form: a whole (128, K) TMEM allocation, rows on lanes, K packed along columns,
    // read K-major only (the ISA has no transposed A in TMEM).
    auto const& al = k.allocs[a_ref.id];
    if (al.shape.size() != 2 || !a_ref.index.empty() || !a_ref.block.empty() || (s.transpose & 1))
      fail("A from TMEM is a whole TMEM allocation (lanes, K), read K-major");
    if (p.kind != Kind::f16 && p.kind != Kind::tf32)
      fail(fmt::format("A from TMEM is modelled for kind::f16 (f16, bf16) and kind::tf32 only, but A is {} ({}): keep A in SMEM",
                       dtype_name(p.a_type), kind_name(p.kind)));
    if (p.cta_group != 1) fail("A from TMEM is modelled for cta_group::1 only (tcgen05_mma): keep A in SMEM for the pair MMA");
    a_m = al.shape[0];
    a_k = al.shape[1];
    p.a.major = Major::k;
  } else {
    const wgmma::smem_operand a = view(s.refs[1], (s.transpose & 1) ? Major::mn : Major::k, "A");
    p.a = a.layout;
    a_m = (s.transpose & 1) ? a.cols : a.rows;
    a_k = (s.transpose & 1) ? a.rows : a.cols;
  }
  const std::int64_t b_k = (s.transpose & 2) ? b.cols : b.rows, b_n = (s.transpose & 2) ? b.rows : b.cols;
  if (p.d != kind_accumulator(p.kind))
    fail(fmt::format("{} inputs accumulate in {} ({}), but the TMEM allocation is {}", dtype_name(p.b_type), dtype_name(kind_accumulator(p.kind)),
                     kind_name(p.kind), dtype_name(p.d)));
  if (p.cta_group == 1 && (a_m != p.m || b_n != p.n || a_k != b_k))
    fail(fmt::format("Expected shapes to match: D(M, N) += A(M, K) * B(K, N), but got D ({}, {}), A ({}, {}), B ({}, {})", p.m, p.n, a_m, a_k,
                     b_k, b_n));
  if (p.cta_group == 2 && (a_m != p.m || 2 * b_n != p.n || a_k != b_k))
    fail(fmt::format("Expected the shapes in each CTA to be D(M, N), A(M, K) and half of B, (K, N / 2), but got D ({}, {}), A ({}, {}), B ({}, {})",
                     p.m, p.n, a_m, a_k, b_k, b_n));
  p.k = a_k;
  p.ik = wgmma::instr_k(dtype_bits(p.b_type));
  const std::int64_t cta_m = p.m;
  if (p.cta_group == 2) p.m = 2 * cta_m;
  // cta_group::1 with M = 128 is the shape whose D layout is one row per lane; M = 64 puts D in
  // half the lanes of each sub-partition, which nothing here models.
  if (cta_m != 128 || p.n % 16 != 0 || p.n < 16 || p.n > 256 || p.k % p.ik != 0)
    fail(fmt::format("shape not supported: M = {} must be {} ({}, one row of D per TMEM lane), N = {} a multiple of 16 in [16, 256], "
                     "K = {} a multiple of {} for {}",
                     p.m, p.cta_group == 2 ? "256 over the pair, 128 in each CTA" : "128", p.cta_group == 2 ? "cta_group::2" : "cta_group::1",
                     p.n, p.k, p.ik, dtype_name(p.b_type)));
  // PTX's N shapes for an 8-bit B read MN-major ("8bit transpose B") step by 32 in the pair: no
  // check needed: a describable MN-major 8-bit B half has a multiple of 16 bytes of N / 2 (and the
  // front end's TMEM allocations are powers of two >= 32 columns besides).
  // A K-major swizzled A spans all 128 rows in one instruction: its 8-row groups must be evenly
  // strided over them, which tiles of fewer rows laid side by side along K are not.
  if (!a_tmem && p.a.major == Major::k && p.a.swizzle != 0 && p.a.tile_rows != 8 && p.a.tile_rows < p.a.rows && p.a.cols / p.a.tile_cols > 1)
    fail(fmt::format("A's tiling ({}, {}) puts its 8-row groups unevenly over the 128 rows one instruction reads: tile whole rows "
                     "(tiling(128, ...)) or 8-row groups",
                     p.a.tile_rows, p.a.tile_cols));
  // The fields both descriptor layouts share, from the plan (the scaled layout's M is M >> 7).
  auto fill = [&](auto& d) -> auto& {
    d.a_format = ab_format(p.kind, p.a_type);
    d.b_format = ab_format(p.kind, p.b_type);
    d.a_major = p.a.major;
    d.b_major = p.b.major;
    d.m = static_cast<int>(p.m);
    d.n = static_cast<int>(p.n);
    return d;
  };
  if (p.scaled) {
    if (p.cta_group != 1 || a_tmem) fail("a block-scaled MMA is modelled for cta_group::1 with A in SMEM");
    if (fp4 && (p.a.major != Major::k || p.b.major != Major::k))
      fail(fmt::format("{} reads packed FP4 K-major only, but {} is stored {}-major: keep K contiguous (A (M, K / 2), B (N, K / 2) read as "
                       "transpose(b))",
                       kind_name(p.kind), p.a.major != Major::k ? "A" : "B", p.a.major != Major::k ? "M" : "N"));
    // The scales: u8 (ue8m0) or ue4m3 TMEM, a whole allocation or a ring's stage, with a 32-bit
    // column per 32 rows of A (columns of B) in each 4-column group, one group per 4 scales of K.
    const std::int64_t groups = scale_group(p.k_steps() - 1, p.scale_vec) + 1;
    auto scales = [&](RefId rid, const char* role, std::int64_t rows) {
      auto const& r = k.refs[rid];
      if (r.base != RefBase::alloc || k.allocs[r.id].kind != AllocKind::tmem) fail(fmt::format("the scales of {} are a TMEM reference", role));
      auto const& al = k.allocs[r.id];
      const bool ok_view = (al.shape.size() == 2 && r.index.empty()) || (al.shape.size() == 3 && r.index.size() == 1);
      if (!ok_view || !r.block.empty()) fail(fmt::format("the scales of {} are a whole TMEM allocation or one stage of a ring", role));
      const DType want = p.kind == Kind::mxf4nvf4 ? DType::ue4m3 : DType::u8;
      if (al.dtype != want)
        fail(fmt::format("the scales of {} are {} codes, a {} TMEM allocation, but {} is {}", role, want == DType::u8 ? "ue8m0" : "ue4m3",
                         dtype_name(want), alloc_name(k, r.id), dtype_name(al.dtype)));
      // Bytes per lane: 16 for each full group, and a 32-bit column per 32 rows in the last.
      const std::int64_t need = (groups - 1) * 4 * scale_group_columns + rows / 32 * 4;
      if (al.shape.back() < need)
        fail(fmt::format("the scales of {} ({} rows, K = {} in {} instruction(s) of {} scales) take {} bytes of each TMEM lane ({} columns), but {} "
                         "has {}",
                         role, rows, p.k * values_per_element(p.b_type), p.k_steps(), p.scale_vec, need, (need + 3) / 4, alloc_name(k, r.id),
                         al.shape.back()));
    };
    scales(s.refs[3], "A", p.m);
    scales(s.refs[4], "B", p.n);
    scaled_desc sd;
    sd.ue8m0 = p.kind != Kind::mxf4nvf4;
    p.idesc = encode(fill(sd));
    return p;
  }
  instr_desc idesc;
  idesc.d_format = d_format(p.d);
  p.idesc = encode(fill(idesc));
  return p;
}

std::vector<std::int64_t> tmem_columns_of(Kernel const& k) {
  std::vector<std::int64_t> out(k.allocs.size(), -1);
  std::int64_t next = 0;
  for (std::size_t a = 0; a < k.allocs.size(); ++a) {
    auto const& al = k.allocs[a];
    if (al.kind != AllocKind::tmem || tmem_total_columns(al) < 0) continue;
    out[a] = next;
    next += tmem_total_columns(al);
  }
  return out;
}

}  // namespace stagecraft::ir::tcgen05
