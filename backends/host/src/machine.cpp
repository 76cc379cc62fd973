// The host machine: CUDA threads as fibers, mbarriers, named and cluster barriers, TMA and
// bulk groups, scheduled from a seed.
//
// One OS thread runs everything. The scheduler loop picks, at every step, either a runnable
// CUDA thread (which runs until its next prelude call: every one is a scheduling point) or a
// pending async event (a TMA load landing, a TMA store reading SMEM, the same store writing
// GMEM). Threads that cannot go on (an mbarrier phase not complete, a named barrier not full,
// a bulk group not done) are parked on what they wait for and woken when it changes, so a wait
// never spins; when nothing can run and nothing is in flight the run ends with a deadlock
// report naming every waiting thread, the barrier, the phase it waits for and the barrier's
// state.
//
// SMEM has two views per CTA: what generic loads and stores see (the kernel's smem pointer),
// and what the async proxy sees. TMA loads write both; TMA stores read the async view; a
// fence.proxy.async publishes the generic view to the async one. So a store that forgets the
// fence writes stale bytes to GMEM, as it may on the GPU.
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>

#if __has_include(<sanitizer/asan_interface.h>)
#include <sanitizer/asan_interface.h>  // ASAN_UNPOISON_MEMORY_REGION: a no-op without AddressSanitizer
#endif
#ifndef ASAN_UNPOISON_MEMORY_REGION
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif
#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "module.hpp"
#include "tensor_core.hpp"
#include "stagecraft/cuda/tensor_map.hpp"
#include "stagecraft/hostexec/hostexec.hpp"
#include "stagecraft/ir/mx_formats.hpp"
#include "stagecraft/ir/tcgen05.hpp"

namespace stagecraft::hostexec {

const char* failure_name(failure f) {
  switch (f) {
    case failure::none: return "none";
    case failure::deadlock: return "deadlock";
    case failure::protocol: return "protocol";
    case failure::pending_at_exit: return "pending-at-exit";
    case failure::step_limit: return "step-limit";
    case failure::memory_fault: return "memory-fault";
  }
  return "?";
}

namespace {

namespace ctx = boost::context;

constexpr unsigned smem_window = 0x400;  // dynamic SMEM starts 1 KiB into the window, 1024-aligned
constexpr long long tx_limit = (1 << 20) - 1;  // the mbarrier tx-count range
constexpr std::size_t fiber_stack = 128 * 1024;
// Below every fiber stack: pages that fault, more than one so that a frame larger than a page
// (a big local array) still lands in them rather than in the stack mapped below.
constexpr std::size_t stack_guard = 32 * 1024;
// At most this many CUDA threads are resident at once; the clusters beyond wait until earlier
// ones retire (waves, as on a GPU, which holds only so many CTAs per SM and never promises that
// the whole grid is resident). It bounds the fibers alive at once: each stack is two mappings
// (vm.max_map_count is 65530) and a few touched pages, and 256 CTAs of 128 threads all at once
// ran out of mappings.
constexpr std::size_t max_resident_threads = 4096;
constexpr std::size_t gib = std::size_t{1} << 30;

std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Thrown inside a fiber by a prelude call the hardware would not accept; caught at the fiber's
// entry, so it unwinds the kernel's frames and ends only that thread (the run then stops).
struct abort_run {
  failure kind;
  std::string message;
};

// splitmix64: the same schedules on every platform (as the interpreter's).
struct rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  double unit() { return static_cast<double>(next() >> 11) / 9007199254740992.0; }
};

// Memory whose only accessible bytes are [data(), data() + size()) and whose neighbourhood
// faults: a generated index that runs off SMEM or off a GMEM buffer becomes a report (the fault
// handler below), not a corruption of the runtime. The bytes are placed to end at the end of
// their pages (up to `align`); the few slack bytes there hold a canary, checked afterwards.
class guarded {
 public:
  static constexpr unsigned char canary = 0xa5;
  guarded() = default;
  guarded(std::size_t size, std::size_t before, std::size_t after, std::size_t align) : size_(size) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t rw = (std::max<std::size_t>(size, 1) + page - 1) / page * page;
    total_ = before + rw + after;
    void* p = ::mmap(nullptr, total_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<unsigned char*>(p);
    if (::mprotect(base_ + before, rw, PROT_READ | PROT_WRITE) != 0) {
      ::munmap(base_, total_);
      throw std::bad_alloc();
    }
    end_ = base_ + before + rw;
    data_ = end_ - (size + align - 1) / align * align;
    std::memset(data_ + size_, canary, static_cast<std::size_t>(end_ - data_) - size_);
  }
  guarded(guarded&& o) noexcept { *this = std::move(o); }
  guarded& operator=(guarded&& o) noexcept {
    std::swap(base_, o.base_);
    std::swap(total_, o.total_);
    std::swap(data_, o.data_);
    std::swap(end_, o.end_);
    std::swap(size_, o.size_);
    return *this;
  }
  ~guarded() {
    if (base_) ::munmap(base_, total_);
  }
  unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }
  unsigned char& operator[](std::size_t i) const { return data_[i]; }
  bool contains(const void* p) const { return base_ && p >= base_ && p < base_ + total_; }
  long long offset_of(const void* p) const { return static_cast<const unsigned char*>(p) - data_; }
  // How many slack bytes after the data something wrote (0: the canary is intact).
  std::size_t slack_written() const {
    std::size_t n = 0;
    for (auto* q = data_ + size_; q < end_; ++q) n += *q != canary;
    return n;
  }

 private:
  unsigned char* base_ = nullptr;
  std::size_t total_ = 0;
  unsigned char* data_ = nullptr;
  unsigned char* end_ = nullptr;
  std::size_t size_ = 0;
};

// Every shared-window offset the generated code can form is a 32-bit unsigned: all of them
// fault when they leave the CTA's SMEM.
constexpr std::size_t smem_guard_after = (std::size_t{1} << 32) + (std::size_t{1} << 16);
// Either side of a GMEM buffer, unless an address-space limit leaves less room (`setup`).
constexpr std::size_t gmem_guard_max = gib;

