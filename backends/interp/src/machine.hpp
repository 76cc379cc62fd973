// The interpreter's machine, shared by the units that implement it: agents (the warpgroups of
// one cluster's CTAs), per-CTA async engines, the mbarrier model, memory with its race shadows,
// the scheduler and the checks. One class, because every part reads the same state (clocks,
// barriers, the pending queue); its member functions live in the unit named for what they do:
//
//   machine.cpp       set-up (memories, shadow grains, trace lanes) and the public entry points
//   scheduler.cpp     clusters, the scheduling policies, blocking and deadlock detection
//   statements.cpp    index expressions, control flow and the dispatch of each IR statement
//   mbarrier.cpp      the PTX mbarrier object: arrivals, tx-count, phases, cluster peers
//   memory.cpp        GMEM/SMEM views and element I/O, the shadow memories and race/fence checks
//   tiles.cpp         tile values (elementwise math, casts) and generic stores
//   reports.cpp       diagnostics, names in messages, the op lane of the timeline
//   engines/tma.cpp   the TMA engine: loads (multicast included), stores and their bulk groups
//   engines/wgmma.cpp the tensor-core engine: wgmma reading SMEM through its descriptors, the
//                     per-warpgroup register accumulators, commit/wait groups
//   engines/tcgen05.cpp the Blackwell tensor-core engine: tcgen05_mma through its instruction and
//                     SMEM descriptors into TMEM, tcgen05_commit_arrive, TMEM's life time
//
// Happens-before is tracked with vector clocks whose components are not only the agents but
// also every barrier element (component value = completions observed) and, per agent, the
// read and write sides of its bulk-group stream (value = groups known complete). An async copy
// is not a thread of its own: the bytes a TMA load writes are stamped "barrier b, completion
// p+1", the SMEM a TMA store reads "agent a's store reads, group g+1". Whoever observes that
// completion (directly or transitively) is ordered after the access. That keeps clocks a few
// dozen entries long however many copies run.
//
// How an async engine plugs in (the TMA engine is the model; a tensor-core engine such as
// wgmma joins as engines/wgmma.cpp the same way, touching no other engine):
//   - its operations are async_op entries in the one pending_ queue, told apart by
//     async_op::kind (add the engine's kinds, and any fields its operations carry). One queue
//     keeps every policy's choice among completions engine-agnostic: eager takes the oldest,
//     random and pct pick among all of them, exploration orders them like anything else.
//   - issue: statements.cpp's step() hands the engine its statements; the engine reads what it
//     must at issue, stamps its op with the issuer's clock (op.vc) and enqueue()s it.
//   - complete: scheduler.cpp's complete() pops the op and calls the engine's <engine>_complete(op),
//     which does the reads and writes through access() (memory.cpp: one call per region read or
//     written, stamped with the clock component whose observation orders it) and publishes its
//     completion (a barrier's tx bytes, a group count, ...). An op may re-enqueue itself for a
//     later half (TMA stores read SMEM, then write GMEM).
//   - waits: blocked() (scheduler.cpp) asks the engine whether a wait statement can proceed.
//   - exit: finish() (statements.cpp) and the scheduler's end of a cluster call the engine's
//     checks for work still in flight.
//   - trace: each engine has a lane after the warpgroups' ("tma load", "tma store"; added in the
//     constructor), and records its ops with trace_async-style events.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "program.hpp"
#include "stagecraft/interp/interp.hpp"
#include "stagecraft/ir/fp8.hpp"
#include "stagecraft/ir/roles.hpp"
#include "stagecraft/ir/tcgen05.hpp"
#include "stagecraft/ir/wgmma.hpp"

namespace stagecraft::interp::detail {

// ---- deterministic randomness (splitmix64: the same numbers on every platform) ---------------
struct rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
};

// ---- vector clocks ---------------------------------------------------------------------------
// Clusters run one after another and reuse the components, so a clock speaks for its own
// cluster only. What orders an access of an earlier cluster is a semaphore (semaphore.cpp): a
// wait acquires the clocks its signallers had, per cluster, and carries them in `foreign`
// (cluster id -> that cluster's components). Null for nearly every clock: kernels without
// semaphores never pay for it.
using foreign_clocks = std::map<std::uint32_t, std::vector<std::uint32_t>>;
inline void join_into(foreign_clocks& into, foreign_clocks const& from) {
  for (auto const& [cl, v] : from) {
    auto& mine = into[cl];
    if (mine.size() < v.size()) mine.resize(v.size(), 0);
    for (std::size_t i = 0; i < v.size(); ++i) mine[i] = std::max(mine[i], v[i]);
  }
}
struct vclock {
  std::vector<std::uint32_t> c;
  std::shared_ptr<const foreign_clocks> foreign;
  void join(vclock const& o) {
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = std::max(c[i], o.c[i]);
    if (o.foreign && o.foreign != foreign) {
      if (!foreign) {
        foreign = o.foreign;
      } else {
        auto both = std::make_shared<foreign_clocks>(*foreign);
        join_into(*both, *o.foreign);
        foreign = std::move(both);
      }
    }
  }
  void clear() {
    std::fill(c.begin(), c.end(), 0);
    foreign.reset();
  }
};

