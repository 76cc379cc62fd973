// The host machine's tensor cores; see tensor_core.hpp. The PTX ISA's facts used here live in
// the IR headers both backends share: the wgmma register fragments and SMEM descriptor
// (ir/wgmma.hpp), the tcgen05 instruction and SMEM descriptors and TMEM addresses (ir/tcgen05.hpp).
#include "tensor_core.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "stagecraft/ir/mx_formats.hpp"
#include "stagecraft/ir/tcgen05.hpp"
#include "stagecraft/ir/types.hpp"
#include "stagecraft/ir/wgmma.hpp"

namespace stagecraft::hostexec::tensor_core {

namespace {

namespace wg = ir::wgmma;
namespace tc = ir::tcgen05;

// The operand element of type t at shared-window address addr; false when it is not in SMEM.
bool fetch(smem_view const& m, std::uint32_t addr, ir::DType t, float& v) {
  const auto eb = static_cast<std::size_t>(ir::dtype_bits(t) / 8);
  if (addr < m.window || addr - m.window + eb > m.size) return false;
  v = wg::operand_value(t, reinterpret_cast<std::byte const*>(m.bytes + (addr - m.window)));
  return true;
}

std::string outside(const char* instr, const char* role, std::int64_t mn, std::int64_t k, std::uint32_t addr, smem_view const& m) {
  return fmt::format("{} reads {} element ({}, {}) at shared address {:#x}, outside the CTA's {} bytes of SMEM at {:#x}: its descriptor denotes "
                     "bytes outside every allocation",
                     instr, role, mn, k, addr, m.size, m.window);
}

double dot(float const* a, float const* b, int n) {
  double sum = 0;
  for (int k = 0; k < n; ++k) sum += static_cast<double>(a[k]) * static_cast<double>(b[k]);
  return sum;
}

}  // namespace

std::string wgmma(schost::wgmma_instr const& s, int thread, void* d, smem_view const& smem, std::uint64_t a_desc,
                  std::array<const unsigned*, 4> const* a_regs, std::uint64_t b_desc) {
  const auto at = static_cast<ir::DType>(s.a_type), bt = static_cast<ir::DType>(s.b_type), acc = static_cast<ir::DType>(s.acc_type);
  if (!wg::input_pair(at, bt) || !wg::accumulator_for(bt, acc) || !wg::n_for(bt, s.n))
    return fmt::format("wgmma.mma_async m64n{} with A {}, B {} into {} is not an instruction the tensor core has", s.n, ir::dtype_name(at),
                       ir::dtype_name(bt), ir::dtype_name(acc));
  const int bits = ir::dtype_bits(bt), ik = wg::instr_k(bits);
  const auto am = static_cast<wg::Major>(s.a_major), bm = static_cast<wg::Major>(s.b_major);
  const auto ad = wg::decode(a_desc), bd = wg::decode(b_desc);
  const int warp = thread / 32, lane = thread % 32, r0 = 16 * warp + lane / 4;
  // A's two rows this thread's D elements lie in (r0 and r0 + 8), ik elements each.
  float a[2][32];
  if (a_regs) {
    if (bits != 16 && bits != 8) return fmt::format("wgmma.mma_async with A from registers of {}-bit elements (16-bit and 8-bit ones exist)", bits);
    // The quad's lanes hold A's elements of these rows between them (ir::wgmma::a_element, or
    // a_element8: four bytes to a register).
    for (int q = 0; q < 4; ++q) {
      const int tq = (thread & ~3) + q;
      for (int i = 0; i < 128 / bits; ++i) {  // 4 registers: 8 16-bit or 16 8-bit elements
        const auto c = bits == 16 ? wg::a_element(tq, i) : wg::a_element8(tq, i);
        const int per = 32 / bits;  // elements per register
        const auto word = (*a_regs)[static_cast<std::size_t>(q)][i / per] >> (bits * (i % per));
        const auto e = static_cast<std::uint16_t>(bits == 16 ? word & 0xffffu : word & 0xffu);
        a[c.row == r0 ? 0 : 1][c.col] = wg::operand_value(at, reinterpret_cast<std::byte const*>(&e));
      }
    }
  } else {
    for (int h = 0; h < 2; ++h)
      for (int k = 0; k < ik; ++k) {
        const auto addr = wg::element_address(ad, am, bits, r0 + 8 * h, k);
        if (!fetch(smem, addr, at, a[h][k])) return outside("wgmma.mma_async", "A", r0 + 8 * h, k, addr, smem);
      }
  }
  // B's columns, each fetched once (two of the thread's elements share each).
  std::vector<float> b(static_cast<std::size_t>(s.n * ik));
  std::vector<char> have(static_cast<std::size_t>(s.n), 0);
  const int acc_bytes = ir::dtype_bits(acc) / 8;
  for (int i = 0; i < s.n / 2; ++i) {
    const auto c = wg::accumulator_element(thread, i);
    float* bc = b.data() + c.col * ik;
    if (!have[static_cast<std::size_t>(c.col)]) {
      for (int k = 0; k < ik; ++k) {
        const auto addr = wg::element_address(bd, bm, bits, c.col, k);
        if (!fetch(smem, addr, bt, bc[k])) return outside("wgmma.mma_async", "B", c.col, k, addr, smem);
      }
      have[static_cast<std::size_t>(c.col)] = 1;
    }
    // Element i of the fragment: f32 or s32 register i, or the (i % 2) half of register i / 2.
    wg::accumulate(acc, static_cast<unsigned char*>(d) + i * acc_bytes, dot(a[(c.row - r0) / 8], bc, ik));
  }
  return {};
}

std::string tmem::alloc(unsigned ncols, std::uint32_t& address) {
  if (ncols < 32 || ncols > columns || (ncols & (ncols - 1)) != 0)
    return fmt::format("tcgen05.alloc of {} columns: the count must be a power of two from 32 to {}", ncols, columns);
  for (unsigned c = 0; c + ncols <= columns; c += ncols)
    if (std::all_of(owner.begin() + c, owner.begin() + c + ncols, [](unsigned o) { return o == 0; })) {
      std::fill(owner.begin() + c, owner.begin() + c + ncols, ncols);
      address = tc::tmem_address(0, c);
      return {};
    }
  const auto used = std::count_if(owner.begin(), owner.end(), [](unsigned o) { return o != 0; });
  return fmt::format("tcgen05.alloc of {} columns: {} of the CTA's {} TMEM columns are allocated and no {} free ones are aligned to {} (on the GPU "
                     "the alloc would wait for a free that never comes)",
                     ncols, used, columns, ncols, ncols);
}

std::string tmem::dealloc(std::uint32_t address, unsigned ncols) {
  const unsigned c = tc::tmem_column(address);
  if (tc::tmem_lane(address) != 0 || c % std::max(ncols, 1u) != 0 || c + ncols > columns ||
      !std::all_of(owner.begin() + c, owner.begin() + c + ncols, [&](unsigned o) { return o == ncols; }))
    return fmt::format("tcgen05.dealloc of {} columns at TMEM address {:#x} (lane {}, column {}): not an allocation of that size made by "
                       "tcgen05.alloc (a double free, or the wrong address or count)",
                       ncols, address, tc::tmem_lane(address), c);
  std::fill(owner.begin() + c, owner.begin() + c + ncols, 0u);
  return {};
}

bool tmem::allocated(unsigned c, unsigned n) const {
  return c + n <= columns && std::all_of(owner.begin() + c, owner.begin() + c + n, [](unsigned o) { return o != 0; });
}

std::string tc_mma(int kind_code, std::uint32_t idesc, std::uint32_t d, std::uint64_t a_desc, bool a_tmem, std::uint32_t a_taddr, std::uint64_t b_desc,
                   bool accumulate, tc_cta const& issuer, tc_cta const* pair, tc_scales const* scales) {
  const auto kind = static_cast<tc::Kind>(kind_code);
  if (kind_code < 0 || kind_code > static_cast<int>(tc::Kind::mxf4nvf4)) return fmt::format("tcgen05.mma: kind {} is not one the host models", kind_code);
  const std::string instr = fmt::format("tcgen05.mma.cta_group::{}.{}{}", pair ? 2 : 1, tc::kind_name(kind),
                                        !scales ? "" : kind == tc::Kind::mxf4nvf4 ? ".block_scale.block16" : ".block_scale.block32");
  // Everything the instruction does comes from its bits, as in the interpreter's engine.
  const auto id = tc::decode_mma(idesc, scales != nullptr);  // the block-scaled layout's fields sit elsewhere
  ir::DType at{}, bt{};
  if (scales && (!tc::kind_scaled(kind) || pair || a_tmem || tc::decode_scaled(idesc).ue8m0 != (kind != tc::Kind::mxf4nvf4)))
    return fmt::format("{} with instruction descriptor {:#010x}: the host models kind::mxf8f6f4 and kind::mxf4 with ue8m0 scales and kind::mxf4nvf4 "
                       "with ue4m3 scales, cta_group::1, A in SMEM",
                       instr, idesc);
  if (!scales && tc::kind_scaled(kind)) return fmt::format("{}: a block-scaled kind without scales", instr);
  if ((idesc & (scales ? tc::scaled_reserved_bits : tc::reserved_bits)) || id.sparse || id.saturate || id.negate_a || id.negate_b || id.max_shift != 0)
    return fmt::format("{} with instruction descriptor {:#010x}: reserved bits, sparsity, saturation, negation or a maximum shift, which are not "
                       "modelled",
                       instr, idesc);
  const ir::DType acc = tc::kind_accumulator(kind);  // f32, or s32 for kind::i8
  if (!tc::formats_of(kind, id, at, bt))
    return fmt::format("{} with instruction descriptor {:#010x}: A format {}, B format {}, D format {} are not an {}-accumulating MMA of the kind",
                       instr, idesc, id.a_format, id.b_format, id.d_format, ir::dtype_name(acc));
  if (id.m != (pair ? 256 : 128) || id.n < 16 || id.n > 256 || id.n % 16 != 0)
    return fmt::format("{} with instruction descriptor {:#010x}: M = {}, N = {}; the host models M = {} and N a multiple of 16 up to 256", instr, idesc,
                       id.m, id.n, pair ? 256 : 128);
  const int m = id.m, n = id.n, cta_m = pair ? m / 2 : m, cta_n = pair ? n / 2 : n;
  const int bits = ir::dtype_bits(at), ik = wg::instr_k(bits), eb = bits / 8;
  const unsigned lane0 = tc::tmem_lane(d), col = tc::tmem_column(d);
  tc_cta const* side[2] = {&issuer, pair ? pair : &issuer};
  for (auto* c : side)
    if (lane0 != 0 || !c->t->allocated(col, static_cast<unsigned>(n)))
      return fmt::format("{}: D at TMEM address {:#x} (lane {}, column {}) with N = {}: those columns are not all allocated (tcgen05.alloc)", instr, d,
                         lane0, col, n);
  auto smem_descriptor = [&](std::uint64_t bits_, const char* role, wg::descriptor& out) -> std::string {
    const auto sd = tc::decode_smem(bits_);
    if (sd.error != tc::SmemDescError::none) return fmt::format("{}: {} descriptor {:#018x}: {}", instr, role, bits_, tc::smem_desc_error_text(sd.error));
    out = sd.d;
    return {};
  };
  wg::descriptor ad{}, bd{};
  if (auto e = smem_descriptor(b_desc, "B", bd); !e.empty()) return e;
  if (!a_tmem)
    if (auto e = smem_descriptor(a_desc, "A", ad); !e.empty()) return e;
  if (a_tmem && id.a_major != tc::Major::k)
    return fmt::format("{}: instruction descriptor {:#010x} reads A from TMEM M-major (bit 15), which the [a_tmem] form does not allow", instr, idesc);
  // B: column j of the instruction lies in the issuer's SMEM (j < cta_n) or the pair's. Each
  // element holds vpe K values (2 for packed e2m1), kv of them per instruction.
  const int vpe = tc::values_per_element(bt), kv = ik * vpe;
  std::vector<float> b(static_cast<std::size_t>(n * kv)), a(static_cast<std::size_t>(kv));
  auto read = [&](smem_view const& sm, std::uint32_t addr, ir::DType t, float* out) {
    const auto eb = static_cast<std::size_t>(ir::dtype_bits(t) / 8);
    if (addr < sm.window || addr - sm.window + eb > sm.size) return false;
    tc::operand_values(t, reinterpret_cast<std::byte const*>(sm.bytes + (addr - sm.window)), addr, out);
    return true;
  };
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < ik; ++k) {
      auto const& sm = side[j / cta_n]->smem;
      const auto addr = wg::element_address(bd, id.b_major, bits, j % cta_n, k);
      if (!read(sm, addr, bt, b.data() + j * kv + k * vpe)) return outside(instr.c_str(), "B", j, k, addr, sm);
    }
  // Block-scaled: the vec scales of row i at lane i, column sfa + 4 g + i / 32 (g: the cell group,
  // already in the address), bytes ID_A .. ID_A + vec - 1; column j's the same from sfb
  // (ir::tcgen05::scale_at): ue8m0 or ue4m3 codes.
  const int vec = scales ? tc::scale_vec_of(kind) : 1, blk = kv / vec;
  std::vector<double> sa, sb;
  if (scales) {
    const auto sd = tc::decode_scaled(idesc);
    if (!tc::scale_id_ok(sd.sfa_id, vec) || !tc::scale_id_ok(sd.sfb_id, vec))
      return fmt::format("{} with instruction descriptor {:#010x}: scale IDs {} (A) and {} (B), but the kind reads {} scale(s) from an ID that is a multiple "
                         "of {}",
                         instr, idesc, sd.sfa_id, sd.sfb_id, vec, vec);
    auto scale_row = [&](std::vector<double>& out, int rows, std::uint32_t addr, int sid, const char* role) -> std::string {
      for (int r = 0; r < rows; ++r)
        for (int v = 0; v < vec; ++v) {
          const auto p = tc::scale_at(r, sid, v);
          const unsigned lane = tc::tmem_lane(addr) + static_cast<unsigned>(p.lane), c = tc::tmem_column(addr) + static_cast<unsigned>(p.column);
          if (lane >= tmem::lanes || !issuer.t->allocated(c, 1))
            return fmt::format("{}: scale {} of {} row {} at TMEM lane {}, column {}: not allocated TMEM", instr, v, role, r, lane, c);
          const unsigned code = issuer.t->at(lane, c) >> (8 * p.byte) & 0xffu;
          out.push_back(sd.ue8m0 ? ir::mx::decode_ue8m0(code) : ir::mx::decode(ir::mx::ue4m3, code));
        }
      return {};
    };
    if (auto e = scale_row(sa, m, scales->sfa, sd.sfa_id, "A"); !e.empty()) return e;
    if (auto e = scale_row(sb, n, scales->sfb, sd.sfb_id, "B"); !e.empty()) return e;
  }
  for (int i = 0; i < m; ++i) {
    tc_cta const& c = *side[i / cta_m];
    // A's row i: from SMEM, or (A from TMEM) lane a_lane + i, its K elements packed along
    // 32-bit columns from the address's column, the lower K index in the lower bytes.
    for (int k = 0; k < ik; ++k) {
      if (a_tmem) {
        const unsigned lane = tc::tmem_lane(a_taddr) + static_cast<unsigned>(i), acol = tc::tmem_column(a_taddr) + static_cast<unsigned>(k * eb / 4);
        if (lane >= tmem::lanes || !c.t->allocated(acol, 1))
          return fmt::format("{}: A element ({}, {}) at TMEM lane {}, column {}: not allocated TMEM", instr, i, k, lane, acol);
        const std::uint32_t w = c.t->at(lane, acol);
        unsigned char bytes[4];
        std::memcpy(bytes, &w, 4);
        a[static_cast<std::size_t>(k)] = wg::operand_value(at, reinterpret_cast<std::byte const*>(bytes + k * eb % 4));
      } else {
        const auto addr = wg::element_address(ad, id.a_major, bits, i % cta_m, k);
        if (!read(c.smem, addr, at, a.data() + k * vpe)) return outside(instr.c_str(), "A", i, k, addr, c.smem);
      }
    }
    // Row i of D is lane i % cta_m of CTA i / cta_m of the pair. Block-scaled: each scale block's
    // dot product times its two scales, summed (the interpreter's order).
    for (int j = 0; j < n; ++j) {
      std::uint32_t& w = c.t->at(lane0 + static_cast<unsigned>(i % cta_m), col + static_cast<unsigned>(j));
      alignas(4) std::byte x[4]{};  // +0.0f and 0 alike
      if (accumulate) std::memcpy(x, &w, 4);
      double sum = 0;
      if (!scales) sum = dot(a.data(), b.data() + j * kv, kv);
      else
        for (int v = 0; v < vec; ++v)
          sum += dot(a.data() + v * blk, b.data() + j * kv + v * blk, blk) * sa[static_cast<std::size_t>(i * vec + v)] * sb[static_cast<std::size_t>(j * vec + v)];
      wg::accumulate(acc, x, sum);
      std::memcpy(&w, x, 4);
    }
  }
  return {};
}

