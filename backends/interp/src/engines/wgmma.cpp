// The tensor-core engine (wgmma.mma_async on sm_90a): one wgmma statement is the M/64 x K/ik
// instructions of its ir::wgmma::plan, issued asynchronously into the open wgmma group of its
// warpgroup; wgmma_commit closes the group, wgmma_wait(n) waits until at most n are in flight.
// See machine.hpp for how an engine plugs into the machine.
//
// Operands are read the way the tensor core reads them: at issue each instruction gets the
// 64-bit matrix descriptors the code generator emits (ir::wgmma::encode of the operand's
// shared-window address plus plan::a_start / b_start); at completion those bits are decoded
// again (ir::wgmma::decode) and every A and B element is read from the CTA's SMEM bytes at
// ir::wgmma::element_address. A descriptor, swizzle or tiling that is wrong therefore reads the
// wrong bytes here exactly as on the GPU. A from registers is the tile value, read at issue.
//
// Numerics (docs/interpreter.md): per instruction, the ik products of each output element are
// summed exactly in double (bf16/f16/fp8 products are exact there, tf32 ones too) and added to
// the f32 accumulator with one rounding (f16 accumulators: one f16 rounding). K-step by K-step,
// in issue order. Hardware fp8 accumulation keeps fewer bits than f32; mma_tolerance allows it.
//
// Ordering: the reads of A/B and the accumulator update are stamped "agent a's wgmma group
// g+1"; the agent's clock takes that component only at the wgmma_wait that covers the group,
// so touching the accumulator, or letting a refill or a store land on A/B, before that wait
// is a race whatever order the scheduler picked. One agent's wgmmas execute in issue order
// (scheduler.cpp's complete()), as they chain on their accumulator in hardware.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "../machine.hpp"

namespace stagecraft::interp::detail {

// The shared-window address of an SMEM view's first byte (smem_base 0). A view fixes leading
// dimensions only, and tiled storage keeps each (rows, cols) slab contiguous, so the slab
// starts at its element offset times the element size, before any swizzle.
std::uint32_t machine::view_address(region const& g) const {
  auto const& m = *g.mem;
  std::int64_t first = 0, stride = 1;
  for (int d = static_cast<int>(m.shape.size()) - 1; d >= 0; --d) {
    first += g.origin[static_cast<std::size_t>(d)] * stride;
    stride *= m.shape[static_cast<std::size_t>(d)];
  }
  return m.address + static_cast<std::uint32_t>(first * ir::dtype_bits(m.dtype) / 8);
}

void machine::issue_wgmma(agent_state& a, ir::Stmt const& s) {
  auto const& p = *plans_[static_cast<std::size_t>(cur_op_)];
  async_op op{async_op::kind::mma};
  op.agent = a.comp;
  op.stmt = cur_op_;
  op.plan = &p;
  op.acc_alloc = k_.refs[s.refs[0]].id;
  op.acc = view_of(a, s.refs[0], a.cta);
  op.b_view = view_of(a, s.refs[2], a.cta);
  const std::uint32_t b_addr = view_address(op.b_view);
  for (std::int64_t ks = 0; ks < p.k_steps(); ++ks)
    op.b_desc.push_back(ir::wgmma::encode(b_addr + static_cast<std::uint32_t>(p.b_start(ks)), p.b));
  if (p.a_in_registers) {
    op.staged = std::make_shared<tile_buf>(value(a, s.value));  // the registers, as they are now
  } else {
    op.a_view = view_of(a, s.refs[1], a.cta);
    const std::uint32_t a_addr = view_address(op.a_view);
    for (std::int64_t mb = 0; mb < p.m_blocks(); ++mb)
      for (std::int64_t ks = 0; ks < p.k_steps(); ++ks)
        op.a_desc.push_back(ir::wgmma::encode(a_addr + static_cast<std::uint32_t>(p.a_start(mb, ks)), p.a));
  }
  op.group = a.mma_committed;  // the open group
  op.vc = a.vc;
  // Ordered after the agent's earlier wgmmas (in-order on the accumulator), not its waits.
  op.vc.c[a.mma_comp] = static_cast<std::uint32_t>(op.group + 1);
  ++a.mma_open;
  a.last_mma = cur_op_;
  a.acc_k[static_cast<std::size_t>(op.acc_alloc)] += p.k;
  ++a.vc.c[a.comp];
  enqueue(std::move(op));
}

// wgmma.commit_group: the wgmmas issued since the last commit become one group (an empty one
// if none were, as in PTX).
void machine::wgmma_commit(agent_state& a) {
  ++a.mma_committed;
  a.mma_open = 0;
}

// wgmma.wait_group n: the agent is ordered after every group but the newest n (blocked() has
// held it until they completed). More than were committed waits for nothing.
void machine::wgmma_wait(agent_state& a, ir::Stmt const& s) {
  const auto done = a.mma_committed - s.n;
  if (done <= 0) return;
  a.vc.c[a.mma_comp] = std::max<std::uint32_t>(a.vc.c[a.mma_comp], static_cast<std::uint32_t>(done));
  a.mma_waited = std::max(a.mma_waited, done);
}

bool machine::mma_groups_done(agent_state const& a, std::int64_t n) const {
  const auto need = a.mma_committed - n;
  for (auto const& op : pending_)
    if (op.what == async_op::kind::mma && op.agent == a.comp && op.group < need) return false;
  return true;
}

void machine::wgmma_complete(async_op& op) {
  auto& a = agents_[op.agent];
  auto const& p = *op.plan;
  const epoch stamp = epoch::make(static_cast<std::uint32_t>(op.group + 1), static_cast<std::uint32_t>(a.mma_comp), cluster_id());
  if (o_.checks) {
    // The shadows of the operand views: the bytes a correct descriptor denotes. A descriptor
    // that reads elsewhere shows up as wrong numbers, which the tolerance check catches.
    completing_wgmma_group_ = op.group;
    if (!p.a_in_registers) access(op.a_view, false, op.vc, stamp, a.comp, "a wgmma");
    access(op.b_view, false, op.vc, stamp, a.comp, "a wgmma");
    access(op.acc, false, op.vc, stamp, a.comp, "a wgmma");  // D += A*B reads D ...
    access(op.acc, true, op.vc, stamp, a.comp, "a wgmma");   // ... and writes it
    completing_wgmma_group_ = -1;
  }
  auto const& smem = ctas_[a.cta].bytes;
  // A and B have the same width (input_pair), though e4m3 and e5m2 may face each other.
  const int bits = ir::dtype_bits(p.b_type), eb = bits / 8;
  const std::int64_t ik = p.ik, n = p.n;
  auto fetch = [&](std::uint32_t addr, ir::DType t, const char* role, std::int64_t mn, std::int64_t k) {
    if (static_cast<std::size_t>(addr) + static_cast<std::size_t>(eb) > smem.size())
      report(check::index_out_of_range, op.stmt, a,
             fmt::format("wgmma ({}) reads {} element ({}, {}) at shared address {}, beyond the CTA's {} bytes of SMEM: its descriptor "
                         "denotes bytes outside every allocation",
                         p.shape_suffix(), role, mn, k, addr, smem.size()));
    return ir::wgmma::operand_value(t, smem.data() + addr);
  };
  mma_a_.resize(static_cast<std::size_t>(64 * ik));
  mma_b_.resize(static_cast<std::size_t>(n * ik));
  auto& accm = *op.acc.mem;
  for (std::int64_t ks = 0; ks < p.k_steps(); ++ks) {
    const auto bd = ir::wgmma::decode(op.b_desc[static_cast<std::size_t>(ks)]);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t k = 0; k < ik; ++k)
        mma_b_[static_cast<std::size_t>(j * ik + k)] = fetch(ir::wgmma::element_address(bd, p.b.major, bits, j, k), p.b_type, "B", j, ks * ik + k);
    for (std::int64_t mb = 0; mb < p.m_blocks(); ++mb) {
      if (p.a_in_registers) {
        for (std::int64_t i = 0; i < 64; ++i)
          for (std::int64_t k = 0; k < ik; ++k)
            mma_a_[static_cast<std::size_t>(i * ik + k)] = op.staged->f[(64 * mb + i) * p.k + ks * ik + k];
      } else {
        const auto ad = ir::wgmma::decode(op.a_desc[static_cast<std::size_t>(mb * p.k_steps() + ks)]);
        for (std::int64_t i = 0; i < 64; ++i)
          for (std::int64_t k = 0; k < ik; ++k)
            mma_a_[static_cast<std::size_t>(i * ik + k)] = fetch(ir::wgmma::element_address(ad, p.a.major, bits, i, k), p.a_type, "A", 64 * mb + i, ks * ik + k);
      }
      for (std::int64_t i = 0; i < 64; ++i) {
        float const* ar = mma_a_.data() + i * ik;
        const std::int64_t row = 64 * mb + i;
        for (std::int64_t j = 0; j < n; ++j) {
          float const* br = mma_b_.data() + j * ik;
          double sum = 0;
          for (std::int64_t k = 0; k < ik; ++k) sum += static_cast<double>(ar[k]) * static_cast<double>(br[k]);
          const std::int64_t e = row * n + j;
          ir::wgmma::accumulate(accm.dtype, accm.data + e * ir::dtype_bits(accm.dtype) / 8, sum);
        }
      }
    }
  }
  if (op.staged) release(std::move(*op.staged));
  trace_mma(op);
}