// Who accessed an element, and when: component `comp` at clock `clock`, in cluster `cluster`.
// clock 0: the host's initial contents (ordered before everything).
// 8 bytes: a component (12 bits) and a cluster (20 bits) share one word.
struct epoch {
  std::uint32_t clock = 0;
  std::uint32_t who = 0;
  std::uint32_t comp() const { return who & 0xfffu; }
  std::uint32_t cluster() const { return who >> 12; }
  static epoch make(std::uint32_t clock, std::uint32_t comp, std::uint32_t cluster) { return {clock, (comp & 0xfffu) | (cluster << 12)}; }
};
constexpr std::uint32_t max_components = 0xffd;   // the last three values mark poison, read sets and reduction sets
constexpr std::uint32_t poison = 0xfff;            // comp of a never-written element
constexpr std::uint32_t shared_reads = 0xffe;      // comp of a read set: clock - 1 indexes machine::shared_
// comp of a reduction set (the write epoch of GMEM that reducing stores combined into): every
// reducer's clock, in machine::shared_ at clock - 1. Reducers never race each other; a plain
// access must be ordered after all of them. Cluster many_clusters: reducers of several clusters
// (no plain access of any cluster is ordered after all of them).
constexpr std::uint32_t reductions = 0xffd;
constexpr std::uint32_t many_clusters = 0xfffff;   // cluster of an element read by several clusters
constexpr std::uint32_t max_clusters = 0xfffff;    // cluster ids wrap after this many clusters

struct stop_run {};  // ends the run at the first diagnostic

// PTX: an mbarrier's tx-count lives in [-(2^20 - 1), 2^20 - 1].
constexpr std::int64_t tx_limit = (std::int64_t{1} << 20) - 1;

// ---- memories --------------------------------------------------------------------------------
struct memory {
  std::string name;  // "x", the user's name of a scratch buffer, or "s0" (as printed)
  ir::DType dtype = ir::DType::f32;
  std::vector<std::int64_t> shape;
  std::byte* data = nullptr;
  std::vector<std::byte> owned;  // SMEM
  // The last write and the last read of every element. Null when checks are off or nothing
  // can race there: a GMEM parameter the kernel never writes has no shadow, one it never reads
  // has no read shadow. GMEM shadows come zeroed from calloc (zero = the host's initial
  // contents), so pages nobody touches cost nothing.
  epoch* sw = nullptr;
  epoch* sr = nullptr;
  // Elements per shadow cell. Every access covers whole cells (machine::fit splits them
  // first when one would not), so the shadow is exact to the element, which for one dtype per
  // memory is exact to the byte. Cells as wide as the accesses keep the checks at a few
  // epochs per row of a copy. The grain always divides the innermost extent, so a row of any
  // view starts at cell boundary iff its first element's innermost index does.
  std::int64_t grain = 1;
  std::unique_ptr<epoch, decltype(&std::free)> sw_owner{nullptr, &std::free}, sr_owner{nullptr, &std::free};
  std::int64_t elements() const { return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>()); }
  void allocate_shadow(std::size_t n, bool reads) {
    sw_owner.reset(static_cast<epoch*>(std::calloc(n, sizeof(epoch))));
    if (reads) sr_owner.reset(static_cast<epoch*>(std::calloc(n, sizeof(epoch))));
    if (!sw_owner || (reads && !sr_owner)) throw std::bad_alloc();
    sw = sw_owner.get();
    sr = sr_owner.get();
  }
  // Splits every cell into cells of `g` elements (g divides grain), each inheriting its
  // parent's epochs. All-zero cells (GMEM nobody touched yet) are skipped, so their pages of
  // the fresh calloc stay unmapped.
  void refine(std::int64_t g) {
    const std::int64_t f = grain / g, cells = elements() / grain;
    auto split = [&](std::unique_ptr<epoch, decltype(&std::free)>& owner) {
      if (!owner) return;
      auto* fine = static_cast<epoch*>(std::calloc(static_cast<std::size_t>(cells * f), sizeof(epoch)));
      if (!fine) throw std::bad_alloc();
      epoch const* coarse = owner.get();
      for (std::int64_t c = 0; c < cells; ++c)
        if (coarse[c].clock != 0 || coarse[c].who != 0) std::fill_n(fine + c * f, f, coarse[c]);
      owner.reset(fine);
    };
    split(sw_owner);
    split(sr_owner);
    sw = sw_owner.get();
    sr = sr_owner.get();
    grain = g;
  }
  bool smem = false;
  bool registers = false;  // a warpgroup's register accumulator: no proxy, no fence
  bool tmem = false;       // a CTA's TMEM allocation: (lane, column), written by tcgen05 MMAs only
  // Physical placement (SMEM): `data` points at the allocation's first byte inside its CTA's
  // one byte array. Row-major unswizzled allocations are placed element after element, which
  // is what every fast path below assumes; a swizzled or tiled one is `mapped`: element e lives
  // at data + byte_of(e), the address TMA and wgmma use (see machine.hpp's physical SMEM note).
  bool mapped = false;
  int swizzle = 0;              // bytes
  std::uint32_t address = 0;    // the allocation's shared-window address (smem_base + offset)
  std::int64_t tile_r = 0, tile_c = 0;  // tiling of the two innermost dimensions (0: none)
  std::int64_t byte_of(std::int64_t elem) const {
    const std::int64_t eb = ir::dtype_bits(dtype) / 8;
    if (!mapped) return elem * eb;
    // (.., R/TR, C/TC, TR, TC), as ir::wgmma::operand_layout::offset reads it
    const std::int64_t off = ir::tiled_element(elem, shape.back(), tile_r, tile_c) * eb;
    return static_cast<std::int64_t>(ir::swizzle_address(address + static_cast<std::uint32_t>(off), swizzle)) - address;
  }
};

