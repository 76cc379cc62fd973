// tcgen05 code generation (sm_100a): tensor memory, tcgen05.mma, commits and TMEM loads. The
// main emitter (codegen.cpp) calls these hooks; everything Blackwell-specific lives here.
//
// What the generated code does, in execution order:
//   - warp 0 allocates each TMEM allocation with its own tcgen05.alloc (the column count rounded
//     up to the hardware's rule: a power of two, at least 32; largest first, as the hardware
//     wants allocations in non-increasing size), each writing its TMEM address to a 4-byte SMEM
//     slot after the kernel's own SMEM; warp 0 then gives up the CTA's allocation permit, and
//     every thread reads the addresses after the kernel's first thread barrier;
//   - one thread (lane 0 of the issuing warpgroup) issues each tcgen05_mma as its plan's K / ik
//     instructions, with the instruction descriptor and SMEM descriptors of ir::tcgen05 (the
//     encoder the interpreter decodes), and each tcgen05_commit_arrive as tcgen05.commit;
//   - a store of async_load_tmem(d) has every warp of the warpgroup load its 32 lanes of D with
//     tcgen05.ld.32x32b (32 columns at a time) and wait for them, then store as any tile;
//   - store_tmem(t, tile) (a store into TMEM) has every warp store its 32 lanes with
//     tcgen05.st.32x32b (32 columns at a time, 16-bit elements packed two to a column) and wait
//     for them (tcgen05.wait::st) before the warpgroup's next op; a tcgen05_mma with A in TMEM
//     passes A's TMEM address (the [a_tmem] form) instead of an SMEM descriptor;
//   - tmem_dealloc(t), where the user wrote it: the warpgroup meets at its barrier (its lanes'
//     TMEM loads done, fenced), then its first warp frees t with tcgen05.dealloc.
// The tcgen05.fence::before_thread_sync / after_thread_sync pairs sit inside the prelude's
// thread-barrier wrappers (mbarrier arrive and wait, bar.sync, cluster barrier), compiled in when
// the source defines SC_TCGEN05: the generator puts them around every thread barrier of a
// kernel that uses tensor memory, and the user never writes one.
// A kernel with the pair's MMA (tcgen05_mma_2cta) does all of this with .cta_group::2 (PTX: one
// CTA group per kernel): both CTAs of the pair allocate and free collectively (warp 0 of each
// allocates, the freeing warp of each frees), the even CTA's thread issues the m256 MMA with the
// same descriptors, and every commit multicasts its arrival to the barrier of both CTAs. TMEM
// loads are unchanged: each CTA reads its own 128 rows of D.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "stagecraft/ir/kernel.hpp"

namespace stagecraft::nvrtc {
// The one thread that issues a warpgroup's TMA loads, arrivals, tcgen05 MMAs and their commits:
// lane 0 of its first warp, chosen by elect.sync inside a warp-uniform branch, as CUTLASS issues
// them. ptxas knows elect.sync's predicate selects a single lane, so it issues each UTCHMMA once
// (under `lane == 0` it wrapped every one in an ELECT/BRA.U.ANY loop over the active lanes).
// elect.sync picks the lowest active lane and the first warp is converged at each issue, so it
// is the same thread every time: a tcgen05 commit tracks its own thread's earlier MMAs.
inline constexpr const char* elected_issuer = "lane < 32 && sc::elect_one()";
// This CTA's coordinate along cluster axis `axis`, with the kernel's static cluster extent there
// (the prelude's sc::cluster_ctaid<Extent>: blockIdx mod the extent, 0 where it is 1).
std::string cluster_ctaid(ir::Kernel const& k, int axis);
}  // namespace stagecraft::nvrtc