// Fiber stacks, reused: when a thread ends, its stack goes back to the pool and a thread of the
// next wave takes it, so a grid of any size maps only as many stacks as threads are resident at
// once. Each stack is its own mapping with `stack_guard` bytes of PROT_NONE below it (as boost's
// protected_fixedsize_stack, which this replaces), so an overflow faults and is reported. The
// stack of a thread abandoned after a fault never comes back (its fiber cannot be unwound); it
// stays mapped until the pool goes, with the run.
class stack_pool {
 public:
  stack_pool() = default;
  stack_pool(stack_pool const&) = delete;
  stack_pool& operator=(stack_pool const&) = delete;
  // A fiber's stack keeps the redzones AddressSanitizer poisoned for the frames it was in when
  // it last switched away; ASan does not clear them when the stack is reused or unmapped, so
  // the next user of those addresses (another fiber, or an SMEM arena mapped there later) would
  // be reported as a stack-buffer underflow. Unpoison whenever a stack is given back or freed.
  ~stack_pool() {
    for (auto* b : all_) {
      ASAN_UNPOISON_MEMORY_REGION(b + stack_guard, total() - stack_guard);
      ::munmap(b, total());
    }
  }
  ctx::stack_context take() {
    unsigned char* base = nullptr;
    if (!free_.empty()) {
      base = free_.back();
      free_.pop_back();
    } else {
      void* p = ::mmap(nullptr, total(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      base = static_cast<unsigned char*>(p);
      if (::mprotect(base, stack_guard, PROT_NONE) != 0) {
        ::munmap(base, total());
        throw std::bad_alloc();
      }
      all_.push_back(base);
    }
    ctx::stack_context sc;
    sc.size = total();
    sc.sp = base + total();
    return sc;
  }
  void give(ctx::stack_context const& sc) noexcept {
    ASAN_UNPOISON_MEMORY_REGION(static_cast<unsigned char*>(sc.sp) - sc.size + stack_guard, sc.size - stack_guard);
    try {
      free_.push_back(static_cast<unsigned char*>(sc.sp) - sc.size);
    } catch (...) {  // no memory for the free list: unmap it instead (the pool forgets it)
      auto* base = static_cast<unsigned char*>(sc.sp) - sc.size;
      ::munmap(base, sc.size);
      all_.erase(std::remove(all_.begin(), all_.end(), base), all_.end());
    }
  }
  // Is `a` in the guard pages below one of the stacks (a stack overflowed)?
  bool in_guard(const void* a) const {
    return std::any_of(all_.begin(), all_.end(), [&](unsigned char* b) { return a >= b && a < b + stack_guard; });
  }

 private:
  static std::size_t total() { return fiber_stack + stack_guard; }
  std::vector<unsigned char*> all_, free_;
};

// What boost::context takes as a stack allocator (it keeps a copy in the fiber): the pool's handle.
struct pooled_stack {
  stack_pool* pool;
  ctx::stack_context allocate() { return pool->take(); }
  void deallocate(ctx::stack_context& sc) noexcept { pool->give(sc); }
};

// The resident CTAs' SMEM, one slot per CTA. Every 32-bit shared-window offset past a CTA's
// SMEM must fault (a negative index wraps to almost 4 GiB past it), so each SMEM has a 4 GiB tail
// of PROT_NONE. With the address space unlimited every slot is its own mapping with its own
// tail (`separate`). Under a limit (ulimit -v: RLIMIT_AS counts PROT_NONE too) 4 GiB per
// resident CTA does not fit, so the slots lie side by side in one region with one tail
// (`shared`), and only the slot of the CTA whose thread runs (or whose SMEM the runtime
// touches) is accessible: a wild offset from it into another CTA's slot faults as the tail does.
// Opening another slot costs two mprotect calls (some microseconds per switch between CTAs),
// which is why it is only the fallback.
class smem_arena {
 public:
  static constexpr std::size_t lead = std::size_t{1} << 16;  // below SMEM: negative literal offsets
  static constexpr std::size_t align = 1024;

  smem_arena() = default;
  smem_arena(smem_arena const&) = delete;
  smem_arena& operator=(smem_arena const&) = delete;
  ~smem_arena() {
    if (region_) ::munmap(region_, region_bytes_);
  }

  // bytes: each CTA's dynamic SMEM; slots: how many CTAs are resident at most.
  void init(std::size_t bytes, std::size_t slots, bool shared) {
    bytes_ = bytes;
    shared_ = shared;
    span_ = round_up(std::max<std::size_t>(bytes, 1), page_size());
    if (shared) {
      region_bytes_ = lead + slots * span_ + smem_guard_after;
      void* p = ::mmap(nullptr, region_bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      region_ = static_cast<unsigned char*>(p);
    } else {
      separate_.resize(slots);
    }
    for (std::size_t s = slots; s > 0; --s) free_.push_back(static_cast<int>(s - 1));  // lowest first
  }

  // A slot for a CTA being admitted: accessible (open), its slack bytes holding the canary.
  int take() {
    if (free_.empty()) throw std::logic_error("host machine: more CTAs resident than SMEM slots");
    const int s = free_.back();
    free_.pop_back();
    if (shared_) {
      open(s);
      std::memset(data(s) + bytes_, guarded::canary, static_cast<std::size_t>(slot_end(s) - data(s)) - bytes_);
    } else {
      separate_[s] = guarded(bytes_, lead, smem_guard_after, align);
    }
    return s;
  }
  void give(int s) {
    if (shared_) {
      if (open_ == s) close();
      // The next CTA in this slot starts from 0xff bytes anyway: let the pages go.
      ::madvise(slot_begin(s), span_, MADV_DONTNEED);
    } else {
      separate_[s] = guarded();
    }
    free_.push_back(s);
  }

  unsigned char* data(int s) const { return shared_ ? slot_end(s) - round_up(bytes_, align) : separate_[s].data(); }
  // Whether only one slot is accessible at a time (the shared region under an address-space limit).
  bool one_open() const { return shared_; }
  std::size_t size() const { return bytes_; }

  // Makes slot s the accessible one (shared; separate slots always are).
  void open(int s) {
    if (!shared_ || open_ == s) return;
    close();
    if (::mprotect(slot_begin(s), span_, PROT_READ | PROT_WRITE) != 0)
      throw std::runtime_error(fmt::format("host machine: cannot make a CTA's SMEM slot accessible (mprotect: {})", std::strerror(errno)));
    open_ = s;
  }

  // How many slack bytes after slot s's SMEM something wrote (0: the canary is intact).
  std::size_t slack_written(int s) {
    if (!shared_) return separate_[s].slack_written();
    open(s);
    std::size_t n = 0;
    for (auto* q = data(s) + bytes_; q < slot_end(s); ++q) n += *q != guarded::canary;
    return n;
  }

  // The slot whose SMEM or guard `a` is in (-1: none). In a shared region that is the open
  // slot: only its CTA was running, and every other byte of the region is its guard.
  int owner(const void* a) const {
    if (shared_) return region_ && a >= region_ && a < region_ + region_bytes_ ? open_ : -1;
    for (std::size_t s = 0; s < separate_.size(); ++s)
      if (separate_[s].contains(a)) return static_cast<int>(s);
    return -1;
  }

 private:
  unsigned char* slot_begin(int s) const { return region_ + lead + static_cast<std::size_t>(s) * span_; }
  unsigned char* slot_end(int s) const { return slot_begin(s) + span_; }
  void close() {
    if (open_ < 0) return;
    ::mprotect(slot_begin(open_), span_, PROT_NONE);  // cannot fail: it only narrows a mapping we own
    open_ = -1;
  }

  std::size_t bytes_ = 0, span_ = 0;
  bool shared_ = false;
  std::vector<guarded> separate_;
  unsigned char* region_ = nullptr;
  std::size_t region_bytes_ = 0;
  int open_ = -1;
  std::vector<int> free_;
};

// Address space left under RLIMIT_AS (ulimit -v), SIZE_MAX when there is no limit.
std::size_t address_space_left() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  std::size_t pages = 0;  // VmSize: the first field of /proc/self/statm
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%zu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  const std::size_t used = pages * page_size();
  return rl.rlim_cur > used ? static_cast<std::size_t>(rl.rlim_cur) - used : 0;
}

struct mbarrier {
  unsigned expected = 0, pending = 0;
  long long tx = 0;
  std::uint64_t phase = 0;
  bool remote = false;  // has received an arrival from the cluster (.release.cluster)
  std::vector<int> waiters;
};

struct counting_barrier {  // bar.sync ids, and the cluster barrier
  unsigned arrived = 0, expected = 0;
  std::uint64_t generation = 0;
  std::vector<int> waiters;
};

struct cta_t {
  std::array<unsigned, 3> id{};
  int cluster = 0;
  unsigned rank = 0;
  int slot = -1;                    // its slot in the SMEM arena while resident
  unsigned char* smem = nullptr;    // the generic view: the kernel's own loads and stores
  std::vector<unsigned char> async_smem;  // what the async proxy (TMA stores) reads
  std::unordered_map<unsigned, mbarrier> bars;  // by SMEM offset
  std::array<counting_barrier, 16> named;
  std::vector<counting_barrier> warps;       // shfl.sync: every lane of the warp takes part
  std::vector<unsigned long long> shuffled;  // each thread's value in the shuffle under way
  struct stmatrix_issue {  // each thread's operands in the stmatrix under way
    unsigned addr = 0;
    std::array<unsigned, 4> regs{};
    int n = 0;
  };
  std::vector<stmatrix_issue> stmatrix_issued;
  int first_thread = 0, live = 0;
  bool started = false, exited = false;
  bool clc_failed = false;  // a thread of it read a failed try_cancel response: another try_cancel is undefined
  bool generic_dirty = false;  // a thread may have written SMEM since the last fence.proxy.async
  int loads_in = 0, store_reads = 0;  // in-flight TMA work on this CTA's SMEM
  // wgmma: each warpgroup's meeting point, and what each thread issued there.
  struct wgmma_issue {
    schost::wgmma_instr instr{};
    unsigned long long a_desc = 0, b_desc = 0;
    const unsigned* a_regs = nullptr;
  };
  std::vector<counting_barrier> wg_meet;
  std::vector<wgmma_issue> wgmma_issued;
  std::unique_ptr<tensor_core::tmem> tmem;  // made by the first tcgen05.alloc (256 KiB)
};

struct cluster_t {
  std::vector<int> ctas;
  counting_barrier sync;
  int live_ctas = 0;
};

// A TMA copy in flight.
struct copy_op {
  bool load = true;
  int issuer = 0, cta = 0;        // thread and CTA that issued it
  std::vector<int> dests;         // loads: the CTAs whose SMEM it fills
  unsigned smem_off = 0, bar_off = 0;
  schost::tensor_map map{};
  std::array<long long, 5> coords{};
  std::vector<unsigned char> staged;  // stores: the bytes read from SMEM
  int reduce = 0, kind = 0;           // a TMA reduce: the op (ir::Reduce) and the element type (sc_host_abi.h)
  bool pair = false;                  // .cta_group::2: completes on each destination's pair leader
  bool clc = false;                   // a try_cancel: its response lands at smem_off, 16 bytes complete on bar_off
  bool read_done = false, write_done = false;
};

// A TMA reduce's write of one 4-byte element: op 1 add, 2 min, 3 max (ir::Reduce); kind 0 f32
// (add only), 1 s32, 2 u32. Integers add with wraparound (as unsigned: the same bits for s32).
inline void reduce_element(unsigned char* g, const unsigned char* v, int op, int kind) {
  auto combine = [&](auto x) {
    using T = decltype(x);
    T y;
    std::memcpy(&x, g, 4);
    std::memcpy(&y, v, 4);
    if constexpr (std::is_same_v<T, float>) x = ir::reduce_add_f32(x, y);
    else x = op == 1 ? static_cast<T>(static_cast<std::uint32_t>(x) + static_cast<std::uint32_t>(y)) : op == 2 ? std::min(x, y) : std::max(x, y);
    std::memcpy(g, &x, 4);
  };
  if (kind == 0) combine(0.0f);
  else if (kind == 1) combine(std::int32_t{0});
  else combine(std::uint32_t{0});
}

// Frees a container's storage (`x = {}` keeps a vector's capacity).
template <class T>
void release(T& x) {
  T().swap(x);
}

// One element between GMEM and SMEM (1, 2, 4 or 8 bytes), without a library call per element.
inline void copy_element(unsigned char* dst, const unsigned char* src, unsigned bytes) {
  switch (bytes) {
    case 1: *dst = *src; break;
    case 2: std::memcpy(dst, src, 2); break;
    case 4: std::memcpy(dst, src, 4); break;
    default: std::memcpy(dst, src, 8); break;
  }
}

// The bytes of TMA's NaN fill for an element of `bytes` (4 or 2: the verifier allows no other).
// Each pattern is padded to 8 bytes, copy_element's widest read.
inline const unsigned char* oob_nan(unsigned bytes) {
  static constexpr std::uint64_t f32 = ir::tma_oob_nan_f32;  // little-endian: the low bytes are the element's
  static constexpr std::uint64_t h16 = ir::tma_oob_nan_16;
  return bytes == 4 ? reinterpret_cast<const unsigned char*>(&f32) : reinterpret_cast<const unsigned char*>(&h16);
}

struct alignas(64) tmap_words {  // the kernel's sc::tmap_t: a CUtensorMap's 128 bytes
  unsigned long long word[16];
};

struct event {
  int op;
  bool write;  // stores: the GMEM write (after the read)
  std::uint64_t priority = 0;  // lazy schedules: the highest completes first
};

struct thread_t {
  schost::thread_regs regs{};
  int cta = 0;
  ctx::fiber fib, back;
  enum class state : std::uint8_t { unborn, ready, running, blocked, done } st = state::unborn;
  // What a blocked thread waits for, for deadlock reports.
  enum class waits : std::uint8_t { nothing, mbar, named, cluster, bulk, warp, semaphore, wgmma } on = waits::nothing;
  unsigned wait_a = 0, wait_b = 0;
  int* sem = nullptr;  // waits::semaphore: the counter (wait_b: the value it needs)
  std::vector<std::vector<int>> groups;  // committed bulk groups, oldest first
  std::vector<int> open;                 // bulk ops not committed yet
};

class machine;
machine* active = nullptr;  // the one machine running (runs are serialised)
std::mutex run_mutex;

class machine {
 public:
  machine(compiled const& c, ir::Kernel const& k, std::vector<host_tensor>& buffers, options const& o)
      : c_(c), k_(k), buffers_(buffers), o_(o), rng_{o.seed * 0xd1342543de82ef95ull + 0x2545f4914f6cdd1dull} {}

  failure kind() const { return kind_; }
  std::string const& message() const { return message_; }

  result run() {
    setup();
    loop();
    result r;
    r.kind = kind_;
    r.message = message_;
    r.steps = steps_;
    return r;
  }

  ~machine() {
    // Fibers still suspended (a run that stopped early) are unwound here, through the
    // kernel's frames, before their stacks go.
    for (auto& t : threads_) {
      t.fib = {};
    }
  }

  // ---- the prelude's calls ---------------------------------------------------------------------
  static void api_mbar_init(unsigned bar, unsigned count) {
    auto& m = *active;
    m.preempt();
    if (count == 0 || count > tx_limit)
      m.fail(failure::protocol, fmt::format("{}: mbarrier.init of {} with count {} (must be 1..{})", m.who(), m.bar_name(m.me().cta, bar), count, tx_limit));
    auto& b = m.bar_at(m.me().cta, bar, false);
    b.expected = b.pending = count;
    b.tx = 0;
    b.phase = 0;
    b.remote = false;
  }
  static void api_mbar_fence_init() { active->preempt(); }
  static void api_mbar_arrive(unsigned bar, unsigned bytes) {
    auto& m = *active;
    m.preempt();
    const int cta = m.me().cta;
    auto& b = m.bar_at(cta, bar, true);
    if (bytes > 0) m.add_tx(cta, bar, b, static_cast<long long>(bytes), "expect_tx");
    m.arrive(cta, bar, b, false);
    // An arrival may release a waiter; let it run before this thread's next access (a
    // consumer releasing a stage it has yet to read must be able to lose that race).
    m.preempt();
  }
  static void api_mbar_arrive_remote(unsigned bar, unsigned rank, int cluster_scope) {
    auto& m = *active;
    m.preempt();
    auto const& cl = m.clusters_[m.ctas_[m.me().cta].cluster];
    if (rank >= cl.ctas.size())
      m.fail(failure::protocol, fmt::format("{}: mapa to CTA rank {} for a remote arrival on {}, but the cluster has {} CTA(s)", m.who(), rank,
                                            m.bar_name(m.me().cta, bar), cl.ctas.size()));
    const int target = cl.ctas[rank];
    if (m.ctas_[target].exited)
      m.fail(failure::protocol, fmt::format("{}: remote arrival on {} of CTA rank {}, which has already exited", m.who(), m.bar_name(target, bar), rank));
    auto& b = m.bar_at(target, bar, true);
    m.arrive(target, bar, b, cluster_scope != 0);
    m.preempt();
  }
  static void api_mbar_wait(unsigned bar, unsigned parity, int cluster_scope) {
    auto& m = *active;
    m.preempt();
    const int cta = m.me().cta;
    for (;;) {
      auto& b = m.bar_at(cta, bar, true);
      if (b.remote && !cluster_scope)
        m.fail(failure::protocol, fmt::format("{}: waits on {} with .acquire.cta, but peers arrive on it with .release.cluster: "
                                              "only an .acquire.cluster wait synchronises with them", m.who(), m.bar_name(cta, bar)));
      if ((b.phase & 1u) != (parity & 1u)) return;  // the phase of that parity has completed
      b.waiters.push_back(m.current_);
      m.block(thread_t::waits::mbar, bar, parity);
    }
  }
  static void api_fence_proxy_async() {
    auto& m = *active;
    m.preempt();
    auto& c = m.ctas_[m.me().cta];
    if (!c.generic_dirty) return;  // nothing of this CTA ran since the last fence published it
    // Only what TMA stores read needs the async view (loads write both views).
    for (auto [off, bytes] : m.store_sources_) std::memcpy(c.async_smem.data() + off, c.smem + off, bytes);
    c.generic_dirty = false;
  }
  // bar.sync waits for the phase, bar.arrive counts itself in and goes on; same rules for both.
  static void named_bar(unsigned id, unsigned threads, const char* what, bool wait) {
    auto& m = *active;
    m.preempt();
    auto& c = m.ctas_[m.me().cta];
    const unsigned block = m.block_threads();
    if (id >= 16 || threads == 0 || threads % 32 != 0 || threads > block)
      m.fail(failure::protocol, fmt::format("{}: {} {}, {}: the id must be below 16 and the count a multiple of 32 up to the CTA's {} threads",
                                            m.who(), what, id, threads, block));
    m.count_in(c.named[id], threads, thread_t::waits::named, id, what, wait);
  }
  static void api_bar_sync(unsigned id, unsigned threads) { named_bar(id, threads, "bar.sync", true); }
  static void api_bar_arrive(unsigned id, unsigned threads) { named_bar(id, threads, "bar.arrive", false); }
  // Every lane publishes its value, the warp meets, each reads its partner's, the warp meets
  // again so no lane overwrites a value before its partner has read it. A lane that never
  // comes (divergence) is a deadlock, as on the GPU, where shfl.sync with a full mask hangs.
  // src: the lane (of the warp) whose bits this one reads, from its own lane.
  template <class Src>
  static unsigned long long shuffle(unsigned long long bits, const char* what, int arg, Src src) {
    auto& m = *active;
    m.preempt();
    auto& c = m.ctas_[m.me().cta];
    const unsigned t = m.me().regs.tid.x, warp = t / 32;
    if (arg < 0 || arg >= 32 || m.block_threads() % 32 != 0)
      m.fail(failure::protocol, fmt::format("{}: {} with lane {} (must be 0..31, in whole warps)", m.who(), what, arg));
    c.shuffled[t] = bits;
    m.count_in(c.warps[warp], 32, thread_t::waits::warp, warp, "shfl.sync");
    const unsigned long long got = m.ctas_[m.me().cta].shuffled[32 * warp + src(t % 32)];
    m.count_in(m.ctas_[m.me().cta].warps[warp], 32, thread_t::waits::warp, warp, "shfl.sync");
    return got;
  }
  static unsigned long long api_shfl_xor(unsigned long long bits, int lane_mask) {
    return shuffle(bits, "shfl.sync.bfly", lane_mask, [=](unsigned lane) { return lane ^ static_cast<unsigned>(lane_mask); });
  }
  // (the index is taken modulo 32, as shfl.sync.idx with a full warp's clamp does)
  static unsigned long long api_shfl_idx(unsigned long long bits, int src_lane) {
    return shuffle(bits, "shfl.sync.idx", src_lane & 31, [=](unsigned) { return static_cast<unsigned>(src_lane & 31); });
  }
  // clusterlaunchcontrol.try_cancel: the completion (complete()) cancels the first cluster of the
  // launch order that is not resident yet, if any: it never starts. With every cluster resident
  // (seed 0 and any grid that fits) there is none, and the response says so. Our response
  // encoding (opaque on the GPU, read only through clc_query there): u32 0 canceled or not, 1-3
  // the canceled cluster's first ctaid.
  static void api_clc_try_cancel(unsigned resp, unsigned bar) {
    auto& m = *active;
    m.preempt();
    const int cta = m.me().cta;
    if (m.ctas_[cta].clc_failed)
      m.fail(failure::protocol, fmt::format("{}: clusterlaunchcontrol.try_cancel after its CTA read a failed response: undefined (PTX ISA)", m.who()));
    if (resp % 16 != 0) m.fail(failure::protocol, fmt::format("{}: try_cancel response address {:#x} is not 16-byte aligned", m.who(), resp));
    copy_op op;
    op.clc = true;
    op.issuer = m.current_;
    op.cta = cta;
    op.smem_off = m.smem_offset(resp, 16, "the try_cancel response");
    op.bar_off = m.smem_offset(bar, 8, "the try_cancel mbarrier");
    m.bar_at(cta, bar, true);
    op.dests = {cta};
    ++m.ctas_[cta].loads_in;
    m.ops_.push_back(std::move(op));
    m.post({static_cast<int>(m.ops_.size() - 1), false});
  }
  static unsigned api_clc_query(unsigned resp, int what) {
    auto& m = *active;
    m.preempt();
    auto& c = m.ctas_[m.me().cta];
    const unsigned off = m.smem_offset(resp, 16, "a try_cancel response");
    unsigned words[4];
    std::memcpy(words, c.smem + off, 16);
    if (what == 0 && words[0] == 0) c.clc_failed = true;
    return words[what & 3];
  }
  static void api_warp_sync() {
    auto& m = *active;
    m.preempt();
    const unsigned warp = m.me().regs.tid.x / 32;
    m.count_in(m.ctas_[m.me().cta].warps[warp], 32, thread_t::waits::warp, warp, "__syncwarp");
  }
  // stmatrix.sync.aligned.m8n8.xN.shared.b16, from the PTX ISA's description: lanes 8 m ..
  // 8 m + 7 give the addresses of rows 0..7 of matrix m, and row r of matrix m is the registers m
  // of lanes 4 r .. 4 r + 3, in that order (two 16-bit elements each, the lower column in the low
  // half). Every lane publishes its operands, the warp meets, each lane that gives an address
  // writes its row from the others' registers, and the warp meets again so that no lane's next
  // collective overwrites operands a slower lane still reads. A lane that never comes is a
  // deadlock, as on the GPU.
  static void api_stmatrix(unsigned addr, const unsigned* regs, int n) {
    auto& m = *active;
    m.preempt();
    const unsigned t = m.me().regs.tid.x, warp = t / 32, lane = t % 32;
    if ((n != 1 && n != 2 && n != 4) || m.block_threads() % 32 != 0)
      m.fail(failure::protocol, fmt::format("{}: stmatrix.x{} (x1, x2 or x4, in whole warps)", m.who(), n));
    auto& mine = m.ctas_[m.me().cta].stmatrix_issued[t];
    mine.addr = addr, mine.n = n;
    std::copy(regs, regs + n, mine.regs.begin());
    m.count_in(m.ctas_[m.me().cta].warps[warp], 32, thread_t::waits::warp, warp, "stmatrix");
    auto& c = m.ctas_[m.me().cta];
    auto const* issued = &c.stmatrix_issued[warp * 32];
    if (issued[lane].n != issued[0].n)
      m.fail(failure::protocol, fmt::format("{}: stmatrix.x{} while lane 0 of its warp executes stmatrix.x{}: .aligned, one instruction per warp", m.who(),
                                            issued[lane].n, issued[0].n));
    if (lane < 8u * static_cast<unsigned>(n)) {
      const unsigned matrix = lane / 8, row = lane % 8;
      if (addr % 16 != 0)
        m.fail(failure::protocol, fmt::format("{}: stmatrix row address {:#x} (row {} of matrix {}) is not 16-byte aligned", m.who(), addr, row, matrix));
      const unsigned off = m.smem_offset(addr, 16, "stmatrix row");
      for (unsigned k = 0; k < 4; ++k) std::memcpy(c.smem + off + 4 * k, &issued[4 * row + k].regs[matrix], 4);
      c.generic_dirty = true;  // written after this call's preemption point, which a fence may have passed since
    }
    m.count_in(m.ctas_[m.me().cta].warps[warp], 32, thread_t::waits::warp, warp, "stmatrix");
  }
  // ---- the tensor cores (tensor_core.cpp computes; here: who takes part, and when) ------------
  // wgmma.mma_async is .sync.aligned over the warpgroup and the GPU runs it once for all 128
  // threads. Here every thread computes its own fragment of D, between two meetings of the
  // warpgroup: the first so that the quad's A registers are all there (A from registers), the
  // second so that no thread goes on (to its wgmma wait, then to the arrival that lets a refill
  // overwrite A and B) before every thread's part has read SMEM. The instruction completes
  // when it is issued, so wgmma.commit_group and wait_group have nothing left to do.
  static void api_wgmma(void* d, const schost::wgmma_instr* s, unsigned long long a_desc, const unsigned* a_regs, unsigned long long b_desc) {
    auto& m = *active;
    m.preempt();
    const unsigned t = m.me().regs.tid.x, wg = t / 128, first = wg * 128;
    if (m.block_threads() < first + 128)
      m.fail(failure::protocol, fmt::format("{}: wgmma.mma_async in a warpgroup of fewer than 128 threads (the CTA has {})", m.who(), m.block_threads()));
    m.ctas_[m.me().cta].wgmma_issued[t] = {*s, a_desc, b_desc, a_regs};
    m.count_in(m.ctas_[m.me().cta].wg_meet[wg], 128, thread_t::waits::wgmma, wg, "wgmma.mma_async");
    auto& c = m.ctas_[m.me().cta];
    auto const& mine = c.wgmma_issued[t];
    auto const& lead = c.wgmma_issued[first];
    if (std::memcmp(&mine.instr, &lead.instr, sizeof mine.instr) != 0 || mine.a_desc != lead.a_desc || mine.b_desc != lead.b_desc ||
        (mine.a_regs == nullptr) != (lead.a_regs == nullptr))
      m.fail(failure::protocol, fmt::format("{}: issues wgmma.mma_async m64n{} with descriptors A {:#x}, B {:#x}, while thread {} of its warpgroup "
                                            "issues m64n{} with A {:#x}, B {:#x}: one warpgroup, one instruction",
                                            m.who(), mine.instr.n, mine.a_desc, mine.b_desc, first, lead.instr.n, lead.a_desc, lead.b_desc));
    std::array<const unsigned*, 4> quad{};
    for (unsigned q = 0; q < 4; ++q) quad[q] = c.wgmma_issued[(t & ~3u) + q].a_regs;
    const tensor_core::smem_view view{c.smem, static_cast<std::size_t>(m.c_.code.smem_bytes), smem_window};
    if (auto e = tensor_core::wgmma(*s, static_cast<int>(t % 128), d, view, a_desc, a_regs ? &quad : nullptr, b_desc); !e.empty())
      m.fail(failure::protocol, fmt::format("{}: {}", m.who(), e));
    m.count_in(m.ctas_[m.me().cta].wg_meet[wg], 128, thread_t::waits::wgmma, wg, "wgmma.mma_async");
  }
  // Tensor memory: each CTA has its own (a host CTA has an SM to itself). alloc and dealloc are
  // .sync.aligned over a warp; lane 0 acts for it, and the other lanes read the address from the
  // slot only after a thread barrier, as on the GPU.
  // The CTAs a multicast mask names in the running thread's cluster (rank r: bit r), each one
  // still running; a mask naming none, or ranks past the cluster, is refused. `what` begins the
  // message about an exited CTA ("a multicast TMA load into").
  std::vector<int> mask_ctas(unsigned mask, const char* what) {
    auto const& cl = clusters_[ctas_[me().cta].cluster];
    if (mask == 0 || (mask >> cl.ctas.size()) != 0)
      fail(failure::protocol, fmt::format("{}: multicast mask {:#06x} must name CTAs of the cluster, which has {} (ranks 0..{})", who(), mask,
                                          cl.ctas.size(), cl.ctas.size() - 1));
    std::vector<int> out;
    for (unsigned r = 0; r < cl.ctas.size(); ++r)
      if (mask >> r & 1u) {
        if (ctas_[cl.ctas[r]].exited) fail(failure::protocol, fmt::format("{}: {} CTA rank {}, which has already exited", who(), what, r));
        out.push_back(cl.ctas[r]);
      }
    return out;
  }
  // The even CTA of `cta`'s pair: cluster ranks are x-fastest and axis 0's extent is even, so the
  // pair is ranks 2p and 2p + 1.
  int pair_leader_of(int cta) const {
    auto const& cl = clusters_[ctas_[cta].cluster];
    return cl.ctas[ctas_[cta].rank & ~1u];
  }
  tensor_core::tmem& tmem_of(int cta) {
    auto& c = ctas_[cta];
    if (!c.tmem) c.tmem = std::make_unique<tensor_core::tmem>();
    return *c.tmem;
  }
  static void api_tmem_alloc(unsigned slot, unsigned ncols) {
    auto& m = *active;
    m.preempt();
    if (m.me().regs.tid.x % 32 != 0) return;
    const unsigned off = m.smem_offset(slot, 4, "tcgen05.alloc's address slot");
    std::uint32_t address = 0;
    if (auto e = m.tmem_of(m.me().cta).alloc(ncols, address); !e.empty()) m.fail(failure::protocol, fmt::format("{}: {}", m.who(), e));
    std::memcpy(m.ctas_[m.me().cta].smem + off, &address, 4);
  }
  static void api_tmem_dealloc(unsigned taddr, unsigned ncols) {
    auto& m = *active;
    m.preempt();
    if (m.me().regs.tid.x % 32 != 0) return;
    if (auto e = m.tmem_of(m.me().cta).dealloc(taddr, ncols); !e.empty()) m.fail(failure::protocol, fmt::format("{}: {}", m.who(), e));
  }
  // tcgen05.mma completes when it is issued (one thread issues it; its commit then arrives at
  // once). The pair's instruction (an M = 256 instruction descriptor) also reads the odd CTA's
  // SMEM and writes its TMEM: the CTA of the next rank, whose SMEM is read through a copy only
  // under an address-space limit, where one CTA's SMEM slot is open at a time.
  static void api_tc_mma(unsigned d, unsigned long long a_desc, int a_tmem, unsigned a_taddr, unsigned long long b_desc, unsigned idesc,
                         unsigned accumulate, int kind) {
    auto& m = *active;
    m.preempt();
    const int cta = m.me().cta;
    const auto size = static_cast<std::size_t>(m.c_.code.smem_bytes);
    tensor_core::tc_cta issuer{{m.ctas_[cta].smem, size, smem_window}, &m.tmem_of(cta)};
    std::vector<unsigned char> peer_smem;
    tensor_core::tc_cta peer;
    const bool pair = ir::tcgen05::decode(idesc).m == 256;
    if (pair) {
      auto const& cl = m.clusters_[m.ctas_[cta].cluster];
      const unsigned rank = m.ctas_[cta].rank;
      if (rank % 2 != 0 || rank + 1 >= cl.ctas.size())
        m.fail(failure::protocol, fmt::format("{}: a cta_group::2 tcgen05.mma (M = 256) issued by CTA rank {} of a cluster of {}: the pair's MMA is "
                                              "issued by the even CTA of a pair",
                                              m.who(), rank, cl.ctas.size()));
      const int odd = cl.ctas[rank + 1];
      if (m.ctas_[odd].exited)
        m.fail(failure::protocol, fmt::format("{}: a cta_group::2 tcgen05.mma reads and writes CTA rank {}, which has already exited", m.who(), rank + 1));
      const unsigned char* odd_smem = m.ctas_[odd].smem;
      if (m.smem_.one_open()) {  // only the running CTA's slot is accessible: read the peer's through a copy
        m.smem_.open(m.ctas_[odd].slot);
        peer_smem.assign(odd_smem, odd_smem + size);
        m.smem_.open(m.ctas_[cta].slot);
        odd_smem = peer_smem.data();
      }
      peer = {{odd_smem, size, smem_window}, &m.tmem_of(odd)};
    }
    if (auto e = tensor_core::tc_mma(kind, idesc, d, a_desc, a_tmem != 0, a_taddr, b_desc, accumulate != 0, issuer, pair ? &peer : nullptr); !e.empty())
      m.fail(failure::protocol, fmt::format("{}: {}", m.who(), e));
  }
  // The block-scaled MMA and the copy of its scales (cta_group::1): complete when issued, as tc_mma.
  static void api_tc_mma_scaled(unsigned d, unsigned long long a_desc, unsigned long long b_desc, unsigned idesc, unsigned sfa, unsigned sfb,
                                unsigned accumulate, int kind) {
    auto& m = *active;
    m.preempt();
    const int cta = m.me().cta;
    tensor_core::tc_cta issuer{{m.ctas_[cta].smem, static_cast<std::size_t>(m.c_.code.smem_bytes), smem_window}, &m.tmem_of(cta)};
    const tensor_core::tc_scales scales{sfa, sfb};
    if (auto e = tensor_core::tc_mma(kind, idesc, d, a_desc, false, 0u, b_desc, accumulate != 0, issuer, nullptr,
                                     &scales);
        !e.empty())
      m.fail(failure::protocol, fmt::format("{}: {}", m.who(), e));
  }
  static void api_tc_cp(unsigned taddr, unsigned long long sdesc) {
    auto& m = *active;
    m.preempt();
    const int cta = m.me().cta;
    tensor_core::tc_cta issuer{{m.ctas_[cta].smem, static_cast<std::size_t>(m.c_.code.smem_bytes), smem_window}, &m.tmem_of(cta)};
    if (auto e = tensor_core::tc_cp(taddr, sdesc, issuer); !e.empty()) m.fail(failure::protocol, fmt::format("{}: {}", m.who(), e));
  }
  static void api_tc_commit(unsigned bar, unsigned cta_mask) {
    auto& m = *active;
    m.preempt();
    const int cta = m.me().cta;
    if (cta_mask == 0) {
      auto& b = m.bar_at(cta, bar, true);
      m.arrive(cta, bar, b, false);
    } else {
      for (int target : m.mask_ctas(cta_mask, "tcgen05.commit arriving in")) m.arrive(target, bar, m.bar_at(target, bar, true), false);
    }
    m.preempt();
  }
  // tcgen05.ld / st .32x32b: lane l of warp w reads or writes TMEM lane (address's lane) + l, and
  // a warp reaches only its sub-partition, lanes 32 (w % 4) to 32 (w % 4) + 31.
  std::uint32_t* tmem_row(unsigned taddr, int n, const char* what) {
    const unsigned t = me().regs.tid.x, warp = t / 32, lane0 = ir::tcgen05::tmem_lane(taddr), col = ir::tcgen05::tmem_column(taddr);
    if (lane0 != 32 * (warp % 4))
      fail(failure::protocol, fmt::format("{}: {} at TMEM lane {}: warp {} (warp {} of its warpgroup) reaches only lanes {}-{}", who(), what, lane0, warp,
                                          warp % 4, 32 * (warp % 4), 32 * (warp % 4) + 31));
    auto& tm = tmem_of(me().cta);
    if (!tm.allocated(col, static_cast<unsigned>(n)))
      fail(failure::protocol, fmt::format("{}: {} of {} columns from TMEM column {}: not all allocated (tcgen05.alloc)", who(), what, n, col));
    return &tm.at(lane0 + t % 32, col);
  }
  static void api_tmem_ld(unsigned taddr, unsigned* r, int n) {
    auto& m = *active;
    m.preempt();
    std::memcpy(r, m.tmem_row(taddr, n, "tcgen05.ld.32x32b"), static_cast<std::size_t>(n) * 4);
  }
  static void api_tmem_st(unsigned taddr, const unsigned* r, int n) {
    auto& m = *active;
    m.preempt();
    std::memcpy(m.tmem_row(taddr, n, "tcgen05.st.32x32b"), r, static_cast<std::size_t>(n) * 4);
  }
  static void api_cluster_sync() {
    auto& m = *active;
    m.preempt();
    auto& cl = m.clusters_[m.ctas_[m.me().cta].cluster];
    m.count_in(cl.sync, static_cast<unsigned>(cl.ctas.size()) * m.block_threads(), thread_t::waits::cluster, ~0u, "barrier.cluster");
  }
  static void api_bulk_commit() {
    auto& m = *active;
    m.preempt();
    auto& t = m.me();
    t.groups.push_back(std::move(t.open));
    t.open.clear();
  }
  static void api_bulk_wait(int n, int read_only) {
    auto& m = *active;
    m.preempt();
    for (;;) {
      auto& t = m.me();
      while (!t.groups.empty() && std::all_of(t.groups.front().begin(), t.groups.front().end(), [&](int op) { return m.ops_[op].write_done; }))
        t.groups.erase(t.groups.begin());
      bool done = true;
      const std::size_t older = t.groups.size() > static_cast<std::size_t>(std::max(n, 0)) ? t.groups.size() - static_cast<std::size_t>(std::max(n, 0)) : 0;
      for (std::size_t g = 0; g < older && done; ++g)
        for (int op : t.groups[g])
          if (!(read_only ? m.ops_[op].read_done : m.ops_[op].write_done)) done = false;
      if (done) return;
      m.block(thread_t::waits::bulk, static_cast<unsigned>(n), static_cast<unsigned>(read_only));
    }
  }
  static void api_tma_load(unsigned dst, const void* map, unsigned bar, unsigned mask, int multicast, int rank, const int* coords, int pair) {
    auto& m = *active;
    m.preempt();
    const int cta = m.me().cta;
    copy_op op;
    op.load = true;
    op.issuer = m.current_;
    op.cta = cta;
    op.map = m.decode(map, rank, "cp.async.bulk.tensor (load)");
    for (int d = 0; d < rank; ++d) op.coords[d] = coords[d];
    op.smem_off = m.smem_offset(dst, box_bytes(op.map), "the TMA load's destination");
    op.bar_off = m.smem_offset(bar, 8, "the TMA load's mbarrier");
    op.pair = pair != 0;
    auto const& cl = m.clusters_[m.ctas_[cta].cluster];
    if (op.pair && cl.ctas.size() % 2 != 0)
      m.fail(failure::protocol, fmt::format("{}: a .cta_group::2 TMA load in a cluster of {} CTA(s), which has no CTA pairs", m.who(), cl.ctas.size()));
    m.bar_at(op.pair ? m.pair_leader_of(cta) : cta, bar, true);
    op.dests = multicast ? m.mask_ctas(mask, "a multicast TMA load into") : std::vector<int>{cta};
    for (int d : op.dests) ++m.ctas_[d].loads_in;
    m.ops_.push_back(std::move(op));
    m.post({static_cast<int>(m.ops_.size() - 1), false});
  }
  static void api_tma_store(const void* map, unsigned src, int rank, const int* coords) { tma_store_or_reduce(map, src, rank, coords, 0, 0); }
  // semaphore_wait: take `value` from the counter once it holds that much; until then the thread
  // is blocked, and each signal of the counter wakes it to look again.
  static void api_sem_wait(int* counter, int value) {
    auto& m = *active;
    m.preempt();
    while (*counter < value) {
      m.me().sem = counter;
      m.block(thread_t::waits::semaphore, 0, static_cast<unsigned>(value));
    }
    m.me().sem = nullptr;
    *counter -= value;
  }
  static void api_sem_signalled(int* counter) {
    auto& m = *active;
    for (std::size_t t = 0; t < m.threads_.size(); ++t)
      if (m.threads_[t].st == thread_t::state::blocked && m.threads_[t].on == thread_t::waits::semaphore && m.threads_[t].sem == counter)
        m.wake(static_cast<int>(t));
    m.preempt();
  }
  static void api_tma_reduce(const void* map, unsigned src, int rank, const int* coords, int op, int kind) {
    tma_store_or_reduce(map, src, rank, coords, op, kind);
  }
  static void tma_store_or_reduce(const void* map, unsigned src, int rank, const int* coords, int reduce, int kind) {
    auto& m = *active;
    m.preempt();
    copy_op op;
    op.load = false;
    op.reduce = reduce;
    op.kind = kind;
    op.issuer = m.current_;
    op.cta = m.me().cta;
    op.map = m.decode(map, rank, "cp.async.bulk.tensor (store)");
    for (int d = 0; d < rank; ++d) op.coords[d] = coords[d];
    op.smem_off = m.smem_offset(src, box_bytes(op.map), "the TMA store's source");
    ++m.ctas_[op.cta].store_reads;
    m.ops_.push_back(std::move(op));
    const int id = static_cast<int>(m.ops_.size() - 1);
    m.me().open.push_back(id);
    m.post({id, false});
  }
  static unsigned short api_f32_to_f16(float f) { return stagecraft::f32_to_f16(f); }
  static float api_f16_to_f32(unsigned short h) { return stagecraft::f16_to_f32(h); }
  static unsigned short api_f32_to_bf16(float f) { return stagecraft::f32_to_bf16(f); }

 private:
  // ---- setup -----------------------------------------------------------------------------------
  unsigned block_threads() const { return static_cast<unsigned>(c_.code.block_threads); }

  void setup() {
    if (buffers_.size() != k_.params.size())
      throw std::invalid_argument(fmt::format("kernel '{}' takes {} GMEM buffer(s), {} given", k_.name, k_.params.size(), buffers_.size()));
    for (std::size_t p = 0; p < k_.params.size(); ++p)
      if (buffers_[p].dtype != k_.params[p].dtype || buffers_[p].shape != k_.params[p].shape)
        throw std::invalid_argument(fmt::format("kernel '{}': buffer {} ('{}') must be {} {}", k_.name, p, k_.params[p].name,
                                                ir::dtype_name(k_.params[p].dtype), fmt::join(k_.params[p].shape, "x")));
    check_segment_tables(k_, buffers_);
    // The SMEM allocations TMA stores read from: the only bytes whose async view matters.
    const auto offsets = ir::smem_offsets(k_);
    for (auto const& st : k_.stmts) {
      if (st.op != ir::StmtOp::copy_smem_to_gmem) continue;
      const int a = k_.refs[st.refs[0]].id;
      std::size_t bytes = static_cast<std::size_t>(ir::dtype_bits(k_.allocs[a].dtype) / 8);
      for (auto e : k_.allocs[a].shape) bytes *= static_cast<std::size_t>(e);
      const auto range = std::pair{static_cast<std::size_t>(offsets[a]), bytes};
      if (std::find(store_sources_.begin(), store_sources_.end(), range) == store_sources_.end()) store_sources_.push_back(range);
    }
    // CTAs, grouped by cluster; threads.
    const auto& g = k_.grid;
    const auto& cd = k_.cluster;
    const std::array<std::int64_t, 3> nclusters{g[0] / cd[0], g[1] / cd[1], g[2] / cd[2]};
    const unsigned bt = block_threads();
    for (std::int64_t cz = 0; cz < nclusters[2]; ++cz)
      for (std::int64_t cy = 0; cy < nclusters[1]; ++cy)
        for (std::int64_t cx = 0; cx < nclusters[0]; ++cx) {
          cluster_t cl;
          for (std::int64_t z = 0; z < cd[2]; ++z)
            for (std::int64_t y = 0; y < cd[1]; ++y)
              for (std::int64_t x = 0; x < cd[0]; ++x) {
                cta_t c;
                c.id = {static_cast<unsigned>(cx * cd[0] + x), static_cast<unsigned>(cy * cd[1] + y), static_cast<unsigned>(cz * cd[2] + z)};
                c.cluster = static_cast<int>(clusters_.size());
                c.rank = static_cast<unsigned>(x + y * cd[0] + z * cd[0] * cd[1]);
                c.first_thread = static_cast<int>(threads_.size());
                for (unsigned t = 0; t < bt; ++t) {
                  thread_t th;
                  th.cta = static_cast<int>(ctas_.size());
                  auto& r = th.regs;
                  r.tid = {t, 0, 0};
                  r.ctaid = {c.id[0], c.id[1], c.id[2]};
                  r.ntid = {bt, 1, 1};
                  r.nctaid = {static_cast<unsigned>(g[0]), static_cast<unsigned>(g[1]), static_cast<unsigned>(g[2])};
                  r.cluster_ctaid = {static_cast<unsigned>(x), static_cast<unsigned>(y), static_cast<unsigned>(z)};
                  r.cluster_nctaid = {static_cast<unsigned>(cd[0]), static_cast<unsigned>(cd[1]), static_cast<unsigned>(cd[2])};
                  r.cluster_ctarank = c.rank;
                  r.smem_window = smem_window;
                  threads_.push_back(std::move(th));
                }
                cl.ctas.push_back(static_cast<int>(ctas_.size()));
                ctas_.push_back(std::move(c));
              }
          cl.live_ctas = static_cast<int>(cl.ctas.size());
          clusters_.push_back(std::move(cl));
        }
    // The schedule: the reference one for seed 0; otherwise a cluster order, how many clusters
    // are resident at once and how eagerly async work completes, all drawn from the seed.
    order_.resize(clusters_.size());
    for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int>(i);
    resident_limit_ = order_.size();
    // A kernel with semaphores may make a CTA wait for one launched before it (ops/semaphore.hpp):
    // it keeps launch order, as the GPU dispatches CTAs; the residency and the rest still vary.
    const bool in_order = std::any_of(k_.stmts.begin(), k_.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::semaphore_wait; });
    if (o_.seed != 0) {
      if (!in_order)
        for (std::size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng_.below(i)]);
      const std::size_t limits[] = {1, 2, 3, order_.size()};
      resident_limit_ = std::max<std::size_t>(1, std::min(order_.size(), limits[rng_.below(4)]));
      // Three kinds of schedule, by seed % 3:
      //  1: uniform: every step picks among runnable threads and pending events, with a
      //     seed-drawn bias for events;
      //  2: lazy, as late as the hardware may be: events complete only when no thread can run,
      //     the one with the highest random priority first, so any copy can be overtaken by any
      //     later one (a store's SMEM read by the refill that follows it);
      //  0: priorities, PCT-like: every warpgroup and every event gets a random priority and
      //     the highest runnable one goes, so one warpgroup can run far ahead of another (a
      //     producer refilling a stage while its consumer is still reading it).
      mode_ = o_.seed % 3 == 1 ? mode::uniform : o_.seed % 3 == 2 ? mode::lazy : mode::priority;
      const double biases[] = {0.02, 0.15, 0.5, 0.9};
      async_bias_ = mode_ == mode::uniform ? biases[rng_.below(4)] : 0.0;
      wg_priority_.resize(ctas_.size() * static_cast<std::size_t>(k_.roles));
      for (auto& p : wg_priority_) p = rng_.next();
    }
    // Waves: never more than max_resident_threads' worth of whole clusters at once (at least
    // one cluster, however large), whatever the seed drew; a grid that fits is all resident
    // under seed 0, as before.
    const std::size_t cluster_ctas = clusters_.empty() ? 1 : clusters_[0].ctas.size();
    const std::size_t cluster_threads = cluster_ctas * bt;
    resident_cap_ = std::max<std::size_t>(1, max_resident_threads / std::max<std::size_t>(1, cluster_threads));
    resident_limit_ = std::min(resident_limit_, resident_cap_);
    lay_out(resident_limit_ * cluster_ctas, resident_limit_ * cluster_threads);
    // GMEM: 256-byte aligned copies, as cuMemAlloc gives. A workspace starts as zeros whatever
    // its slot holds, as cuMemsetD8 leaves it on the GPU.
    for (std::size_t p = 0; p < buffers_.size(); ++p) {
      auto const& b = buffers_[p];
      gmem_storage_.emplace_back(b.bytes.size(), gmem_guard_, gmem_guard_, 256);
      if (k_.params[p].workspace) std::memset(gmem_storage_.back().data(), 0, b.bytes.size());
      else std::memcpy(gmem_storage_.back().data(), b.bytes.data(), b.bytes.size());
      gmem_.push_back(gmem_storage_.back().data());
    }
    for (auto const& x : k_.extents) extents_.push_back(x.value);
    // Tensor maps: the checks and the parameters of cuTensorMapEncodeTiled (cuda/runtime.cpp),
    // over this run's shapes (a compiled kernel with run-time extents serves others too).
    maps_.resize(c_.code.maps.size());
    for (std::size_t i = 0; i < maps_.size(); ++i) {
      auto const& spec = c_.code.maps[i];
      const auto a = cuda::encode_args({k_.params[spec.param].name, spec.dtype, reinterpret_cast<std::uintptr_t>(gmem_[spec.param]), k_.params[spec.param].shape,
                                        spec.box, spec.swizzle, spec.elem_strides, spec.nan_fill});
      schost::tensor_map t{};
      t.magic = schost::tensor_map_magic;
      t.global_address = reinterpret_cast<std::uintptr_t>(gmem_[spec.param]);
      t.rank = a.rank;
      t.elem_bytes = static_cast<unsigned>(ir::dtype_bits(spec.dtype) / 8);
      t.swizzle = static_cast<unsigned>(spec.swizzle);
      t.nan_fill = spec.nan_fill ? 1u : 0u;
      t.unit_bits = static_cast<unsigned>(ir::unit_bits(spec.dtype));
      for (unsigned d = 0; d < t.rank; ++d) {
        t.dims[d] = a.dims[d];
        if (d > 0) t.strides[d - 1] = a.strides[d - 1];
        t.box[d] = static_cast<unsigned short>(a.box[d]);
        t.elem_strides[d] = static_cast<unsigned char>(a.elem_strides[d]);
      }
      std::memcpy(maps_[i].word, &t, sizeof t);
    }
    api_.current = &current_regs_;
    api_.mbar_init = &api_mbar_init;
    api_.mbar_fence_init = &api_mbar_fence_init;
    api_.mbar_arrive = &api_mbar_arrive;
    api_.mbar_arrive_remote = &api_mbar_arrive_remote;
    api_.mbar_wait = &api_mbar_wait;
    api_.fence_proxy_async = &api_fence_proxy_async;
    api_.bar_sync = &api_bar_sync;
    api_.bar_arrive = &api_bar_arrive;
    api_.bulk_commit = &api_bulk_commit;
    api_.bulk_wait = &api_bulk_wait;
    api_.cluster_sync = &api_cluster_sync;
    api_.tma_load = &api_tma_load;
    api_.tma_store = &api_tma_store;
    api_.tma_reduce = &api_tma_reduce;
    api_.sem_wait = &api_sem_wait;
    api_.sem_signalled = &api_sem_signalled;
    api_.f32_to_f16 = &api_f32_to_f16;
    api_.f16_to_f32 = &api_f16_to_f32;
    api_.f32_to_bf16 = &api_f32_to_bf16;
    api_.shfl_xor = &api_shfl_xor;
    api_.shfl_idx = &api_shfl_idx;
    api_.warp_sync = &api_warp_sync;
    api_.clc_try_cancel = &api_clc_try_cancel;
    api_.clc_query = &api_clc_query;
    api_.stmatrix = &api_stmatrix;
    api_.wgmma = &api_wgmma;
    api_.tmem_alloc = &api_tmem_alloc;
    api_.tmem_dealloc = &api_tmem_dealloc;
    api_.tc_mma = &api_tc_mma;
    api_.tc_commit = &api_tc_commit;
    api_.tc_mma_scaled = &api_tc_mma_scaled;
    api_.tc_cp = &api_tc_cp;
    api_.tmem_ld = &api_tmem_ld;
    api_.tmem_st = &api_tmem_st;
    c_.mod->bind(&api_);
  }

