// tcgen05 code generation for sm_100a; see tcgen05.hpp for what the generated code does.
//
// PTX used (PTX ISA 8.6+, section 9.7.16 "TensorCore 5th Generation Family Instructions"), G the
// kernel's one CTA group (2 where it uses the pair's MMA, else 1: PTX allows one per kernel):
//   tcgen05.alloc.cta_group::G.sync.aligned.shared::cta.b32 [slot], ncols;   (one warp per CTA)
//   tcgen05.relinquish_alloc_permit.cta_group::G.sync.aligned;
//   tcgen05.dealloc.cta_group::G.sync.aligned.b32 taddr, ncols;             (one warp per CTA)
//   tcgen05.mma.cta_group::G.kind::{f16,tf32,f8f6f4,i8} [d], adesc, bdesc, idesc, enable_input_d;
//   tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];
//   tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [bar], ctaMask;
//   tcgen05.mma.cta_group::1.kind::{f16,tf32} [d], [a], bdesc, idesc, enable_input_d;  (A from TMEM)
//   tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 [d], adesc, bdesc, idesc, [sfa], [sfb], enable_input_d;
//   tcgen05.cp.cta_group::1.32x128b.warpx4 [taddr], sdesc;             (scales, SMEM to TMEM)
//   tcgen05.ld.sync.aligned.32x32b.x{16,32}.b32 {r...}, [taddr];  tcgen05.wait::ld.sync.aligned;
//   tcgen05.st.sync.aligned.32x32b.x{16,32}.b32 [taddr], {r...};  tcgen05.wait::st.sync.aligned;
//   tcgen05.fence::before_thread_sync / ::after_thread_sync.
// ncols of alloc and dealloc: a power of two in [32, 512]. A warp of a warpgroup reaches only
// its own 32-lane sub-partition of TMEM: warp w of the warpgroup loads lanes 32 (w % 4) + ...
// The pair (cta_group::2): alloc and dealloc are collective over the CTA pair, one warp of EACH
// CTA taking part, which every CTA's warp 0 (alloc) and the freeing warpgroup's first warp
// (dealloc) are, since both CTAs run the same code; that is also what gives both CTAs the same
// TMEM address, the one the even CTA's MMA names for both halves of D.
#include "tcgen05.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stagecraft/ir/tcgen05.hpp"
#include "stagecraft/ir/tile_view.hpp"
#include "stagecraft/ir/wgmma.hpp"
#include "stagecraft/nvrtc/codegen.hpp"

namespace stagecraft::nvrtc::tcgen05_gen {

namespace tc = ir::tcgen05;

namespace {

bool tmem_alloc(ir::Kernel const& k, ir::RefId r) {
  return k.refs[r].base == ir::RefBase::alloc && k.allocs[k.refs[r].id].kind == ir::AllocKind::tmem;
}

[[noreturn]] void refuse(ir::Kernel const& k, ir::StmtId s, std::string const& what) {
  throw unsupported(fmt::format("kernel '{}', op #{} ({}): {} is not supported by the NVRTC backend yet", k.name, s,
                                ir::stmt_name(k.stmts[s].op), what));
}

// The load_tmem leaves of a tile value, and the ordinary loads beside them.
void leaves(ir::Kernel const& k, ir::ValueId id, std::vector<ir::ValueId>& tmem, std::vector<ir::ValueId>& loads) {
  auto const& v = k.values[id];
  if (v.op == ir::ValueOp::load_tmem) tmem.push_back(id);
  if (v.op == ir::ValueOp::load) loads.push_back(id);
  for (auto c : {v.a, v.b, v.c})
    if (c != ir::none) leaves(k, c, tmem, loads);
}

// A tcgen05.ld of `n` columns (32-bit registers) into float r[n], with its wait in the same asm
// statement: the compiler cannot read a register before the wait, since no output exists before.
std::string ld_wrapper(int n) {
  std::string regs, outs;
  for (int i = 0; i < n; ++i) {
    regs += fmt::format("{}%{}", i ? ", " : "", i);
    outs += fmt::format("{}\"=f\"(r[{}])", i ? ", " : "", i);
  }
  return fmt::format("__device__ __forceinline__ void tmem_ld_32x32b_x{0}(unsigned taddr, float (&r)[{0}]) {{\n"
                     "  asm volatile(\"tcgen05.ld.sync.aligned.32x32b.x{0}.b32 {{{1}}}, [%{0}];\\n tcgen05.wait::ld.sync.aligned;\"\n"
                     "               : {2} : \"r\"(taddr) : \"memory\");\n}}\n",
                     n, regs, outs);
}

// tcgen05.st of `n` columns from unsigned r[n]; its wait is tmem_st_wait(), once after a
// statement's stores (the warp's stores complete in order before it returns).
std::string st_wrapper(int n) {
  std::string regs, ins;
  for (int i = 0; i < n; ++i) {
    regs += fmt::format("{}%{}", i ? ", " : "", i + 1);
    ins += fmt::format(", \"r\"(r[{}])", i);
  }
  return fmt::format("__device__ __forceinline__ void tmem_st_32x32b_x{0}(unsigned taddr, const unsigned (&r)[{0}]) {{\n"
                     "  asm volatile(\"tcgen05.st.sync.aligned.32x32b.x{0}.b32 [%0], {{{1}}};\"\n"
                     "               :: \"r\"(taddr){2} : \"memory\");\n}}\n",
                     n, regs, ins);
}

}  // namespace

int cta_group(ir::Kernel const& k) {
  // The verifier has already refused a kernel that mixes the groups (one .cta_group per kernel).
  for (auto const& s : k.stmts)
    if ((s.op == ir::StmtOp::tcgen05_mma || s.op == ir::StmtOp::tcgen05_commit_arrive) && s.n == 2) return 2;
  return 1;
}

bool uses_tcgen05(ir::Kernel const& k) {
  for (auto const& a : k.allocs)
    if (a.kind == ir::AllocKind::tmem) return true;
  for (auto const& s : k.stmts)
    if (s.op == ir::StmtOp::tcgen05_mma || s.op == ir::StmtOp::tcgen05_commit_arrive) return true;
  return has_pair_copies(k);
}

bool has_pair_copies(ir::Kernel const& k) {
  return std::any_of(k.stmts.begin(), k.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::copy_gmem_to_smem && s.n == 2; });
}

tmem_plan plan_tmem(ir::Kernel const& k, std::int64_t smem_end) {
  tmem_plan t;
  t.cta_group = cta_group(k);
  t.columns.assign(k.allocs.size(), 0);
  t.slot.assign(k.allocs.size(), -1);
  for (std::size_t a = 0; a < k.allocs.size(); ++a) {
    auto const& al = k.allocs[a];
    if (al.kind != ir::AllocKind::tmem || ir::tmem_total_columns(al) < 0) continue;
    t.columns[a] = ir::tmem_alloc_columns(ir::tmem_total_columns(al));
    t.order.push_back(static_cast<int>(a));
  }
  std::stable_sort(t.order.begin(), t.order.end(), [&](int x, int y) { return t.columns[static_cast<std::size_t>(x)] > t.columns[static_cast<std::size_t>(y)]; });
  t.smem_end = (smem_end + 7) / 8 * 8;
  for (int a : t.order) t.slot[static_cast<std::size_t>(a)] = t.smem_end, t.smem_end += 4;
  if (!t.order.empty()) t.smem_end = (t.smem_end + 7) / 8 * 8;
  else t.smem_end = smem_end;
  return t;
}

std::string tmem_var(int alloc) { return fmt::format("tmem{}", alloc); }

// The TMEM address of a reference: its allocation's, plus s * columns for stage s of a ring,
// plus the first column of a slice<1> of 32-bit elements (its block's column origin; the lane
// origin is 0: a slice keeps every lane).
std::string tmem_address(context const& c, ir::RefId rid) {
  auto const& r = c.k.refs[rid];
  std::string a = tmem_var(r.id);
  if (!r.index.empty())
    a = fmt::format("{} + static_cast<unsigned>({}) * {}u", a, c.expr(r.index[0]), ir::tmem_stage_columns(c.k.allocs[static_cast<std::size_t>(r.id)]));
  if (!r.block.empty()) a = fmt::format("{} + static_cast<unsigned>({})", a, c.expr(r.block[1]));
  return r.index.empty() && r.block.empty() ? a : "(" + a + ")";
}

std::string prelude_head() {
  return "// tensor memory in use: the prelude's thread barriers carry the tcgen05 fences\n#define SC_TCGEN05 1\n";
}

