// The interpreter's machine: agents (the warpgroups of one cluster's CTAs), per-CTA async
// engines (TMA loads, TMA stores with bulk groups), the mbarrier model, the scheduler and the
// checks.
//
// Happens-before is tracked with vector clocks whose components are not only the agents but
// also every barrier element (component value = completions observed) and, per agent, the
// read and write sides of its bulk-group stream (value = groups known complete). An async copy
// is not a thread of its own: the bytes a TMA load writes are stamped "barrier b, completion
// p+1", the SMEM a TMA store reads "agent a's store reads, group g+1". Whoever observes that
// completion (directly or transitively) is ordered after the access. That keeps clocks a few
// dozen entries long however many copies run.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "program.hpp"
#include "stagecraft/interp/interp.hpp"

namespace stagecraft::interp {

const char* policy_name(policy p) {
  switch (p) {
    case policy::eager: return "eager";
    case policy::lazy: return "lazy";
    case policy::random: return "random";
    case policy::pct: return "pct";
  }
  return "?";
}

const char* check_name(check c) {
  switch (c) {
    case check::deadlock: return "deadlock";
    case check::missed_phase: return "missed-phase";
    case check::tx_underflow: return "tx-underflow";
    case check::over_arrival: return "over-arrival";
    case check::index_out_of_range: return "index-out-of-range";
    case check::data_race: return "data-race";
    case check::missing_fence: return "missing-fence";
    case check::store_pending_at_exit: return "store-pending-at-exit";
    case check::load_pending_at_exit: return "load-pending-at-exit";
    case check::poison_read: return "poison-read";
    case check::step_limit: return "step-limit";
    case check::unsupported: return "unsupported";
  }
  return "?";
}

namespace {
// The shadow grain a memory starts with (see memory::grain): the gcd of the innermost extents
// of the views the IR names. GMEM blocks are as wide as their shape; an SMEM view spans whole
// rows unless it indexes every dimension (one element). Accesses the refs do not show (the
// share of a row a CTA multicasts) refine the cells when they happen (memory::refine).
std::int64_t initial_grain(ir::Kernel const& k, ir::RefBase base, int id, std::vector<std::int64_t> const& shape) {
  std::int64_t g = shape.back();
  for (auto const& r : k.refs) {
    if (r.base != base || r.id != id) continue;
    if (base == ir::RefBase::param && !r.shape.empty()) g = std::gcd(g, r.shape.back());
    if (base == ir::RefBase::alloc && r.index.size() >= shape.size()) g = 1;
  }
  return std::max<std::int64_t>(g, 1);
}

// GMEM parameters the kernel reads (TMA load sources, generic loads).
std::vector<int> read_params(ir::Kernel const& k) {
  std::vector<int> out;
  auto mark = [&](ir::RefId r) {
    if (r >= 0 && k.refs[r].base == ir::RefBase::param && std::find(out.begin(), out.end(), k.refs[r].id) == out.end())
      out.push_back(k.refs[r].id);
  };
  for (auto const& s : k.stmts)
    if (s.op == ir::StmtOp::copy_gmem_to_smem) mark(s.refs[0]);
  for (auto const& v : k.values)
    if (v.op == ir::ValueOp::load) mark(v.ref);
  return out;
}
}  // namespace

std::vector<int> written_params(ir::Kernel const& k) {
  std::vector<bool> w(k.params.size(), false);
  auto mark = [&](ir::RefId r) {
    if (r >= 0 && k.refs[r].base == ir::RefBase::param) w[k.refs[r].id] = true;
  };
  for (auto const& s : k.stmts) {
    if (s.op == ir::StmtOp::copy_smem_to_gmem) mark(s.refs[1]);
    if (s.op == ir::StmtOp::store) mark(s.refs[0]);
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < w.size(); ++i)
    if (w[i]) out.push_back(static_cast<int>(i));
  return out;
}

namespace {

using detail::code;
using detail::instr;

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
struct vclock {
  std::vector<std::uint32_t> c;
  void join(vclock const& o) {
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = std::max(c[i], o.c[i]);
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
constexpr std::uint32_t max_components = 0xffe;   // the last two values mark poison and read sets
constexpr std::uint32_t poison = 0xfff;            // comp of a never-written element
constexpr std::uint32_t shared_reads = 0xffe;      // comp of a read set: clock - 1 indexes machine::shared_
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
  std::int64_t elements() const { return std::accumulate(box.begin(), box.end(), std::int64_t{1}, std::multiplies<>()); }
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

float round_to(ir::DType t, float v) {
  switch (t) {
    case ir::DType::f16: return f16_to_f32(f32_to_f16(v));
    case ir::DType::bf16: return bf16_to_f32(f32_to_bf16(v));
    default: return v;
  }
}
std::int64_t wrap_to(ir::DType t, std::int64_t v) {
  switch (t) {
    case ir::DType::i32: return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
    case ir::DType::u32: return static_cast<std::uint32_t>(v);
    case ir::DType::i8: return static_cast<std::int8_t>(static_cast<std::uint8_t>(v));
    default: return v;
  }
}

// Read `n` elements starting at `off` of `m` into the tile at `at`.
void read_elems(memory const& m, std::int64_t off, std::int64_t n, tile_buf& t, std::int64_t at) {
  auto const* p = m.data;
  switch (m.dtype) {
    case ir::DType::f32: std::memcpy(t.f + at, p + off * 4, static_cast<std::size_t>(n) * 4); return;
    case ir::DType::f16: {
      auto const* h = reinterpret_cast<std::uint16_t const*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) t.f[at + k] = f16_to_f32(h[k]);
      return;
    }
    case ir::DType::bf16: {
      auto const* h = reinterpret_cast<std::uint16_t const*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) t.f[at + k] = bf16_to_f32(h[k]);
      return;
    }
    case ir::DType::i32: {
      auto const* v = reinterpret_cast<std::int32_t const*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) t.i[at + k] = v[k];
      return;
    }
    case ir::DType::u32: {
      auto const* v = reinterpret_cast<std::uint32_t const*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) t.i[at + k] = v[k];
      return;
    }
    case ir::DType::i8: {
      auto const* v = reinterpret_cast<std::int8_t const*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) t.i[at + k] = v[k];
      return;
    }
  }
}

void write_elems(memory& m, std::int64_t off, std::int64_t n, tile_buf const& t, std::int64_t at) {
  auto* p = m.data;
  switch (m.dtype) {
    case ir::DType::f32: std::memcpy(p + off * 4, t.f + at, static_cast<std::size_t>(n) * 4); return;
    case ir::DType::f16: {
      auto* h = reinterpret_cast<std::uint16_t*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) h[k] = f32_to_f16(t.f[at + k]);
      return;
    }
    case ir::DType::bf16: {
      auto* h = reinterpret_cast<std::uint16_t*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) h[k] = f32_to_bf16(t.f[at + k]);
      return;
    }
    case ir::DType::i32: {
      auto* v = reinterpret_cast<std::int32_t*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) v[k] = static_cast<std::int32_t>(wrap_to(ir::DType::i32, t.i[at + k]));
      return;
    }
    case ir::DType::u32: {
      auto* v = reinterpret_cast<std::uint32_t*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) v[k] = static_cast<std::uint32_t>(t.i[at + k]);
      return;
    }
    case ir::DType::i8: {
      auto* v = reinterpret_cast<std::int8_t*>(p) + off;
      for (std::int64_t k = 0; k < n; ++k) v[k] = static_cast<std::int8_t>(wrap_to(ir::DType::i8, t.i[at + k]));
      return;
    }
  }
}

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
struct async_op {
  enum class kind : std::uint8_t { load, store_read, store_write } what;
  int agent = 0;  // issuer
  ir::StmtId stmt = ir::none;
  vclock vc;      // the issuer's clock at issue
  std::uint64_t issued = 0;
  std::uint64_t priority = 0;  // pct
  // load: src (GMEM), dst per destination CTA, barrier per destination CTA (element index)
  region src;
  std::vector<region> dst;
  std::vector<int> dst_cta;
  std::int64_t bar_elem = -1;
  std::int64_t bytes = 0;
  // store: group index; staging for the bytes read from SMEM
  std::int64_t group = 0;
  std::shared_ptr<tile_buf> staged;  // what the store read from SMEM, until it writes GMEM
  region gdst;
  std::uint64_t id = 0;
};

struct group_state {
  int reads_pending = 0, writes_pending = 0;
  int stores = 0;                 // issued into this group
  ir::StmtId last = ir::none;     // the last of them, for messages
};

struct agent_state {
  int cta = 0;        // within the cluster
  int wg = 0;
  int pc = 0;
  bool done = false;
  std::vector<std::int64_t> vars, hi;
  vclock vc;
  int comp = 0, store_r_comp = 0, store_w_comp = 0;
  std::vector<std::uint32_t> observed;      // per barrier element of its CTA
  std::vector<std::uint32_t> fences;        // own clock values at commit_smem
  std::deque<group_state> groups;           // committed, not yet known complete... all committed groups
  std::int64_t groups_base = 0;             // index of groups.front()
  std::int64_t committed = 0;
  group_state open;                         // stores issued since the last commit
  std::int64_t waited_reads = 0;            // groups whose reads this agent has waited for
  ir::StmtId last_store = ir::none;         // the last TMA store it issued
  std::uint64_t began = 0;                  // when its current op started (for the trace)
  std::uint64_t priority = 0;               // pct
};

struct cta_state {
  std::array<std::int64_t, 3> pid{}, cidx{};
  int linear = 0;
  std::vector<memory> smem;             // per allocation (empty memory for non-SMEM allocations)
  std::vector<barrier_state> barriers;  // all barrier elements, allocations in order
};