  // Where SMEM and the GMEM guards go, for `ctas` resident CTAs and `threads` resident threads.
  // With no address-space limit, as ever: each CTA's SMEM its own mapping with a 4 GiB tail,
  // 1 GiB of guard either side of each GMEM buffer. Under a limit (ulimit -v), if that does not
  // fit, the SMEM slots share one tail (smem_arena) and the GMEM guards shrink to what is left,
  // so the run goes on with every SMEM offset still guarded and GMEM guarded less far.
  void lay_out(std::size_t ctas, std::size_t threads) {
    const std::size_t left = address_space_left();
    const std::size_t smem = static_cast<std::size_t>(c_.code.smem_bytes);
    const std::size_t span = round_up(std::max<std::size_t>(smem, 1), page_size());
    std::size_t fixed = threads * (fiber_stack + stack_guard) + ctas * smem  // stacks, async views
                        + (std::size_t{256} << 20);  // the run's own heap (ops, events, copies), with room to spare
    for (auto const& b : buffers_) fixed += round_up(std::max<std::size_t>(b.bytes.size(), 1), page_size());
    const std::size_t guards = 2 * buffers_.size();
    const std::size_t separate = fixed + ctas * (smem_arena::lead + span + smem_guard_after) + guards * gmem_guard_max;
    if (left == SIZE_MAX || separate <= left) {
      smem_.init(smem, ctas, false);
      gmem_guard_ = gmem_guard_max;
      return;
    }
    smem_.init(smem, ctas, true);
    const std::size_t shared = fixed + smem_arena::lead + ctas * span + smem_guard_after;
    const std::size_t room = left > shared && guards > 0 ? (left - shared) / guards : 0;
    gmem_guard_ = std::clamp(room / page_size() * page_size(), page_size(), gmem_guard_max);
  }