std::string prelude_tail(int group, bool pair_copies) {
  // The host backend's prelude defines these names as calls into its runtime (sc_host_prelude.h).
  std::string p = fmt::format("// ---- tcgen05 (sm_100a), cta_group::{} ----\n#ifndef SC_HOST\nnamespace sc {{\n", group);
  p += fmt::format("__device__ __forceinline__ void tmem_alloc(unsigned slot, unsigned ncols) {{\n"
                   "  asm volatile(\"tcgen05.alloc.cta_group::{}.sync.aligned.shared::cta.b32 [%0], %1;\" :: \"r\"(slot), \"r\"(ncols) : \"memory\");\n}}\n",
                   group);
  p += fmt::format("__device__ __forceinline__ void tmem_relinquish() {{ asm volatile(\"tcgen05.relinquish_alloc_permit.cta_group::{}.sync.aligned;\" ::: \"memory\"); }}\n",
                   group);
  p += fmt::format("__device__ __forceinline__ void tmem_dealloc(unsigned taddr, unsigned ncols) {{\n"
                   "  asm volatile(\"tcgen05.dealloc.cta_group::{}.sync.aligned.b32 %0, %1;\" :: \"r\"(taddr), \"r\"(ncols) : \"memory\");\n}}\n",
                   group);
  // enable_input_d false: D = A * B (the first instruction of a non-accumulating statement).
  for (const char* kind : {"f16", "tf32", "f8f6f4", "i8"})
    p += fmt::format("__device__ __forceinline__ void tc_mma_{0}(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, unsigned acc) {{\n"
                     "  asm volatile(\"{{\\n .reg .pred p;\\n setp.ne.b32 p, %4, 0;\\n tcgen05.mma.cta_group::{1}.kind::{0} [%0], %1, %2, %3, p;\\n}}\"\n"
                     "               :: \"r\"(d), \"l\"(a), \"l\"(b), \"r\"(idesc), \"r\"(acc) : \"memory\");\n}}\n",
                     kind, group);
  // A from TMEM (the [a_tmem] form, cta_group::1 only: ir::tcgen05::plan_of).
  if (group == 1)
    for (const char* kind : {"f16", "tf32"})
      p += fmt::format("__device__ __forceinline__ void tc_mma_ts_{0}(unsigned d, unsigned a, unsigned long long b, unsigned idesc, unsigned acc) {{\n"
                       "  asm volatile(\"{{\\n .reg .pred p;\\n setp.ne.b32 p, %4, 0;\\n tcgen05.mma.cta_group::1.kind::{0} [%0], [%1], %2, %3, p;\\n}}\"\n"
                       "               :: \"r\"(d), \"r\"(a), \"l\"(b), \"r\"(idesc), \"r\"(acc) : \"memory\");\n}}\n",
                       kind);
  // Block-scaled (kind::mxf8f6f4 and kind::mxf4, ue8m0 per 32 of K; kind::mxf4nvf4, ue4m3 per 16)
  // and the copy of its scales into TMEM.
  if (group == 1) {
    for (const char* kind : {"mxf8f6f4", "mxf4", "mxf4nvf4"})
      p += fmt::format("__device__ __forceinline__ void tc_mma_{0}(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, unsigned sfa, "
                       "unsigned sfb, unsigned acc) {{\n"
                       "  asm volatile(\"{{\\n .reg .pred p;\\n setp.ne.b32 p, %6, 0;\\n tcgen05.mma.cta_group::1.kind::{0}.block_scale.{1} [%0], %1, %2, %3, [%4], [%5], p;\\n}}\"\n"
                       "               :: \"r\"(d), \"l\"(a), \"l\"(b), \"r\"(idesc), \"r\"(sfa), \"r\"(sfb), \"r\"(acc) : \"memory\");\n}}\n",
                       kind, std::string_view(kind) == "mxf4nvf4" ? "block16" : "block32");
    p += "__device__ __forceinline__ void tc_cp_32x128b_warpx4(unsigned taddr, unsigned long long sdesc) {\n"
         "  asm volatile(\"tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;\" :: \"r\"(taddr), \"l\"(sdesc) : \"memory\");\n}\n";
  }
  // Arrives on the barrier once every tcgen05 op this thread issued before it has completed. The
  // pair's commit arrives on the barrier at the same SMEM offset in each CTA of ctaMask.
  if (group == 1)
    p += "__device__ __forceinline__ void tc_commit(unsigned bar) {\n"
         "  asm volatile(\"tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\" :: \"r\"(bar) : \"memory\");\n}\n";
  else
    p += "__device__ __forceinline__ void tc_commit_pair(unsigned bar, unsigned short cta_mask) {\n"
         "  asm volatile(\"tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;\"\n"
         "               :: \"r\"(bar), \"h\"(cta_mask) : \"memory\");\n}\n";
  // The pair's TMA loads (.cta_group::2): the data lands in this CTA's SMEM, its bytes complete on
  // the barrier at the same offset in the CTA of rank `leader` (the pair's even CTA), whose
  // shared::cluster address mapa gives; multicast: in each destination's pair leader.
  if (pair_copies) {
    auto load = [&](bool multicast) {
      std::string f = fmt::format("__device__ __forceinline__ void tma_load{}_pair(unsigned dst, const tmap_t* map, unsigned bar, unsigned leader, {}int rank, "
                                  "const int* c) {{\n"
                                  "  const unsigned long long m = reinterpret_cast<unsigned long long>(map);\n"
                                  "  unsigned lbar;\n"
                                  "  asm volatile(\"mapa.shared::cluster.u32 %0, %1, %2;\" : \"=r\"(lbar) : \"r\"(bar), \"r\"(leader));\n"
                                  "  switch (rank) {{\n",
                                  multicast ? "_multicast" : "", multicast ? "unsigned short mask, " : "");
      for (int r = 1; r <= 5; ++r) {
        std::string crd, ins;
        for (int i = 0; i < r; ++i) crd += fmt::format("{}%{}", i ? ", " : "", i + 3);
        for (int i = 0; i < r; ++i) ins += fmt::format(", \"r\"(c[{}])", i);
        f += fmt::format("    {}: asm volatile(\"cp.async.bulk.tensor.{}d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes{} [%0], [%1, {{{}}}], [%2]{};\"\n"
                         "                 :: \"r\"(dst), \"l\"(m), \"r\"(lbar){}{} : \"memory\"); break;\n",
                         r < 5 ? fmt::format("case {}", r) : "default", r, multicast ? ".multicast::cluster" : "", crd,
                         multicast ? fmt::format(", %{}", r + 3) : "", ins, multicast ? ", \"h\"(mask)" : "");
      }
      return f + "  }\n}\n";
    };
    p += load(false) + load(true);
  }
  p += ld_wrapper(16) + ld_wrapper(32) + ld_wrapper(64) + st_wrapper(16) + st_wrapper(32);
  p += "__device__ __forceinline__ void tmem_st_wait() { asm volatile(\"tcgen05.wait::st.sync.aligned;\" ::: \"memory\"); }\n";
  // f32x2 arithmetic (sm_100a): two f32 lanes of a 64-bit register pair per instruction, each
  // rounded as the scalar instruction rounds it (fma.rn: FFMA2, add.rn: FADD2, mul.rn: FMUL2).
  p += "__device__ __forceinline__ unsigned long long f32x2(float lo, float hi) { unsigned long long r; asm(\"mov.b64 %0, {%1, %2};\" : \"=l\"(r) : \"f\"(lo), \"f\"(hi)); return r; }\n"
       "__device__ __forceinline__ void f32x2_split(unsigned long long x, float& lo, float& hi) { asm(\"mov.b64 {%0, %1}, %2;\" : \"=f\"(lo), \"=f\"(hi) : \"l\"(x)); }\n"
       "__device__ __forceinline__ void fma2(float& r0, float& r1, float a0, float a1, float b0, float b1, float c0, float c1) {\n"
       "  unsigned long long d; asm(\"fma.rn.f32x2 %0, %1, %2, %3;\" : \"=l\"(d) : \"l\"(f32x2(a0, a1)), \"l\"(f32x2(b0, b1)), \"l\"(f32x2(c0, c1))); f32x2_split(d, r0, r1);\n}\n"
       "__device__ __forceinline__ void add2(float& r0, float& r1, float a0, float a1, float b0, float b1) {\n"
       "  unsigned long long d; asm(\"add.rn.f32x2 %0, %1, %2;\" : \"=l\"(d) : \"l\"(f32x2(a0, a1)), \"l\"(f32x2(b0, b1))); f32x2_split(d, r0, r1);\n}\n"
       "__device__ __forceinline__ void mul2(float& r0, float& r1, float a0, float a1, float b0, float b1) {\n"
       "  unsigned long long d; asm(\"mul.rn.f32x2 %0, %1, %2;\" : \"=l\"(d) : \"l\"(f32x2(a0, a1)), \"l\"(f32x2(b0, b1))); f32x2_split(d, r0, r1);\n}\n";
  p += "}  // namespace sc\n#endif\n// ---- end of tcgen05 ----\n";
  return p;
}

std::string alloc_before_sync(ir::Kernel const& k, tmem_plan const& t) {
  if (t.order.empty()) return "";
  std::string h = "  // TMEM, allocated by warp 0, largest first; each address lands in its SMEM slot\n  if (threadIdx.x < 32) {\n";
  for (int a : t.order) {
    auto const& al = k.allocs[static_cast<std::size_t>(a)];
    h += fmt::format("    sc::tmem_alloc(smem_base + {}u, {}u);  // {} ({}) {}\n", t.slot[static_cast<std::size_t>(a)], t.columns[static_cast<std::size_t>(a)],
                     ir::alloc_name(k, a), fmt::join(al.shape, ", "), ir::dtype_name(al.dtype));
  }
  h += "    sc::tmem_relinquish();\n  }\n  sc::tc_before_sync();\n";
  return h;
}