// An exiting warpgroup must have committed every wgmma and waited for every group: its
// accumulator (and the SMEM the tensor core still reads) would otherwise be abandoned mid-MMA.
void machine::wgmma_check_at_exit(agent_state const& a) {
  if (a.mma_open > 0)
    report(check::wgmma_pending_at_exit, a.last_mma, a,
           fmt::format("{} exits with {} wgmma(s) never committed (wgmma_commit) nor waited for (wgmma_wait): op #{} ({}) was never "
                       "committed, and wgmma_wait(n) waits only for groups that wgmma_commit() closed: put wgmma_commit() after the "
                       "wgmma, then wgmma_wait(0_c)",
                       who(a), a.mma_open, a.last_mma, ir::describe(k_, a.last_mma)));
  if (a.mma_waited < a.mma_committed)
    report(check::wgmma_pending_at_exit, a.last_mma, a,
           fmt::format("{} exits with {} wgmma group(s) not waited for: the tensor core may still be reading their SMEM and writing "
                       "their accumulator (end with wgmma_wait(0_c))",
                       who(a), a.mma_committed - a.mma_waited));
}

void machine::trace_mma(async_op const& op) {
  if (!o_.trace) return;
  auto const& p = *op.plan;
  std::string label = fmt::format("wgmma #{}: {} x {}{} into acc{} (group #{})", op.stmt, p.m_blocks() * p.k_steps(), p.shape_suffix(),
                                  p.a_in_registers ? " with A from registers" : "", op.acc_alloc, op.group + 1);
  tr_.events.push_back({trace_event::kind::async, op.issued, time_, ctas_[agents_[op.agent].cta].linear, k_.roles + 2, op.stmt,
                        std::move(label)});
}

}  // namespace stagecraft::interp::detail