  void admit(int cluster) {
    for (int ci : clusters_[cluster].ctas) {
      auto& c = ctas_[ci];
      // Never-written SMEM reads as NaN / all ones, so a read of it shows in the results.
      c.slot = smem_.take();  // open
      c.smem = smem_.data(c.slot);
      ASAN_UNPOISON_MEMORY_REGION(c.smem, smem_.size());  // stale fiber-stack poison (stack_pool says why)
      std::memset(c.smem, 0xff, smem_.size());
      c.async_smem.assign(smem_.size(), 0xff);
      c.started = true;
      c.live = static_cast<int>(block_threads());
      c.warps.assign((block_threads() + 31) / 32, counting_barrier{});
      c.shuffled.assign(block_threads(), 0);
      c.stmatrix_issued.assign(block_threads(), {});
      c.wg_meet.assign((block_threads() + 127) / 128, counting_barrier{});
      c.wgmma_issued.assign(block_threads(), {});
      for (int t = c.first_thread; t < c.first_thread + static_cast<int>(block_threads()); ++t) {
        threads_[t].regs.smem = c.smem;
        threads_[t].fib = ctx::fiber(std::allocator_arg, pooled_stack{&stacks_}, [this, t](ctx::fiber&& back) {
          threads_[t].back = std::move(back);
          try {
            c_.mod->entry(maps_.data(), gmem_.data(), extents_.data());
          } catch (abort_run& a) {
            if (kind_ == failure::none) {
              kind_ = a.kind;
              message_ = std::move(a.message);
            }
          }
          threads_[t].st = thread_t::state::done;
          return std::move(threads_[t].back);
        });
        threads_[t].st = thread_t::state::ready;
        ready_.push_back(t);
      }
    }
    ++resident_;
  }