std::string tc_cp(std::uint32_t taddr, std::uint64_t sdesc, tc_cta const& issuer) {
  const char* instr = "tcgen05.cp.cta_group::1.32x128b.warpx4";
  const auto sd = tc::decode_smem(sdesc);
  if (sd.error != tc::SmemDescError::none || sd.d.swizzle != 0)
    return fmt::format("{}: descriptor {:#018x}: {}", instr, sdesc, sd.error != tc::SmemDescError::none ? tc::smem_desc_error_text(sd.error) : "swizzled, which is not modelled");
  const unsigned lane0 = tc::tmem_lane(taddr), col = tc::tmem_column(taddr);
  if (lane0 != 0 || !issuer.t->allocated(col, tc::cp_columns))
    return fmt::format("{}: TMEM address {:#x} (lane {}, column {}): columns {} to {} are not all allocated (tcgen05.alloc)", instr, taddr, lane0, col, col,
                       col + tc::cp_columns - 1);
  auto const& m = issuer.smem;
  for (int r = 0; r < tc::cp_rows; ++r)
    for (int b = 0; b < tc::cp_row_bytes; ++b) {
      const std::uint32_t addr = sd.d.start + tc::cp_32x128b_offset(sd.d.sbo, r, b);
      if (addr < m.window || addr - m.window >= m.size)
        return fmt::format("{} reads byte {} of row {} at shared address {:#x}, outside the CTA's {} bytes of SMEM at {:#x}", instr, b, r, addr, m.size, m.window);
      const unsigned byte = m.bytes[addr - m.window];
      for (int q = 0; q < 4; ++q) {  // .warpx4: every 32-lane quarter gets the row
        std::uint32_t& w = issuer.t->at(static_cast<unsigned>(r + 32 * q), col + static_cast<unsigned>(b / 4));
        const unsigned shift = 8u * static_cast<unsigned>(b % 4);
        w = (w & ~(0xffu << shift)) | byte << shift;
      }
    }
  return {};
}

}  // namespace stagecraft::hostexec::tensor_core