namespace stagecraft::nvrtc::tcgen05_gen {

// Whether the kernel uses tensor memory or tcgen05 ops at all, or the pair's TMA loads (then the
// hooks below apply).
bool uses_tcgen05(ir::Kernel const& k);
// Whether it has TMA loads completing on the pair leader's barrier (.cta_group::2).
bool has_pair_copies(ir::Kernel const& k);
// The kernel's one CTA group: 2 where it issues the pair's MMAs or commits, else 1.
int cta_group(ir::Kernel const& k);

// The TMEM the kernel allocates, and where the addresses are kept.
struct tmem_plan {
  std::vector<std::int64_t> columns;  // per allocation: what its tcgen05.alloc asks for (0: not TMEM)
  std::vector<std::int64_t> slot;     // per allocation: SMEM offset of the 4-byte slot its address lands in
  std::vector<int> order;             // the TMEM allocations in allocation order: largest first
  std::int64_t smem_end = 0;          // dynamic SMEM the kernel requests: its own, then the slots
  int cta_group = 1;                  // every tcgen05 op's .cta_group (cta_group() above)
};
tmem_plan plan_tmem(ir::Kernel const& k, std::int64_t smem_end);
// The generated name of allocation a's TMEM address.
std::string tmem_var(int alloc);

// Text before the prelude (the switch for its fences), and the tcgen05 wrappers after it, each
// instruction with the kernel's CTA group (and the pair's TMA loads where the kernel has them).
std::string prelude_head();
std::string prelude_tail(int cta_group, bool pair_copies);

// Kernel head: the allocations (before the first thread barrier) and the address reads (after it).
std::string alloc_before_sync(ir::Kernel const& k, tmem_plan const& t);
std::string after_first_sync(ir::Kernel const& k, tmem_plan const& t);

// What the hooks need from the main emitter: its names for expressions, barriers, views and
// tile values.
struct context {
  ir::Kernel const& k;
  std::vector<std::int64_t> const& offsets;  // ir::smem_offsets
  tmem_plan const& tmem;
  std::function<std::string(ir::ExprId)> expr;
  std::function<std::string(ir::RefId)> bar_addr;
  std::function<std::string(ir::RefId)> view_offset;
  // `element(ref, i) = rhs;` (masked GMEM tiles: under the element's bounds predicate)
  std::function<std::string(ir::RefId, std::string const&, std::string const&)> assign;
  std::function<std::string(ir::ValueId, std::string const&)> value;
  std::function<std::string(ir::DType, std::string const&)> store_conv;
  std::map<ir::ValueId, std::string>& leaf_override;  // value() reads these leaves as given
  // The element `i` of `ref` as an lvalue (an SMEM element: its swizzled, tiled address).
  std::function<std::string(ir::RefId, std::string const&)> element;
  // Whether v consecutive elements of every row of SMEM view `ref` are one aligned 16-byte chunk.
  std::function<bool(ir::RefId, std::int64_t)> smem_vectors;
  // Records the SMEM bank conflicts of a store from TMEM into SMEM view `ref` of (128, n): thread
  // t of the warpgroup writes row t, `v` elements (16 bytes when v > 1) per instruction.
  std::function<void(ir::StmtId, ir::RefId, std::int64_t n, std::int64_t v)> count_row_banks;
  // The condition that picks the role's issuing thread, and how the role's threads meet
  // (emitter::issuer, emitter::role_sync): a warpgroup role's or a single warp's.
  std::string issuer = elected_issuer;
  std::string sync = "sc::wg_sync(wg);";
  // Inside a block the emitter already gave to the elected thread (consecutive tcgen05 MMAs and
  // commits of one sequence: one elect per K-tile): the hooks issue without an elect of their own.
  bool elected = false;
  // Fast math (codegen_options::math): a row pass computes its f32 arithmetic on column pairs
  // with the f32x2 instructions (FFMA2, FADD2, FMUL2), as contraction and reassociation allow.
  bool fast = false;
};

void mma(context const& c, ir::StmtId id, std::string const& ind, std::string& out);
void commit(context const& c, ir::StmtId id, ir::RefId bar, std::string const& ind, std::string& out);
// tcgen05_copy_scales: tcgen05.cp.cta_group::1.32x128b.warpx4 by the issuing thread.
void copy_scales(context const& c, ir::StmtId id, std::string const& ind, std::string& out);
void dealloc(context const& c, ir::StmtId id, std::string const& ind, std::string& out);
// Whether tile value v reads TMEM (async_load_tmem): a store of it is a tmem_store.
bool reads_tmem(ir::Kernel const& k, ir::ValueId v);
void tmem_store(context const& c, ir::StmtId id, std::string const& ind, std::string& out);
// Whether s is a store_tmem (a store into TMEM): tcgen05.st, written by tmem_write.
bool writes_tmem(ir::Kernel const& k, ir::Stmt const& s);
void tmem_write(context const& c, ir::StmtId id, std::string const& ind, std::string& out);
// How many statements of `body` from `first` on run as one pass over their rows (fused_rows):
// each lane-private, each a store_tmem or a row vector reading the same (128, E) f32 TMEM tiles,
// none reading what an earlier one of the run writes. Fused where it is 2 or more.
std::size_t row_run(ir::Kernel const& k, std::vector<ir::StmtId> const& body, std::size_t first, std::function<bool(ir::StmtId)> const& lane_private);
void fused_rows(context const& c, std::vector<ir::StmtId> const& ids, std::string const& ind, std::string& out);

}  // namespace stagecraft::nvrtc::tcgen05_gen