std::string after_first_sync(ir::Kernel const& k, tmem_plan const& t) {
  if (t.order.empty()) return "";
  std::string h = "  sc::tc_after_sync();\n";
  for (int a : t.order)
    h += fmt::format("  const unsigned {} = *reinterpret_cast<volatile unsigned*>(smem + {});  // {}\n", tmem_var(a), t.slot[static_cast<std::size_t>(a)],
                     ir::alloc_name(k, a));
  return h;
}

void mma(context const& c, ir::StmtId id, std::string const& ind, std::string& out) {
  auto const& k = c.k;
  auto const& s = k.stmts[id];
  auto line = [&](std::string const& t) { out += ind + t + "\n"; };
  // The pair's instruction (cta_group::2, where the user's program lets only the even CTA reach
  // it) takes the same operands as a single CTA's: plan_of's idesc says M = 256, and the SMEM
  // descriptors and the TMEM address are this CTA's, which the hardware applies in the odd CTA
  // too (its halves of A and B sit at the same offsets, its D at the same TMEM address).
  const tc::plan p = tc::plan_of(k, s);
  const int d = k.refs[s.refs[0]].id;
  const std::string fn = fmt::format("sc::tc_mma_{}", tc::kind_name(p.kind) + 6);  // past "kind::"
  auto address = [&](ir::RefId rid) { return fmt::format("smem_base + {}u + {}", c.offsets[k.refs[rid].id], c.view_offset(rid)); };
  line(fmt::format("{{  // op #{}: tcgen05_mma, {} instruction(s) of {} into {}{}, issued by one thread", id, p.k_steps(), p.shape_suffix(),
                   ir::alloc_name(k, d), p.a_tmem ? fmt::format(", A from TMEM {}", ir::alloc_name(k, k.refs[s.refs[1]].id)) : std::string()));
  line(c.elected ? "  {" : fmt::format("  if ({}) {{", c.issuer));
  line(fmt::format("    const unsigned d_addr = {};", tmem_address(c, s.refs[0])));
  if (!p.a_tmem) line(fmt::format("    const unsigned a_addr = {};", address(s.refs[1])));
  line(fmt::format("    const unsigned b_addr = {};", address(s.refs[2])));
  line(fmt::format("    const unsigned acc = ({}) != 0 ? 1u : 0u;", c.expr(s.e0)));
  // The descriptors' constant bits are ir::tcgen05's encoding of the layout at address 0; the
  // start address (bits 0-13, address >> 4) is the only field that varies.
  // Built once per operand; each instruction adds its start offset >> 4 (ir::wgmma::descriptor_step:
  // the start field is the same as wgmma's).
  const std::uint64_t da = tc::encode_smem(0, p.a), db = tc::encode_smem(0, p.b);
  if (!p.a_tmem) line(fmt::format("    const unsigned long long da0 = 0x{:016x}ull | (a_addr >> 4);", da));  // no mask: see codegen.cpp (wgmma)
  line(fmt::format("    const unsigned long long db0 = 0x{:016x}ull | (b_addr >> 4);", db));
  if (p.scaled) {
    line(fmt::format("    const unsigned sfa = {}, sfb = {};", tmem_address(c, s.refs[3]), tmem_address(c, s.refs[4])));
    // One address per scale operand; instruction ks reads its scale_vec scales from byte ID of
    // each cell (its IDs) of cell group g, 4 g columns on (ir::tcgen05::plan::scale_column).
    for (std::int64_t ks = 0; ks < p.k_steps(); ++ks) {
      const auto col = p.scale_column(ks);
      const std::string sfa = col ? fmt::format("sfa + {}u", col) : "sfa", sfb = col ? fmt::format("sfb + {}u", col) : "sfb";
      line(fmt::format("    {}(d_addr, da0 + {}ull, db0 + {}ull, 0x{:08x}u, {}, {}, {});  // A + {} B, B + {} B, scale byte {}", fn,
                       ir::wgmma::descriptor_step(p.a_start(ks)), ir::wgmma::descriptor_step(p.b_start(ks)), p.idesc_at(ks), sfa, sfb,
                       ks == 0 ? "acc" : "1u", p.a_start(ks), p.b_start(ks), ir::tcgen05::scale_id(ks, p.scale_vec)));
    }
  }
  for (std::int64_t ks = 0; ks < (p.scaled ? 0 : p.k_steps()); ++ks) {
    // A from TMEM: its address (lane 0, first column) plus the 8 columns each instruction reads.
    if (p.a_tmem)
      line(fmt::format("    {}(d_addr, {} + {}u, db0 + {}ull, 0x{:08x}u, {});  // B + {} B", p.kind == tc::Kind::tf32 ? "sc::tc_mma_ts_tf32" : "sc::tc_mma_ts_f16",
                       tmem_var(k.refs[s.refs[1]].id), p.a_column(ks), ir::wgmma::descriptor_step(p.b_start(ks)), p.idesc,
                       ks == 0 ? "acc" : "1u", p.b_start(ks)));
    else
      line(fmt::format("    {}(d_addr, da0 + {}ull, db0 + {}ull, 0x{:08x}u, {});  // A + {} B, B + {} B", fn,
                       ir::wgmma::descriptor_step(p.a_start(ks)), ir::wgmma::descriptor_step(p.b_start(ks)), p.idesc, ks == 0 ? "acc" : "1u",
                       p.a_start(ks), p.b_start(ks)));
  }
  line("  }");
  if (const auto bar = tc::mma_commit_barrier(s); bar != ir::none) commit(c, id, bar, ind + "  ", out);  // tcgen05_mma(d, a, b, bar, acc): the MMA, then its commit
  line("}");
}

void copy_scales(context const& c, ir::StmtId id, std::string const& ind, std::string& out) {
  auto const& k = c.k;
  auto const& s = k.stmts[id];
  // The descriptor's constant bits (no swizzle, SBO 128: 8 rows of 16 bytes) and the start field.
  // The column group (e0, a constant: the verifier): 4 columns each.
  const std::string group = s.e0 != ir::none ? fmt::format(" + 4u * ({})", c.expr(s.e0)) : "";
  out += ind + fmt::format("{}sc::tc_cp_32x128b_warpx4({}{}, 0x{:016x}ull | ((smem_base + {}u + {}) >> 4));  // op #{}: tcgen05.cp of 512 B of scales into {}\n",
                           c.elected ? "" : fmt::format("if ({}) ", c.issuer), tmem_address(c, s.refs[1]), group, tc::encode_cp_smem(0),
                           c.offsets[k.refs[s.refs[0]].id], c.view_offset(s.refs[0]), id, ir::alloc_name(k, k.refs[s.refs[1]].id));
}

void commit(context const& c, ir::StmtId id, ir::RefId bar, std::string const& ind, std::string& out) {
  auto const& k = c.k;
  // The thread that issued the MMAs: a commit tracks its own thread's earlier tcgen05 ops.
  if (k.stmts[id].n != 2) {
    out += ind + fmt::format("{}sc::tc_commit({});  // op #{}: tcgen05.commit, arrives once this thread's MMAs completed\n",
                             c.elected ? "" : fmt::format("if ({}) ", c.issuer), c.bar_addr(bar), id);
    return;
  }
  // The pair's CTAs are cluster ranks 2p and 2p + 1 (x-fastest ranks, an even extent along axis
  // 0: the verifier's rule), so the mask is two adjacent bits at the even CTA's rank; with
  // collective axes, those two bits in every pair along them: the same bits at a fixed pattern
  // of ranks over the CTA at the cluster's origin, shifted to this pair's base rank (its
  // coordinates along the collective axes zero), a constant and one shift.
  auto const& cl = k.cluster;
  auto const& axes = k.stmts[id].axes;
  auto collective = [&](int d) { return std::find(axes.begin(), axes.end(), d) != axes.end(); };
  unsigned pattern = 0;
  for (std::int64_t r = 0; r < cl[0] * cl[1] * cl[2]; ++r) {
    const std::int64_t x[3] = {r % cl[0], r / cl[0] % cl[1], r / (cl[0] * cl[1])};
    if (x[0] < 2 && (collective(1) || x[1] == 0) && (collective(2) || x[2] == 0)) pattern |= 1u << r;
  }
  out += ind + fmt::format("{}{{  // op #{}: tcgen05.commit of the pair, arrives in {} once this thread's MMAs completed\n",
                           c.elected ? "" : fmt::format("if ({}) ", c.issuer), id,
                           axes.empty() ? "both CTAs" : fmt::format("both CTAs and the pairs along cluster axes ({})", fmt::join(axes, ", ")));
  out += ind + fmt::format("  const unsigned pair_rank = ({} & ~1u) + {}u * {} + {}u * {};\n", cluster_ctaid(k, 0), collective(1) ? 0 : cl[0],
                           cluster_ctaid(k, 1), collective(2) ? 0 : cl[0] * cl[1], cluster_ctaid(k, 2));
  out += ind + fmt::format("  sc::tc_commit_pair({}, static_cast<unsigned short>(0x{:x}u << pair_rank));\n", c.bar_addr(bar), pattern);
  out += ind + "}\n";
}