// A short list of extents on the stack: regions are built for every op, so no heap.
struct extents {
  std::array<std::int64_t, 8> v{};
  int n = 0;
  void push_back(std::int64_t x) { v[static_cast<std::size_t>(n++)] = x; }
  std::size_t size() const { return static_cast<std::size_t>(n); }
  std::int64_t& operator[](std::size_t i) { return v[i]; }
  std::int64_t operator[](std::size_t i) const { return v[i]; }
  std::int64_t back() const { return v[static_cast<std::size_t>(n - 1)]; }
  std::int64_t const* begin() const { return v.data(); }
  std::int64_t const* end() const { return v.data() + n; }
};

// An N-d box inside a row-major array: `origin` and `box` in elements.
struct region {
  memory* mem = nullptr;
  extents origin, box;
  // A strided GMEM block's element strides (TMA elementStrides; the innermost is always 1, so
  // rows stay contiguous); empty: 1. The box counts the elements moved, not the footprint.
  extents step;
  // A windowed masked tile's end of rows (x.rows(lo, hi): hi); -1: the array's end.
  std::int64_t row_end = -1;
  std::int64_t elements() const { return std::accumulate(box.begin(), box.end(), std::int64_t{1}, std::multiplies<>()); }
  // The part of a GMEM block inside its array (a TMA box may overhang the end; every origin is
  // at most the extent, see view_of): per dimension, the elements whose coordinate is in range.
  region inside() const {
    region g = *this;
    for (std::size_t d = 0; d < box.size(); ++d) {
      const std::int64_t end = d == 0 && row_end >= 0 ? std::min(row_end, mem->shape[0]) : mem->shape[d];
      const std::int64_t avail = std::max<std::int64_t>(end - origin[d], 0);
      const std::int64_t st = step.size() > 0 ? step[d] : 1;
      g.box[d] = std::min(box[d], (avail + st - 1) / st);
    }
    return g;
  }
  // The same-shaped corner of an SMEM view for a GMEM box `g` cut by inside(): the view's trailing
  // dimensions are the block's (leading ones are indexed stages of extent 1).
  region leading(region const& g) const {
    region s = *this;
    const std::size_t lead = box.size() - g.box.size();
    for (std::size_t d = 0; d < g.box.size(); ++d) s.box[lead + d] = g.box[d];
    return s;
  }
  // Calls f(first element of the row (array offset), index of its first element in the box,
  // row length) for every innermost row of the box, in row-major order.
  template <class F>
  void rows(F&& f) const {
    // Stack arrays (ranks are at most 5, SMEM views up to 8 with their stage dimensions) and an
    // incrementally updated offset: this runs once per row of every copy.
    const int r = static_cast<int>(box.size());
    std::array<std::int64_t, 8> stride{}, idx{};
    stride[r - 1] = 1;
    for (int d = r - 2; d >= 0; --d) stride[d] = stride[d + 1] * mem->shape[d + 1];
    std::int64_t off = 0;
    for (int d = 0; d < r; ++d) off += origin[d] * stride[d];
    if (step.size() > 0)
      for (int d = 0; d < r - 1; ++d) stride[d] *= step[static_cast<std::size_t>(d)];
    const std::int64_t len = box[r - 1];
    const std::int64_t nrows = elements() / std::max<std::int64_t>(len, 1);
    for (std::int64_t row = 0; row < nrows; ++row) {
      f(off, row * len, len);
      for (int d = r - 2; d >= 0; --d) {
        off += stride[d];
        if (++idx[d] < box[d]) break;
        off -= stride[d] * box[d];
        idx[d] = 0;
      }
    }
  }
};

// ---- tiles -----------------------------------------------------------------------------------
// Floating tiles compute in f32 (f16/bf16 rounded back after every op, which is exact
// for + - * / since f32 carries more than 2p+2 bits); integer tiles in 64 bits, wrapped.
// Buffers are uninitialised and recycled through the machine's pool: a tile is written in
// full before it is read, and interpretation must not pay for zeroing or allocating it.
struct tile_buf {
  bool fp = true;
  std::size_t n = 0, cap = 0;
  std::unique_ptr<float[]> fbuf;
  std::unique_ptr<std::int64_t[]> ibuf;
  float* f = nullptr;
  std::int64_t* i = nullptr;
  std::size_t size() const { return n; }
};