  // ---- the scheduler ---------------------------------------------------------------------------
  void loop() {
    while (kind_ == failure::none) {
      while (resident_ < resident_limit_ && next_cluster_ < order_.size()) admit(order_[next_cluster_++]);
      if (ready_.empty() && events_.empty()) {
        if (next_cluster_ == order_.size() && resident_ == 0) return;
        report_deadlock();
        return;
      }
      if (++steps_ > o_.max_steps) {
        kind_ = failure::step_limit;
        message_ = fmt::format("kernel '{}' (host, seed {}): the step budget of {} ran out (a loop that does not end?)", k_.name, o_.seed, o_.max_steps);
        return;
      }
      // Which event, which thread (index into events_ / ready_), by the schedule's kind.
      std::size_t ev = 0, th = 0;
      bool take_event = false;
      switch (mode_) {
        case mode::reference:  // events at once, threads round-robin
          take_event = !events_.empty();
          break;
        case mode::uniform:
          take_event = !events_.empty() && (ready_.empty() || rng_.unit() < async_bias_);
          if (take_event) ev = rng_.below(events_.size());
          else th = rng_.below(ready_.size());
          break;
        case mode::lazy:
          take_event = ready_.empty();
          if (take_event) ev = highest_event();
          else th = rng_.below(ready_.size());
          break;
        case mode::priority: {
          std::uint64_t best = 0;
          for (std::size_t i = 0; i < ready_.size(); ++i)
            if (const auto p = wg_priority_of(ready_[i]); i == 0 || p > best) {
              best = p;
              th = i;
            }
          if (!events_.empty()) {
            ev = highest_event();
            take_event = ready_.empty() || events_[ev].priority > best;
          }
          break;
        }
      }
      if (take_event) {
        const event e = events_[ev];
        events_.erase(events_.begin() + static_cast<std::ptrdiff_t>(ev));
        try {
          complete(e);
        } catch (abort_run& a) {
          kind_ = a.kind;
          message_ = std::move(a.message);
        }
      } else {
        const int t = ready_[th];
        if (th == 0) {
          ready_.pop_front();
        } else if (mode_ == mode::priority) {  // keep the order: ties go to the longest waiting
          ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(th));
        } else {  // order does not matter to a uniform pick
          ready_[th] = ready_.back();
          ready_.pop_back();
        }
        resume(t);
      }
    }
  }

  std::size_t highest_event() const {
    return static_cast<std::size_t>(
        std::max_element(events_.begin(), events_.end(), [](event const& a, event const& b) { return a.priority < b.priority; }) - events_.begin());
  }
  std::uint64_t wg_priority_of(int t) const {
    return wg_priority_[static_cast<std::size_t>(threads_[t].cta) * static_cast<std::size_t>(k_.roles) + threads_[t].regs.tid.x / 128];
  }

  void complete_try_cancel(copy_op& op) {
    unsigned words[4] = {0, 0, 0, 0};
    if (next_cluster_ < order_.size()) {  // not resident yet: cancel it, it never starts
      const int victim = order_[next_cluster_];
      order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(next_cluster_));
      auto const& first = ctas_[clusters_[victim].ctas.front()];
      words[0] = 1;
      std::copy(first.id.begin(), first.id.end(), words + 1);
    }
    auto& c = ctas_[op.cta];
    smem_.open(c.slot);
    std::memcpy(c.smem + op.smem_off, words, 16);
    std::memcpy(&c.async_smem[op.smem_off], words, 16);
    --c.loads_in;
    auto it = c.bars.find(op.bar_off);
    if (it == c.bars.end())
      fail(failure::protocol, fmt::format("a try_cancel issued by CTA ({}) completes on {}, which was never initialised", fmt::join(c.id, ", "),
                                          bar_name(op.cta, smem_window + op.bar_off)));
    add_tx(op.cta, smem_window + op.bar_off, it->second, -16, "complete_tx");
    try_complete(it->second);
    op.read_done = op.write_done = true;
  }

  void post(event e) {
    e.priority = rng_.next();
    events_.push_back(e);
  }

  void resume(int t) {
    auto& th = threads_[t];
    smem_.open(ctas_[th.cta].slot);  // shared SMEM slots: only the running CTA's is accessible
    th.st = thread_t::state::running;
    current_ = t;
    current_regs_ = &th.regs;
    // The fault handler jumps back here when the thread touches memory it has no business with
    // (no signal mask is saved: the handler runs with SA_NODEFER).
    if (sigsetjmp(fault_jump_, 0) != 0) {
      current_regs_ = nullptr;
      // The thread's fiber cannot be resumed or unwound: it and the scheduler continuation it
      // holds are abandoned, never destroyed (its stack never goes back to the pool; the pool
      // unmaps it when the run ends).
      new ctx::fiber(std::move(th.back));
      th.st = thread_t::state::done;
      kind_ = failure::memory_fault;
      message_ = describe_fault(t, fault_address_);
      return;
    }
    th.fib = std::move(th.fib).resume();
    current_regs_ = nullptr;
    if (th.st == thread_t::state::done) exited(t);
  }

 public:
  // From the SIGSEGV/SIGBUS handler: is a kernel thread running (else the fault is ours)?
  bool in_kernel() const { return current_regs_ != nullptr; }
  [[noreturn]] void faulted(void* address) {
    fault_address_ = address;
    siglongjmp(fault_jump_, 1);
  }

 private:
  // A semaphore counter, as the kernel names it: 'turn' element 3.
  std::string gmem_place(const int* a) const {
    for (std::size_t p = 0; p < gmem_storage_.size(); ++p)
      if (gmem_storage_[p].contains(a)) return fmt::format("'{}' element {}", k_.params[p].name, gmem_storage_[p].offset_of(a) / 4);
    return fmt::format("{}", static_cast<const void*>(a));
  }
  std::string where(const void* a) const {
    if (const int s = smem_.owner(a); s >= 0)
      for (auto const& c : ctas_)
        if (c.slot == s)
          return fmt::format("SMEM offset {} of CTA ({}), which has {} bytes", static_cast<const unsigned char*>(a) - c.smem, fmt::join(c.id, ", "),
                             smem_.size());
    if (stacks_.in_guard(a))
      return fmt::format("the guard pages below its stack: the thread overflowed its {} KiB stack (deep recursion or large local arrays)",
                         fiber_stack / 1024);
    for (std::size_t p = 0; p < gmem_storage_.size(); ++p)
      if (gmem_storage_[p].contains(a)) {
        const auto off = gmem_storage_[p].offset_of(a);
        return fmt::format("byte {} of GMEM parameter '{}', which has {} bytes", off, k_.params[p].name, gmem_storage_[p].size());
      }
    if (gmem_guard_ < gmem_guard_max)
      return fmt::format("an address in no buffer of the kernel (a wild index; the address-space limit left {} KiB of guard either side of "
                         "each GMEM buffer instead of {} MiB)", gmem_guard_ / 1024, gmem_guard_max >> 20);
    return "an address in no buffer of the kernel (a wild index)";
  }
  std::string describe_fault(int t, const void* a) const {
    auto const& th = threads_[t];
    return fmt::format("kernel '{}' (host, seed {}): CTA ({}) thread {} (warpgroup {}, lane {}) accessed {} (address {})", k_.name, o_.seed,
                       fmt::join(ctas_[th.cta].id, ", "), th.regs.tid.x, th.regs.tid.x / 128, th.regs.tid.x % 128, where(a), a);
  }
  // Bytes past a buffer's end but within its last page do not fault; their canary tells.
  void check_slack(guarded const& g, std::string const& what) {
    if (kind_ != failure::none) return;
    if (const auto n = g.slack_written(); n > 0) {
      kind_ = failure::memory_fault;
      message_ = fmt::format("kernel '{}' (host, seed {}): {} byte(s) just past the end of {} ({} bytes) were written", k_.name, o_.seed, n, what, g.size());
    }
  }

 public:
  void check_gmem_slack() {
    for (std::size_t p = 0; p < gmem_storage_.size(); ++p) check_slack(gmem_storage_[p], fmt::format("GMEM parameter '{}'", k_.params[p].name));
  }

 private:

  // Called by the running thread: park it (ready or blocked) and go back to the scheduler.
  void yield_to_scheduler() {
    const int me = current_;
    threads_[me].back = std::move(threads_[me].back).resume();
  }
  // Every prelude call starts here: the thread ran plain code since its last call, so its
  // CTA's generic SMEM may have changed; then any other thread or event may go first.
  void preempt() {
    auto& t = me();
    ctas_[t.cta].generic_dirty = true;
    t.st = thread_t::state::ready;
    t.on = thread_t::waits::nothing;
    ready_.push_back(current_);
    yield_to_scheduler();
  }
  void block(thread_t::waits on, unsigned a, unsigned b) {
    auto& t = me();
    t.st = thread_t::state::blocked;
    t.on = on;
    t.wait_a = a;
    t.wait_b = b;
    yield_to_scheduler();
  }
  void wake(int t) {
    auto& th = threads_[t];
    if (th.st != thread_t::state::blocked) return;
    th.st = thread_t::state::ready;
    th.on = thread_t::waits::nothing;
    ready_.push_back(t);
  }

  void exited(int t) {
    auto& c = ctas_[threads_[t].cta];
    if (--c.live > 0) return;
    c.exited = true;
    if (kind_ == failure::none)
      if (const auto n = smem_.slack_written(c.slot); n > 0) {
        kind_ = failure::memory_fault;
        message_ = fmt::format("kernel '{}' (host, seed {}): {} byte(s) just past the end of the SMEM of CTA ({}) ({} bytes) were written", k_.name,
                               o_.seed, n, fmt::join(c.id, ", "), smem_.size());
      }
    if (kind_ == failure::none && (c.store_reads > 0 || c.loads_in > 0)) {
      kind_ = failure::pending_at_exit;
      message_ = fmt::format("kernel '{}' (host, seed {}): CTA ({}) exits (and releases its SMEM) while {} TMA store(s) still read it and {} TMA "
                             "load(s) still write it", k_.name, o_.seed, fmt::join(c.id, ", "), c.store_reads, c.loads_in);
    }
    auto& cl = clusters_[c.cluster];
    if (--cl.live_ctas == 0) {
      --resident_;
      for (int ci : cl.ctas) {
        for (int th = ctas_[ci].first_thread; th < ctas_[ci].first_thread + static_cast<int>(block_threads()); ++th) threads_[th].fib = {};
        smem_.give(ctas_[ci].slot);
        ctas_[ci].slot = -1;
        ctas_[ci].smem = nullptr;
        // A retired CTA keeps nothing: with waves, thousands of them come and go in one run.
        release(ctas_[ci].async_smem);
        release(ctas_[ci].bars);
        release(ctas_[ci].warps);
        release(ctas_[ci].shuffled);
        release(ctas_[ci].stmatrix_issued);
        release(ctas_[ci].wg_meet);
        release(ctas_[ci].wgmma_issued);
        // Every TMEM allocation freed before its CTA ends (the hardware requires it).
        if (auto const& t = ctas_[ci].tmem; t && kind_ == failure::none)
          if (const auto used = std::count_if(t->owner.begin(), t->owner.end(), [](unsigned o) { return o != 0; }); used > 0) {
            kind_ = failure::protocol;
            message_ = fmt::format("kernel '{}' (host, seed {}): CTA ({}) ended with {} TMEM column(s) still allocated: every tcgen05.alloc needs its "
                                   "tcgen05.dealloc before the CTA exits",
                                   k_.name, o_.seed, fmt::join(ctas_[ci].id, ", "), used);
          }
        ctas_[ci].tmem.reset();
      }
    }
  }

  // ---- barriers --------------------------------------------------------------------------------
  thread_t& me() { return threads_[current_]; }

  [[noreturn]] void fail(failure f, std::string what) { throw abort_run{f, fmt::format("kernel '{}' (host, seed {}): {}", k_.name, o_.seed, what)}; }

  std::string who() {
    auto const& t = me();
    auto const& c = ctas_[t.cta];
    return fmt::format("CTA ({}) thread {} (warpgroup {}, lane {})", fmt::join(c.id, ", "), t.regs.tid.x, t.regs.tid.x / 128,
                       t.regs.tid.x % 128);
  }

  // SMEM byte offset of a shared-window address covering `bytes`, or a failure naming `what`.
  unsigned smem_offset(unsigned addr, std::uint64_t bytes, const char* what) {
    const auto size = static_cast<std::uint64_t>(c_.code.smem_bytes);
    if (addr < smem_window || addr - smem_window + bytes > size)
      fail(failure::protocol, fmt::format("{}: {} at shared address {:#x} ({} bytes) lies outside the CTA's {} bytes of dynamic SMEM at {:#x}", who(),
                                          what, addr, bytes, size, smem_window));
    return addr - smem_window;
  }

  // Which barrier element an SMEM offset is, as `stagecraft show` names it.
  std::string bar_name(int cta, unsigned addr) const {
    const auto offsets = ir::smem_offsets(k_);
    const unsigned off = addr - smem_window;
    for (std::size_t a = 0; a < k_.allocs.size(); ++a) {
      auto const& al = k_.allocs[a];
      if (al.kind != ir::AllocKind::barrier && al.kind != ir::AllocKind::cluster_barrier) continue;
      std::int64_t n = 1;
      for (auto e : al.shape) n *= e;
      const auto first = static_cast<std::uint64_t>(offsets[a]);
      if (off < first || off >= first + 8 * static_cast<std::uint64_t>(n) || (off - first) % 8 != 0) continue;
      std::int64_t e = static_cast<std::int64_t>((off - first) / 8);
      std::vector<std::int64_t> idx(al.shape.size());
      for (int d = static_cast<int>(al.shape.size()) - 1; d >= 0; --d) {
        idx[d] = e % al.shape[d];
        e /= al.shape[d];
      }
      return fmt::format("mbarrier {}{}[{}] of CTA ({})", al.kind == ir::AllocKind::cluster_barrier ? "cb" : "b", a, fmt::join(idx, "]["),
                         fmt::join(ctas_[cta].id, ", "));
    }
    return fmt::format("the mbarrier at SMEM offset {:#x} of CTA ({}) (no barrier allocation there)", off, fmt::join(ctas_[cta].id, ", "));
  }

  mbarrier& bar_at(int cta, unsigned addr, bool must_be_initialised) {
    const unsigned off = smem_offset(addr, 8, "an mbarrier");
    if (off % 8 != 0) fail(failure::protocol, fmt::format("{}: mbarrier at shared address {:#x} is not 8-byte aligned", who(), addr));
    auto& bars = ctas_[cta].bars;
    auto it = bars.find(off);
    if (it == bars.end()) {
      if (must_be_initialised) fail(failure::protocol, fmt::format("{}: uses {} before mbarrier.init", who(), bar_name(cta, addr)));
      it = bars.emplace(off, mbarrier{}).first;
    }
    return it->second;
  }

  std::string bar_state(mbarrier const& b) const {
    return fmt::format("it is in phase {} (parity {}) with {} of {} arrival(s) and {} tx byte(s) pending", b.phase, b.phase & 1u, b.pending,
                       b.expected, b.tx);
  }

  void add_tx(int cta, unsigned addr, mbarrier& b, long long delta, const char* what) {
    b.tx += delta;
    if (b.tx > tx_limit || b.tx < -tx_limit) {
      const auto msg = fmt::format("{} of {} bytes on {} takes its tx-count to {}, outside the mbarrier's range of +-{}", what, delta,
                                   bar_name(cta, addr), b.tx, tx_limit);
      if (current_regs_) fail(failure::protocol, who() + ": " + msg);
      fail(failure::protocol, msg);
    }
  }
  void arrive(int cta, unsigned addr, mbarrier& b, bool remote) {
    if (b.pending == 0)
      fail(failure::protocol, fmt::format("{}: arrival on {}, but {}", who(), bar_name(cta, addr), bar_state(b)));
    b.remote = b.remote || remote;
    --b.pending;
    try_complete(b);
  }
  void try_complete(mbarrier& b) {
    if (b.pending != 0 || b.tx != 0) return;
    ++b.phase;
    b.pending = b.expected;
    for (int w : b.waiters) wake(w);
    b.waiters.clear();
  }

  // bar.sync id (or the cluster barrier, id ~0u): the last of `threads` arrivals releases all.
  // wait = false: bar.arrive, which counts itself in and goes on.
  void count_in(counting_barrier& cb, unsigned threads, thread_t::waits on, unsigned id, const char* what, bool wait = true) {
    if (cb.arrived == 0) cb.expected = threads;
    else if (cb.expected != threads)
      fail(failure::protocol, fmt::format("{}: {}{} with {} threads while others wait on it with {}", who(), what,
                                          id == ~0u ? std::string() : fmt::format(" {}", id), threads, cb.expected));
    if (++cb.arrived == cb.expected) {
      cb.arrived = 0;
      ++cb.generation;
      for (int w : cb.waiters) wake(w);
      cb.waiters.clear();
      return;
    }
    if (!wait) return;
    const auto gen = cb.generation;
    cb.waiters.push_back(current_);
    while (cb.generation == gen) block(on, id, threads);
  }

  // ---- TMA ---------------------------------------------------------------------------------------
  schost::tensor_map decode(const void* p, int rank, const char* what) {
    schost::tensor_map m;
    std::memcpy(&m, p, sizeof m);
    if (m.magic != schost::tensor_map_magic)
      fail(failure::protocol, fmt::format("{}: {} was given a tensor map the host runtime did not encode", who(), what));
    if (static_cast<unsigned>(rank) != m.rank)
      fail(failure::protocol, fmt::format("{}: {} is a {}d copy but its tensor map has rank {}", who(), what, rank, m.rank));
    return m;
  }
  // Elements of dimension d that land in SMEM: ceil(boxDim / elementStride); the driver ignores
  // the innermost stride (interleave NONE).
  static unsigned landed(schost::tensor_map const& m, unsigned d) {
    const unsigned st = d == 0 || m.elem_strides[d] == 0 ? 1u : m.elem_strides[d];
    return (m.box[d] + st - 1) / st;
  }
  static unsigned step(schost::tensor_map const& m, unsigned d) { return d == 0 || m.elem_strides[d] == 0 ? 1u : m.elem_strides[d]; }
  static std::uint64_t box_elements(schost::tensor_map const& m) {
    std::uint64_t n = 1;
    for (unsigned d = 0; d < m.rank; ++d) n *= landed(m, d);
    return n;
  }
  static std::uint64_t box_bytes(schost::tensor_map const& m) { return box_elements(m) * m.elem_bytes; }

  // The swizzle modes of cp.async.bulk.tensor, on the shared-window address: within every
  // span of 8 x 16-byte chunks... the 16-byte chunk index (bits 4..) is XORed with the index of
  // the 128-byte line (bits 7..), over log2(swizzle / 16) bits.
  static unsigned swizzled(unsigned addr, unsigned swizzle) {
    if (swizzle == 0) return addr;
    const unsigned bits = swizzle / 16 - 1;  // 128B: 3 bits, 64B: 2, 32B: 1
    const unsigned line = (addr / 128) & bits;
    return addr ^ (line * 16);
  }

  // Calls f(gmem pointer or null when out of bounds, SMEM offset) for every element of a box
  // that lands: with element strides, every stride-th of the traversed box, densely in SMEM. A
  // unit-packed map's element is no byte: the pointer is its row's, and f gets the element's place
  // in the row as a third argument (the code at bits unit_bits * c of the row).
  template <class F>
  void for_box(copy_op const& op, F&& f) const {
    auto const& m = op.map;
    std::array<std::uint64_t, 5> i{};
    const std::uint64_t n = box_elements(m);
    for (std::uint64_t l = 0; l < n; ++l) {
      std::uint64_t rest = l;
      bool in = true;
      std::uint64_t g = m.global_address;
      for (unsigned d = 0; d < m.rank; ++d) {
        i[d] = rest % landed(m, d);
        rest /= landed(m, d);
        const long long c = op.coords[d] + static_cast<long long>(i[d] * step(m, d));
        if (c < 0 || static_cast<unsigned long long>(c) >= m.dims[d]) in = false;
        if (d > 0 || !m.unit_bits) g += static_cast<std::uint64_t>(c) * (d == 0 ? m.elem_bytes : m.strides[d - 1]);
      }
      const unsigned off = swizzled(smem_window + op.smem_off + static_cast<unsigned>(l * m.elem_bytes), m.swizzle) - smem_window;
      if constexpr (std::is_invocable_v<F, unsigned char*, unsigned, long long>)
        f(in ? reinterpret_cast<unsigned char*>(g) : nullptr, off, op.coords[0] + static_cast<long long>(i[0]));
      else f(in ? reinterpret_cast<unsigned char*>(g) : nullptr, off);
    }
  }

  void complete(event e) {
    auto& op = ops_[e.op];
    if (op.clc) {
      complete_try_cancel(op);
      return;
    }
    const unsigned eb = op.map.elem_bytes;
    if (op.load) {
      std::vector<unsigned char> bytes(box_bytes(op.map));
      std::vector<unsigned> offs;
      offs.reserve(box_elements(op.map));
      std::size_t l = 0;
      for_box(op, [&](unsigned char* g, unsigned off, long long inner) {
        if (g && op.map.unit_bits) bytes[l] = static_cast<unsigned char>(ir::mx::unit_get(static_cast<int>(op.map.unit_bits), g, inner));  // the code; outside, 0
        else if (g) copy_element(&bytes[l * eb], g, eb);
        else if (op.map.nan_fill) copy_element(&bytes[l * eb], oob_nan(eb), eb);  // else zeros: OOB_FILL_NONE
        offs.push_back(off);
        ++l;
      });
      for (int d : op.dests) {
        auto& c = ctas_[d];
        smem_.open(c.slot);
        for (std::size_t j = 0; j < offs.size(); ++j) {
          if (const int bits = static_cast<int>(op.map.unit_bits)) {  // into the 16-byte unit of the element's slot (ir/types.hpp)
            ir::mx::unit_smem_set(bits, c.smem, offs[j], bytes[j]);
            ir::mx::unit_smem_set(bits, c.async_smem.data(), offs[j], bytes[j]);
            continue;
          }
          copy_element(c.smem + offs[j], &bytes[j * eb], eb);
          copy_element(&c.async_smem[offs[j]], &bytes[j * eb], eb);
        }
        --c.loads_in;
        const int bc = op.pair ? pair_leader_of(d) : d;  // .cta_group::2: the destination's pair leader
        auto& bars = ctas_[bc].bars;
        auto it = bars.find(op.bar_off);
        if (it == bars.end())
          fail(failure::protocol, fmt::format("a TMA load issued by CTA ({}) completes on {}, which was never initialised",
                                              fmt::join(ctas_[op.cta].id, ", "), bar_name(bc, smem_window + op.bar_off)));
        add_tx(bc, smem_window + op.bar_off, it->second, -static_cast<long long>(bytes.size()), "complete_tx");
        try_complete(it->second);
      }
      op.read_done = op.write_done = true;
      return;
    }
    if (!e.write) {
      auto& c = ctas_[op.cta];
      op.staged.resize(box_bytes(op.map));
      std::size_t l = 0;
      for_box(op, [&](unsigned char*, unsigned off) {
        copy_element(&op.staged[l * eb], &c.async_smem[off], eb);
        ++l;
      });
      op.read_done = true;
      --c.store_reads;
      post({e.op, true});
    } else {
      std::size_t l = 0;
      for_box(op, [&](unsigned char* g, unsigned) {
        if (g && op.reduce) reduce_element(g, &op.staged[l * eb], op.reduce, op.kind);
        else if (g) copy_element(g, &op.staged[l * eb], eb);
        ++l;
      });
      op.write_done = true;
      release(op.staged);
    }
    auto& t = threads_[op.issuer];
    if (t.st == thread_t::state::blocked && t.on == thread_t::waits::bulk) wake(op.issuer);
  }

  // ---- deadlock --------------------------------------------------------------------------------
  void report_deadlock() {
    kind_ = failure::deadlock;
    std::vector<std::string> lines;
    // One line per CTA and distinct wait, with the threads as ranges.
    struct group {
      int cta;
      std::string what;
      std::vector<unsigned> tids;
    };
    std::vector<group> groups;
    for (std::size_t t = 0; t < threads_.size(); ++t) {
      auto const& th = threads_[t];
      if (th.st != thread_t::state::blocked) continue;
      std::string what;
      switch (th.on) {
        case thread_t::waits::mbar: {
          auto const& b = ctas_[th.cta].bars.at(th.wait_a - smem_window);
          what = fmt::format("wait(s) on {} for the phase of parity {} to complete; {}", bar_name(th.cta, th.wait_a), th.wait_b, bar_state(b));
          break;
        }
        case thread_t::waits::named: {
          auto const& cb = ctas_[th.cta].named[th.wait_a];
          what = fmt::format("wait(s) in bar.sync {}, {}: {} of {} threads arrived", th.wait_a, th.wait_b, cb.arrived, cb.expected);
          break;
        }
        case thread_t::waits::cluster: {
          auto const& cb = clusters_[ctas_[th.cta].cluster].sync;
          what = fmt::format("wait(s) in barrier.cluster: {} of {} threads of the cluster arrived", cb.arrived, cb.expected);
          break;
        }
        case thread_t::waits::warp: {
          auto const& cb = ctas_[th.cta].warps[th.wait_a];
          what = fmt::format("wait(s) in a warp collective (shfl.sync, stmatrix, __syncwarp) of warp {}: {} of 32 lanes arrived", th.wait_a, cb.arrived);
          break;
        }
        case thread_t::waits::bulk:
          what = fmt::format("wait(s) in cp.async.bulk.wait_group{} {}", th.wait_b ? ".read" : "", th.wait_a);
          break;
        case thread_t::waits::semaphore:
          what = fmt::format("wait(s) in semaphore_wait for {} to hold {} (it holds {})", gmem_place(th.sem), th.wait_b, *th.sem);
          break;
        case thread_t::waits::wgmma: {
          auto const& cb = ctas_[th.cta].wg_meet[th.wait_a];
          what = fmt::format("wait(s) in wgmma.mma_async of warpgroup {} (.sync.aligned): {} of 128 threads issued it", th.wait_a, cb.arrived);
          break;
        }
        case thread_t::waits::nothing: what = "is blocked"; break;
      }
      auto it = std::find_if(groups.begin(), groups.end(), [&](group const& g) { return g.cta == th.cta && g.what == what; });
      if (it == groups.end()) {
        groups.push_back({th.cta, what, {}});
        it = groups.end() - 1;
      }
      it->tids.push_back(th.regs.tid.x);
    }
    std::string text = fmt::format("kernel '{}' (host, seed {}): deadlock: no thread can run and no TMA copy is in flight", k_.name, o_.seed);
    std::size_t shown = 0;
    for (auto const& g : groups) {
      if (++shown > 12) {
        text += fmt::format("\n  ... and {} more", groups.size() - 12);
        break;
      }
      std::vector<std::string> ranges;
      for (std::size_t i = 0; i < g.tids.size();) {
        std::size_t j = i;
        while (j + 1 < g.tids.size() && g.tids[j + 1] == g.tids[j] + 1) ++j;
        ranges.push_back(i == j ? fmt::format("{}", g.tids[i]) : fmt::format("{}-{}", g.tids[i], g.tids[j]));
        i = j + 1;
      }
      text += fmt::format("\n  CTA ({}) thread(s) {} {}", fmt::join(ctas_[g.cta].id, ", "), fmt::join(ranges, ","), g.what);
    }
    if (next_cluster_ < order_.size())
      text += fmt::format("\n  and {} of the {} clusters are not resident yet: at most {} are resident at once ({}); a kernel that needs more "
                          "of them co-resident deadlocks, as it may on a GPU, which does not promise that either",
                          order_.size() - next_cluster_, order_.size(), resident_limit_,
                          resident_limit_ == resident_cap_ ? fmt::format("the host's cap of {} resident threads", max_resident_threads)
                                                            : std::string("as the seed drew"));
    message_ = std::move(text);
  }

  compiled const& c_;
  ir::Kernel const& k_;
  std::vector<host_tensor>& buffers_;
  options const& o_;
  rng rng_;
  schost::api api_{};
  // Declared before the CTAs and threads: their fibers and SMEM go back to these.
  stack_pool stacks_;
  smem_arena smem_;
  std::size_t gmem_guard_ = gmem_guard_max;
  std::vector<guarded> gmem_storage_;
  std::vector<std::pair<std::size_t, std::size_t>> store_sources_;  // (SMEM offset, bytes)
  std::vector<void*> gmem_;
  std::vector<long long> extents_;  // the run-time extents' values, as the kernel takes them
  std::vector<tmap_words> maps_;
  std::vector<cta_t> ctas_;
  std::vector<cluster_t> clusters_;
  std::vector<thread_t> threads_;
  std::vector<copy_op> ops_;
  std::vector<event> events_;
  std::deque<int> ready_;
  std::vector<int> order_;
  std::size_t resident_limit_ = 1, resident_ = 0, resident_cap_ = 1;
  std::size_t next_cluster_ = 0;  // in order_: the next cluster to admit
  enum class mode : std::uint8_t { reference, uniform, lazy, priority } mode_ = mode::reference;
  double async_bias_ = 1.0;
  std::vector<std::uint64_t> wg_priority_;  // priority schedules: one per (CTA, warpgroup)
  int current_ = -1;
  schost::thread_regs* current_regs_ = nullptr;
  failure kind_ = failure::none;
  std::string message_;
  std::uint64_t steps_ = 0;
  sigjmp_buf fault_jump_;
  void* fault_address_ = nullptr;

 public:
  void copy_back() {  // not the workspaces: their slots come back as given
    for (std::size_t p = 0; p < buffers_.size(); ++p)
      if (!k_.params[p].workspace) std::memcpy(buffers_[p].bytes.data(), gmem_[p], buffers_[p].bytes.size());
  }
};