void dealloc(context const& c, ir::StmtId id, std::string const& ind, std::string& out) {
  auto const& k = c.k;
  const int t = k.refs[k.stmts[id].refs[0]].id;
  // The role's barrier carries the tcgen05 fences: every lane's TMEM loads are ordered before
  // the dealloc. Other roles' uses are ordered by the kernel's own barriers.
  out += ind + fmt::format("// op #{}: tmem_dealloc {} ({} columns)\n", id, ir::alloc_name(k, t), c.tmem.columns[static_cast<std::size_t>(t)]);
  out += ind + c.sync + "\n";
  out += ind + fmt::format("if (lane < 32) sc::tmem_dealloc({}, {}u);\n", tmem_var(t), c.tmem.columns[static_cast<std::size_t>(t)]);
}

bool reads_tmem(ir::Kernel const& k, ir::ValueId v) {
  std::vector<ir::ValueId> tmem, loads;
  leaves(k, v, tmem, loads);
  return !tmem.empty();
}

namespace {

// The TMEM views tcgen05.ld 32x32b reads a tile from: a whole (128, columns) f32 or i32
// allocation, one stage d[s] of a ring (stages, 128, columns), or a slice<1> of either (its
// columns, every lane from lane 0: the verifier's rule).
void check_loadable(ir::Kernel const& k, ir::StmtId id, ir::RefId rid) {
  auto const& t = k.refs[rid];
  auto const& al = k.allocs[t.id];
  const bool whole = al.shape.size() == 2 && t.index.empty(), stage = al.shape.size() == 3 && t.index.size() == 1;
  if ((al.dtype != ir::DType::f32 && al.dtype != ir::DType::i32) || (!whole && !stage) || al.shape[al.shape.size() - 2] != 128)
    refuse(k, id, fmt::format("async_load_tmem of {} ({} [{}]): loads of whole f32 or i32 TMEM allocations of 128 lanes, of one stage of a ring, or "
                              "of columns of either",
                              ir::alloc_name(k, t.id), ir::dtype_name(al.dtype), fmt::join(al.shape, ", ")));
}

// A row fold of a reduction op: its identity (which leaves the first element as it is: -0 + x
// == x, fmaxf(NaN, x) == x) and its step, "{0} = step({0}, {1})" for fmt.
const char* fold_identity(ir::ValueOp op) { return op == ir::ValueOp::reduce_sum ? "-0.0f" : "__int_as_float(0x7fc00000)"; }
const char* fold_step(ir::ValueOp op) {
  return op == ir::ValueOp::reduce_sum ? "{0} = {0} + {1};" : op == ir::ValueOp::reduce_max ? "{0} = fmaxf({0}, {1});" : "{0} = fminf({0}, {1});";
}

// ---- row statements ------------------------------------------------------------------------
// A statement that reads TMEM tiles and writes TMEM (store_tmem) or a row vector: thread `lane`
// of the warpgroup owns lane `lane` of TMEM, i.e. row `lane` of every (128, C) tile, so a row
// reduction is the thread's own fold (from column 0 upward, as the interpreter folds) and a row
// vector in SMEM is the thread's own element: nothing crosses lanes. The row is read 32 columns
// at a time (tcgen05.ld 32x32b.x32 and its wait), so a statement holds 32 registers of each tile
// it reads, not the whole row: the softmax of attention_blackwell (m' = max(m, max<1>(S) * c),
// S := exp2(S * c - m'), l = l a + sum<1>(S), P = cast<bf16>(S)) over 128 columns of S spilled
// when a statement held them all beside the rest of the kernel's roles.
struct row_statement {
  context const& c;
  ir::StmtId id;
  std::string const& ind;
  std::string& out;
  std::vector<ir::ValueId> tmem, loads;
  std::map<ir::RefId, std::string> rows;  // each TMEM view read: the register array of its chunk
  std::int64_t cols = 0;                  // the TMEM tiles' columns (all read tiles have one shape)
  int chunk = 0;                          // columns per tcgen05.ld
  std::vector<ir::ValueId> folded;        // the reductions computed before the statement

  void line(std::string const& t) const { out += ind + t + "\n"; }

  // The TMEM views the value reads, checked: each (128, cols), all of one shape.
  void collect(ir::ValueId value) {
    auto const& k = c.k;
    leaves(k, value, tmem, loads);
    for (auto l : tmem) {
      const ir::RefId r = k.values[l].ref;
      if (rows.count(r)) continue;
      check_loadable(k, id, r);
      auto const& shape = k.refs[r].shape;
      if (cols == 0) cols = shape[1];
      if (shape.size() != 2 || shape[0] != 128 || shape[1] != cols)
        refuse(k, id, fmt::format("a row statement reading TMEM tiles of shapes ({}) and (128, {}) (each must be (128, columns), all of one shape)",
                                  fmt::join(shape, ", "), cols));
      chunk = cols % 32 == 0 ? 32 : cols % 16 == 0 ? 16 : 0;
      if (!chunk) refuse(k, id, fmt::format("async_load_tmem of {} with {} columns (loads move 16 or 32 columns at a time)", ir::alloc_name(k, k.refs[r].id), cols));
      rows[r] = fmt::format("trow{}", rows.size());
    }
    find_iotas(value);
  }
  // `n` columns of the thread's row of every TMEM view read, from column `first` on.
  void load(std::string const& first, std::int64_t n, std::string const& in) const {
    for (auto const& [r, name] : rows) {
      line(fmt::format("{}float {}[{}];", in, name, n));
      line(fmt::format("{}sc::tmem_ld_32x32b_x{}({} + (static_cast<unsigned>(lane / 32 * 32) << 16) + static_cast<unsigned>({}), {});", in, n,
                       tmem_address(c, r), first, name));
    }
  }
  // Every TMEM leaf read at register `j` of the loaded chunk, and every iota of the tiles' shape
  // at the thread's row and column `col` (an int expression): from the flat index, each element
  // paid a 64-bit division and modulo (the causal triangle took 157 registers for 76).
  void at(std::string const& j, std::string const& col) const {
    for (auto l : tmem) c.leaf_override[l] = fmt::format("{}[{}]", rows.at(c.k.values[l].ref), j);
    for (auto i : iotas) {
      auto const& x = c.k.values[i];
      const std::string at = x.scalar == 0 ? "lane" : col;
      c.leaf_override[i] = ir::dtype_is_float(x.dtype) ? fmt::format("static_cast<float>({})", at) : fmt::format("static_cast<long long>({})", at);
    }
  }
  std::vector<ir::ValueId> iotas;  // the iotas of the tiles' (128, cols) shape
  void find_iotas(ir::ValueId v) {
    if (v == ir::none) return;
    auto const& x = c.k.values[v];
    if (x.op == ir::ValueOp::iota && x.shape == std::vector<std::int64_t>{128, cols} && x.scalar <= 1) iotas.push_back(v);
    for (auto ch : {x.a, x.b, x.c}) find_iotas(ch);
  }
  // The row reductions of TMEM tiles in `v`, innermost first, each folded into a register that
  // value() then reads in its place.
  void reductions(ir::ValueId v) {
    auto const& k = c.k;
    if (v == ir::none) return;
    auto const& x = k.values[v];
    for (auto ch : {x.a, x.b, x.c}) reductions(ch);
    const bool red = x.op == ir::ValueOp::reduce_sum || x.op == ir::ValueOp::reduce_max || x.op == ir::ValueOp::reduce_min;
    if (!red || !reads_tmem(k, x.a)) return;
    auto const& in = k.values[x.a].shape;
    if (x.scalar != 1 || in.size() != 2 || in[0] != 128 || in[1] != cols || x.dtype != ir::DType::f32)
      refuse(k, id, fmt::format("a reduction of a TMEM tile of shape ({}) along axis {} in {} (row reductions, <1>, of f32 (128, columns) tiles are generated)",
                                fmt::join(in, ", "), x.scalar, ir::dtype_name(x.dtype)));
    const std::string r = fmt::format("rowred{}", v);
    const char* fold = fold_step(x.op);
    line(fmt::format("  float {} = {};  // {}<1> of the row", r, fold_identity(x.op), ir::value_op_name(x.op)));
    line("  #pragma unroll 1");
    line(fmt::format("  for (int c0 = 0; c0 < {}; c0 += {}) {{", cols, chunk));
    load("c0", chunk, "    ");
    line("    #pragma unroll");
    line(fmt::format("    for (int j = 0; j < {}; ++j) {{", chunk));
    line(fmt::format("      const long long f = static_cast<long long>(lane) * {} + c0 + j;  // the element's flat index (iota, masks)", cols));
    line("      (void)f;");
    at("j", "(c0 + j)");
    line("      " + fmt::format(fmt::runtime(fold), r, c.value(x.a, "f")));
    line("    }");
    line("  }");
    c.leaf_override[v] = r;
    folded.push_back(v);
  }
  // Each row vector spread along the rows (broadcast<1> of a (128) value that reads no TMEM, such
  // as load(m_new)), read once before the statement's loops: element `lane` is the thread's own.
  // Through the flat index every element paid a 64-bit division and an LDS of the same word.
  void hoist_rows(ir::ValueId v) {
    auto const& k = c.k;
    if (v == ir::none) return;
    auto const& x = k.values[v];
    if (x.op == ir::ValueOp::broadcast && x.scalar == 1 && k.values[x.a].shape == std::vector<std::int64_t>{128} && !reads_tmem(k, x.a)) {
      const std::string r = fmt::format("rowvec{}", v);
      line(fmt::format("  const auto {} = {};  // the row vector's element `lane`", r, c.value(x.a, "static_cast<long long>(lane)")));
      c.leaf_override[v] = r;
      folded.push_back(v);
      return;
    }
    for (auto ch : {x.a, x.b, x.c}) hoist_rows(ch);
  }
  void done() const {
    for (auto l : tmem) c.leaf_override.erase(l);
    for (auto v : folded) c.leaf_override.erase(v);
    for (auto v : iotas) c.leaf_override.erase(v);
  }
};

// A store into a row vector (128) of SMEM or GMEM whose value reduces TMEM tiles' rows.
void row_vector_store(context const& c, ir::StmtId id, std::string const& ind, std::string& out) {
  auto const& k = c.k;
  auto const& s = k.stmts[id];
  row_statement rs{c, id, ind, out};
  rs.line(fmt::format("{{  // op #{}: row statement into {} (128): thread `lane` owns TMEM lane `lane`, row `lane` of each tile read", id,
                      ir::alloc_name(k, k.refs[s.refs[0]].id)));
  rs.collect(s.value);
  rs.reductions(s.value);
  auto const& r = k.refs[s.refs[0]];
  const auto dt = r.base == ir::RefBase::param ? k.params[r.id].dtype : k.allocs[r.id].dtype;
  rs.line("  " + c.assign(s.refs[0], "static_cast<long long>(lane)", c.store_conv(dt, c.value(s.value, "static_cast<long long>(lane)"))));
  rs.line("}");
  rs.done();
}

}  // namespace