inline float round_to(ir::DType t, float v) {
  switch (t) {
    case ir::DType::f16: return f16_to_f32(f32_to_f16(v));
    case ir::DType::bf16: return bf16_to_f32(f32_to_bf16(v));
    case ir::DType::e4m3: return ir::round_e4m3(v);
    case ir::DType::e5m2: return ir::round_e5m2(v);
    default: return v;
  }
}
inline std::int64_t wrap_to(ir::DType t, std::int64_t v) {
  switch (t) {
    case ir::DType::i32: return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
    case ir::DType::u32: return static_cast<std::uint32_t>(v);
    case ir::DType::i8: return static_cast<std::int8_t>(static_cast<std::uint8_t>(v));
    case ir::DType::u8: case ir::DType::e2m1x2: case ir::DType::ue4m3: case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1: return static_cast<std::uint8_t>(v);
    case ir::DType::pred: return v != 0;  // a mask (register-only, see ir::DType)
    default: return v;
  }
}

// Read `n` elements starting at `off` of `m` into the tile at `at`.
void read_elems(memory const& m, std::int64_t off, std::int64_t n, tile_buf& t, std::int64_t at);

void write_elems(memory& m, std::int64_t off, std::int64_t n, tile_buf const& t, std::int64_t at);

// ---- barriers (the PTX mbarrier object) ------------------------------------------------------
struct barrier_state {
  int alloc = 0;            // allocation id
  std::int64_t flat = 0;    // element index within the allocation
  int expected = 1;         // arrivals per phase
  int pending = 1;          // arrivals still missing in the current phase
  std::int64_t tx = 0;      // pending transaction bytes (transiently negative is allowed)
  std::uint32_t completed = 0;
  vclock releases;          // joined into the current phase
  vclock last[2];           // clocks of the last two completions (index: completion % 2)
  int comp = 0;             // its vector-clock component
};

// ---- async operations --------------------------------------------------------------------------
// One operation in flight on an async engine (see "How an async engine plugs in" above): the
// common part (issuer, clock at issue, trace and scheduling fields) and each engine's operands.
struct async_op {
  // Which engine completes it, and in which stage: TMA load; TMA store reading SMEM, then writing GMEM.
  // wgmma: one wgmma statement's instructions, reading A/B from SMEM and accumulating.
  // tc_mma: one tcgen05_mma statement's instructions into TMEM; tc_commit: a tcgen05 commit's
  // arrival, once every earlier tcgen05 op of its issuer has completed.
  // clc: a try_cancel, writing its response into dst[0] and completing 16 bytes on bar_elem.
  // tc_cp: a tcgen05_copy_scales, 512 bytes from SMEM into TMEM, in its issuer's tcgen05 stream.
  enum class kind : std::uint8_t { load, store_read, store_write, mma, tc_mma, tc_commit, clc, tc_cp } what;
  int agent = 0;  // issuer
  ir::StmtId stmt = ir::none;
  vclock vc;      // the issuer's clock at issue
  std::shared_ptr<const vclock> fence_vc;  // the issuer's clock at its last commit_smem before the issue (none: null)
  std::uint64_t issued = 0;
  std::uint64_t priority = 0;  // pct
  // load: src (GMEM), dst per destination CTA, barrier per destination CTA (element index)
  region src;
  std::vector<region> dst;
  std::vector<int> dst_cta;
  std::int64_t bar_elem = -1;
  std::int64_t bytes = 0;
  bool pair_leader = false;  // .cta_group::2: each destination's bytes complete on its pair leader's barrier
  // store: group index; staging for the bytes read from SMEM
  std::int64_t group = 0;
  std::shared_ptr<tile_buf> staged;  // wgmma: the A registers as they were at issue
  // A TMA store: the bytes it read from SMEM, until it writes GMEM. Bytes, not values: a copy
  // moves bits (a NaN's payload too), where a value would be rounded through the dtype.
  std::shared_ptr<std::vector<std::byte>> staged_bytes;
  region gdst;
  // mma: its plan, the descriptors built at issue (A: m_blocks x k_steps, row-major; B: k_steps),
  // the operand views (for the shadows), A from registers (read at issue) and the accumulator.
  ir::wgmma::plan const* plan = nullptr;
  std::vector<std::uint64_t> a_desc, b_desc;
  region a_view, b_view, acc;
  std::int64_t acc_alloc = -1;
  // tc_mma: its plan, the instruction descriptor and D's TMEM address (group: the MMA's
  // sequence number in its issuer's tcgen05 stream); tc_commit: group = MMAs it covers, the
  // barrier at bar_elem of CTA bar_cta.
  ir::tcgen05::plan const* tc_plan = nullptr;
  std::uint32_t idesc = 0, d_addr = 0;
  // A from TMEM (the [a_tmem] form): per instruction, A's TMEM address (lane 0, its first column);
  // empty when A is in SMEM (a_desc then). a_alloc: the TMEM allocation a_view is.
  std::vector<std::uint32_t> a_taddr;
  std::int64_t a_alloc = -1;
  // Block-scaled: the scales' TMEM addresses and views, and the descriptor of each instruction
  // (its scale IDs differ). tc_cp: b_desc[0] its SMEM descriptor, sfa_addr the destination
  // address, sfa_view the destination, a_view the source.
  std::uint32_t sfa_addr = 0, sfb_addr = 0;
  region sfa_view, sfb_view;
  std::int64_t sfa_alloc = -1, sfb_alloc = -1;
  std::vector<std::uint32_t> idescs;
  bool accumulate = false;
  int bar_cta = -1;
  // cta_group::2: the odd CTA of the pair, whose SMEM holds the second halves of A and B and
  // whose TMEM receives D's rows 128-255 (the views there), and which a commit also arrives in.
  int pair_cta = -1;
  region a_view2, b_view2, acc2;
  std::uint64_t id = 0;
};