void on_fault(int sig, siginfo_t* info, void*) {
  if (active && active->in_kernel()) active->faulted(info->si_addr);
  // Not a kernel thread's fault: ours, so crash as usual.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// For the length of a run: SIGSEGV and SIGBUS come to on_fault, on a stack of their own (a
// fiber's stack may be what overflowed).
class fault_handler {
 public:
  fault_handler() : alt_(64 * 1024) {
    stack_t ss{};
    ss.ss_sp = alt_.data();
    ss.ss_size = alt_.size();
    ::sigaltstack(&ss, &old_stack_);
    struct sigaction sa{};
    sa.sa_sigaction = &on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGSEGV, &sa, &old_segv_);
    ::sigaction(SIGBUS, &sa, &old_bus_);
  }
  ~fault_handler() {
    ::sigaction(SIGSEGV, &old_segv_, nullptr);
    ::sigaction(SIGBUS, &old_bus_, nullptr);
    ::sigaltstack(&old_stack_, nullptr);
  }
  fault_handler(fault_handler const&) = delete;
  fault_handler& operator=(fault_handler const&) = delete;

 private:
  std::vector<char> alt_;
  stack_t old_stack_{};
  struct sigaction old_segv_{}, old_bus_{};
};

}  // namespace

result run(compiled const& c, ir::Kernel const& lowered, std::vector<host_tensor> buffers, options const& o) {
  // Run-time extents take the buffers' sizes: the object compiled for one size runs at any.
  const ir::Kernel bound = lowered.extents.empty() ? ir::Kernel{} : bind_to_buffers(lowered, buffers);
  ir::Kernel const& k = lowered.extents.empty() ? lowered : bound;
  std::lock_guard lock(run_mutex);
  result r;
  {
    machine m(c, k, buffers, o);
    fault_handler handler;
    active = &m;
    struct reset {
      ~reset() { active = nullptr; }
    } guard;
    r = m.run();
    m.check_gmem_slack();
    r.kind = m.kind();
    r.message = m.message();
    m.copy_back();
  }
  r.buffers = std::move(buffers);
  return r;
}

result run(ir::Kernel const& k, std::vector<host_tensor> buffers, options const& o) { return run(compile(k, o), k, std::move(buffers), o); }

}  // namespace stagecraft::hostexec