void tmem_store(context const& c, ir::StmtId id, std::string const& ind, std::string& out) {
  auto const& k = c.k;
  auto const& s = k.stmts[id];
  auto line = [&](std::string const& t) { out += ind + t + "\n"; };
  std::vector<ir::ValueId> tmem, loads;
  leaves(k, s.value, tmem, loads);
  // A row vector whose value folds rows of TMEM tiles: a row statement.
  if (k.refs[s.refs[0]].shape.size() == 1 && k.refs[s.refs[0]].shape[0] == 128) return row_vector_store(c, id, ind, out);
  // One TMEM tile whose row i is lane i: thread `lane` of the warpgroup holds row `lane` (the
  // 32x32b shape), so every operand is addressed at that row and the same column.
  const ir::RefId t0_ref = k.values[tmem[0]].ref;
  const auto& t0 = k.refs[t0_ref];
  auto const& al = k.allocs[t0.id];
  check_loadable(k, id, t0_ref);
  for (auto l : tmem)
    if (k.values[l].ref != t0_ref) refuse(k, id, "a store reading two TMEM allocations (or two stages of one)");
  auto const& shape = t0.shape;  // (128, columns): the view's (the verifier holds it to what indexing and slicing leave)
  // Every operand has the tile's shape (leading unit extents aside: a (1, 128, 64) SMEM block is
  // the same elements), except row vectors (128), which a broadcast<1> spreads along the row.
  auto same_shape = [&](ir::RefId r, const char* role, bool row_vector_ok) {
    auto const& rs = k.refs[r].shape;
    if (ir::drop_leading_units(rs) != shape && !(row_vector_ok && rs == std::vector<std::int64_t>{shape[0]}))
      refuse(k, id, fmt::format("a store mixing TMEM {} ({}) with {} of shape ({}) (every operand must have the TMEM tile's shape, or be a row vector)",
                                ir::alloc_name(k, t0.id), fmt::join(shape, ", "), role, fmt::join(rs, ", ")));
  };
  same_shape(s.refs[0], "a destination", false);
  for (auto l : loads) same_shape(k.values[l].ref, "a load", true);
  const std::int64_t n = shape[1];
  const int chunk = n % 32 == 0 ? 32 : n % 16 == 0 ? 16 : 0;
  if (!chunk) refuse(k, id, fmt::format("async_load_tmem of {} with {} columns (loads move 16 or 32 columns at a time)", ir::alloc_name(k, t0.id), n));
  auto const& r = k.refs[s.refs[0]];
  const auto dt = r.base == ir::RefBase::param ? k.params[r.id].dtype : k.allocs[r.id].dtype;
  line(fmt::format("{{  // op #{}: store from TMEM {} ({}, {}): thread `lane` loads row `lane` (its warp's lanes), {} columns at a time", id,
                   ir::alloc_name(k, t0.id), shape[0], n, chunk));
  row_statement rows{c, id, ind, out};  // the row vectors it spreads along the rows (O / l's 1 / l), read once
  rows.hoist_rows(s.value);
  // Into SMEM, 16 bytes of a row at a time where the layout keeps them one chunk (STS.128: with a
  // 128-byte swizzle the 32 rows of a warp's store spread over every bank; unswizzled, rows 512
  // bytes apart share them). Elsewhere (GMEM, a layout that splits the chunk) element by element.
  const int bytes = ir::dtype_bits(dt) / 8;
  const std::int64_t v = 16 / bytes;
  const bool to_smem = r.base == ir::RefBase::alloc;
  const bool vectors = to_smem && (bytes == 2 || bytes == 4) && chunk % v == 0 && c.smem_vectors(s.refs[0], v);
  if (to_smem) c.count_row_banks(id, s.refs[0], n, vectors ? v : 1);
  // tcgen05.ld moves 32-bit columns: an i32 accumulator's (kind::i8) are read back as integers.
  auto col = [&](const char* j) { return al.dtype == ir::DType::i32 ? fmt::format("__float_as_int(tr[{}])", j) : fmt::format("tr[{}]", j); };
  line(fmt::format("  const unsigned row_addr = {} + (static_cast<unsigned>(lane / 32 * 32) << 16);", tmem_address(c, t0_ref)));
  line("  #pragma unroll 1");
  line(fmt::format("  for (int c0 = 0; c0 < {}; c0 += {}) {{", n, chunk));
  line(fmt::format("    float tr[{}];", chunk));
  line(fmt::format("    sc::tmem_ld_32x32b_x{}(row_addr + static_cast<unsigned>(c0), tr);", chunk));
  line("    #pragma unroll");
  if (!vectors) {
    line(fmt::format("    for (int j = 0; j < {}; ++j) {{", chunk));
    line(fmt::format("      const long long f = static_cast<long long>(lane) * {} + c0 + j;", n));
    for (auto l : tmem) c.leaf_override[l] = col("j");
    line("      " + c.assign(s.refs[0], "f", c.store_conv(dt, c.value(s.value, "f"))));
  } else {
    line(fmt::format("    for (int j0 = 0; j0 < {}; j0 += {}) {{  // one 16-byte chunk of the row", chunk, v));
    line(fmt::format("      const long long f0 = static_cast<long long>(lane) * {} + c0 + j0;", n));
    line("      alignas(16) unsigned out[4];");
    line("      #pragma unroll");
    if (bytes == 2) {
      // cast<bf16>(x) stored as bf16 is one rounding of x: a pair converts in one instruction (F2FP).
      auto const& val = k.values[s.value];
      const bool pair_cvt = val.op == ir::ValueOp::cast && val.dtype == dt && k.values[val.a].dtype == ir::DType::f32;
      const ir::ValueId stored = pair_cvt ? val.a : s.value;
      line("      for (int u = 0; u < 4; ++u) {");
      line("        const int j = j0 + 2 * u;");
      line("        const long long f = f0 + 2 * u;");
      for (auto l : tmem) c.leaf_override[l] = col("j");
      const std::string lo = c.value(stored, "f");
      for (auto l : tmem) c.leaf_override[l] = col("j + 1");
      const std::string hi = c.value(stored, "(f + 1)");
      line(fmt::format("        out[u] = sc::f32x2_to_{}x2({}, {});", ir::dtype_name(dt), lo, hi));
    } else {
      line("      for (int u = 0; u < 4; ++u) {");
      line("        const int j = j0 + u;");
      line("        const long long f = f0 + u;");
      for (auto l : tmem) c.leaf_override[l] = col("j");
      const std::string x = c.store_conv(dt, c.value(s.value, "f"));
      line(fmt::format("        out[u] = {};", dt == ir::DType::f32 ? fmt::format("__float_as_uint({})", x) : fmt::format("static_cast<unsigned>({})", x)));
    }
    line("      }");
    line(fmt::format("      *reinterpret_cast<uint4*>(&{}) = *reinterpret_cast<const uint4*>(out);", c.element(s.refs[0], "f0")));
  }
  for (auto l : tmem) c.leaf_override.erase(l);
  rows.done();
  line("    }");
  line("  }");
  line("}");
}

