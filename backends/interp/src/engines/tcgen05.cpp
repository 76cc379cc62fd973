// The Blackwell tensor-core engine (tcgen05.mma.cta_group::1 and ::2 on sm_100a): one tcgen05_mma
// statement is the K / ik instructions of its ir::tcgen05::plan, issued by one agent (the
// kernel's MMA thread) into TMEM; tcgen05_commit_arrive(bar) arrives on `bar` once every tcgen05
// op that agent issued before it has completed. See machine.hpp for how an engine plugs in.
//
// Operands are read the way the tensor core reads them: at issue each instruction gets the
// 32-bit instruction descriptor (plan::idesc), D's TMEM address and the sm_100 SMEM
// descriptors (ir::tcgen05::encode_smem of the operand's shared-window address plus
// plan::a_start / b_start) the code generator emits; at completion the engine decodes those bits
// again and takes M, N, the operand types and major-ness from the instruction descriptor, the
// column of D from the TMEM address, and every A and B element from the CTA's SMEM bytes at
// ir::wgmma::element_address of the decoded SMEM descriptor. A wrong descriptor therefore
// computes the wrong thing here exactly as on the GPU.
//
// Numerics (docs/interpreter.md): as wgmma's, per instruction the ik products of each output
// element are summed exactly in double and added to the f32 D with one rounding; the first
// instruction of a statement whose accumulate condition is false overwrites D instead.
//
// Ordering: MMA #i of an agent (its i-th) reads A/B and reads/writes D stamped "agent a's
// tcgen05 stream, i", and is ordered after MMA #i-1 (they chain on D in hardware) and its own
// read of D. A commit
// issued after n MMAs arrives with that component at n, so whoever waits on its barrier is
// ordered after all of them, and nobody else is: reading TMEM, refilling a stage, or issuing an
// MMA over D an epilogue still reads, without that barrier in between, is a race.
//
// The pair (cta_group::2, tcgen05_mma_2cta): issued by the even CTA of a cluster's pair along
// axis 0, one instruction reads A's rows and B's columns from both CTAs' SMEM at the descriptor's
// offset and writes D's rows 0-127 into the issuer's TMEM, 128-255 into the odd CTA's; the pair
// commit arrives on the same barrier element in both CTAs. Its accesses in the odd CTA carry the
// issuer's stamp, so that CTA's refills and TMEM reads are ordered only through its own barrier,
// which the commit's multicast arrival reaches, and its exit is judged against the issuer's MMAs.
//
// TMEM's life time: each CTA's TMEM allocations exist from its start (undefined contents) until
// the tmem_dealloc that frees each (every TMEM allocation has one: the verifier's rule). The
// dealloc is a write of the whole allocation by its agent, so a TMEM load of another agent not
// ordered before it is a race; an MMA into it that the freeing agent is not ordered after
// (through the barrier of a commit after it) is tcgen05-pending-at-dealloc. Any use after it,
// a second dealloc included, is tmem-use-after-dealloc, and a CTA whose agents have all exited
// with an allocation not freed is tmem-not-freed. An agent exiting with MMAs that no commit
// covers is reported as well (nothing could ever learn that they completed).
#include <algorithm>
#include <cstring>
#include <tuple>

#include <fmt/format.h>

#include "../machine.hpp"
#include "stagecraft/ir/mx_formats.hpp"