struct group_state {
  int reads_pending = 0, writes_pending = 0;
  int stores = 0;                 // issued into this group
  ir::StmtId last = ir::none;     // the last of them, for messages
};

struct agent_state {
  // Move-only (its accumulators own their shadows): agents_ relocates by moving.
  agent_state() = default;
  agent_state(agent_state&&) = default;
  agent_state& operator=(agent_state&&) = default;
  int cta = 0;        // within the cluster
  int wg = 0;
  int pc = 0;
  bool done = false;
  std::vector<std::int64_t> vars, hi;
  vclock vc;
  int comp = 0, store_r_comp = 0, store_w_comp = 0;
  std::vector<std::uint32_t> observed;      // per barrier element of its CTA
  std::vector<std::uint32_t> fences;        // own clock values at commit_smem
  std::shared_ptr<const vclock> last_fence;  // its clock at the latest commit_smem: what that fence is ordered after
  std::deque<group_state> groups;           // committed groups from groups_base on (dropped once waited for and done)
  std::int64_t groups_base = 0;             // index of groups.front()
  std::int64_t committed = 0;
  group_state open;                         // stores issued since the last commit
  std::int64_t waited_reads = 0;            // groups whose reads this agent has waited for
  ir::StmtId last_store = ir::none;         // the last TMA store it issued
  std::uint64_t began = 0;                  // when its current op started (for the trace)
  std::uint64_t priority = 0;               // pct
  // wgmma: its accumulators (one memory per accumulator allocation, empty for the others), the
  // clock component its wgmma groups complete on (value = groups known complete), and groups.
  std::vector<memory> acc;
  std::vector<std::int64_t> acc_k;          // per accumulator: K accumulated since last written generically
  int mma_comp = -1;
  std::int64_t mma_committed = 0, mma_waited = 0;
  int mma_open = 0;                         // wgmmas issued since the last wgmma_commit
  ir::StmtId last_mma = ir::none;
  // tcgen05: MMAs issued (the mma_comp value of the newest), and how many a commit covers.
  std::int64_t tc_issued = 0, tc_committed = 0;
  // The stream positions of its tcgen05_copy_scales (ascending): named as copies, not MMAs.
  std::vector<std::int64_t> tc_copies;
  int tc_peer = -1;  // the pair's other CTA once it issued a pair MMA (whose TMEM those write too)
  // named_barrier_sync takes two steps: the arrival, then (once its phase completes) the
  // acquire. Between them: the barrier's id (-1: not in a sync), the phase it waits for and, once
  // that phase completes, the clock it releases.
  int nb_id = -1;
  std::uint32_t nb_phase = 0;
  vclock nb_join;
};

// A CTA's named barrier (bar.sync / bar.arrive id): the phase open now, counted in threads (a
// warpgroup arrives with 128), the count its first arrival named (0: nobody has arrived), the
// clocks of everyone who arrived (what each bar.sync of the phase acquires), and who arrived (for
// the deadlock and mismatch reports). Hardware barriers hold no phase number; `completed`
// tells a waiter that its phase is over.
struct named_barrier_state {
  std::int64_t arrived = 0, expected = 0;
  std::uint32_t completed = 0;
  vclock releases;
  std::vector<std::pair<int, ir::StmtId>> arrivers;  // agent index, op
};

// A grid-wide semaphore counter (its value lives in the GMEM array): the clocks of everyone who
// signalled it, per cluster, which a wait acquires. Its counters are only ever changed by atomic
// read-modify-writes, so every earlier signal heads a release sequence the wait reads from.
struct semaphore_state {
  foreign_clocks released;
};

struct cta_state {
  std::array<std::int64_t, 3> pid{}, cidx{};
  int linear = 0;
  std::vector<memory> smem;             // per allocation: SMEM, and TMEM (own storage); empty for others
  // Per TMEM column where an accumulator starts (an allocation's first, or stage s's of a ring:
  // machine::tmem_k_at): K its D has summed since an MMA overwrote it.
  std::vector<std::int64_t> tmem_k;
  // Per TMEM allocation: the tmem_dealloc that freed it and its agent (none / -1: live), and
  // the newest MMA into it of each issuing agent (agent index, its sequence number).
  std::vector<ir::StmtId> tmem_freed_by;
  std::vector<int> tmem_freer;
  std::vector<std::vector<std::pair<int, std::int64_t>>> tmem_mmas;
  std::vector<std::byte> bytes;         // its shared memory, every allocation at ir::smem_offsets
  std::vector<barrier_state> barriers;  // all barrier elements, allocations in order
  std::array<named_barrier_state, ir::max_named_barriers> named;
  // The op whose clc_canceled query first read a failed response (none: not yet): a try_cancel
  // after it is undefined.
  ir::StmtId clc_failed_at = ir::none;
};

class machine {
 public:
  machine(ir::Kernel const& k, std::vector<host_tensor>& gmem, options const& o);  // machine.cpp
  void run();                                          // every cluster in turn (scheduler.cpp)
  result take(std::vector<host_tensor> buffers);       // machine.cpp