bool writes_tmem(ir::Kernel const& k, ir::Stmt const& s) {
  return s.op == ir::StmtOp::store && tmem_alloc(k, s.refs[0]);
}

void tmem_write(context const& c, ir::StmtId id, std::string const& ind, std::string& out) {
  auto const& k = c.k;
  auto const& s = k.stmts[id];
  auto line = [&](std::string const& t) { out += ind + t + "\n"; };
  const int t = k.refs[s.refs[0]].id;
  auto const& al = k.allocs[static_cast<std::size_t>(t)];
  const int bits = ir::dtype_bits(al.dtype);
  // 32x32b: thread `lane` of the warpgroup writes lane `lane` (its warp's sub-partition), register
  // j of a chunk is the 32-bit column c0 + j: one f32, or two 16-bit elements, the even in the low half.
  // The view: a whole allocation or one stage of a ring, (128, elements) either way.
  const std::int64_t elems = k.refs[s.refs[0]].shape[1], per = 32 / bits, cols = elems / per;
  const int chunk = cols % 32 == 0 ? 32 : cols % 16 == 0 ? 16 : 0;
  if (!chunk) refuse(k, id, fmt::format("store_tmem of {} with {} columns (stores move 16 or 32 columns at a time)", ir::alloc_name(k, t), cols));
  // A value read from TMEM (O := O * alpha, P = cast<bf16>(S)): a row statement. Each chunk of
  // columns written reads the same elements of the tiles it reads (a chunk of per x as many f32
  // columns), loaded just before it: element e of the chunk is register e.
  const bool from_tmem = reads_tmem(k, s.value);
  row_statement rs{c, id, ind, out};
  auto elem = [&](std::string const& f, std::string const& e, std::string const& col) {
    if (from_tmem) rs.at(e, col);
    const std::string v = c.value(s.value, f);
    // An f32 column is the float's bits; an i32 one (or a 16-bit half) the converted integer's.
    return al.dtype == ir::DType::f32 ? fmt::format("__float_as_uint({})", v) : fmt::format("static_cast<unsigned>({})", c.store_conv(al.dtype, v));
  };
  line(fmt::format("{{  // op #{}: store_tmem into {} ({}, {}) {}: thread `lane` writes lane `lane`, {} columns at a time, then waits (tcgen05.wait::st)",
                   id, ir::alloc_name(k, t), k.refs[s.refs[0]].shape[0], elems, ir::dtype_name(al.dtype), chunk));
  if (from_tmem) {
    rs.collect(s.value);
    if (rs.cols != elems)
      refuse(k, id, fmt::format("store_tmem into {} (128, {}) of a value read from TMEM tiles of (128, {}) columns (the same shape, element for element)",
                                ir::alloc_name(k, t), elems, rs.cols));
    rs.reductions(s.value);
  }
  rs.hoist_rows(s.value);
  line(fmt::format("  const unsigned row_addr = {} + (static_cast<unsigned>(lane / 32 * 32) << 16);", tmem_address(c, s.refs[0])));
  line("  #pragma unroll 1");
  line(fmt::format("  for (int c0 = 0; c0 < {}; c0 += {}) {{", cols, chunk));
  line(fmt::format("    unsigned tr[{}];", chunk));
  if (from_tmem) rs.load(fmt::format("c0 * {}", per), chunk * per, "    ");
  line("    #pragma unroll");
  line(fmt::format("    for (int j = 0; j < {}; ++j) {{", chunk));
  line(fmt::format("      const long long f = static_cast<long long>(lane) * {} + (c0 + j) * {};", elems, per));
  if (from_tmem) line("      (void)f;  // (a value of TMEM registers alone does not read it)");
  // cast<bf16>(x) of an f32 x into 16-bit TMEM is one rounding of x: a pair converts in one
  // instruction (F2FP), as tmem_store's pairs do, where the element-wise form rounded twice.
  auto const& val = k.values[s.value];
  const bool pair_cvt = bits == 16 && val.op == ir::ValueOp::cast && val.dtype == al.dtype && k.values[val.a].dtype == ir::DType::f32;
  if (bits == 32) {
    line(fmt::format("      tr[j] = {};", elem("f", "j", "(c0 + j)")));
  } else if (pair_cvt) {
    if (from_tmem) rs.at("2 * j", "(c0 + j) * 2");
    const std::string lo = c.value(val.a, "f");
    if (from_tmem) rs.at("2 * j + 1", "(c0 + j) * 2 + 1");
    const std::string hi = c.value(val.a, "(f + 1)");
    line(fmt::format("      tr[j] = sc::f32x2_to_{}x2({}, {});", ir::dtype_name(al.dtype), lo, hi));
  } else {
    line(fmt::format("      tr[j] = {} | {} << 16;", elem("f", "2 * j", "(c0 + j) * 2"), elem("(f + 1)", "2 * j + 1", "(c0 + j) * 2 + 1")));
  }
  line("    }");
  line(fmt::format("    sc::tmem_st_32x32b_x{}(row_addr + static_cast<unsigned>(c0), tr);", chunk));
  line("  }");
  line("  sc::tmem_st_wait();  // before any barrier that orders the stores before an MMA reading them");
  line("}");
  rs.done();
}


// ---- fused row statements ----------------------------------------------------------------------
// Consecutive lane-private statements that read the same (128, E) TMEM tiles, each either a
// store_tmem along the rows or a row vector folding rows, run as one pass over the row: 32
// columns of every tile read are loaded once per chunk, every statement takes its elements from
// those registers, folds run beside one another, and a subexpression two of them share (the
// softmax's exp2(S c - m') for l's sum and for P) is computed once per element. Unfused, each
// statement read the row from TMEM again. Order is kept where it can be seen: a statement joins
// the run only if it reads nothing an earlier one in the run writes (TMEM or row vector) and
// writes no TMEM an earlier one touches; a fold runs from column 0 upward as before, and the row
// vectors are assigned after the pass in statement order, as each statement assigned them after
// its own pass.
namespace {

// A TMEM view a row pass reads: an f32 (128, E) view tcgen05.ld 32x32b takes (check_loadable's).
bool row_readable(ir::Kernel const& k, ir::RefId rid, std::int64_t& cols) {
  auto const& t = k.refs[rid];
  auto const& al = k.allocs[t.id];
  const bool whole = al.shape.size() == 2 && t.index.empty(), stage = al.shape.size() == 3 && t.index.size() == 1;
  if (al.dtype != ir::DType::f32 || (!whole && !stage) || al.shape[al.shape.size() - 2] != 128) return false;
  if (t.shape.size() != 2 || t.shape[0] != 128) return false;
  if (cols == 0) cols = t.shape[1];
  return t.shape[1] == cols;
}

struct row_member {
  bool to_tmem = false;                 // a store_tmem (else a row vector store)
  std::vector<ir::ValueId> tmem, loads;  // the value's leaves
  std::vector<ir::ValueId> folds;       // row vector: its reductions of TMEM tiles
};

// Whether v (or anything under it) is a reduction.
bool has_reduction(ir::Kernel const& k, ir::ValueId v) {
  if (v == ir::none) return false;
  auto const& x = k.values[v];
  return ir::value_is_reduction(x.op) || has_reduction(k, x.a) || has_reduction(k, x.b) || has_reduction(k, x.c);
}

// The reductions of a row vector's value, each a <1> fold of a TMEM-reading (128, cols) value
// with no reduction inside; false where the value has another kind.
bool row_folds(ir::Kernel const& k, ir::ValueId v, std::int64_t cols, std::vector<ir::ValueId>& folds) {
  if (v == ir::none) return true;
  auto const& x = k.values[v];
  if (ir::value_is_reduction(x.op)) {
    auto const& in = k.values[x.a].shape;
    if (x.scalar != 1 || x.dtype != ir::DType::f32 || in != std::vector<std::int64_t>{128, cols} || !reads_tmem(k, x.a) || has_reduction(k, x.a)) return false;
    folds.push_back(v);
    return true;
  }
  return row_folds(k, x.a, cols, folds) && row_folds(k, x.b, cols, folds) && row_folds(k, x.c, cols, folds);
}

std::optional<row_member> row_member_of(ir::Kernel const& k, ir::StmtId id, std::int64_t& cols) {
  auto const& s = k.stmts[id];
  if (s.op != ir::StmtOp::store || !reads_tmem(k, s.value)) return std::nullopt;
  row_member m;
  leaves(k, s.value, m.tmem, m.loads);
  for (auto l : m.tmem)
    if (!row_readable(k, k.values[l].ref, cols)) return std::nullopt;
  if (cols % 32 != 0) return std::nullopt;
  auto const& dst = k.refs[s.refs[0]];
  if (writes_tmem(k, s)) {
    auto const& al = k.allocs[dst.id];
    const int bits = ir::dtype_bits(al.dtype);
    if ((bits != 32 && bits != 16) || dst.shape.size() != 2 || dst.shape[0] != 128 || dst.shape[1] != cols || has_reduction(k, s.value)) return std::nullopt;
    m.to_tmem = true;
    return m;
  }
  if (dst.shape != std::vector<std::int64_t>{128} || !row_folds(k, s.value, cols, m.folds) || m.folds.empty()) return std::nullopt;
  return m;
}

// A structural key of a value (two values with one key compute the same element): lowering
// gives every use of an expression its own ids.
std::string value_key(ir::Kernel const& k, ir::ValueId v, std::map<ir::ValueId, std::string>& memo) {
  if (v == ir::none) return "-";
  if (auto m = memo.find(v); m != memo.end()) return m->second;
  auto const& x = k.values[v];
  std::string key = fmt::format("{}:{}:{}:{}:{}", static_cast<int>(x.op), static_cast<int>(x.dtype), fmt::join(x.shape, ","), x.scalar, x.index);
  if (x.ref != ir::none) {
    auto const& r = k.refs[x.ref];
    ir::RefId first = x.ref;  // the first equal view names it
    for (ir::RefId o = 0; o < x.ref; ++o)
      if (k.refs[o] == r) {
        first = o;
        break;
      }
    key += fmt::format("@{}", first);
  }
  key += "(" + value_key(k, x.a, memo) + "," + value_key(k, x.b, memo) + "," + value_key(k, x.c, memo) + ")";
  return memo[v] = key;
}

bool trivial(ir::ValueOp op) {
  return op == ir::ValueOp::load || op == ir::ValueOp::load_tmem || op == ir::ValueOp::scalar || op == ir::ValueOp::iota || op == ir::ValueOp::index;
}

}  // namespace