namespace stagecraft::interp::detail {

namespace tc = ir::tcgen05;

void machine::tmem_live(agent_state const& a, ir::RefId rid, const char* use) {
  auto const& cta = ctas_[a.cta];
  const int alloc = k_.refs[rid].id;
  const auto by = cta.tmem_freed_by[static_cast<std::size_t>(alloc)];
  if (by == ir::none) return;
  report(check::tmem_use_after_dealloc, cur_op_, a,
         fmt::format("{} {} TMEM {} after op #{} (tmem_dealloc) by {} freed it: free TMEM only after its last use (every MMA into it "
                     "completed, every async_load_tmem of it done)",
                     who(a), use, ir::alloc_name(k_, alloc), by, who(agents_[static_cast<std::size_t>(cta.tmem_freer[static_cast<std::size_t>(alloc)])])));
}

void machine::tmem_dealloc(agent_state& a, ir::Stmt const& s) {
  tmem_live(a, s.refs[0], "frees");
  auto& cta = ctas_[a.cta];
  const int alloc = k_.refs[s.refs[0]].id;
  // Every MMA into it must be known complete here: this agent waited on a barrier a commit
  // after it arrived on (its clock holds the MMA's stream position).
  for (auto const& [issuer, group] : cta.tmem_mmas[static_cast<std::size_t>(alloc)]) {
    auto const& is = agents_[static_cast<std::size_t>(issuer)];
    if (a.vc.c[static_cast<std::size_t>(is.mma_comp)] < group)
      report(check::tcgen05_pending_at_dealloc, cur_op_, a,
             fmt::format("{} frees TMEM {} while tcgen05 MMA #{} of {} into it may still be writing it: wait on the barrier its "
                         "tcgen05_commit_arrive arrives on before the tmem_dealloc",
                         who(a), ir::alloc_name(k_, alloc), group, who(is)));
  }
  // The dealloc ends every access: any load or MMA of another agent not ordered before it races.
  if (o_.checks) access(view_of(a, s.refs[0], a.cta), true, a.vc, own_stamp(a), a.comp, nullptr);
  cta.tmem_freed_by[static_cast<std::size_t>(alloc)] = cur_op_;
  cta.tmem_freer[static_cast<std::size_t>(alloc)] = static_cast<int>(&a - agents_.data());
  ++a.vc.c[a.comp];
}

void machine::issue_tcgen05_mma(agent_state& a, ir::Stmt const& s) {
  tmem_live(a, s.refs[0], "issues a tcgen05_mma into");
  if (k_.allocs[k_.refs[s.refs[1]].id].kind == ir::AllocKind::tmem) tmem_live(a, s.refs[1], "issues a tcgen05_mma reading A from");
  auto const& p = *tc_plans_[static_cast<std::size_t>(cur_op_)];
  async_op op{async_op::kind::tc_mma};
  op.agent = a.comp;
  op.stmt = cur_op_;
  op.tc_plan = &p;
  op.acc_alloc = k_.refs[s.refs[0]].id;
  op.acc = view_of(a, s.refs[0], a.cta);
  op.a_view = view_of(a, s.refs[1], a.cta);
  op.b_view = view_of(a, s.refs[2], a.cta);
  if (p.cta_group == 2) {
    op.pair_cta = pair_peer(a, "tcgen05_mma_2cta");
    op.acc2 = view_of(a, s.refs[0], op.pair_cta);
    op.a_view2 = view_of(a, s.refs[1], op.pair_cta);
    op.b_view2 = view_of(a, s.refs[2], op.pair_cta);
    a.tc_peer = op.pair_cta;
  }
  const std::uint32_t b_addr = view_address(op.b_view);
  if (p.a_tmem) {
    // The [a_tmem] form: A's TMEM address, the column advancing by 8 per instruction, as the
    // generated code computes it.
    op.a_alloc = k_.refs[s.refs[1]].id;
    for (std::int64_t ks = 0; ks < p.k_steps(); ++ks)
      op.a_taddr.push_back(tc::tmem_address(0, static_cast<std::uint32_t>(tmem_col_[static_cast<std::size_t>(op.a_alloc)] + p.a_column(ks))));
  }
  for (std::int64_t ks = 0; ks < p.k_steps(); ++ks) {
    if (!p.a_tmem) op.a_desc.push_back(tc::encode_smem(view_address(op.a_view) + static_cast<std::uint32_t>(p.a_start(ks)), p.a));
    op.b_desc.push_back(tc::encode_smem(b_addr + static_cast<std::uint32_t>(p.b_start(ks)), p.b));
  }
  op.idesc = p.idesc;
  if (p.scaled) {
    // The scales' TMEM addresses (lane 0, the view's first column), as the generated code passes
    // them, and each instruction's descriptor with its scale IDs.
    for (auto [rid, addr, view, alloc] : {std::tuple{s.refs[3], &op.sfa_addr, &op.sfa_view, &op.sfa_alloc}, std::tuple{s.refs[4], &op.sfb_addr, &op.sfb_view, &op.sfb_alloc}}) {
      tmem_live(a, rid, "issues a block-scaled tcgen05_mma reading scales from");
      *alloc = k_.refs[rid].id;
      *view = view_of(a, rid, a.cta);
      // The bytes it reads: each full 4-column group of the statement, and a column per 32 rows
      // in the last (plan_of checked they fit the view).
      const std::int64_t rows = rid == s.refs[3] ? p.m : p.n, groups = tc::scale_group(p.k_steps() - 1, p.scale_vec) + 1;
      view->box[view->box.size() - 1] = std::min(view->box.back(), (groups - 1) * tc::cp_row_bytes + rows / 32 * 4);
      *addr = tc::tmem_address(0, static_cast<std::uint32_t>(tmem_stage_column(static_cast<int>(*alloc), tmem_stage_of(static_cast<int>(*alloc), *view))));
    }
    for (std::int64_t ks = 0; ks < p.k_steps(); ++ks) op.idescs.push_back(p.idesc_at(ks));
  }
  // D's TMEM address: its allocation's first column, plus s * columns for stage s of a ring.
  op.d_addr = tc::tmem_address(0, static_cast<std::uint32_t>(tmem_stage_column(op.acc_alloc, tmem_stage_of(op.acc_alloc, op.acc))));
  op.accumulate = eval(a, s.e0) != 0;
  op.group = ++a.tc_issued;
  op.vc = a.vc;
  // Its own stamp included: the MMA reads D and then writes it (and is after MMA #group - 1).
  op.vc.c[a.mma_comp] = static_cast<std::uint32_t>(op.group);
  a.last_mma = cur_op_;
  // Every CTA whose TMEM this MMA writes (the pair's odd CTA too) must be ordered after it
  // before it frees that TMEM.
  for (int cta : {a.cta, p.cta_group == 2 ? op.pair_cta : -1}) {
    if (cta < 0) continue;
    auto& mmas = ctas_[static_cast<std::size_t>(cta)].tmem_mmas[static_cast<std::size_t>(op.acc_alloc)];
    const int self = static_cast<int>(&a - agents_.data());
    auto it = std::find_if(mmas.begin(), mmas.end(), [&](auto const& m) { return m.first == self; });
    if (it == mmas.end()) mmas.push_back({self, op.group});
    else it->second = op.group;
  }
  ++a.vc.c[a.comp];
  enqueue(std::move(op));
  if (const auto bar = tc::mma_commit_barrier(s); bar != ir::none) tcgen05_commit(a, bar);  // tcgen05_mma(d, a, b, bar, acc): the MMA, then its commit
}

// tcgen05_copy_scales: tcgen05.cp.cta_group::1.32x128b.warpx4, in the issuer's tcgen05 stream
// (a later MMA of the same thread completes after it; a commit after it covers it). Its write of
// TMEM is ordered after the earlier MMAs of the stream only as far as the issuer knows them
// complete (its clock), not by the stream: the ISA does not order an MMA before a later copy.
void machine::issue_tcgen05_cp(agent_state& a, ir::Stmt const& s) {
  tmem_live(a, s.refs[1], "copies scales into");
  async_op op{async_op::kind::tc_cp};
  op.agent = a.comp;
  op.stmt = cur_op_;
  op.a_view = view_of(a, s.refs[0], a.cta);
  op.sfa_view = view_of(a, s.refs[1], a.cta);
  op.sfa_alloc = k_.refs[s.refs[1]].id;
  // Column group g (the statement's e0, 0 if none): columns 4g .. 4g + 3 of the view, the only
  // bytes it writes (two copies into one stage's different groups do not overlap).
  const std::int64_t group = s.e0 != ir::none ? eval(a, s.e0) : 0;
  op.sfa_addr = tc::tmem_address(0, static_cast<std::uint32_t>(tmem_stage_column(static_cast<int>(op.sfa_alloc), tmem_stage_of(static_cast<int>(op.sfa_alloc), op.sfa_view)) +
                                                               group * tc::scale_group_columns));
  op.sfa_view.origin[op.sfa_view.origin.size() - 1] += group * tc::cp_row_bytes;
  op.sfa_view.box[op.sfa_view.box.size() - 1] = tc::cp_row_bytes;
  op.b_desc.push_back(tc::encode_cp_smem(view_address(op.a_view)));
  op.group = ++a.tc_issued;
  a.tc_copies.push_back(op.group);
  op.vc = a.vc;  // not stamped with its own stream position: see above
  a.last_mma = cur_op_;
  ++a.vc.c[a.comp];
  enqueue(std::move(op));
}

// The byte at `byte` of TMEM lane `lane` past address taddr (its column's first byte), in the
// memory of TMEM allocation `alloc` whose view is `view` (kept (stage, lane, byte) row-major: a
// lane's 32-bit column c is its bytes 4c .. 4c + 3); null when it is outside the allocation.
std::byte* machine::tmem_byte(region const& view, int alloc, std::uint32_t taddr, std::int64_t lane, std::int64_t byte) {
  auto const& m = *view.mem;
  const std::int64_t row_bytes = m.shape.back() * ir::dtype_bits(m.dtype) / 8, lanes = m.shape[m.shape.size() - 2];
  const std::int64_t stages = m.shape.size() == 3 ? m.shape[0] : 1;
  const std::int64_t off = (static_cast<std::int64_t>(tc::tmem_column(taddr)) - tmem_col_[static_cast<std::size_t>(alloc)]) * 4 + byte;
  const std::int64_t stage = off >= 0 ? off / row_bytes : -1, at = off - stage * row_bytes, l = static_cast<std::int64_t>(tc::tmem_lane(taddr)) + lane;
  if (off < 0 || stage >= stages || l < 0 || l >= lanes) return nullptr;
  return m.data + (stage * lanes + l) * row_bytes + at;
}

void machine::tcgen05_cp_complete(async_op& op) {
  auto& a = agents_[op.agent];
  const epoch stamp = epoch::make(static_cast<std::uint32_t>(op.group), static_cast<std::uint32_t>(a.mma_comp), cluster_id());
  if (o_.checks) {
    access(op.a_view, false, op.vc, stamp, a.comp, "a tcgen05 copy");
    access(op.sfa_view, true, op.vc, stamp, a.comp, "a tcgen05 copy");
  }
  // Everything from its bits: the SMEM descriptor's start and stride, the TMEM address.
  const auto sd = tc::decode_smem(op.b_desc[0]);
  auto const& smem = ctas_[a.cta].bytes;
  const std::string name = op.sfa_view.mem->name;
  for (int r = 0; r < tc::cp_rows; ++r)
    for (int b = 0; b < tc::cp_row_bytes; ++b) {
      const std::uint32_t src = sd.d.start + tc::cp_32x128b_offset(sd.d.sbo, r, b);
      if (sd.error != tc::SmemDescError::none || sd.d.swizzle != 0 || src >= smem.size())
        report(check::index_out_of_range, op.stmt, a,
               fmt::format("tcgen05_copy_scales reads byte {} of row {} at shared address {} through descriptor {:#018x}: outside the CTA's {} bytes "
                           "of SMEM, or not an unswizzled sm_100 descriptor",
                           b, r, src, op.b_desc[0], smem.size()));
      for (int q = 0; q < 4; ++q) {  // .warpx4: every 32-lane quarter gets the row
        std::byte* dst = tmem_byte(op.sfa_view, static_cast<int>(op.sfa_alloc), op.sfa_addr, r + 32 * q, b);
        if (!dst)
          report(check::index_out_of_range, op.stmt, a,
                 fmt::format("tcgen05_copy_scales writes TMEM lane {}, column {} past {}'s last column", r + 32 * q, tc::tmem_column(op.sfa_addr) + b / 4, name));
        *dst = smem[src];
      }
    }
  if (o_.trace)
    tr_.events.push_back({trace_event::kind::async, op.issued, time_, ctas_[a.cta].linear, k_.roles + 2, op.stmt,
                          fmt::format("tcgen05_copy_scales #{}: 512 bytes into {} (op #{} of {})", op.stmt, name, op.group, who(a))});
}

// The other CTA of `a`'s pair: cluster index x ^ 1 along axis 0, the rest the same. Only the
// even CTA issues the pair's MMAs: the odd one's are not an instruction the hardware defines.
int machine::pair_peer(agent_state const& a, const char* op) {
  auto const& me = ctas_[a.cta].cidx;
  if (me[0] % 2 != 0)
    report(check::tcgen05_pair_issuer, cur_op_, a,
           fmt::format("{} issued by {}, whose cluster index along axis 0 is {}, odd: a pair MMA is issued by the pair's even CTA, which "
                       "reads both CTAs' halves (guard it with if_(cluster_idx(0_c) % 2_c == 0_c, ...))",
                       op, who(a), me[0]));
  if (const int peer = cta_at({me[0] ^ 1, me[1], me[2]}); peer >= 0) return peer;
  report(check::tcgen05_pair_issuer, cur_op_, a, fmt::format("{} issued by {}, which has no pair CTA in its cluster", op, who(a)));
}

// tcgen05.commit.mbarrier::arrive::one: an arrival that waits for the issuer's earlier MMAs.
// The pair's (cta_group::2, multicast to both CTAs): one arrival on the same element in each,
// and with collective axes in each CTA of the pairs along them too (the same half of axis 0's
// pair column: cluster index x / 2 equal, the other axes fixed).
void machine::tcgen05_commit(agent_state& a, ir::RefId bar) {
  auto& b = barrier_of(a, bar);
  async_op op{async_op::kind::tc_commit};
  op.agent = a.comp;
  op.stmt = cur_op_;
  op.bar_cta = a.cta;
  auto const& s = k_.stmts[static_cast<std::size_t>(cur_op_)];
  if (s.n == 2) {
    auto const& me = ctas_[a.cta].cidx;
    std::vector<int> axes = s.axes;
    axes.push_back(0);
    for (int c : peers(a.cta, axes))
      if (c != a.cta && ctas_[static_cast<std::size_t>(c)].cidx[0] / 2 == me[0] / 2) op.dst_cta.push_back(c);
    for (int c : op.dst_cta)
      if (ctas_[static_cast<std::size_t>(c)].cidx[0] == (me[0] ^ 1) && ctas_[static_cast<std::size_t>(c)].cidx[1] == me[1] &&
          ctas_[static_cast<std::size_t>(c)].cidx[2] == me[2])
        op.pair_cta = c;
  }
  op.bar_elem = &b - ctas_[a.cta].barriers.data();
  op.group = a.tc_issued;
  op.vc = a.vc;
  op.vc.c[a.mma_comp] = static_cast<std::uint32_t>(op.group);
  a.tc_committed = a.tc_issued;
  ++a.vc.c[a.comp];
  enqueue(std::move(op));
}

std::int64_t machine::tmem_stage_column(int alloc, std::int64_t stage) const {
  return tmem_col_[static_cast<std::size_t>(alloc)] + stage * ir::tmem_stage_columns(k_.allocs[static_cast<std::size_t>(alloc)]);
}

std::int64_t machine::tmem_stage_of(int alloc, region const& g) const { return k_.allocs[static_cast<std::size_t>(alloc)].shape.size() == 3 ? g.origin[0] : 0; }

std::int64_t& machine::tmem_k_at(int cta, region const& g, int alloc) {
  return ctas_[static_cast<std::size_t>(cta)].tmem_k[static_cast<std::size_t>(tmem_stage_column(alloc, tmem_stage_of(alloc, g)))];
}

void machine::note_tmem_read(agent_state const& a, region const& g, ir::RefId rid) { mma_k_ = std::max(mma_k_, tmem_k_at(a.cta, g, k_.refs[rid].id)); }

void machine::tcgen05_complete(async_op& op) {
  auto& a = agents_[op.agent];
  if (op.what == async_op::kind::tc_commit) {
    auto& b = ctas_[op.bar_cta].barriers[static_cast<std::size_t>(op.bar_elem)];
    if (o_.trace)
      tr_.events.push_back({trace_event::kind::async, op.issued, time_, ctas_[a.cta].linear, k_.roles + 2, op.stmt,
                            fmt::format("tcgen05 commit #{}: MMAs 1..{} of {} complete, arrive on {}{}", op.stmt, op.group, who(a), bar_name(b),
                                        op.dst_cta.size() > 1   ? fmt::format(" in {} CTAs: both of the pair and the pairs along its axes", op.dst_cta.size() + 1)
                                        : op.pair_cta >= 0 ? std::string(" in both CTAs of the pair")
                                                           : std::string())});
    arrive(b, op.vc, a);
    for (int c : op.dst_cta) arrive(ctas_[static_cast<std::size_t>(c)].barriers[static_cast<std::size_t>(op.bar_elem)], op.vc, a);
    return;
  }
  auto const& p = *op.tc_plan;
  auto bad = [&](std::string const& what) {
    report(check::unsupported, op.stmt, a, fmt::format("tcgen05_mma ({}) was issued with {}", p.shape_suffix(), what));
  };
  // Everything the instruction does comes from its bits.
  const bool scaled = p.scaled;
  if (op.idesc & (scaled ? tc::scaled_reserved_bits : tc::reserved_bits)) bad(fmt::format("instruction descriptor {:#010x}, whose reserved bits are set", op.idesc));
  // The scale format is the kind's: ue4m3 for kind::mxf4nvf4 (.block16), ue8m0 for the others.
  if (scaled && tc::decode_scaled(op.idesc).ue8m0 != (p.kind != tc::Kind::mxf4nvf4))
    bad(fmt::format("instruction descriptor {:#010x}: {} scales (bit 23), which {} does not take", op.idesc,
                    tc::decode_scaled(op.idesc).ue8m0 ? "ue8m0" : "ue4m3", tc::kind_name(p.kind)));
  const auto id = tc::decode_mma(op.idesc, scaled);  // the block-scaled layout's fields sit elsewhere
  ir::DType a_type{}, b_type{};
  if (id.sparse || id.saturate || id.negate_a || id.negate_b || id.max_shift != 0)
    bad(fmt::format("instruction descriptor {:#010x}: sparsity, saturation, negation or a maximum shift, which are not modelled", op.idesc));
  // kind::f8f6f4 pairs e4m3 and e5m2 freely, kind::i8 s8 and u8; the other kinds take one type for both.
  const ir::DType acc_type = tc::kind_accumulator(p.kind);
  if (!tc::formats_of(p.kind, id, a_type, b_type))
    bad(fmt::format("instruction descriptor {:#010x}: A format {}, B format {}, D format {} are not an {}-accumulating {} MMA", op.idesc,
                    id.a_format, id.b_format, id.d_format, ir::dtype_name(acc_type), tc::kind_name(p.kind)));
  const bool pair = op.pair_cta >= 0;
  if (id.m != (pair ? 256 : 128) || id.n < 16 || id.n > 256 || id.n % 16 != 0)
    bad(fmt::format("instruction descriptor {:#010x}: M = {}, N = {}, not a {} shape with M = {}", op.idesc, id.m, id.n,
                    pair ? "cta_group::2" : "cta_group::1", pair ? 256 : 128));
  auto& d = *op.acc.mem;
  // D's memory is (lane, column) row-major, or (stage, lane, column) for a ring, whose stage s
  // is the columns [s * cols, (s + 1) * cols) after its allocation's first.
  const auto lane0 = static_cast<std::int64_t>(tc::tmem_lane(op.d_addr)), col = static_cast<std::int64_t>(tc::tmem_column(op.d_addr));
  const std::int64_t col0 = tmem_col_[static_cast<std::size_t>(op.acc_alloc)], cols = d.shape.back();
  const std::int64_t stages = d.shape.size() == 3 ? d.shape[0] : 1, stage = col >= col0 ? (col - col0) / cols : 0;
  if (lane0 != 0 || col < col0 || stage >= stages || (col - col0) % cols + id.n > cols)
    bad(fmt::format("D at TMEM address {:#x} (lane {}, column {}): N = {} columns from there leave {}{} (columns [{}, {}){})", op.d_addr, lane0, col,
                    id.n, d.name, stages > 1 ? "'s stage" : "", col0 + stage * cols, col0 + (stage + 1) * cols,
                    stages > 1 ? fmt::format(" of stage {}", stage) : std::string()));
  const std::int64_t m = id.m, n = id.n, ik = p.ik, jc = (col - col0) % cols, d_base = stage * d.shape[d.shape.size() - 2] * cols;
  // Rows of D (and of A) per CTA, and columns of B per CTA: the pair splits M and B's N in two.
  const std::int64_t cta_m = pair ? m / 2 : m, cta_n = pair ? n / 2 : n;
  // Both operands of every kind have one width (f8f6f4's 8-bit pairs included): one K per instruction.
  const int bits = ir::dtype_bits(a_type);

  if (pair && std::none_of(agents_.begin(), agents_.end(), [&](agent_state const& y) { return y.cta == op.pair_cta && !y.done; }))
    report(check::tcgen05_pending_at_dealloc, op.stmt, a,
           fmt::format("tcgen05_mma_2cta #{} of {} writes D's rows 128-255 into the TMEM of CTA {}, but every warpgroup of that CTA has "
                       "exited, which freed it: the odd CTA must wait on the barrier the pair's commit arrives on before it ends",
                       op.group, who(a), ctas_[op.pair_cta].linear));
  const epoch stamp = epoch::make(static_cast<std::uint32_t>(op.group), static_cast<std::uint32_t>(a.mma_comp), cluster_id());
  if (o_.checks) {
    // The shadows of the operand views: the bytes a correct descriptor denotes. A descriptor
    // that reads elsewhere shows up as wrong numbers, which the tolerance check catches.
    access(op.a_view, false, op.vc, stamp, a.comp, op.a_taddr.empty() ? "a tcgen05 MMA" : "a tcgen05 MMA reading A");
    access(op.b_view, false, op.vc, stamp, a.comp, "a tcgen05 MMA");
    if (op.accumulate) access(op.acc, false, op.vc, stamp, a.comp, "a tcgen05 MMA");
    access(op.acc, true, op.vc, stamp, a.comp, "a tcgen05 MMA");
    if (scaled) {
      access(op.sfa_view, false, op.vc, stamp, a.comp, "a block-scaled tcgen05 MMA reading the scales of A");
      access(op.sfb_view, false, op.vc, stamp, a.comp, "a block-scaled tcgen05 MMA reading the scales of B");
    }
    if (pair) {  // the odd CTA's halves, under the same stamp: one instruction reads and writes both
      access(op.a_view2, false, op.vc, stamp, a.comp, "a tcgen05 MMA");
      access(op.b_view2, false, op.vc, stamp, a.comp, "a tcgen05 MMA");
      if (op.accumulate) access(op.acc2, false, op.vc, stamp, a.comp, "a tcgen05 MMA");
      access(op.acc2, true, op.vc, stamp, a.comp, "a tcgen05 MMA");
    }
  }
  // The SMEM descriptor's address is a CTA-local shared-window address: in the pair, the same
  // bits name the same offset in each CTA's SMEM, the first half of the rows (A) or columns (B)
  // in the even CTA and the second half in the odd one.
  auto fetch = [&](int cta, std::uint32_t addr, const char* role, std::int64_t mn, std::int64_t k) {
    const ir::DType t = role[0] == 'A' ? a_type : b_type;  // each operand read in its own format
    const auto eb = ir::dtype_bits(t) / 8;
    auto const& smem = ctas_[static_cast<std::size_t>(cta)].bytes;
    if (static_cast<std::size_t>(addr) + static_cast<std::size_t>(eb) > smem.size())
      report(check::index_out_of_range, op.stmt, a,
             fmt::format("tcgen05_mma ({}) reads {} element ({}, {}) at shared address {}, beyond the CTA's {} bytes of SMEM: its descriptor "
                         "denotes bytes outside every allocation",
                         p.shape_suffix(), role, mn, k, addr, smem.size()));
    return smem.data() + addr;
  };
  const int vpe = tc::values_per_element(b_type);  // K values an element holds: 2 for e2m1x2
  const int cta0 = a.cta, cta1 = pair ? op.pair_cta : a.cta;
  auto descriptor = [&](std::uint64_t bits_, const char* role) {
    const auto s = tc::decode_smem(bits_);
    if (s.error != tc::SmemDescError::none) bad(fmt::format("{} descriptor {:#018x}: {}", role, bits_, tc::smem_desc_error_text(s.error)));
    return s.d;
  };
  // A from TMEM: row i is lane i, its K elements packed along 32-bit columns from the address's
  // column, the lower K index in the lower bytes (ir/tcgen05.hpp). The interpreter keeps a TMEM
  // allocation's bytes as (lane, element) row-major, which is that packing: a lane's 32-bit
  // column c is bytes 4c..4c+3 of its row.
  const bool a_tmem = !op.a_taddr.empty();
  if (a_tmem && id.a_major != tc::Major::k)
    bad(fmt::format("instruction descriptor {:#010x}: A from TMEM read M-major (bit 15), which the [a_tmem] form does not allow", op.idesc));
  auto fetch_tmem = [&](std::uint32_t taddr, std::int64_t i, std::int64_t k) {
    auto const& am = *op.a_view.mem;
    const std::int64_t eb = ir::dtype_bits(a_type) / 8, row_bytes = am.shape[1] * ir::dtype_bits(am.dtype) / 8;
    const std::int64_t c0 = tmem_col_[static_cast<std::size_t>(op.a_alloc)];
    const std::int64_t byte = (static_cast<std::int64_t>(tc::tmem_column(taddr)) - c0) * 4 + k * eb;
    const std::int64_t lane = static_cast<std::int64_t>(tc::tmem_lane(taddr)) + i;
    if (byte < 0 || byte + eb > row_bytes || lane >= am.shape[0])
      report(check::index_out_of_range, op.stmt, a,
             fmt::format("tcgen05_mma ({}) reads A element ({}, {}) at TMEM lane {}, byte {} of column {}: outside TMEM {} (columns [{}, {}))",
                         p.shape_suffix(), i, k, lane, byte % 4, tc::tmem_column(taddr) + static_cast<std::uint32_t>(k * eb / 4), am.name, c0,
                         c0 + row_bytes / 4));
    return ir::wgmma::operand_value(a_type, am.data + lane * row_bytes + byte);
  };
  const std::int64_t kv = ik * vpe;  // K values one instruction reads
  mma_a_.resize(static_cast<std::size_t>(m * kv));
  mma_b_.resize(static_cast<std::size_t>(n * kv));
  // D's elements are 32-bit: f32, or s32 for kind::i8 (ir::wgmma::accumulate's one rule for both).
  std::byte* dv[2] = {d.data, pair ? op.acc2.mem->data : nullptr};
  for (std::size_t ks = 0; ks < op.b_desc.size(); ++ks) {
    const auto bd = descriptor(op.b_desc[ks], "B");
    const auto kbase = static_cast<std::int64_t>(ks) * ik;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t k = 0; k < ik; ++k) {
        const auto addr = ir::wgmma::element_address(bd, id.b_major, bits, j % cta_n, k);
        tc::operand_values(b_type, fetch(j < cta_n ? cta0 : cta1, addr, "B", j, kbase + k), addr, mma_b_.data() + j * kv + k * vpe);
      }
    if (a_tmem) {
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t k = 0; k < ik; ++k) mma_a_[static_cast<std::size_t>(i * ik + k)] = fetch_tmem(op.a_taddr[ks], i, k);
    } else {
      const auto ad = descriptor(op.a_desc[ks], "A");
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t k = 0; k < ik; ++k) {
          const auto addr = ir::wgmma::element_address(ad, id.a_major, bits, i % cta_m, k);
          tc::operand_values(a_type, fetch(i < cta_m ? cta0 : cta1, addr, "A", i, kbase + k), addr, mma_a_.data() + i * kv + k * vpe);
        }
    }
    const bool add = op.accumulate || ks > 0;  // enable-input-d: only the first instruction may overwrite
    // Block-scaled: the v scales of row i at lane i, column sfa + 4 g + i / 32, bytes ID_A ..
    // ID_A + v - 1 (g: the instruction's cell group, its address's column offset); column j's the
    // same at lane j (its quarter's copy) from sfb (ir::tcgen05::scale_at): ue8m0 or ue4m3 codes.
    const int vec = p.scale_vec;
    if (scaled) {
      const auto sd = tc::decode_scaled(op.idescs[ks]);
      if (op.idescs[ks] != (op.idesc | (op.idescs[ks] & ((3u << 29) | (3u << 4)))))
        bad(fmt::format("instruction descriptors {:#010x} and {:#010x} of one statement differ beyond their scale IDs", op.idesc, op.idescs[ks]));
      if (!tc::scale_id_ok(sd.sfa_id, vec) || !tc::scale_id_ok(sd.sfb_id, vec))
        bad(fmt::format("instruction descriptor {:#010x}: scale IDs {} (A) and {} (B), but {} reads {} scale(s) from an ID that is a multiple of {}",
                        op.idescs[ks], sd.sfa_id, sd.sfb_id, tc::kind_name(p.kind), vec, vec));
      const auto column = static_cast<std::uint32_t>(p.scale_column(static_cast<std::int64_t>(ks)));
      auto scales = [&](std::vector<double>& out, std::int64_t rows, region const& view, std::int64_t alloc, std::uint32_t addr, int sid, const char* role) {
        out.resize(static_cast<std::size_t>(rows * vec));
        for (std::int64_t r = 0; r < rows; ++r)
          for (int b = 0; b < vec; ++b) {
            const auto at = tc::scale_at(static_cast<int>(r), sid, b);
            std::byte const* p8 = tmem_byte(view, static_cast<int>(alloc), addr, at.lane, 4 * at.column + at.byte);
            if (!p8)
              report(check::index_out_of_range, op.stmt, a,
                     fmt::format("tcgen05_mma ({}) reads scale {} of {} row {} at TMEM lane {}, column {}, byte {}: outside {}", p.shape_suffix(), b, role,
                                 r, at.lane, tc::tmem_column(addr) + static_cast<std::uint32_t>(at.column), at.byte, view.mem->name));
            const auto code = static_cast<unsigned>(*p8);
            out[static_cast<std::size_t>(r * vec + b)] = sd.ue8m0 ? ir::mx::decode_ue8m0(code) : ir::mx::decode(ir::mx::ue4m3, code);
          }
      };
      scales(sfa_, m, op.sfa_view, op.sfa_alloc, op.sfa_addr + column, sd.sfa_id, "A");
      scales(sfb_, n, op.sfb_view, op.sfb_alloc, op.sfb_addr + column, sd.sfb_id, "B");
    }
    // Each scale block's dot product in double, times its two scales, summed, then rounded once
    // into D (the hardware's internal order and width are not modelled: the tolerance is).
    const std::int64_t blk = kv / vec;
    for (std::int64_t i = 0; i < m; ++i) {
      float const* ar = mma_a_.data() + i * kv;
      std::byte* row = dv[i / cta_m] + 4 * (d_base + (lane0 + i % cta_m) * cols + jc);  // row i of D is lane i % 128 of CTA i / 128 of the pair
      for (std::int64_t j = 0; j < n; ++j) {
        float const* br = mma_b_.data() + j * kv;
        double sum = 0;
        for (int b = 0; b < (scaled ? vec : 1); ++b) {
          double dot = 0;
          for (std::int64_t k = scaled ? b * blk : 0; k < (scaled ? (b + 1) * blk : kv); ++k) dot += static_cast<double>(ar[k]) * static_cast<double>(br[k]);
          sum += scaled ? dot * sfa_[static_cast<std::size_t>(i * vec + b)] * sfb_[static_cast<std::size_t>(j * vec + b)] : dot;
        }
        if (!add) std::memset(row + 4 * j, 0, 4);
        ir::wgmma::accumulate(acc_type, row + 4 * j, sum);
      }
    }
  }
  auto summed = [&](int c) {
    auto& kk = tmem_k_at(c, op.acc, op.acc_alloc);
    kk = (op.accumulate ? kk : 0) + p.k;
  };
  summed(cta0);
  if (pair) summed(cta1);
  if (o_.trace)
    tr_.events.push_back({trace_event::kind::async, op.issued, time_, ctas_[a.cta].linear, k_.roles + 2, op.stmt,
                          fmt::format("tcgen05_mma #{}: {} x {} into {}{} (MMA #{} of {})", op.stmt, op.b_desc.size(), p.shape_suffix(), d.name,
                                      op.accumulate ? " (accumulate)" : "", op.group, who(a))});
}