class machine {
 public:
  machine(ir::Kernel const& k, std::vector<host_tensor>& gmem, options const& o)
      : k_(k), o_(o), prog_(detail::flatten(k)), rng_{o.seed} {
    const auto written = written_params(k), read = read_params(k);
    for (std::size_t i = 0; i < k.params.size(); ++i) {
      memory m;
      m.name = k.params[i].name;
      m.dtype = k.params[i].dtype;
      m.shape = k.params[i].shape;
      m.data = gmem[i].bytes.data();
      auto has = [&](std::vector<int> const& v) { return std::find(v.begin(), v.end(), static_cast<int>(i)) != v.end(); };
      if (o_.checks && has(written)) {
        m.grain = initial_grain(k, ir::RefBase::param, static_cast<int>(i), m.shape);
        m.allocate_shadow(static_cast<std::size_t>(gmem[i].elements() / m.grain), has(read));
      }
      gmem_.push_back(std::move(m));
    }
    // Barrier elements and their offsets within a CTA.
    for (std::size_t a = 0; a < k.allocs.size(); ++a) {
      smem_grain_.push_back(k.allocs[a].kind == ir::AllocKind::smem ? initial_grain(k, ir::RefBase::alloc, static_cast<int>(a), k.allocs[a].shape) : 1);
      bar_base_.push_back(bar_count_);
      auto const& al = k.allocs[a];
      if (al.kind == ir::AllocKind::barrier || al.kind == ir::AllocKind::cluster_barrier)
        bar_count_ += std::accumulate(al.shape.begin(), al.shape.end(), std::int64_t{1}, std::multiplies<>());
    }
    // Ops that arrive on each allocation: named in deadlock reports.
    for (std::size_t s = 0; s < k.stmts.size(); ++s) {
      auto const& st = k.stmts[s];
      auto note = [&](ir::RefId r) { arrivers_[k.refs[r].id].push_back(static_cast<int>(s)); };
      if (st.op == ir::StmtOp::copy_gmem_to_smem) note(st.refs[2]);
      if (st.op == ir::StmtOp::barrier_arrive || st.op == ir::StmtOp::tcgen05_commit_arrive) note(st.refs[0]);
    }
    if (o_.trace) {
      tr_.kernel = k.name;
      tr_.sources = detail::op_sources(k);
      for (int w = 0; w < k.warpgroups; ++w) tr_.lanes.push_back(fmt::format("wg{}", w));
      tr_.lanes.push_back("tma load");
      tr_.lanes.push_back("tma store");
      tr_.lanes.push_back("barriers");
      tr_.ctas = static_cast<int>(k.grid[0] * k.grid[1] * k.grid[2]);
    }
  }

  void run() {
    const auto& g = k_.grid;
    const auto& c = k_.cluster;
    try {
      for (std::int64_t z = 0; z < g[2]; z += c[2])
        for (std::int64_t y = 0; y < g[1]; y += c[1])
          for (std::int64_t x = 0; x < g[0]; x += c[0]) run_cluster({x, y, z});
    } catch (stop_run const&) {
    }
  }

  result take(std::vector<host_tensor> buffers) {
    result r;
    r.buffers = std::move(buffers);
    r.diagnostics = std::move(diags_);
    r.timeline = std::move(tr_);
    r.steps = time_;
    return r;
  }