 private:
  // ---- scheduler.cpp: clusters and the scheduler loop -----------------------------------------
  void run_cluster(std::array<std::int64_t, 3> origin);
  int group_size(std::vector<int> const& axes) const;
  void schedule();
  bool blocked(agent_state& a);
  [[noreturn]] void deadlock();
  void enqueue(async_op op);
  void complete(std::size_t index);
  // ---- stepping.cpp: a schedule driven from outside (options::choose) -------------------------
  step_point step_point_of(std::vector<int> const& runnable);
  std::string agent_label(agent_state const& a) const;
  std::string cta_prefix(int cta) const;

  // ---- statements.cpp: agents ---------------------------------------------------------------
  std::int64_t eval(agent_state const& a, ir::ExprId id);
  void settle(agent_state& a);
  ir::Stmt const& op_at(agent_state const& a) const { return k_.stmts[prog_[a.pc].stmt]; }
  void step(int index);
  void finish(agent_state& a);

  // ---- mbarrier.cpp: barriers (PTX mbarrier semantics) --------------------------------------
  barrier_state& barrier_of(agent_state const& a, ir::RefId rid);
  void arrive(barrier_state& b, vclock const& vc, agent_state const& who_);
  void trace_barrier(barrier_state const& b, std::string label);
  void try_complete(barrier_state& b, int agent_for_msg);
  int cta_of_barrier(barrier_state const& b) const;
  std::vector<int> peers(int cta, std::vector<int> const& axes) const;

  // ---- memory.cpp: views, accesses and their checks -----------------------------------------
  // `vc` orders an access; `stamp` is what it leaves behind.
  // How a GMEM block is used: generic loads and stores tile their array exactly (the verifier's
  // rule); a TMA box may overhang the end, and a store's may lie wholly outside (writing nothing).
  enum class gmem_use : std::uint8_t { generic, tma_load, tma_store };
  region view_of(agent_state const& a, ir::RefId rid, int cta, gmem_use use = gmem_use::generic);
  bool hb(epoch e, vclock const& vc) const;
  std::uint32_t cluster_id() const { return static_cast<std::uint32_t>(clusters_run_ % max_clusters); }
  static bool is_poison(epoch e) { return e.clock == 0 && e.comp() == poison; }
  static bool same(epoch a, epoch b) { return a.clock == b.clock && a.who == b.who; }
  // What an agent's own generic access leaves behind.
  epoch own_stamp(agent_state const& a) const {
    return epoch::make(a.vc.c[a.comp], static_cast<std::uint32_t>(a.comp), cluster_id());
  }
  void access(region const& g, bool write, vclock const& vc, epoch stamp, int agent_for_msg, const char* what);
  // A reducing store's access (ir::Reduce): a write that does not race other reductions.
  void reduce_access(region const& g, vclock const& vc, epoch stamp, int agent_for_msg, const char* what);
  epoch next_reduction(epoch w, vclock const& vc, epoch stamp);
  static bool is_set(epoch e) { return e.comp() == shared_reads || e.comp() == reductions; }
  // Combines `t` into g's elements (a reducing store's arithmetic: f32 adds, wrapping integer
  // adds, min, max), no checks.
  void reduce_region(region const& g, tile_buf const& t, ir::Reduce op);
  void reduce_bytes(region const& g, std::vector<std::byte> const& bytes, ir::Reduce op);
  void reduce_generic(region const& g, tile_buf const& t, bool masked, ir::Reduce op, vclock const& vc, epoch stamp, int agent);
  static void fit(region const& g);
  static bool uniform(epoch const* e, std::int64_t len);
  // `now` names the access in a race message (default: "write" or "read").
  void judge_write_epoch(memory const& m, std::int64_t elem, epoch w, bool write, vclock const& vc, int agent, const char* what,
                         const char* now = nullptr);
  epoch culprit(epoch r, vclock const& vc) const;
  epoch next_read(epoch r, vclock const& vc, epoch stamp);
  // `what` names the accessor; null means the agent itself (named only when a message is built).
  std::string accessor(int agent, const char* what) const { return what ? std::string(what) : who(agents_[agent]); }
  void poison_read(memory const& m, std::int64_t elem, int agent, const char* what);
  void race(memory const& m, std::int64_t elem, epoch prev, const char* now, int agent, const char* what, bool prev_is_write,
            bool after_read_only_wait = false, const char* prev_kind = nullptr);
  std::vector<std::int64_t> unflatten(memory const& m, std::int64_t elem) const;
  std::string comp_name(epoch e) const;
  void check_fenced(memory const& m, std::int64_t elem, epoch w, bool copy_writes, vclock const& vc, int agent, const char* what);
  tile_buf acquire(std::size_t n, bool fp);
  void release(tile_buf&& t);
  tile_buf read_region(region const& g, vclock const& vc, epoch stamp, int agent, const char* what);
  void copy_region(region const& from, region const& to);
  void write_region(region const& g, tile_buf const& t);
  void fill_zero(region const& g);
  void fill_nan(region const& g);  // f32, f16, bf16 only (the verifier's rule for a NaN fill)
  // A region's bytes in row-major order, and back: what a copy moves, bit for bit.
  std::vector<std::byte> region_bytes(region const& g) const;
  void write_bytes(region const& g, std::vector<std::byte> const& bytes);
  // A masked GMEM tile (ir::Ref::fill): the elements inside the array are read (and checked),
  // the rest are the fill; a store writes (and checks) only the elements inside.
  tile_buf read_masked(region const& g, double fill, vclock const& vc, epoch stamp, int agent);
  void write_masked(region const& g, tile_buf const& t, vclock const& vc, epoch stamp, int agent);