std::size_t row_run(ir::Kernel const& k, std::vector<ir::StmtId> const& body, std::size_t first, std::function<bool(ir::StmtId)> const& lane_private) {
  std::int64_t cols = 0;
  std::set<int> tmem_read, tmem_written, rows_written;
  std::size_t n = 0;
  for (std::size_t i = first; i < body.size(); ++i, ++n) {
    const ir::StmtId id = body[i];
    if (!lane_private(id)) break;
    std::int64_t c = cols;
    const auto m = row_member_of(k, id, c);
    if (!m) break;
    std::set<int> reads, smem_reads;
    for (auto l : m->tmem) reads.insert(k.refs[k.values[l].ref].id);
    for (auto l : m->loads) smem_reads.insert(k.refs[k.values[l].ref].id);
    auto const& s = k.stmts[id];
    const int dst = k.refs[s.refs[0]].id;
    auto meets = [](std::set<int> const& a, std::set<int> const& b) { return std::any_of(a.begin(), a.end(), [&](int x) { return b.count(x) != 0; }); };
    if (meets(reads, tmem_written) || meets(smem_reads, rows_written)) break;
    if (m->to_tmem && (tmem_read.count(dst) || tmem_written.count(dst))) break;
    cols = c;
    tmem_read.insert(reads.begin(), reads.end());
    (m->to_tmem ? tmem_written : rows_written).insert(dst);
  }
  return n;
}

