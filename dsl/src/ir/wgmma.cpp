// wgmma plans: the instructions one wgmma statement issues, and the layouts of its operands.
#include "stagecraft/ir/wgmma.hpp"

#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stagecraft/host/tensor.hpp"
#include "stagecraft/ir/fp8.hpp"
#include "stagecraft/ir/kernel.hpp"

namespace stagecraft::ir::wgmma {

float operand_value(DType t, std::byte const* p) {
  switch (t) {
    case DType::e4m3: return e4m3_to_f32(static_cast<unsigned char>(*p));
    case DType::e5m2: return e5m2_to_f32(static_cast<unsigned char>(*p));
    case DType::i8: return static_cast<float>(static_cast<std::int8_t>(*p));  // exact: |x| <= 128
    case DType::u8: case DType::e2m1x2: case DType::ue4m3: case DType::e2m3: case DType::e3m2: case DType::e2m1: return static_cast<float>(static_cast<std::uint8_t>(*p));  // exact: x <= 255 (the codes, for the packed formats)
    case DType::bf16: { std::uint16_t h; std::memcpy(&h, p, 2); return bf16_to_f32(h); }
    case DType::f16: { std::uint16_t h; std::memcpy(&h, p, 2); return f16_to_f32(h); }
    default: {
      std::uint32_t u;
      std::memcpy(&u, p, 4);
      u &= ~0x1FFFu;
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
  }
}

void accumulate_f16(std::uint16_t* d, double sum) { *d = f32_to_f16(static_cast<float>(static_cast<double>(f16_to_f32(*d)) + sum)); }

std::string plan::shape_suffix() const {
  // PTX names: f32 operands are read as tf32, integers are s8/u8 into s32.
  auto ptx = [](DType t) { return t == DType::f32 ? "tf32" : t == DType::i8 ? "s8" : dtype_name(t); };  // u8 is u8
  return fmt::format("m64n{}k{}.{}.{}.{}", n, ik, acc == DType::i32 ? "s32" : dtype_name(acc), ptx(a_type), ptx(b_type));
}

smem_operand smem_operand_of(Kernel const& k, StmtId id, RefId rid, Major major, const char* op, const char* role, bool mn_8bit) {
  auto fail = [&](std::string const& what) {
    throw VerifyError(fmt::format("kernel '{}': op #{} ({}): {}", k.name, id, op, what));
  };
  auto const& r = k.refs[rid];
  auto const& al = k.allocs[r.id];
  if (al.shape.size() != r.index.size() + 2)
    fail(fmt::format("{} must be a 2-D view of its SMEM allocation, but it has {} dimension(s) ({})", role,
                     al.shape.size() - r.index.size(), fmt::join(r.shape, ", ")));
  smem_operand o{al.dtype, al.shape[al.shape.size() - 2], al.shape.back(), {}};
  if (!r.block.empty()) {
    // A sub-view is whole rows of a swizzled view that start on a swizzle pattern (8 rows of the
    // swizzle width): those bytes are exactly a smaller array of the same layout, at an address
    // the hardware swizzles alike (ops/mma.hpp's rule, for IR built by hand).
    auto const& e = k.exprs[r.block[0]];
    const std::int64_t row_bytes = al.shape.back() * dtype_bits(al.dtype) / 8;
    if (al.swizzle == 0 || !al.tiling.empty() || r.shape[1] != al.shape.back() || e.op != ExprOp::constant || (e.value * row_bytes) % (8 * al.swizzle) != 0)
      fail(fmt::format("{} is the sub-view ({}) of ({}) (swizzle {} B{}): a {} descriptor describes only whole rows of a swizzled 2-D view from a "
                       "static start on a swizzle pattern (8 rows)",
                       role, fmt::join(r.shape, ", "), fmt::join(std::vector<std::int64_t>(al.shape.end() - 2, al.shape.end()), ", "), al.swizzle,
                       al.tiling.empty() ? "" : fmt::format(", tiling ({})", fmt::join(al.tiling, ", ")), op));
    o.rows = r.shape[0];
  }
  const int tr = static_cast<int>(al.tiling.size());
  if (tr > 2) fail(fmt::format("{}: a tiling over more than the operand's two dimensions ({}) cannot be read by {}", role, fmt::join(al.tiling, ", "), op));
  const std::int64_t t_r = tr == 2 ? al.tiling[0] : o.rows, t_c = tr >= 1 ? al.tiling.back() : o.cols;
  o.layout = describe(dtype_bits(al.dtype), o.rows, o.cols, tr == 0 ? 0 : 2, t_r, t_c, al.swizzle, major, mn_8bit);
  if (tr == 1) o.layout.error = LayoutError::bad_tiling;
  if (o.layout.error != LayoutError::none)
    fail(fmt::format("{} ({} [{}], swizzle {} B{}): {}", role, dtype_name(al.dtype), fmt::join(r.shape, ", "), al.swizzle,
                     al.tiling.empty() ? "" : fmt::format(", tiling ({})", fmt::join(al.tiling, ", ")), layout_error_text(o.layout.error)));
  return o;
}

plan plan_of(Kernel const& k, Stmt const& s) {
  const auto id = static_cast<StmtId>(&s - k.stmts.data());
  auto fail = [&](std::string const& what) -> plan {
    throw VerifyError(fmt::format("kernel '{}': op #{} (wgmma): {}", k.name, id, what));
  };
  if (s.op != StmtOp::wgmma || s.refs.size() != 3) return fail("not a wgmma statement with 3 memory operands");
  auto const& acc_ref = k.refs[s.refs[0]];
  auto const& acc = k.allocs[acc_ref.id];
  if (acc.shape.size() != 2) return fail(fmt::format("the accumulator is {}-D; it is (M, N)", acc.shape.size()));

  plan p;
  p.acc = acc.dtype;
  p.m = acc.shape[0];
  p.n = acc.shape[1];
  // A and B as views: (rows, cols) of the allocation's trailing dimensions, read transposed or not.
  auto view = [&](RefId rid, Major major, const char* role) { return smem_operand_of(k, id, rid, major, "wgmma", role); };

  // Types first, in the front end's order: which layouts are describable depends on the type.
  p.b_type = k.allocs[k.refs[s.refs[2]].id].dtype;
  p.a_type = s.refs[1] == none ? k.values[s.value].dtype : k.allocs[k.refs[s.refs[1]].id].dtype;
  if (!input_pair(p.a_type, p.b_type)) {
    if (dtype_is_fp8(p.a_type) || dtype_is_fp8(p.b_type))
      fail(fmt::format("an fp8 operand pairs only with an fp8 one (e4m3 or e5m2), but A is {} and B is {}", dtype_name(p.a_type), dtype_name(p.b_type)));
    if (dtype_is_int8(p.a_type) || dtype_is_int8(p.b_type))
      fail(fmt::format("an 8-bit integer operand pairs only with an 8-bit integer one (i8 or u8), but A is {} and B is {}", dtype_name(p.a_type),
                       dtype_name(p.b_type)));
    if (p.a_type != p.b_type)
      fail(fmt::format("Expected dtypes to match but A had type {} and B had type {}", dtype_name(p.a_type), dtype_name(p.b_type)));
    fail(fmt::format("wgmma takes f16, bf16, f32 (as tf32), e4m3, e5m2, i8 or u8 inputs, but got {}", dtype_name(p.b_type)));
  }
  if (!accumulator_for(p.b_type, p.acc))
    fail(fmt::format("{} inputs accumulate in {}, but the accumulator is {}", dtype_name(p.b_type),
                     dtype_is_int8(p.b_type) ? "i32" : accumulator_for(p.b_type, DType::f16) ? "f32 or f16" : "f32", dtype_name(p.acc)));

  const smem_operand b = view(s.refs[2], (s.transpose & 2) ? Major::k : Major::mn, "B");
  p.b = b.layout;
  const std::int64_t b_k = (s.transpose & 2) ? b.cols : b.rows, b_n = (s.transpose & 2) ? b.rows : b.cols;
  std::int64_t a_m = 0, a_k = 0;
  if (s.refs[1] == none) {
    if (s.transpose & 1) fail("A comes from registers, which cannot be transposed");
    auto const& v = k.values[s.value];
    if (v.shape.size() != 2) fail(fmt::format("A from registers must be a 2-D tile, but it is ({})", fmt::join(v.shape, ", ")));
    p.a_in_registers = true;
    a_m = v.shape[0];
    a_k = v.shape[1];
    if (dtype_bits(p.a_type) != 16 && dtype_bits(p.a_type) != 8)
      fail(fmt::format("A from registers must have a 16-bit or 8-bit type, but it is {}", dtype_name(p.a_type)));
  } else {
    const smem_operand a = view(s.refs[1], (s.transpose & 1) ? Major::mn : Major::k, "A");
    p.a = a.layout;
    a_m = (s.transpose & 1) ? a.cols : a.rows;
    a_k = (s.transpose & 1) ? a.rows : a.cols;
  }
  if (a_m != p.m || b_n != p.n || a_k != b_k)
    fail(fmt::format("Expected shapes to match: D(M, N) += A(M, K) * B(K, N), but got D ({}, {}), A ({}, {}), B ({}, {})", p.m, p.n, a_m, a_k,
                     b_k, b_n));
  p.k = a_k;
  p.ik = instr_k(dtype_bits(p.b_type));
  if (p.m % 64 != 0 || !n_for(p.b_type, p.n) || p.k % p.ik != 0)
    fail(fmt::format("shape not supported: M = {} must be a multiple of 64, N = {} a multiple of 8 up to 256{}, K = {} a multiple of {} for {}", p.m,
                     p.n, dtype_is_int8(p.b_type) ? " (for i8 and u8: 8, 16, 24, then multiples of 16)" : "", p.k, p.ik, dtype_name(p.b_type)));
  return p;
}

}  // namespace stagecraft::ir::wgmma