 private:
  // ---------------------------------------------------------------------------------------------
  // Cluster set-up and the scheduler loop.
  void run_cluster(std::array<std::int64_t, 3> origin) {
    ++clusters_run_;
    shared_.clear();  // read sets of earlier clusters are never looked up again (cluster mismatch)
    for (auto& cs : ctas_)  // recycle SMEM storage: large fresh allocations cost a page fault per 4 KiB
      for (std::size_t a = 0; a < cs.smem.size(); ++a) {
        auto& m = cs.smem[a];
        if (!m.owned.empty()) smem_pool_.push_back(std::move(m.owned));
        // Grains refined by this cluster's accesses: the next cluster starts with them.
        if (m.sw) smem_grain_[a] = std::gcd(smem_grain_[a], m.grain);
      }
    ctas_.clear();
    agents_.clear();
    pending_.clear();
    const auto& c = k_.cluster;
    for (std::int64_t z = 0; z < c[2]; ++z)
      for (std::int64_t y = 0; y < c[1]; ++y)
        for (std::int64_t x = 0; x < c[0]; ++x) {
          cta_state cs;
          cs.pid = {origin[0] + x, origin[1] + y, origin[2] + z};
          cs.cidx = {x, y, z};
          cs.linear = static_cast<int>(cs.pid[0] + k_.grid[0] * (cs.pid[1] + k_.grid[1] * cs.pid[2]));
          ctas_.push_back(std::move(cs));
        }
    const int nctas = static_cast<int>(ctas_.size());
    const int nagents = nctas * k_.warpgroups;
    // Components: agents, then barrier elements of every CTA, then each agent's store sides.
    const int ncomp = nagents + nctas * static_cast<int>(bar_count_) + 2 * nagents;
    if (o_.checks && ncomp >= static_cast<int>(max_components))
      report(check::unsupported, -1, -1,
             fmt::format("a cluster with {} warpgroups and {} barrier elements per CTA needs {} clock components; the race checker "
                         "handles {} (run with checks off)",
                         nagents, bar_count_, ncomp, max_components - 1));
    for (int ci = 0; ci < nctas; ++ci) {
      auto& cs = ctas_[ci];
      for (std::size_t a = 0; a < k_.allocs.size(); ++a) {
        auto const& al = k_.allocs[a];
        memory m;
        if (al.kind == ir::AllocKind::smem) {
          m.name = ir::alloc_name(k_, static_cast<int>(a));
          m.dtype = al.dtype;
          m.shape = al.shape;
          const auto n = std::accumulate(al.shape.begin(), al.shape.end(), std::int64_t{1}, std::multiplies<>());
          const auto bytes = static_cast<std::size_t>(n * ir::dtype_bits(al.dtype) / 8);
          // Recycled storage keeps the previous cluster's bytes: SMEM starts undefined (the poison
          // check reports reads of it) and clusters run in a fixed order, so runs stay
          // deterministic without clearing it.
          if (!smem_pool_.empty()) {
            m.owned = std::move(smem_pool_.back());
            smem_pool_.pop_back();
          }
          if (m.owned.size() != bytes) m.owned.assign(bytes, std::byte{0});
          m.data = m.owned.data();
          m.smem = true;
          if (o_.checks) {
            m.grain = smem_grain_[a];
            m.allocate_shadow(static_cast<std::size_t>(n / m.grain), true);
            std::fill_n(m.sw, n / m.grain, epoch::make(0, poison, 0));
          }
        }
        cs.smem.push_back(std::move(m));
        if (al.kind == ir::AllocKind::barrier || al.kind == ir::AllocKind::cluster_barrier) {
          const auto n = std::accumulate(al.shape.begin(), al.shape.end(), std::int64_t{1}, std::multiplies<>());
          const int per_phase = al.arrivals * (al.kind == ir::AllocKind::cluster_barrier ? group_size(al.collective_axes) : 1);
          for (std::int64_t e = 0; e < n; ++e) {
            barrier_state b;
            b.alloc = static_cast<int>(a);
            b.flat = e;
            b.expected = b.pending = per_phase;
            b.comp = nagents + ci * static_cast<int>(bar_count_) + static_cast<int>(cs.barriers.size());
            b.releases.c.assign(ncomp, 0);
            b.last[0].c.assign(ncomp, 0);
            b.last[1].c.assign(ncomp, 0);
            cs.barriers.push_back(std::move(b));
          }
        }
      }
    }
    for (int ci = 0; ci < nctas; ++ci)
      for (int w = 0; w < k_.warpgroups; ++w) {
        agent_state a;
        a.cta = ci;
        a.wg = w;
        a.vars.assign(k_.num_vars, 0);
        a.hi.assign(k_.num_vars, 0);
        a.comp = static_cast<int>(agents_.size());
        a.store_r_comp = nagents + nctas * static_cast<int>(bar_count_) + 2 * a.comp;
        a.store_w_comp = a.store_r_comp + 1;
        a.vc.c.assign(ncomp, 0);
        a.vc.c[a.comp] = 1;
        a.observed.assign(static_cast<std::size_t>(bar_count_), 0);
        a.priority = static_cast<std::uint64_t>(o_.pct_depth) + rng_.below(1u << 30);
        a.began = time_;  // clusters run one after another: its first op starts now
        agents_.push_back(std::move(a));
      }
    if (o_.schedule == policy::pct) {
      // Change points fall within the run's expected length and at most one fires per step, so
      // d - 1 beyond that length only piles up: clamped, a huge d costs neither memory nor time.
      // Latest first, so the next one pops off the back (erasing the front was quadratic).
      change_points_.clear();
      const auto points = std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max(o_.pct_depth, 1) - 1), pct_length_);
      for (std::uint64_t i = 0; i < points; ++i) change_points_.push_back(time_ + 1 + rng_.below(std::max<std::uint64_t>(pct_length_, 1)));
      std::sort(change_points_.begin(), change_points_.end(), std::greater<>());
    }
    const auto start = time_;
    schedule();
    cluster_steps_ = time_ - start;
    pct_length_ = std::max(pct_length_, cluster_steps_);
  }

  int group_size(std::vector<int> const& axes) const {
    int n = 1;
    for (int ax : axes) n *= static_cast<int>(k_.cluster[ax]);
    return n;
  }

  // Every warpgroup has exited: a TMA load still in flight writes SMEM (and completes a barrier)
  // of a CTA that is gone. Typically a producer that prefetched steps no consumer takes, and
  // exited without draining its ring.
  void check_loads_at_exit() {
    for (auto const& op : pending_) {
      if (op.what != async_op::kind::load) continue;
      auto const& b = ctas_[op.dst_cta[0]].barriers[static_cast<std::size_t>(op.bar_elem)];
      cur_op_ = op.stmt;
      report(check::load_pending_at_exit, op.stmt, op.agent,
             fmt::format("every warpgroup of CTA {} has exited, but the TMA load issued by {} into {} (completing {}) is still in "
                         "flight: nobody waits for it (a producer that loads steps no consumer takes should stop, or drain by "
                         "waiting for the consumers to release every stage, before it exits)",
                         ctas_[op.dst_cta[0]].linear, who(agents_[op.agent]), op.dst[0].mem->name, bar_name(b)));
    }
  }

  // One choice per step: an agent's next op, or an async completion.
  void schedule() {
    std::size_t rr = 0;  // round-robin cursor
    std::vector<int> runnable;
    for (;;) {
      if (time_ >= o_.max_steps)
        report(check::step_limit, -1, -1, fmt::format("the step budget of {} ran out: a loop that does not end?", o_.max_steps));
      runnable.clear();
      bool live = false;
      for (std::size_t i = 0; i < agents_.size(); ++i) {
        auto& a = agents_[i];
        if (a.done) continue;
        settle(a);
        if (a.done) continue;
        live = true;
        if (!blocked(a)) runnable.push_back(static_cast<int>(i));
      }
      if (!live && pending_.empty()) return;
      if (!live) check_loads_at_exit();
      if (runnable.empty() && pending_.empty()) deadlock();

      ++time_;
      switch (o_.schedule) {
        case policy::eager:
        case policy::lazy: {
          // eager: async work first; lazy: async work only when no agent can run.
          const bool async_now = o_.schedule == policy::eager ? !pending_.empty() : runnable.empty();
          if (async_now) {
            complete(0);
          } else {  // agents round-robin
            auto it = std::find_if(runnable.begin(), runnable.end(), [&](int i) { return static_cast<std::size_t>(i) >= rr; });
            const int pick = it != runnable.end() ? *it : runnable.front();
            step(pick);
            rr = static_cast<std::size_t>(pick) + 1;
          }
          break;
        }
        case policy::random: {
          const auto n = runnable.size() + pending_.size();
          const auto pick = rng_.below(n);
          if (pick < runnable.size()) step(runnable[pick]);
          else complete(pick - runnable.size());
          break;
        }
        case policy::pct: {
          // The highest priority among runnable agents and pending completions runs; at a
          // change point the one that would run drops below every initial priority.
          std::uint64_t best = 0;
          long choice = -1;
          bool is_agent = false;
          for (int i : runnable)
            if (agents_[i].priority >= best) { best = agents_[i].priority; choice = i; is_agent = true; }
          for (std::size_t j = 0; j < pending_.size(); ++j)
            if (pending_[j].priority > best) { best = pending_[j].priority; choice = static_cast<long>(j); is_agent = false; }
          if (!change_points_.empty() && time_ >= change_points_.back()) {
            const auto low = static_cast<std::uint64_t>(change_points_.size());
            change_points_.pop_back();
            if (is_agent) agents_[choice].priority = low;
            else pending_[choice].priority = low;
          }
          if (is_agent) step(static_cast<int>(choice));
          else complete(static_cast<std::size_t>(choice));
          break;
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Agents.
  std::int64_t eval(agent_state const& a, ir::ExprId id) {
    auto const& e = k_.exprs[id];
    auto const& cs = ctas_[a.cta];
    switch (e.op) {
      case ir::ExprOp::constant: return e.value;
      case ir::ExprOp::var: return a.vars[e.value];
      case ir::ExprOp::program_id: return cs.pid[e.value];
      case ir::ExprOp::cluster_idx: return cs.cidx[e.value];
      case ir::ExprOp::thread_id: return a.wg;
      case ir::ExprOp::lnot: return !eval(a, e.a);
      default: break;
    }
    const auto x = eval(a, e.a), y = eval(a, e.b);
    // Index arithmetic is 64-bit two's complement, as the generated code's `long long` on the
    // GPU wraps: overflow (and INT64_MIN / -1) wraps here too instead of being undefined.
    const auto ux = static_cast<std::uint64_t>(x), uy = static_cast<std::uint64_t>(y);
    switch (e.op) {
      case ir::ExprOp::add: return static_cast<std::int64_t>(ux + uy);
      case ir::ExprOp::sub: return static_cast<std::int64_t>(ux - uy);
      case ir::ExprOp::mul: return static_cast<std::int64_t>(ux * uy);
      case ir::ExprOp::div:
      case ir::ExprOp::mod:
        if (y == 0) report(check::index_out_of_range, cur_op_, a, "an index expression divides by zero");
        if (y == -1) return e.op == ir::ExprOp::div ? static_cast<std::int64_t>(std::uint64_t{0} - ux) : 0;
        return e.op == ir::ExprOp::div ? x / y : x % y;
      case ir::ExprOp::min: return std::min(x, y);
      case ir::ExprOp::max: return std::max(x, y);
      case ir::ExprOp::lt: return x < y;
      case ir::ExprOp::le: return x <= y;
      case ir::ExprOp::gt: return x > y;
      case ir::ExprOp::ge: return x >= y;
      case ir::ExprOp::eq: return x == y;
      case ir::ExprOp::ne: return x != y;
      case ir::ExprOp::land: return x && y;
      case ir::ExprOp::lor: return x || y;
      default: return 0;
    }
  }

  // Runs control instructions until the agent stands on an op (or ends).
  void settle(agent_state& a) {
    for (;;) {
      auto const& in = prog_[a.pc];
      if (in.what == code::op) return;
      // Control flow takes no scheduler step, so a loop with an empty body would otherwise
      // spin past the step budget forever.
      if (++control_steps_ > o_.max_steps)
        report(check::step_limit, in.stmt, a, fmt::format("the step budget of {} ran out in control flow: a loop that does not end?", o_.max_steps));
      switch (in.what) {
        case code::op: return;
        case code::end:
          finish(a);
          return;
        case code::loop_init: {
          auto const& s = k_.stmts[in.stmt];
          a.vars[in.var] = eval(a, s.e0);
          a.hi[in.var] = eval(a, s.e1);
          ++a.pc;
          break;
        }
        case code::loop_test: a.pc = a.vars[in.var] >= a.hi[in.var] ? in.target : a.pc + 1; break;
        case code::loop_next:
          ++a.vars[in.var];
          a.pc = in.target;
          break;
        case code::jump_zero: a.pc = eval(a, k_.stmts[in.stmt].e0) ? a.pc + 1 : in.target; break;
        case code::jump: a.pc = in.target; break;
      }
    }
  }

  ir::Stmt const& op_at(agent_state const& a) const { return k_.stmts[prog_[a.pc].stmt]; }

  bool blocked(agent_state& a) {
    auto const& s = op_at(a);
    cur_op_ = prog_[a.pc].stmt;
    if (s.op == ir::StmtOp::barrier_wait) {
      auto& b = barrier_of(a, s.refs[0]);
      const auto seen = a.observed[static_cast<std::size_t>(&b - ctas_[a.cta].barriers.data())];
      if (b.completed >= seen + 2)
        report(check::missed_phase, cur_op_, a,
               fmt::format("{} waits for completion #{} of {} (phase {}), but the barrier has already completed {} phases: "
                           "the waiter skipped completion #{}, and on hardware its parity aliases with #{} so the wait "
                           "returns at the wrong time",
                           who(a), seen + 1, bar_name(b), seen, b.completed, seen + 1, seen + 3));
      return b.completed <= seen;
    }
    if (s.op == ir::StmtOp::wait_group) return !groups_done(a, s.n, s.flag);
    return false;
  }

  // All but the newest n committed groups have finished reading (read_only) or writing.
  bool groups_done(agent_state const& a, std::int64_t n, bool read_only) const {
    const auto need = a.committed - n;
    for (std::int64_t g = a.groups_base; g < need; ++g) {
      auto const& gs = a.groups[static_cast<std::size_t>(g - a.groups_base)];
      if (gs.reads_pending || (!read_only && gs.writes_pending)) return false;
    }
    return true;
  }

  void step(int index) {
    auto& a = agents_[index];
    const ir::StmtId id = prog_[a.pc].stmt;
    cur_op_ = id;
    auto const& s = k_.stmts[id];
    switch (s.op) {
      case ir::StmtOp::copy_gmem_to_smem: issue_load(a, s); break;
      case ir::StmtOp::copy_smem_to_gmem: issue_store(a, s); break;
      case ir::StmtOp::commit_group:
        a.groups.push_back(a.open);
        ++a.committed;
        a.open = {};
        break;
      case ir::StmtOp::wait_group: {
        const auto done = a.committed - s.n;
        a.vc.c[a.store_r_comp] = std::max<std::uint32_t>(a.vc.c[a.store_r_comp], static_cast<std::uint32_t>(std::max<std::int64_t>(done, 0)));
        if (!s.flag) a.vc.c[a.store_w_comp] = std::max<std::uint32_t>(a.vc.c[a.store_w_comp], static_cast<std::uint32_t>(std::max<std::int64_t>(done, 0)));
        a.waited_reads = std::max(a.waited_reads, done);
        // Groups nothing can still complete into are dropped, so the deque stays short.
        while (a.groups_base < done && !a.groups.empty() && !a.groups.front().reads_pending && !a.groups.front().writes_pending) {
          a.groups.pop_front();
          ++a.groups_base;
        }
        break;
      }
      case ir::StmtOp::commit_smem:
        a.fences.push_back(a.vc.c[a.comp]);
        ++a.vc.c[a.comp];
        break;
      case ir::StmtOp::barrier_arrive: {
        auto& b = barrier_of(a, s.refs[0]);
        auto const& al = k_.allocs[b.alloc];
        if (al.kind == ir::AllocKind::cluster_barrier) {
          for (int peer : peers(a.cta, al.collective_axes)) arrive(ctas_[peer].barriers[&b - ctas_[a.cta].barriers.data()], a.vc, a);
        } else {
          arrive(b, a.vc, a);
        }
        ++a.vc.c[a.comp];
        break;
      }
      case ir::StmtOp::barrier_wait: {
        auto& b = barrier_of(a, s.refs[0]);
        auto& seen = a.observed[static_cast<std::size_t>(&b - ctas_[a.cta].barriers.data())];
        a.vc.join(b.last[seen % 2]);
        ++seen;
        break;
      }
      case ir::StmtOp::store: do_store(a, s); break;
      default:
        report(check::unsupported, id, a,
               fmt::format("{} is not modelled by the interpreter yet (tensor-core ops arrive with their own issue)", ir::stmt_name(s.op)));
    }
    trace_op(a, id);
    ++a.pc;
    a.began = time_;
  }

  void finish(agent_state& a) {
    a.done = true;
    if (a.open.stores > 0)
      report(check::store_pending_at_exit, a.open.last, a,
             fmt::format("{} exits with TMA stores that were never committed (commit_smem_to_gmem_group) nor waited for", who(a)));
    if (a.waited_reads < a.committed)
      report(check::store_pending_at_exit, a.last_store, a,
             fmt::format("{} exits with {} bulk group(s) of TMA stores not waited for: their SMEM may be released while the "
                         "copy engine still reads it (end with wait_smem_to_gmem(0_c, read_only) or wait_smem_to_gmem(0_c))",
                         who(a), a.committed - a.waited_reads));
  }

  // ---------------------------------------------------------------------------------------------
  // Memory references.
  barrier_state& barrier_of(agent_state const& a, ir::RefId rid) {
    auto const& r = k_.refs[rid];
    auto const& al = k_.allocs[r.id];
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < al.shape.size(); ++d) {
      const auto i = eval(a, r.index[d]);
      if (i < 0 || i >= al.shape[d])
        report(check::index_out_of_range, cur_op_, a,
               fmt::format("barrier index out of range: {} indexes {} with {} in dimension {}, which has {} elements (shape ({}))", who(a),
                           ir::alloc_name(k_, r.id), i, d, al.shape[d], fmt::join(al.shape, ", ")));
      flat = flat * al.shape[d] + i;
    }
    return ctas_[a.cta].barriers[static_cast<std::size_t>(bar_base_[r.id] + flat)];
  }

  region view_of(agent_state const& a, ir::RefId rid, int cta) {
    auto const& r = k_.refs[rid];
    region g;
    if (r.base == ir::RefBase::param) {
      auto& m = gmem_[r.id];
      g.mem = &m;
      for (auto e : r.shape) g.box.push_back(e);
      for (std::size_t d = 0; d < r.block.size(); ++d) {
        const auto c = eval(a, r.block[d]);
        g.origin.push_back(c >= 0 && c < m.shape[d] / r.shape[d] ? c * r.shape[d] : 0);  // no overflow before the check
        if (c < 0 || c >= m.shape[d] / r.shape[d])
          report(check::index_out_of_range, cur_op_, a,
                 fmt::format("GMEM block out of range: {} addresses block {} of '{}' in dimension {}, but ({}) blocks of ({}) cover "
                             "only [0, {}) there",
                             who(a), c, m.name, d, fmt::join(m.shape, ", "), fmt::join(r.shape, ", "), m.shape[d] / r.shape[d]));
      }
      return g;
    }
    if (k_.allocs[r.id].kind != ir::AllocKind::smem)
      report(check::unsupported, cur_op_, a,
             fmt::format("loads and stores of {} {}{} are not modelled by the interpreter yet", ir::alloc_kind_name(k_.allocs[r.id].kind),
                         k_.allocs[r.id].kind == ir::AllocKind::accumulator ? "acc" : "t", r.id));
    auto& m = ctas_[cta].smem[r.id];
    g.mem = &m;
    for (std::size_t d = 0; d < m.shape.size(); ++d) {
      if (d < r.index.size()) {
        const auto i = eval(a, r.index[d]);
        if (i < 0 || i >= m.shape[d])
          report(check::index_out_of_range, cur_op_, a,
                 fmt::format("SMEM index out of range: {} indexes {} with {} in dimension {}, which has {} elements", who(a), m.name, i, d,
                             m.shape[d]));
        g.origin.push_back(i);
        g.box.push_back(1);
      } else {
        g.origin.push_back(0);
        g.box.push_back(m.shape[d]);
      }
    }
    return g;
  }

  // ---------------------------------------------------------------------------------------------
  // Accesses and their checks. `vc` orders the access; `stamp` is what it leaves behind.
  bool hb(epoch e, vclock const& vc) const {
    if (e.clock == 0) return true;
    if (e.cluster() != cluster_id()) return false;
    if (e.comp() == shared_reads) {  // every read of the set must be ordered before
      auto const& set = shared_[e.clock - 1].c;
      for (std::size_t i = 0; i < set.size(); ++i)
        if (set[i] > vc.c[i]) return false;
      return true;
    }
    return vc.c[e.comp()] >= e.clock;
  }
  std::uint32_t cluster_id() const { return static_cast<std::uint32_t>(clusters_run_ % max_clusters); }
  static bool is_poison(epoch e) { return e.clock == 0 && e.comp() == poison; }

  // Checks one access of a whole region and leaves `stamp` behind. Rows nearly always carry
  // one epoch throughout (one copy or one store wrote them), so a row is first tested for
  // uniformity (a vectorised scan) and then judged once and overwritten in bulk; mixed rows
  // go element by element, judging an epoch only where it changes.
  void access(region const& g, bool write, vclock const& vc, epoch stamp, int agent_for_msg, const char* what) {
    auto& m = *g.mem;
    if (!m.sw) return;
    fit(g);
    epoch memo_in{~0u, ~0u}, memo_out{};  // the last read epoch transformed by next_read
    auto next_for = [&](epoch r) {
      if (!same(r, memo_in)) {
        memo_in = r;
        memo_out = next_read(r, vc, stamp);
      }
      return memo_out;
    };
    // A verdict depends on the epoch alone (the element only names it in the message), and one
    // that passed passes again: rows nearly always repeat the epoch of the row before.
    epoch passed_w{~0u, ~0u}, passed_r{~0u, ~0u};
    auto judge_write = [&](std::int64_t elem, epoch w) {
      if (same(w, passed_w)) return;
      judge_write_epoch(m, elem, w, write, vc, agent_for_msg, what);
      passed_w = w;
    };
    auto judge_read_epoch = [&](std::int64_t elem, epoch r) {
      if (!write || r.clock == 0 || same(r, passed_r)) return;
      if (!hb(r, vc)) race(m, elem, culprit(r, vc), "write", agent_for_msg, what, false);
      passed_r = r;
    };
    const std::int64_t grain = m.grain;
    g.rows([&](std::int64_t first, std::int64_t, std::int64_t elems) {
      // In cells: `off` is the first cell, `len` how many, cell k starts at element (off + k) * grain.
      const std::int64_t off = first / grain, len = elems / grain;
      epoch* cw = m.sw + off;
      epoch* cr = m.sr ? m.sr + off : nullptr;
      if (uniform(cw, len) && (!cr || uniform(cr, len))) {
        judge_write(off * grain, cw[0]);
        if (cr) judge_read_epoch(off * grain, cr[0]);
        if (write) {
          std::fill_n(cw, len, stamp);
          if (cr) std::fill_n(cr, len, epoch{});
        } else if (cr) {
          std::fill_n(cr, len, next_for(cr[0]));
        }
        return;
      }
      epoch last = cw[0];
      judge_write(off * grain, last);
      for (std::int64_t k = 0; k < len; ++k) {
        if (!same(cw[k], last)) {
          last = cw[k];
          judge_write((off + k) * grain, last);
        }
        if (write) cw[k] = stamp;
      }
      if (!cr) return;
      epoch lr = cr[0];
      judge_read_epoch(off * grain, lr);
      epoch next = write ? epoch{} : next_for(lr);
      for (std::int64_t k = 0; k < len; ++k) {
        if (!same(cr[k], lr)) {
          lr = cr[k];
          judge_read_epoch((off + k) * grain, lr);
          next = write ? epoch{} : next_for(lr);
        }
        cr[k] = next;
      }
    });
  }

  // Makes the cells of g's memory no wider than g's rows, so that the shadow sees exactly the
  // elements an access touches (one element, a multicast share of a row).
  static void fit(region const& g) {
    auto& m = *g.mem;
    const std::int64_t start = g.origin.back(), width = g.box.back();
    if (start % m.grain == 0 && width % m.grain == 0) return;
    m.refine(std::gcd(m.grain, std::gcd(start, width)));
  }

  static bool uniform(epoch const* e, std::int64_t len) {
    static_assert(sizeof(epoch) == sizeof(std::uint64_t));
    std::uint64_t first, x;
    std::memcpy(&first, e, 8);
    std::uint64_t diff = 0;
    for (std::int64_t k = 1; k < len; ++k) {
      std::memcpy(&x, e + k, 8);
      diff |= x ^ first;
    }
    return diff == 0;
  }

  // `what` non-null: the access is a copy engine's (async proxy), which must also find every
  // ordinary store it is ordered after fenced.
  void judge_write_epoch(memory const& m, std::int64_t elem, epoch w, bool write, vclock const& vc, int agent, const char* what) {
    if (is_poison(w)) {
      if (!write) poison_read(m, elem, agent, what);
    } else if (!hb(w, vc)) {
      race(m, elem, w, write ? "write" : "read", agent, what, true);
    } else if (what && w.clock != 0 && w.comp() < agents_.size()) {
      check_fenced(m, elem, w, write, vc, agent);
    }
  }

  // The read epoch an element keeps after a read stamped `stamp`.
  // For a read set, the first reader the access is not ordered after (for the message).
  epoch culprit(epoch r, vclock const& vc) const {
    if (r.comp() != shared_reads || r.cluster() != cluster_id()) return r;
    auto const& set = shared_[r.clock - 1].c;
    for (std::size_t i = 0; i < set.size(); ++i)
      if (set[i] > vc.c[i]) return epoch::make(set[i], static_cast<std::uint32_t>(i), r.cluster());
    return r;
  }

  // Unordered reads within a cluster become a read set (FastTrack's read-shared state): a
  // vector clock of every reader, which a later write must be ordered after entirely.
  epoch next_read(epoch r, vclock const& vc, epoch stamp) {
    if (r.clock == 0 || hb(r, vc)) return stamp;
    if (r.cluster() != stamp.cluster()) return epoch::make(r.clock, r.comp(), many_clusters);  // any later write races
    vclock set;
    if (r.comp() == shared_reads) {
      set = shared_[r.clock - 1];
    } else {
      set.c.assign(agents_.empty() ? 0 : agents_[0].vc.c.size(), 0);
      set.c[r.comp()] = r.clock;
    }
    set.c[stamp.comp()] = std::max(set.c[stamp.comp()], stamp.clock);
    shared_.push_back(std::move(set));
    return epoch::make(static_cast<std::uint32_t>(shared_.size()), shared_reads, stamp.cluster());
  }

  static bool same(epoch a, epoch b) { return a.clock == b.clock && a.who == b.who; }

  // `what` names the accessor; null means the agent itself (named only when a message is built).
  std::string accessor(int agent, const char* what) const { return what ? std::string(what) : who(agents_[agent]); }

  void poison_read(memory const& m, std::int64_t elem, int agent, const char* what) {
    report(check::poison_read, cur_op_, agent,
           fmt::format("{} reads {}[{}] (element {}), which nothing has written: SMEM starts undefined", accessor(agent, what), m.name,
                       fmt::join(unflatten(m, elem), ", "), elem));
  }

  void race(memory const& m, std::int64_t elem, epoch prev, const char* now, int agent, const char* what, bool prev_is_write) {
    report(check::data_race, cur_op_, agent,
           fmt::format("data race on {} {}[{}]: {} ({}) is not ordered after the earlier {} by {}", m.smem ? "SMEM" : "GMEM", m.name,
                       fmt::join(unflatten(m, elem), ", "), accessor(agent, what), now, prev_is_write ? "write" : "read", comp_name(prev)));
  }

  std::vector<std::int64_t> unflatten(memory const& m, std::int64_t elem) const {
    std::vector<std::int64_t> idx(m.shape.size());
    for (int d = static_cast<int>(m.shape.size()) - 1; d >= 0; --d) {
      idx[d] = elem % m.shape[d];
      elem /= m.shape[d];
    }
    return idx;
  }

  std::string comp_name(epoch e) const {
    if (e.cluster() != cluster_id()) return "another cluster (a different CTA, with no ordering at all)";
    const int na = static_cast<int>(agents_.size());
    const int comp = static_cast<int>(e.comp());
    if (e.comp() == shared_reads) return "one of several unordered readers";
    if (comp < na) return who(agents_[comp]);
    const int nb = static_cast<int>(ctas_.size()) * static_cast<int>(bar_count_);
    if (comp < na + nb) {
      const int ci = (comp - na) / static_cast<int>(bar_count_);
      auto const& b = ctas_[ci].barriers[(comp - na) % bar_count_];
      return fmt::format("the TMA load completing {} of CTA {} (completion #{})", bar_name(b), ctas_[ci].linear, e.clock);
    }
    const int s = comp - na - nb;
    return fmt::format("a TMA store {} issued by {} (bulk group #{})", s % 2 ? "writing GMEM" : "reading SMEM", who(agents_[s / 2]), e.clock);
  }

  // Generic writes must be fenced (commit_smem: fence.proxy.async) before the async proxy
  // touches the same bytes, in SMEM and in GMEM alike. Reading them, the copy may see the old
  // contents; writing them, the generic store may land after the copy and overwrite its bytes.
  // (The other way round needs no proxy fence: a TMA load's bytes are visible to whoever
  // observes its mbarrier completion, and a generic read before a refill only has to be
  // ordered before the copy's issue.) `w` is the ordinary store, which the copy (issued at
  // `vc`) is ordered after: its writer must have fenced since, and the issuer seen the fence.
  void check_fenced(memory const& m, std::int64_t elem, epoch w, bool copy_writes, vclock const& vc, int agent) {
    auto const& f = agents_[w.comp()].fences;
    auto it = std::lower_bound(f.begin(), f.end(), w.clock);
    if (it != f.end() && *it < vc.c[w.comp()]) return;
    report(check::missing_fence, cur_op_, agent,
           fmt::format("the TMA engine {} {} {}[{}], written by {} through ordinary stores with no commit_smem() "
                       "(fence.proxy.async) between that write and this copy: {}",
                       copy_writes ? "writes" : "reads", m.smem ? "SMEM" : "GMEM", m.name, fmt::join(unflatten(m, elem), ", "),
                       who(agents_[w.comp()]),
                       copy_writes ? "the ordinary store may land after the copy's bytes and overwrite them" : "the copy may read stale data"));
  }

  // ---------------------------------------------------------------------------------------------
  // Barriers (PTX mbarrier semantics: pending arrivals and tx-count; a phase completes when
  // both reach zero).
  void arrive(barrier_state& b, vclock const& vc, agent_state const& who_) {
    if (b.pending == 0)
      report(check::over_arrival, cur_op_, who_,
             fmt::format("over-arrival on {}: phase {} already has all {} expected arrivals (it waits only for {} tx bytes); "
                         "this arrival by {} has no phase to go to",
                         bar_name(b), b.completed, b.expected, b.tx, who(who_)));
    --b.pending;
    b.releases.join(vc);
    trace_barrier(b, fmt::format("{} arrival {}/{} by {}, {} tx bytes pending", bar_name(b), b.expected - b.pending, b.expected, who(who_), b.tx));
    try_complete(b, who_.comp);
  }

  // The barrier lane of the timeline: every arrival and every landing of TMA bytes, with the
  // state it leaves (what a learner watches a phase fill up with).
  void trace_barrier(barrier_state const& b, std::string label) {
    if (!o_.trace) return;
    tr_.events.push_back({trace_event::kind::arrival, time_, time_, ctas_[cta_of_barrier(b)].linear, static_cast<int>(tr_.lanes.size()) - 1,
                          cur_op_, std::move(label)});
  }

  void try_complete(barrier_state& b, int agent_for_msg) {
    if (b.pending != 0) return;
    if (b.tx < 0)
      report(check::tx_underflow, cur_op_, agent_for_msg,
             fmt::format("tx underflow on {}: phase {} has all {} arrivals but {} more bytes were completed than expected "
                         "(expect_tx too small for the copies that complete on it)",
                         bar_name(b), b.completed, b.expected, -b.tx));
    if (b.tx != 0) return;
    auto& slot = b.last[b.completed % 2];
    slot = b.releases;
    ++b.completed;
    slot.c[b.comp] = b.completed;
    b.pending = b.expected;
    std::fill(b.releases.c.begin(), b.releases.c.end(), 0);
    if (o_.trace) {
      tr_.events.push_back({trace_event::kind::phase, time_, time_, ctas_[cta_of_barrier(b)].linear,
                            static_cast<int>(tr_.lanes.size()) - 1, -1,
                            fmt::format("{} completion #{} (phase {} done)", bar_name(b), b.completed, b.completed - 1)});
    }
  }

  int cta_of_barrier(barrier_state const& b) const {
    for (std::size_t c = 0; c < ctas_.size(); ++c)
      if (!ctas_[c].barriers.empty() && &b >= ctas_[c].barriers.data() && &b < ctas_[c].barriers.data() + ctas_[c].barriers.size())
        return static_cast<int>(c);
    return 0;
  }

  std::vector<int> peers(int cta, std::vector<int> const& axes) const {
    std::vector<int> out;
    auto const& me = ctas_[cta].cidx;
    for (std::size_t c = 0; c < ctas_.size(); ++c) {
      bool same = true;
      for (int d = 0; d < 3; ++d)
        if (std::find(axes.begin(), axes.end(), d) == axes.end() && ctas_[c].cidx[d] != me[d]) same = false;
      if (same) out.push_back(static_cast<int>(c));
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Async copies.
  void issue_load(agent_state& a, ir::Stmt const& s) {
    auto& b = barrier_of(a, s.refs[2]);
    const auto elem = &b - ctas_[a.cta].barriers.data();
    async_op op{async_op::kind::load};
    op.agent = a.comp;
    op.stmt = cur_op_;
    op.src = view_of(a, s.refs[0], a.cta);
    const auto bytes = op.src.elements() * ir::dtype_bits(op.src.mem->dtype) / 8;
    std::vector<int> dests = s.axes.empty() ? std::vector<int>{a.cta} : peers(a.cta, s.axes);
    if (!s.axes.empty()) {
      // Each CTA of the collective group loads its share of the rows and multicasts it: every
      // destination receives the whole block, bytes from every member.
      const auto n = static_cast<std::int64_t>(dests.size());
      const auto pos = std::find(dests.begin(), dests.end(), a.cta) - dests.begin();
      if (op.src.box[0] % n != 0)
        report(check::index_out_of_range, cur_op_, a,
               fmt::format("a multicast copy splits its block's {} rows over {} CTAs, which does not divide", op.src.box[0], n));
      op.src.box[0] /= n;
      op.src.origin[0] += pos * op.src.box[0];
    }
    for (int d : dests) {
      region r = view_of(a, s.refs[1], d);
      if (!s.axes.empty()) {
        const auto n = static_cast<std::int64_t>(dests.size());
        const auto pos = std::find(dests.begin(), dests.end(), a.cta) - dests.begin();
        const auto lead = static_cast<std::size_t>(r.box.size() - op.src.box.size());
        r.box[lead] /= n;
        r.origin[lead] += pos * r.box[lead];
      }
      op.dst.push_back(r);
      op.dst_cta.push_back(d);
    }
    op.bar_elem = elem;
    op.bytes = op.src.elements() * ir::dtype_bits(op.src.mem->dtype) / 8;
    b.tx += bytes;  // arrive.expect_tx: the whole destination block, from its type
    if (b.tx > tx_limit)
      report(check::tx_underflow, cur_op_, a,
             fmt::format("tx-count out of range on {}: phase {} now expects {} bytes, beyond the mbarrier's limit of {} "
                         "(split the stage over several barriers or copies)",
                         bar_name(b), b.completed, b.tx, tx_limit));
    op.vc = a.vc;
    arrive(b, a.vc, a);
    ++a.vc.c[a.comp];
    enqueue(std::move(op));
  }

  void issue_store(agent_state& a, ir::Stmt const& s) {
    async_op op{async_op::kind::store_read};
    op.agent = a.comp;
    op.stmt = cur_op_;
    op.src = view_of(a, s.refs[0], a.cta);
    op.gdst = view_of(a, s.refs[1], a.cta);
    op.group = a.committed;  // the open group
    op.vc = a.vc;
    ++a.open.reads_pending;
    ++a.open.writes_pending;
    ++a.open.stores;
    a.open.last = cur_op_;
    a.last_store = cur_op_;
    ++a.vc.c[a.comp];
    enqueue(std::move(op));
  }

  void enqueue(async_op op) {
    op.issued = time_;
    op.id = next_async_++;
    op.priority = static_cast<std::uint64_t>(o_.pct_depth) + rng_.below(1u << 30);
    pending_.push_back(std::move(op));
  }

  group_state& group_of(agent_state& a, std::int64_t g) {
    if (g >= a.committed) return a.open;
    return a.groups[static_cast<std::size_t>(g - a.groups_base)];
  }

  void complete(std::size_t index) {
    async_op op = std::move(pending_[index]);
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(index));
    auto& a = agents_[op.agent];
    cur_op_ = op.stmt;
    switch (op.what) {
      case async_op::kind::load: {
        // Read the GMEM source, then land in every destination and complete its bytes.
        if (o_.checks) access(op.src, false, op.vc, epoch_of_load(op), a.comp, "a TMA load");
        for (std::size_t d = 0; d < op.dst.size(); ++d) {
          auto& b = ctas_[op.dst_cta[d]].barriers[static_cast<std::size_t>(op.bar_elem)];
          const epoch stamp = epoch::make(b.completed + 1, static_cast<std::uint32_t>(b.comp), cluster_id());
          if (o_.checks) access(op.dst[d], true, op.vc, stamp, a.comp, "a TMA load");
          copy_region(op.src, op.dst[d]);
          b.tx -= op.bytes;
          b.releases.join(op.vc);
          trace_barrier(b, fmt::format("{}: {} B landed, {} tx bytes and {} arrival(s) pending", bar_name(b), op.bytes, b.tx, b.pending));
          try_complete(b, a.comp);
        }
        trace_async(op, 0, "load");
        break;
      }
      case async_op::kind::store_read: {
        const epoch stamp = epoch::make(static_cast<std::uint32_t>(op.group + 1), static_cast<std::uint32_t>(a.store_r_comp), cluster_id());
        --group_of(a, op.group).reads_pending;
        if (o_.schedule == policy::eager) {
          // Eager completes the write right after the read with nothing in between: copy
          // SMEM to GMEM directly (same bytes, same checks, no staging).
          if (o_.checks) access(op.src, false, op.vc, stamp, a.comp, "a TMA store");
          trace_async(op, 1, "store (SMEM read)");
          const epoch wstamp = epoch::make(static_cast<std::uint32_t>(op.group + 1), static_cast<std::uint32_t>(a.store_w_comp), cluster_id());
          if (o_.checks) access(op.gdst, true, op.vc, wstamp, a.comp, "a TMA store");
          copy_region(op.src, op.gdst);
          --group_of(a, op.group).writes_pending;
          trace_async(op, 1, "store (GMEM write)");
          break;
        }
        op.staged = std::make_shared<tile_buf>(read_region(op.src, op.vc, stamp, a.comp, "a TMA store"));
        op.what = async_op::kind::store_write;
        trace_async(op, 1, "store (SMEM read)");
        op.issued = time_;
        pending_.push_back(std::move(op));  // the GMEM write comes later
        break;
      }
      case async_op::kind::store_write: {
        const epoch stamp = epoch::make(static_cast<std::uint32_t>(op.group + 1), static_cast<std::uint32_t>(a.store_w_comp), cluster_id());
        if (o_.checks) access(op.gdst, true, op.vc, stamp, a.comp, "a TMA store");
        write_region(op.gdst, *op.staged);
        release(std::move(*op.staged));
        --group_of(a, op.group).writes_pending;
        trace_async(op, 1, "store (GMEM write)");
        break;
      }
    }
  }

  epoch epoch_of_load(async_op const& op) const {
    // GMEM read by a TMA load: ordered for whoever observes the destination barrier's next completion.
    auto const& b = ctas_[op.dst_cta[0]].barriers[static_cast<std::size_t>(op.bar_elem)];
    return epoch::make(b.completed + 1, static_cast<std::uint32_t>(b.comp), cluster_id());
  }

  tile_buf acquire(std::size_t n, bool fp) {
    tile_buf t;
    for (std::size_t k = 0; k < spare_.size(); ++k)
      if (spare_[k].fp == fp && spare_[k].cap >= n) {
        t = std::move(spare_[k]);
        spare_.erase(spare_.begin() + static_cast<std::ptrdiff_t>(k));
        break;
      }
    if (t.cap < n) {
      t.fp = fp;
      t.cap = n;
      if (fp) t.fbuf.reset(new float[n]);
      else t.ibuf.reset(new std::int64_t[n]);
      t.f = t.fbuf.get();
      t.i = t.ibuf.get();
    }
    t.n = n;
    return t;
  }
  void release(tile_buf&& t) {
    if (t.cap && spare_.size() < 16) spare_.push_back(std::move(t));
  }

  tile_buf read_region(region const& g, vclock const& vc, epoch stamp, int agent, const char* what) {
    if (o_.checks) access(g, false, vc, stamp, agent, what);
    tile_buf t = acquire(static_cast<std::size_t>(g.elements()), ir::dtype_is_float(g.mem->dtype));
    g.rows([&](std::int64_t off, std::int64_t at, std::int64_t len) { read_elems(*g.mem, off, len, t, at); });
    return t;
  }

  // Same-shaped boxes of the same dtype (TMA loads): row by row, no staging.
  void copy_region(region const& from, region const& to) {
    const auto bytes = ir::dtype_bits(from.mem->dtype) / 8;
    rows_scratch_.clear();
    to.rows([&](std::int64_t off, std::int64_t, std::int64_t) { rows_scratch_.push_back(off); });
    std::size_t r = 0;
    from.rows([&](std::int64_t off, std::int64_t, std::int64_t len) {
      std::memcpy(to.mem->data + rows_scratch_[r++] * bytes, from.mem->data + off * bytes, static_cast<std::size_t>(len * bytes));
    });
  }

  void write_region(region const& g, tile_buf const& t) {
    g.rows([&](std::int64_t off, std::int64_t at, std::int64_t len) { write_elems(*g.mem, off, len, t, at); });
  }

  // ---------------------------------------------------------------------------------------------
  // Tile math.
  tile_buf value(agent_state& a, ir::ValueId id) {
    auto const& v = k_.values[id];
    const auto n = static_cast<std::size_t>(std::accumulate(v.shape.begin(), v.shape.end(), std::int64_t{1}, std::multiplies<>()));
    const bool fp = ir::dtype_is_float(v.dtype);
    switch (v.op) {
      case ir::ValueOp::load: {
        const region g = view_of(a, v.ref, a.cta);
        return read_region(g, a.vc, own_stamp(a), a.comp, nullptr);
      }
      case ir::ValueOp::scalar: {
        tile_buf t = acquire(n, fp);
        if (fp) std::fill_n(t.f, n, round_to(v.dtype, static_cast<float>(v.scalar)));
        else std::fill_n(t.i, n, wrap_to(v.dtype, static_cast<std::int64_t>(v.scalar)));
        return t;
      }
      case ir::ValueOp::cast: {
        tile_buf x = value(a, v.a);
        tile_buf t = acquire(n, fp);
        if (fp) {
          for (std::size_t i = 0; i < n; ++i) t.f[i] = round_to(v.dtype, x.fp ? x.f[i] : static_cast<float>(x.i[i]));
        } else {
          for (std::size_t i = 0; i < n; ++i) {
            // cvt.rzi with saturation for float -> int, as the GPU converts.
            if (x.fp) {
              const float f = x.f[i];
              const double lo = v.dtype == ir::DType::u32 ? 0.0 : v.dtype == ir::DType::i8 ? -128.0 : -2147483648.0;
              const double hi = v.dtype == ir::DType::u32 ? 4294967295.0 : v.dtype == ir::DType::i8 ? 127.0 : 2147483647.0;
              t.i[i] = std::isnan(f) ? 0 : static_cast<std::int64_t>(std::clamp(std::trunc(static_cast<double>(f)), lo, hi));
            } else {
              t.i[i] = wrap_to(v.dtype, x.i[i]);
            }
          }
        }
        release(std::move(x));
        return t;
      }
      case ir::ValueOp::neg:
      case ir::ValueOp::exp: {
        tile_buf t = value(a, v.a);
        if (t.fp) {
          for (std::size_t i = 0; i < n; ++i) t.f[i] = round_to(v.dtype, v.op == ir::ValueOp::neg ? -t.f[i] : std::exp(t.f[i]));
        } else {
          for (std::size_t i = 0; i < n; ++i) t.i[i] = wrap_to(v.dtype, -t.i[i]);
        }
        return t;
      }
      case ir::ValueOp::load_tmem:
        report(check::unsupported, cur_op_, a, "async_load_tmem is not modelled by the interpreter yet (tensor-core ops arrive with their own issue)");
      default: break;
    }
    // Binary: a scalar operand is applied as a constant, not materialised as a tile.
    auto const& vb = k_.values[v.b];
    tile_buf x = value(a, v.a);
    if (x.fp) {
      tile_buf y;
      const bool scalar_b = vb.op == ir::ValueOp::scalar;
      if (!scalar_b) y = value(a, v.b);
      const float c = scalar_b ? round_to(v.dtype, static_cast<float>(vb.scalar)) : 0.0f;
      float* p = x.f;
      const float* q = y.f;
      switch (v.op) {
        case ir::ValueOp::add: if (scalar_b) for (std::size_t i = 0; i < n; ++i) p[i] += c; else for (std::size_t i = 0; i < n; ++i) p[i] += q[i]; break;
        case ir::ValueOp::sub: if (scalar_b) for (std::size_t i = 0; i < n; ++i) p[i] -= c; else for (std::size_t i = 0; i < n; ++i) p[i] -= q[i]; break;
        case ir::ValueOp::mul: if (scalar_b) for (std::size_t i = 0; i < n; ++i) p[i] *= c; else for (std::size_t i = 0; i < n; ++i) p[i] *= q[i]; break;
        case ir::ValueOp::div: if (scalar_b) for (std::size_t i = 0; i < n; ++i) p[i] /= c; else for (std::size_t i = 0; i < n; ++i) p[i] /= q[i]; break;
        case ir::ValueOp::min: for (std::size_t i = 0; i < n; ++i) p[i] = std::fmin(p[i], scalar_b ? c : q[i]); break;
        case ir::ValueOp::max: for (std::size_t i = 0; i < n; ++i) p[i] = std::fmax(p[i], scalar_b ? c : q[i]); break;
        default: break;
      }
      if (v.dtype != ir::DType::f32)
        for (std::size_t i = 0; i < n; ++i) p[i] = round_to(v.dtype, p[i]);
      if (!scalar_b) release(std::move(y));
    } else {
      tile_buf y = value(a, v.b);
      auto* p = x.i;
      auto const* q = y.i;
      for (std::size_t i = 0; i < n; ++i) {
        switch (v.op) {
          case ir::ValueOp::add: p[i] = p[i] + q[i]; break;
          case ir::ValueOp::sub: p[i] = p[i] - q[i]; break;
          // Modular, like the GPU's mul.lo: operands are already wrapped to their type, so the low
          // bits are the type's own product, where int64 would overflow (UB) for u32 x u32.
          case ir::ValueOp::mul: p[i] = static_cast<std::int64_t>(static_cast<std::uint64_t>(p[i]) * static_cast<std::uint64_t>(q[i])); break;
          case ir::ValueOp::div: p[i] = q[i] == 0 ? -1 : p[i] / q[i]; break;  // the GPU's div.s32 by zero gives -1
          case ir::ValueOp::min: p[i] = std::min(p[i], q[i]); break;
          case ir::ValueOp::max: p[i] = std::max(p[i], q[i]); break;
          default: break;
        }
        p[i] = wrap_to(v.dtype, p[i]);
      }
      release(std::move(y));
    }
    return x;
  }

  epoch own_stamp(agent_state const& a) const {
    return epoch::make(a.vc.c[a.comp], static_cast<std::uint32_t>(a.comp), cluster_id());
  }

  // Floating-point tile expressions stream row by row through L1-sized buffers: every leaf
  // row is read, every node computed, and the result row written before the next row, so a
  // store costs one pass over its operands instead of one pass per node.
  bool streamable(ir::ValueId id) const {
    auto const& v = k_.values[id];
    if (!ir::dtype_is_float(v.dtype)) return false;
    switch (v.op) {
      case ir::ValueOp::load: case ir::ValueOp::scalar: return true;
      case ir::ValueOp::neg: case ir::ValueOp::exp: return streamable(v.a);
      case ir::ValueOp::cast: return ir::dtype_is_float(k_.values[v.a].dtype) && streamable(v.a);
      case ir::ValueOp::load_tmem: return false;
      default: return streamable(v.a) && streamable(v.b);
    }
  }

  void postorder(ir::ValueId id, std::vector<ir::ValueId>& out) const {
    auto const& v = k_.values[id];
    if (v.a != ir::none) postorder(v.a, out);
    if (v.b != ir::none) postorder(v.b, out);
    out.push_back(id);
  }

  void store_streaming(agent_state& a, ir::Stmt const& s) {
    std::vector<ir::ValueId> nodes;
    postorder(s.value, nodes);
    const region dst = view_of(a, s.refs[0], a.cta);
    const auto len = static_cast<std::size_t>(dst.box.back());
    std::vector<std::vector<std::int64_t>> leaf_rows(nodes.size());
    std::vector<memory*> leaf_mem(nodes.size(), nullptr);
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      auto const& v = k_.values[nodes[n]];
      if (v.op != ir::ValueOp::load) continue;
      const region g = view_of(a, v.ref, a.cta);
      if (o_.checks) access(g, false, a.vc, own_stamp(a), a.comp, nullptr);
      leaf_mem[n] = g.mem;
      g.rows([&](std::int64_t off, std::int64_t, std::int64_t) { leaf_rows[n].push_back(off); });
    }
    if (o_.checks) access(dst, true, a.vc, own_stamp(a), a.comp, nullptr);
    std::vector<std::int64_t> dst_rows;
    dst.rows([&](std::int64_t off, std::int64_t, std::int64_t) { dst_rows.push_back(off); });
    // Views of one allocation with the same shape are identical or disjoint (indexing fixes
    // leading dimensions; GMEM blocks sit at multiples of their shape), so computing row r fully
    // before reading row r+1 reads exactly what a whole-tile load would.
    tile_buf scratch = acquire(len * nodes.size(), true);
    std::vector<std::size_t> index_of(k_.values.size());
    for (std::size_t n = 0; n < nodes.size(); ++n) index_of[nodes[n]] = n;
    std::vector<float*> row(nodes.size());
    tile_buf row_view;  // aliases a row for read_elems / write_elems
    row_view.fp = true;
    const std::size_t root = nodes.size() - 1;
    const bool root_in_place = dst.mem->dtype == ir::DType::f32 && k_.values[nodes[root]].op != ir::ValueOp::load;
    for (std::size_t r = 0; r < dst_rows.size(); ++r) {
      for (std::size_t n = 0; n < nodes.size(); ++n) {
        auto const& v = k_.values[nodes[n]];
        // f32 operands are used where they live and an f32 result is computed into its
        // destination: no copies for the common case.
        if (v.op == ir::ValueOp::load && leaf_mem[n]->dtype == ir::DType::f32)
          row[n] = reinterpret_cast<float*>(leaf_mem[n]->data) + leaf_rows[n][r];
        else if (n == root && root_in_place)
          row[n] = reinterpret_cast<float*>(dst.mem->data) + dst_rows[r];
        else
          row[n] = scratch.f + n * len;
        float* out = row[n];
        const float* x = v.a != ir::none ? row[index_of[v.a]] : nullptr;
        const float* y = v.b != ir::none ? row[index_of[v.b]] : nullptr;
        switch (v.op) {
          case ir::ValueOp::load:
            if (leaf_mem[n]->dtype != ir::DType::f32) {
              row_view.f = out;
              read_elems(*leaf_mem[n], leaf_rows[n][r], static_cast<std::int64_t>(len), row_view, 0);
            }
            break;
          case ir::ValueOp::scalar: std::fill_n(out, len, round_to(v.dtype, static_cast<float>(v.scalar))); break;
          case ir::ValueOp::add: for (std::size_t i = 0; i < len; ++i) out[i] = x[i] + y[i]; break;
          case ir::ValueOp::sub: for (std::size_t i = 0; i < len; ++i) out[i] = x[i] - y[i]; break;
          case ir::ValueOp::mul: for (std::size_t i = 0; i < len; ++i) out[i] = x[i] * y[i]; break;
          case ir::ValueOp::div: for (std::size_t i = 0; i < len; ++i) out[i] = x[i] / y[i]; break;
          case ir::ValueOp::min: for (std::size_t i = 0; i < len; ++i) out[i] = std::fmin(x[i], y[i]); break;
          case ir::ValueOp::max: for (std::size_t i = 0; i < len; ++i) out[i] = std::fmax(x[i], y[i]); break;
          case ir::ValueOp::neg: for (std::size_t i = 0; i < len; ++i) out[i] = -x[i]; break;
          case ir::ValueOp::exp: for (std::size_t i = 0; i < len; ++i) out[i] = std::exp(x[i]); break;
          case ir::ValueOp::cast: std::copy_n(x, len, out); break;
          default: break;
        }
        if (v.dtype != ir::DType::f32 && v.op != ir::ValueOp::load)
          for (std::size_t i = 0; i < len; ++i) out[i] = round_to(v.dtype, out[i]);
      }
      if (!root_in_place) {
        row_view.f = row[root];
        write_elems(*dst.mem, dst_rows[r], static_cast<std::int64_t>(len), row_view, 0);
      }
    }
    row_view.f = nullptr;
    release(std::move(scratch));
  }

  void do_store(agent_state& a, ir::Stmt const& s) {
    if (streamable(s.value)) return store_streaming(a, s);
    tile_buf t = value(a, s.value);
    const region g = view_of(a, s.refs[0], a.cta);
    if (o_.checks) access(g, true, a.vc, own_stamp(a), a.comp, nullptr);
    write_region(g, t);
    release(std::move(t));
  }

  // ---------------------------------------------------------------------------------------------
  // Reports.
  std::string who(agent_state const& a) const {
    auto const& cs = ctas_[a.cta];
    return fmt::format("warpgroup {} of CTA ({}, {}, {})", a.wg, cs.pid[0], cs.pid[1], cs.pid[2]);
  }
  std::string where(ir::StmtId id) const {
    const auto l = ir::where(k_, id);
    return l.empty() ? l : "; written at " + l;
  }
  std::string bar_name(barrier_state const& b) const {
    auto const& al = k_.allocs[b.alloc];
    std::vector<std::int64_t> idx(al.shape.size());
    auto f = b.flat;
    for (int d = static_cast<int>(al.shape.size()) - 1; d >= 0; --d) {
      idx[d] = f % al.shape[d];
      f /= al.shape[d];
    }
    return fmt::format("{}[{}]", ir::alloc_name(k_, b.alloc), fmt::join(idx, "]["));
  }

  [[noreturn]] void deadlock() {
    std::string msg = "deadlock: every warpgroup still running is blocked and nothing is in flight";
    int first_op = -1, first_agent = -1;
    for (auto& a : agents_) {
      if (a.done) continue;
      auto const& s = op_at(a);
      const auto id = prog_[a.pc].stmt;
      if (first_op < 0) {
        first_op = id;
        first_agent = a.comp;
      }
      if (s.op == ir::StmtOp::barrier_wait) {
        auto& b = barrier_of(a, s.refs[0]);
        const auto seen = a.observed[static_cast<std::size_t>(&b - ctas_[a.cta].barriers.data())];
        std::vector<std::string> ops;
        for (int o : arrivers_[b.alloc]) ops.push_back(fmt::format("#{} {}", o, ir::stmt_name(k_.stmts[o].op)));
        msg += fmt::format("\n  {} at op #{} barrier_wait {}: waits for completion #{} (phase {}); arrivals {}/{}, tx bytes pending {}; "
                           "ops that could still arrive: {}{}",
                           who(a), id, bar_name(b), seen + 1, seen, b.expected - b.pending, b.expected, b.tx,
                           ops.empty() ? std::string("none") : fmt::format("{}", fmt::join(ops, ", ")), where(id));
      } else {
        msg += fmt::format("\n  {} at op #{} {}{}", who(a), id, ir::stmt_name(s.op), where(id));
      }
    }
    report(check::deadlock, first_op, first_agent, msg);
    throw stop_run{};  // unreachable: report throws
  }

  [[noreturn]] void report(check c, int op, agent_state const& a, std::string const& text) { report(c, op, a.comp, text); }
  [[noreturn]] void report(check c, int op, int agent, std::string const& text) {
    // The user's line and the op as they wrote it close every message about an op.
    diagnostic d{c, fmt::format("{}: kernel '{}'{}: {}{}", check_name(c), k_.name, op >= 0 ? fmt::format(", op #{} ({})", op, ir::stmt_name(k_.stmts[op].op)) : "", text,
                                op >= 0 ? ir::at_source(k_, op) : ""), op};
    if (agent >= 0 && agent < static_cast<int>(agents_.size())) {
      d.cta = ctas_[agents_[agent].cta].linear;
      d.warpgroup = agents_[agent].wg;
    }
    if (o_.trace) tr_.events.push_back({trace_event::kind::diagnostic, time_, time_, d.cta < 0 ? 0 : d.cta, d.warpgroup < 0 ? 0 : d.warpgroup, op, d.message});
    diags_.push_back(std::move(d));
    throw stop_run{};
  }

  void trace_op(agent_state const& a, ir::StmtId id) {
    if (!o_.trace) return;
    tr_.events.push_back({trace_event::kind::op, a.began, time_, ctas_[a.cta].linear, a.wg, id, op_label(a, id)});
  }
  void trace_async(async_op const& op, int engine, const char* what) {
    if (!o_.trace) return;
    // What a reader of the timeline (or a lesson's narration) wants: which block moved, how many
    // bytes, and for a load the barrier whose transaction count it completed.
    auto block = [](region const& r) {
      std::vector<std::int64_t> at(r.origin.size());
      for (std::size_t d = 0; d < at.size(); ++d) at[d] = r.box[d] ? r.origin[d] / r.box[d] : r.origin[d];
      return fmt::format("{} block ({})", r.mem ? r.mem->name : "?", fmt::join(at, ", "));
    };
    std::string label;
    if (op.what == async_op::kind::load) {
      auto const& b = ctas_[op.dst_cta.front()].barriers[static_cast<std::size_t>(op.bar_elem)];
      label = fmt::format("TMA load #{} of {}: {} B complete_tx on {}{}", op.stmt, block(op.src), op.bytes, bar_name(b),
                          op.dst.size() > 1 ? fmt::format(" in {} CTAs (multicast)", op.dst.size()) : "");
    } else {
      label = fmt::format("TMA {} #{} ({} to {})", what, op.stmt, op.src.mem ? op.src.mem->name : "?", block(op.gdst));
    }
    tr_.events.push_back({trace_event::kind::async, op.issued, time_, ctas_[agents_[op.agent].cta].linear, k_.warpgroups + engine,
                          op.stmt, std::move(label)});
  }
  std::string op_label(agent_state const& a, ir::StmtId id) {
    auto const& s = k_.stmts[id];
    if (s.op == ir::StmtOp::barrier_wait) {  // traced after the wait: observed is the completion it got
      auto& b = barrier_of(a, s.refs[0]);
      return fmt::format("barrier_wait {} for completion #{}", bar_name(b), a.observed[static_cast<std::size_t>(&b - ctas_[a.cta].barriers.data())]);
    }
    if (s.op == ir::StmtOp::barrier_arrive) return fmt::format("barrier_arrive {}", bar_name(barrier_of(a, s.refs[0])));
    return ir::stmt_name(s.op);
  }

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
  std::vector<async_op> pending_;
  std::vector<std::uint64_t> change_points_;
  std::uint64_t time_ = 0, cluster_steps_ = 0, pct_length_ = 64, next_async_ = 0;
  std::uint64_t clusters_run_ = 0, control_steps_ = 0;
  int cur_op_ = -1;
  std::vector<diagnostic> diags_;
  trace tr_;
  std::vector<tile_buf> spare_;
  std::vector<vclock> shared_;  // read sets
  std::vector<std::vector<std::byte>> smem_pool_;
  std::vector<std::int64_t> rows_scratch_;
};

void check_inputs(ir::Kernel const& k, std::vector<host_tensor> const& buffers) {
  if (buffers.size() != k.params.size())
    throw std::invalid_argument(fmt::format("kernel '{}' takes {} GMEM buffers, got {}", k.name, k.params.size(), buffers.size()));
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    auto const& p = k.params[i];
    auto const& b = buffers[i];
    if (b.dtype != p.dtype || b.shape != p.shape ||
        b.bytes.size() != static_cast<std::size_t>(b.elements() * ir::dtype_bits(b.dtype) / 8))
      throw std::invalid_argument(fmt::format("kernel '{}': parameter '{}' expects {}[{}], got {}[{}] ({} bytes)", k.name, p.name,
                                              ir::dtype_name(p.dtype), fmt::join(p.shape, ", "), ir::dtype_name(b.dtype),
                                              fmt::join(b.shape, ", "), b.bytes.size()));
  }
}

}  // namespace

result run(ir::Kernel const& k, std::vector<host_tensor> buffers, options const& o) {
  ir::verify(k);
  check_inputs(k, buffers);
  machine m(k, buffers, o);
  m.run();
  return m.take(std::move(buffers));
}

exploration explore(ir::Kernel const& k, std::vector<host_tensor> const& buffers, options base, int n) {
  exploration e;
  const int runs = (base.schedule == policy::eager || base.schedule == policy::lazy) ? std::min(n, 1) : n;
  for (int i = 0; i < runs; ++i) {
    options o = base;
    o.seed = base.seed + static_cast<std::uint64_t>(i);
    auto r = run(k, buffers, o);
    ++e.schedules;
    if (!r.ok()) {
      e.failing_seed = o.seed;
      e.failure = std::move(r);
      break;
    }
  }
  return e;
}

}  // namespace stagecraft::interp