// At an agent's exit: its MMAs must all be covered by a commit. At its CTA's exit: every TMEM
// allocation must have been freed by its tmem_dealloc (whose own check saw the MMAs complete).
void machine::tcgen05_check_at_exit(agent_state const& a) {
  if (a.tc_issued > a.tc_committed)
    report(check::tcgen05_pending_at_dealloc, a.last_mma, a,
           fmt::format("{} exits with {} tcgen05 MMA(s) or scale copies that no tcgen05_commit_arrive follows: nothing can learn that they completed, so "
                       "their TMEM can be neither read nor freed safely (end with tcgen05_commit_arrive on a barrier the readers wait for)",
                       who(a), a.tc_issued - a.tc_committed));
  for (auto const& other : agents_)
    if (other.cta == a.cta && !other.done) return;
  // A pair MMA writes the odd CTA's TMEM too, which that CTA's own tmem_dealloc does not see (it
  // checks the MMAs its CTA issued): the odd CTA's exit is judged against the even CTA's issuer.
  for (auto const& issuer : agents_) {
    if (issuer.cta == a.cta || issuer.tc_peer != a.cta || issuer.tc_issued == 0) continue;
    std::uint32_t seen = 0;
    for (auto const& y : agents_)
      if (y.cta == a.cta) seen = std::max(seen, y.vc.c[static_cast<std::size_t>(issuer.mma_comp)]);
    if (seen < issuer.tc_issued)
      report(check::tcgen05_pending_at_dealloc, issuer.last_mma, issuer,
             fmt::format("every warpgroup of CTA {} has exited, which frees its TMEM, but none waited for tcgen05 MMA #{} of the {} issued by {}: "
                         "it may still be writing TMEM when it is freed (wait on the barrier its tcgen05_commit_arrive arrives on before the end)",
                         ctas_[a.cta].linear, seen + 1, issuer.tc_issued, who(issuer)));
  }
  auto const& cta = ctas_[a.cta];
  for (std::size_t t = 0; t < k_.allocs.size(); ++t) {
    if (k_.allocs[t].kind != ir::AllocKind::tmem || cta.tmem_freed_by[t] != ir::none) continue;
    // The verifier guarantees a dealloc exists: name it, it is the op that did not run here.
    ir::StmtId dealloc = ir::none;
    for (std::size_t i = 0; i < k_.stmts.size(); ++i)
      if (k_.stmts[i].op == ir::StmtOp::tmem_dealloc && k_.refs[k_.stmts[i].refs[0]].id == static_cast<int>(t)) dealloc = static_cast<ir::StmtId>(i);
    report(check::tmem_not_freed, dealloc, a,
           fmt::format("every warpgroup of CTA {} has exited, but no tmem_dealloc freed its TMEM {}{}: a kernel frees all its TMEM before it "
                       "exits (run the tmem_dealloc on every path, in every CTA)",
                       cta.linear, ir::alloc_name(k_, static_cast<int>(t)), dealloc == ir::none ? "" : fmt::format(" (op #{} did not run in it)", dealloc)));
  }
}

}  // namespace stagecraft::interp::detail