void fused_rows(context const& c, std::vector<ir::StmtId> const& ids, std::string const& ind, std::string& out) {
  auto const& k = c.k;
  std::int64_t cols = 0;
  std::vector<row_member> members;
  for (auto id : ids) members.push_back(*row_member_of(k, id, cols));
  row_statement rs{c, ids.front(), ind, out};
  rs.cols = cols;
  rs.line(fmt::format("{{  // ops #{}-#{}: {} row statements in one pass over the row, 32 columns at a time: thread `lane` owns TMEM lane `lane`", ids.front(),
                      ids.back(), ids.size()));
  // The tiles read, one register array per distinct view.
  std::vector<ir::RefId> views;
  for (auto const& m : members)
    for (auto l : m.tmem) {
      const ir::RefId r = k.values[l].ref;
      auto same = std::find_if(views.begin(), views.end(), [&](ir::RefId o) { return k.refs[o] == k.refs[r]; });
      if (same == views.end()) {
        views.push_back(r);
        rs.rows[r] = fmt::format("trow{}", views.size() - 1);
      } else {
        rs.rows[r] = rs.rows.at(*same);
      }
      rs.tmem.push_back(l);
    }
  // Per element, the values each statement computes: a store_tmem's value (its pair conversion's
  // operand where cast<16-bit> of f32 packs two at once), a row vector's folded operands.
  std::vector<ir::ValueId> roots;
  std::vector<bool> pair_cvt(ids.size(), false);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto const& s = k.stmts[ids[i]];
    rs.find_iotas(s.value);
    rs.hoist_rows(s.value);  // row vectors spread along the rows: element `lane`, read once before the pass
    if (members[i].to_tmem) {
      auto const& val = k.values[s.value];
      const auto dt = k.allocs[k.refs[s.refs[0]].id].dtype;
      pair_cvt[i] = ir::dtype_bits(dt) == 16 && val.op == ir::ValueOp::cast && val.dtype == dt && k.values[val.a].dtype == ir::DType::f32;
      roots.push_back(pair_cvt[i] ? val.a : s.value);
    } else {
      for (auto f : members[i].folds) roots.push_back(k.values[f].a);
    }
  }
  // Subexpressions computed by more than one statement (or twice in one): a temporary each,
  // innermost first. The hoisted row vectors are already registers.
  // A node is one where it occurs more often than the node around it (inside a shared
  // exp2(x), x is computed once with it); post-order, so inner ones are declared first.
  std::map<ir::ValueId, std::string> keys;
  std::map<std::string, int> seen;
  std::map<std::string, bool> fusable_mul;  // a mul whose every use is an f32 add or sub (an FMA there)
  auto f32_arith = [&](ir::ValueId v) {
    auto const& x = k.values[v];
    const bool op = x.op == ir::ValueOp::add || x.op == ir::ValueOp::sub || x.op == ir::ValueOp::mul || x.op == ir::ValueOp::fma;
    if (!op || x.dtype != ir::DType::f32) return false;
    for (auto ch : {x.a, x.b, x.c})
      if (ch != ir::none && k.values[ch].dtype != ir::DType::f32) return false;
    return true;
  };
  std::function<void(ir::ValueId, ir::ValueId)> count = [&](ir::ValueId v, ir::ValueId parent) {
    if (v == ir::none || c.leaf_override.count(v) || trivial(k.values[v].op)) return;
    const std::string& key = value_key(k, v, keys);
    ++seen[key];
    if (k.values[v].op == ir::ValueOp::mul && f32_arith(v)) {
      const bool into = parent != ir::none && f32_arith(parent) && (k.values[parent].op == ir::ValueOp::add || k.values[parent].op == ir::ValueOp::sub);
      auto [at, fresh] = fusable_mul.try_emplace(key, into);
      if (!fresh) at->second = at->second && into;
    }
    for (auto ch : {k.values[v].a, k.values[v].b, k.values[v].c}) count(ch, v);
  };
  for (auto r : roots) count(r, ir::none);
  // The temporaries, post-order: exact math names the shared nodes only; fast math names every
  // f32 add, sub, mul and fma too (each one pair instruction over both columns), folding a mul
  // into the add or sub it feeds (an FMA, as contraction makes it).
  std::vector<ir::ValueId> temps;
  std::set<std::string> named;
  std::function<void(ir::ValueId, int)> pick = [&](ir::ValueId v, int around) {
    if (v == ir::none || c.leaf_override.count(v) || trivial(k.values[v].op)) return;
    const std::string& key = keys.at(v);
    const int n = seen.at(key);
    for (auto ch : {k.values[v].a, k.values[v].b, k.values[v].c}) pick(ch, n);
    const bool mul_in_fma = c.fast && k.values[v].op == ir::ValueOp::mul && fusable_mul.count(key) && fusable_mul.at(key);
    const bool pair = c.fast && f32_arith(v) && !mul_in_fma;
    if ((pair || (n > 1 && n > around && !mul_in_fma)) && named.insert(key).second) temps.push_back(v);
  };
  for (auto r : roots) pick(r, 1);
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (auto f : members[i].folds) {
      auto const& x = k.values[f];
      const std::string r = fmt::format("rowred{}", f);
      const char* init = fold_identity(x.op);
      // Fast math sums the row as two interleaved halves (FADD2), added at the end.
      if (c.fast && x.op == ir::ValueOp::reduce_sum)
        rs.line(fmt::format("  float {0}_0 = {1}, {0}_1 = {1};  // {2}<1> of the row (op #{3}): even and odd columns", r, init, ir::value_op_name(x.op), ids[i]));
      else
        rs.line(fmt::format("  float {} = {};  // {}<1> of the row (op #{})", r, init, ir::value_op_name(x.op), ids[i]));
    }
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (members[i].to_tmem)
      rs.line(fmt::format("  const unsigned row_addr{} = {} + (static_cast<unsigned>(lane / 32 * 32) << 16);  // op #{}", i,
                          tmem_address(c, k.stmts[ids[i]].refs[0]), ids[i]));
  rs.line("  #pragma unroll 1");
  rs.line(fmt::format("  for (int c0 = 0; c0 < {}; c0 += 32) {{", cols));
  for (std::size_t v = 0; v < views.size(); ++v)
    rs.line(fmt::format("    float trow{0}[32];\n{1}    sc::tmem_ld_32x32b_x32({2} + (static_cast<unsigned>(lane / 32 * 32) << 16) + static_cast<unsigned>(c0), trow{0});",
                        v, ind, tmem_address(c, views[v])));
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (members[i].to_tmem) rs.line(fmt::format("    unsigned tr{}[{}];", i, 32 * ir::dtype_bits(k.allocs[k.refs[k.stmts[ids[i]].refs[0]].id].dtype) / 32));
  rs.line("    #pragma unroll");
  rs.line("    for (int u = 0; u < 16; ++u) {  // columns c0 + 2u and c0 + 2u + 1");
  rs.line(fmt::format("      const long long f0 = static_cast<long long>(lane) * {} + c0 + 2 * u, f1 = f0 + 1;", cols));
  rs.line("      (void)f0;\n" + ind + "      (void)f1;");
  // Per element of the pair, the names given so far (temporaries), installed before any value of
  // that element is written out.
  std::array<std::map<ir::ValueId, std::string>, 2> named_at;
  auto use = [&](int e) {
    const std::string j = fmt::format("2 * u + {}", e);
    rs.at(j, fmt::format("(c0 + {})", j));
    for (auto const& vn : named_at[static_cast<std::size_t>(e)]) c.leaf_override[vn.first] = vn.second;
  };
  auto name_all = [&](ir::ValueId v, int e, std::string const& name) {
    for (auto const& wk : keys)
      if (wk.second == keys.at(v)) named_at[static_cast<std::size_t>(e)][wk.first] = name;
  };
  for (auto v : temps) {
    auto const& x = k.values[v];
    if (c.fast && f32_arith(v)) {
      // a * b + c with a mul operand folded in (a - m: a + (-m.a) m.b; m - a: m.a m.b + (-a)).
      auto mul_of = [&](ir::ValueId w) {
        return w != ir::none && k.values[w].op == ir::ValueOp::mul && !named.count(keys.at(w)) && fusable_mul.count(keys.at(w)) && fusable_mul.at(keys.at(w));
      };
      std::array<std::array<std::string, 3>, 2> opnd;  // per element: the instruction's operands
      const char* form = "";
      for (int e = 0; e < 2; ++e) {
        use(e);
        const std::string f = fmt::format("f{}", e);
        auto val = [&](ir::ValueId w) { return c.value(w, f); };
        auto neg = [](std::string const& t) { return "-(" + t + ")"; };
        auto& o = opnd[static_cast<std::size_t>(e)];
        if (x.op == ir::ValueOp::fma) {
          form = "fma2", o = {val(x.a), val(x.b), val(x.c)};
        } else if (x.op == ir::ValueOp::mul) {
          form = "mul2", o = {val(x.a), val(x.b), ""};
        } else if (mul_of(x.a)) {
          form = "fma2", o = {val(k.values[x.a].a), val(k.values[x.a].b), x.op == ir::ValueOp::add ? val(x.b) : neg(val(x.b))};
        } else if (mul_of(x.b)) {
          form = "fma2", o = {x.op == ir::ValueOp::add ? val(k.values[x.b].a) : neg(val(k.values[x.b].a)), val(k.values[x.b].b), val(x.a)};
        } else {
          form = "add2", o = {val(x.a), x.op == ir::ValueOp::add ? val(x.b) : neg(val(x.b)), ""};
        }
      }
      const std::string name = fmt::format("pr{}", v);
      std::string args = fmt::format("{0}_0, {0}_1, {1}, {2}, {3}, {4}", name, opnd[0][0], opnd[1][0], opnd[0][1], opnd[1][1]);
      if (std::string_view(form) == "fma2") args += fmt::format(", {}, {}", opnd[0][2], opnd[1][2]);
      rs.line(fmt::format("      float {0}_0, {0}_1;", name));
      rs.line(fmt::format("      sc::{}({});", form, args));
      for (int e = 0; e < 2; ++e) name_all(v, e, fmt::format("{}_{}", name, e));
    } else {
      for (int e = 0; e < 2; ++e) {
        use(e);
        const std::string name = fmt::format("cse{}_{}", v, e);
        rs.line(fmt::format("      const auto {} = {};", name, c.value(v, fmt::format("f{}", e))));
        name_all(v, e, name);
      }
    }
  }
  // Each statement's values at both columns.
  std::vector<std::array<std::string, 2>> at(ids.size());                  // store_tmem: its value
  std::vector<std::vector<std::array<std::string, 2>>> fold_at(ids.size());  // row vector: each fold's operand
  for (int e = 0; e < 2; ++e) {
    use(e);
    const std::string f = fmt::format("f{}", e);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      auto const& s = k.stmts[ids[i]];
      if (members[i].to_tmem) {
        at[i][static_cast<std::size_t>(e)] = c.value(pair_cvt[i] ? k.values[s.value].a : s.value, f);
      } else {
        fold_at[i].resize(members[i].folds.size());
        for (std::size_t r = 0; r < members[i].folds.size(); ++r) fold_at[i][r][static_cast<std::size_t>(e)] = c.value(k.values[members[i].folds[r]].a, f);
      }
    }
  }
  for (auto const& vn : named_at[0]) c.leaf_override.erase(vn.first);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto const& s = k.stmts[ids[i]];
    if (members[i].to_tmem) {
      const auto dt = k.allocs[k.refs[s.refs[0]].id].dtype;
      auto bits = [&](std::string const& v) {
        return dt == ir::DType::f32 ? fmt::format("__float_as_uint({})", v) : fmt::format("static_cast<unsigned>({})", c.store_conv(dt, v));
      };
      if (ir::dtype_bits(dt) == 32) {
        rs.line(fmt::format("      tr{}[2 * u] = {};", i, bits(at[i][0])));
        rs.line(fmt::format("      tr{}[2 * u + 1] = {};", i, bits(at[i][1])));
      } else if (pair_cvt[i]) {
        rs.line(fmt::format("      tr{}[u] = sc::f32x2_to_{}x2({}, {});", i, ir::dtype_name(dt), at[i][0], at[i][1]));
      } else {
        rs.line(fmt::format("      tr{}[u] = {} | {} << 16;", i, bits(at[i][0]), bits(at[i][1])));
      }
    } else {
      for (std::size_t r = 0; r < members[i].folds.size(); ++r) {
        const ir::ValueId f = members[i].folds[r];
        const auto op = k.values[f].op;
        const char* fold = fold_step(op);
        if (c.fast && op == ir::ValueOp::reduce_sum) {
          rs.line(fmt::format("      sc::add2(rowred{0}_0, rowred{0}_1, rowred{0}_0, rowred{0}_1, {1}, {2});", f, fold_at[i][r][0], fold_at[i][r][1]));
          continue;
        }
        for (int e = 0; e < 2; ++e)
          rs.line("      " + fmt::format(fmt::runtime(fold), fmt::format("rowred{}", f), fold_at[i][r][static_cast<std::size_t>(e)]));
      }
    }
  }
  rs.line("    }");
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (members[i].to_tmem) {
      const int per = 32 / ir::dtype_bits(k.allocs[k.refs[k.stmts[ids[i]].refs[0]].id].dtype);
      rs.line(fmt::format("    sc::tmem_st_32x32b_x{0}(row_addr{1} + static_cast<unsigned>(c0 / {2}), tr{1});", 32 / per, i, per));
    }
  rs.line("  }");
  if (std::any_of(members.begin(), members.end(), [](row_member const& m) { return m.to_tmem; }))
    rs.line("  sc::tmem_st_wait();  // before any barrier that orders the stores before an MMA reading them");
  // The row vectors, in statement order, from their folds.
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (members[i].to_tmem) continue;
    auto const& s = k.stmts[ids[i]];
    for (auto f : members[i].folds) {
      const bool halves = c.fast && k.values[f].op == ir::ValueOp::reduce_sum;
      c.leaf_override[f] = halves ? fmt::format("(rowred{0}_0 + rowred{0}_1)", f) : fmt::format("rowred{}", f);
      rs.folded.push_back(f);
    }
    auto const& r = k.refs[s.refs[0]];
    const auto dt = r.base == ir::RefBase::param ? k.params[r.id].dtype : k.allocs[r.id].dtype;
    rs.line("  " + c.assign(s.refs[0], "static_cast<long long>(lane)", c.store_conv(dt, c.value(s.value, "static_cast<long long>(lane)"))) + "  // op #" +
            std::to_string(ids[i]));
  }
  rs.line("}");
  rs.done();
}

}  // namespace stagecraft::nvrtc::tcgen05_gen