  // ---- engines/tma.cpp: the TMA engine ------------------------------------------------------
  void issue_load(agent_state& a, ir::Stmt const& s);
  void issue_store(agent_state& a, ir::Stmt const& s);
  void tma_commit_group(agent_state& a);
  void tma_wait_group(agent_state& a, ir::Stmt const& s);
  bool groups_done(agent_state const& a, std::int64_t n, bool read_only) const;
  void tma_complete(async_op& op);
  void tma_check_stores_at_exit(agent_state const& a);
  void check_loads_at_exit();
  group_state& group_of(agent_state& a, std::int64_t g);
  epoch epoch_of_load(async_op const& op) const;
  void trace_async(async_op const& op, int engine, const char* what);

  // ---- engines/clc.cpp: cluster launch control ---------------------------------------------
  void issue_try_cancel(agent_state& a, ir::Stmt const& s);
  std::int64_t clc_candidate() const;
  void clc_complete(async_op& op);
  std::int64_t clc_read(agent_state const& a, ir::Expr const& e, std::int64_t elem);

  // ---- engines/wgmma.cpp: the tensor-core engine ------------------------------------------
  void issue_wgmma(agent_state& a, ir::Stmt const& s);
  void wgmma_commit(agent_state& a);
  void wgmma_wait(agent_state& a, ir::Stmt const& s);
  bool mma_groups_done(agent_state const& a, std::int64_t n) const;
  void wgmma_complete(async_op& op);
  void wgmma_check_at_exit(agent_state const& a);
  std::uint32_t view_address(region const& g) const;
  void trace_mma(async_op const& op);

  // ---- engines/tcgen05.cpp: the Blackwell tensor-core engine ----------------------------------
  void issue_tcgen05_mma(agent_state& a, ir::Stmt const& s);
  void issue_tcgen05_cp(agent_state& a, ir::Stmt const& s);
  void tcgen05_cp_complete(async_op& op);
  std::byte* tmem_byte(region const& view, int alloc, std::uint32_t taddr, std::int64_t lane, std::int64_t byte);
  void tcgen05_commit(agent_state& a, ir::RefId bar);
  void tcgen05_complete(async_op& op);
  void tcgen05_check_at_exit(agent_state const& a);
  void note_tmem_read(agent_state const& a, region const& g, ir::RefId rid);
  // The TMEM column where stage `stage` of allocation `alloc` starts (its first column for a
  // (lanes, columns) allocation, stage 0), and the stage a view of it lies in.
  std::int64_t tmem_stage_column(int alloc, std::int64_t stage) const;
  std::int64_t tmem_stage_of(int alloc, region const& g) const;
  // The K slot (cta_state::tmem_k) of the accumulator a view of TMEM allocation `alloc` is in.
  std::int64_t& tmem_k_at(int cta, region const& g, int alloc);
  int pair_peer(agent_state const& a, const char* op);
  // The CTA of this cluster at cluster index `cidx` (-1: none).
  int cta_at(std::array<std::int64_t, 3> const& cidx) const;
  // The even CTA of `cta`'s pair (cluster index along axis 0 with its low bit cleared).
  int pair_leader_of(int cta) const;
  // The barrier a load's bytes into destination d complete on.
  barrier_state& load_barrier(async_op const& op, std::size_t d);
  void tmem_dealloc(agent_state& a, ir::Stmt const& s);
  void tmem_live(agent_state const& a, ir::RefId rid, const char* use);  // use after dealloc is reported

  // ---- named_barrier.cpp: bar.sync / bar.arrive -----------------------------------------------
  // Returns true when the op is done (an arrival, or a sync whose phase has completed); false
  // when a sync has arrived and waits (the agent stays on the op).
  bool named_barrier(agent_state& a, ir::Stmt const& s);
  bool named_barrier_blocked(agent_state const& a) const;
  std::string named_barrier_deadlock(agent_state const& a) const;
  std::string named_barrier_label(agent_state const& a, ir::Stmt const& s);

  // ---- semaphore.cpp: grid-wide semaphores ----------------------------------------------------
  std::int32_t& semaphore_counter(agent_state const& a, ir::Stmt const& s, std::int64_t* elem = nullptr);
  std::int64_t semaphore_value(agent_state const& a, ir::Stmt const& s);
  void semaphore_signal(agent_state& a, ir::Stmt const& s);
  bool semaphore_blocked(agent_state& a, ir::Stmt const& s);
  void semaphore_take(agent_state& a, ir::Stmt const& s);
  std::string semaphore_deadlock(agent_state& a, ir::Stmt const& s);
  // release: the agent's clock into the counter's; acquire: every release the counter has seen into the agent's
  void semaphore_release(agent_state& a, std::pair<int, std::int64_t> key);
  void semaphore_acquire(agent_state& a, std::pair<int, std::int64_t> key);
  // atomic_fetch (ops/atomic.hpp), and fetched(slot): the slot's i32 at `elem` of allocation e.value
  void atomic_fetch(agent_state& a, ir::Stmt const& s);
  std::int64_t fetched_read(agent_state const& a, ir::Expr const& e, std::int64_t elem);
  bool foreign_hb(epoch e, vclock const& vc) const;
  std::map<std::pair<int, std::int64_t>, semaphore_state> semaphores_;  // (parameter, element)
  bool has_semaphores_ = false;

  // ---- tiles.cpp: tile math and generic stores ----------------------------------------------
  tile_buf value(agent_state& a, ir::ValueId id);
  bool streamable(ir::ValueId id) const;
  void postorder(ir::ValueId id, std::vector<ir::ValueId>& out) const;
  void store_streaming(agent_state& a, ir::Stmt const& s);
  void do_store(agent_state& a, ir::Stmt const& s);
  void note_acc_read(agent_state const& a, ir::RefId rid);

  // ---- reports.cpp: diagnostics and the op lane ---------------------------------------------
  std::string who(agent_state const& a) const;
  // "; written at file:line" for an op the user wrote (empty when the IR has no location).
  std::string where(ir::StmtId id) const;
  std::string bar_name(barrier_state const& b) const;
  [[noreturn]] void report(check c, int op, agent_state const& a, std::string const& text) { report(c, op, a.comp, text); }
  [[noreturn]] void report(check c, int op, int agent, std::string const& text);
  void trace_op(agent_state const& a, ir::StmtId id);
  std::string op_label(agent_state const& a, ir::StmtId id);

  ir::Kernel const& k_;
  options o_;
  std::vector<instr> prog_;
  rng rng_;
  std::vector<memory> gmem_;
  std::vector<std::int64_t> bar_base_;
  std::vector<std::int64_t> smem_grain_;  // per allocation: the shadow grain its next cluster starts with
  std::int64_t bar_count_ = 0;
  std::map<int, std::vector<int>> arrivers_;
  std::vector<cta_state> ctas_;
  std::vector<agent_state> agents_;
  std::vector<async_op> pending_;  // every engine's operations in flight, in issue order
  std::vector<std::uint64_t> change_points_;
  std::uint64_t time_ = 0, cluster_steps_ = 0, pct_length_ = 64, next_async_ = 0;
  std::uint64_t clusters_run_ = 0, control_steps_ = 0;
  // Cluster launch control: the running cluster's index in launch order (x fastest), and the
  // clusters a try_cancel canceled, which never run.
  std::int64_t cluster_index_ = 0;
  std::set<std::int64_t> clc_canceled_;
  int cur_op_ = -1;
  std::vector<diagnostic> diags_;
  trace tr_;
  std::vector<tile_buf> spare_;
  std::vector<vclock> shared_;  // read sets
  std::vector<std::vector<std::byte>> smem_pool_;
  std::vector<std::int64_t> rows_scratch_;
  std::vector<std::int64_t> smem_offset_;           // ir::smem_offsets
  std::vector<std::unique_ptr<ir::wgmma::plan>> plans_;  // per statement: the wgmma plan (null for others)
  bool has_wgmma_ = false;
  std::vector<std::unique_ptr<ir::tcgen05::plan>> tc_plans_;  // per statement: the tcgen05_mma plan (null for others)
  std::vector<std::int64_t> tmem_col_;              // per allocation: its first TMEM column (-1: not TMEM)
  bool has_tcgen05_ = false;
  vclock const* issuer_fence_ = nullptr;       // the completing op's fence_vc, for check_fenced
  int multicast_into_ = -1;  // while a multicast load lands in another CTA than its issuer's: that CTA
  std::int64_t completing_wgmma_group_ = -1;  // while a wgmma lands (its accesses): its group, for race()'s hint
  int mma_base_ = -1;                               // the first wgmma/tcgen05 clock component (one per agent), -1: none
  std::vector<char> cta_scope_;                     // per allocation: arrivals at .cta scope (ir::cluster_barrier_scope)
  vclock async_part(vclock const& vc) const;        // what a .cta arrival carries to a peer CTA (mbarrier.cpp)
  std::int64_t mma_k_ = 0;                          // the largest K an accumulator held when read
  // Per GMEM parameter and element: the K of every accumulator reduced into it (split-K's
  // partials add up to the whole K, which is what the output's MMA tolerance must count).
  std::vector<std::vector<std::int64_t>> reduced_k_;
  std::int64_t acc_k_of(agent_state const& a, ir::ValueId v) const;  // the largest K an accumulator or TMEM operand of v holds
  std::int64_t promoted_k(agent_state const& a, int dst, ir::ValueId v) const;  // the K a store of v into accumulator dst leaves there
  void note_reduced_k(region const& g, std::int64_t k);
  float max_exp_arg_ = 0;                           // the largest |x| exp was applied to (fast mode's bound)
  void note_exp_args(const float* x, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) max_exp_arg_ = std::fmax(max_exp_arg_, std::fabs(x[i]));
  }
  ir::DType mma_input_ = ir::DType::bf16;
  ir::DType mma_accumulator_ = ir::DType::f32;
  std::vector<float> mma_a_, mma_b_;                // one instruction's operands, gathered
  std::vector<double> sfa_, sfb_;                   // a block-scaled instruction's scales, decoded
};

}  // namespace stagecraft::interp::detail
