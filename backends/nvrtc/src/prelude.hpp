// The inline-PTX wrappers every generated kernel starts with. Kept as a raw string so NVRTC
// sees exactly this text; cuda.h and <cuda/ptx> are not used (the first does not compile under
// NVRTC, the second costs 150-250 ms per compile and has no wgmma).
#pragma once

// The swizzle macro lives in the IR headers: the interpreter and the wgmma addressing use the same
// tokens (see stagecraft/ir/swizzle.hpp).
#include "stagecraft/ir/swizzle.hpp"
// ... and so do the wgmma register fragment layouts (stagecraft/ir/wgmma.hpp) and the
// transcendentals of tile math (stagecraft/ir/math.hpp, the numerics policy).
#include "stagecraft/ir/math.hpp"
#include "stagecraft/ir/wgmma.hpp"
// ... and the fp8 conversions (stagecraft/ir/fp8.hpp).
#include "stagecraft/ir/fp8.hpp"
// ... and the conflict-free transpose order (stagecraft/ir/transpose_order.hpp).
#include "stagecraft/ir/transpose_order.hpp"

#define STAGECRAFT_PRELUDE_STR_(...) #__VA_ARGS__
#define STAGECRAFT_PRELUDE_STR(...) STAGECRAFT_PRELUDE_STR_(__VA_ARGS__)

namespace stagecraft::nvrtc::detail {

inline constexpr const char* prelude = R"PTX(// ---- stagecraft prelude ----
// The kernel's dynamic shared memory, declared through a macro so the host backend can give
// every CTA its own.
#define SC_DYNAMIC_SMEM(name) extern __shared__ __align__(1024) unsigned char name[]

namespace sc {
struct alignas(64) tmap_t { unsigned long long word[16]; };  // CUtensorMap: 128 opaque bytes

__device__ __forceinline__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

// Thread barriers that may order tensor-core work (a TMEM load before the MMA that overwrites it,
// an MMA before the load of its result): in kernels with tensor memory (the generated source
// defines SC_TCGEN05) each one is preceded by tcgen05.fence::before_thread_sync and followed by
// tcgen05.fence::after_thread_sync, so user code never needs to write them.
__device__ __forceinline__ void tc_before_sync() {
#ifdef SC_TCGEN05
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
#endif
}
__device__ __forceinline__ void tc_after_sync() {
#ifdef SC_TCGEN05
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
#endif
}

// mbarrier
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_fence_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  tc_before_sync();
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  tc_before_sync();
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
// Cluster: .release.cluster, which publishes the thread's generic writes to the peer (a
// MEMBAR.GPU in SASS); otherwise .release.cta, enough when the arrival only says that asynchronous
// accesses have completed (ir::cluster_barrier_scope decides which).
template <bool Cluster> __device__ __forceinline__ void mbar_arrive_remote(unsigned bar, unsigned cta_rank) {
  tc_before_sync();
  if constexpr (Cluster)
    asm volatile("{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
                 " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}" :: "r"(bar), "r"(cta_rank) : "memory");
  else
    asm volatile("{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
                 " mbarrier.arrive.release.cta.shared::cluster.b64 _, [remote];\n}" :: "r"(bar), "r"(cta_rank) : "memory");
}
// One bounded probe of the phase with the given parity (the hardware may suspend the thread for a
// while inside it). A cluster barrier whose peers arrive with .release.cluster is waited on with
// .acquire.cluster: a .cta-scoped acquire is not morally strong with those releases.
template <bool Cluster> __device__ __forceinline__ bool mbar_try_wait(unsigned bar, unsigned parity) {
  unsigned done;
  if constexpr (Cluster)
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  else
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  return done != 0;
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  while (!mbar_try_wait<false>(bar, parity)) {}
  tc_after_sync();
}
__device__ __forceinline__ void mbar_wait_cluster(unsigned bar, unsigned parity) {
  while (!mbar_try_wait<true>(bar, parity)) {}
  tc_after_sync();
}

// The watchdog (codegen_options::watchdog_ms): the first thread of the grid whose wait runs out
// prints one report, then every thread that runs out traps, which ends the launch with an error
// the host reports. The clock is only read once the first probe has failed.
__device__ unsigned watchdog_fired;
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __noinline__ void watchdog_trap(const char* kernel, int op, const char* bar, long long elem, unsigned completion,
                                           unsigned parity, unsigned long long limit_ns) {
  if (atomicExch(&watchdog_fired, 1u) == 0u)
    printf("stagecraft watchdog: kernel '%s', op #%d: barrier_wait on %s[%lld] for completion %u (parity %u) did not complete "
           "within %llu ms; CTA (%u, %u, %u), thread %u; trapping\n",
           kernel, op, bar, elem, completion, parity, limit_ns / 1000000ull, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x);
  __trap();
}
template <bool Cluster>
__device__ __forceinline__ void mbar_wait_watchdog(unsigned bar, unsigned parity, const char* kernel, int op, const char* name,
                                                   long long elem, unsigned completion, unsigned long long limit_ns) {
  if (!mbar_try_wait<Cluster>(bar, parity)) {
    const unsigned long long start = globaltimer();
    while (!mbar_try_wait<Cluster>(bar, parity))
      if (globaltimer() - start > limit_ns) watchdog_trap(kernel, op, name, elem, completion, parity, limit_ns);
  }
  tc_after_sync();
}

// proxies and groups
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// Every state space: for kernels whose TMA copies read or write GMEM they also write with
// ordinary stores (a generic st.global is not ordered with the async proxy otherwise).
__device__ __forceinline__ void fence_proxy_async_all() { asm volatile("fence.proxy.async;" ::: "memory"); }
__device__ __forceinline__ void wg_sync(int wg) {
  tc_before_sync();
  asm volatile("bar.sync %0, 128;" :: "r"(wg + 1) : "memory");
  tc_after_sync();
}
// A role of one warp meets at __syncwarp (ir/roles.hpp), with the tcgen05 fences any thread
// barrier carries; a statement both kinds of role run picks its role's own.
__device__ __forceinline__ void warp_sync() {
  tc_before_sync();
  __syncwarp();
  tc_after_sync();
}
__device__ __forceinline__ void role_sync(int wg, bool one_warp) {
  if (one_warp) warp_sync();
  else wg_sync(wg);
}
// Named barriers (the DSL's named_barrier_sync/arrive): hardware id and thread count, every
// thread of each participating warpgroup executing them (bar.sync counts 32 per warp). A static
// id and count go into the instruction as immediates (BAR.SYNC 0xc, 0x100 in SASS).
// bar.arrive releases (a later bar.sync of the phase acquires) but does not wait.
template <unsigned Id, unsigned N> __device__ __forceinline__ void named_bar_sync() {
  tc_before_sync();
  asm volatile("bar.sync %0, %1;" :: "n"(Id), "n"(N) : "memory");
  tc_after_sync();
}
template <unsigned Id, unsigned N> __device__ __forceinline__ void named_bar_arrive() {
  tc_before_sync();
  asm volatile("bar.arrive %0, %1;" :: "n"(Id), "n"(N) : "memory");
}
template <unsigned N> __device__ __forceinline__ void named_bar_sync(unsigned id) {
  tc_before_sync();
  asm volatile("bar.sync %0, %1;" :: "r"(id), "n"(N) : "memory");
  tc_after_sync();
}
template <unsigned N> __device__ __forceinline__ void named_bar_arrive(unsigned id) {
  tc_before_sync();
  asm volatile("bar.arrive %0, %1;" :: "r"(id), "n"(N) : "memory");
}
// Cluster launch control (sm_100a; ops/clc.hpp): ask the hardware to cancel a cluster of the grid
// that has not started, its 16-byte response landing at shared-window address `resp` and
// completing 16 bytes on the mbarrier at `bar` (whose arrival expecting them the caller makes);
// and read a landed response: What 0, whether a cluster was canceled (1 or 0); 1-3, that
// cluster's first CTA's ctaid x, y, z. Templates: only a kernel that uses them emits their PTX.
template <int = 0> __device__ __forceinline__ void clc_try_cancel(unsigned resp, unsigned bar) {
  asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%0], [%1];" :: "r"(resp), "r"(bar) : "memory");
}
template <int What> __device__ __forceinline__ unsigned clc_query(unsigned resp) {
  unsigned r;
  if constexpr (What == 0)
    asm volatile("{\n .reg .b128 q;\n .reg .pred p;\n ld.shared.b128 q, [%1];\n clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, q;\n"
                 " selp.u32 %0, 1, 0, p;\n}" : "=r"(r) : "r"(resp) : "memory");
  else if constexpr (What == 1)
    asm volatile("{\n .reg .b128 q;\n ld.shared.b128 q, [%1];\n clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %0, q;\n}" : "=r"(r) : "r"(resp) : "memory");
  else if constexpr (What == 2)
    asm volatile("{\n .reg .b128 q;\n ld.shared.b128 q, [%1];\n clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128 %0, q;\n}" : "=r"(r) : "r"(resp) : "memory");
  else
    asm volatile("{\n .reg .b128 q;\n ld.shared.b128 q, [%1];\n clusterlaunchcontrol.query_cancel.get_first_ctaid::z.b32.b128 %0, q;\n}" : "=r"(r) : "r"(resp) : "memory");
  return r;
}
// One thread of the (converged) warp: the issuer of TMA loads and arrivals.
__device__ __forceinline__ bool elect_one() {
  unsigned elected;
  asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}" : "=r"(elected));
  return elected != 0;
}
// A value every lane holds alike, shown to ptxas as such: a broadcast from lane 0. Where the warp
// is converged (every wgmma is .sync.aligned: the whole warp is there) it is an identity, and
// what depends on it, a wgmma operand's descriptor, is built on the uniform datapath (UIADD3
// per instruction) instead of in vector registers moved into uniform ones (R2UR, four per
// instruction, plus re-materialised constants).
__device__ __forceinline__ unsigned warp_uniform(unsigned x) { return __shfl_sync(0xffffffffu, x, 0); }
// Warp specialization: a warpgroup that only issues TMA and waits gives registers back, the
// compute warpgroups take them (every thread of the warpgroup executes these).
template <int N> __device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(N)); }
template <int N> __device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(N)); }
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(N) : "memory"); }
template <int N> __device__ __forceinline__ void bulk_wait() { asm volatile("cp.async.bulk.wait_group %0;" :: "n"(N) : "memory"); }

// x.at(i): an index table the kernel never writes, read through the non-coherent (read-only)
// cache, so NVVM may also keep the value across the barrier asm's memory clobbers.
__device__ __forceinline__ int ld_index(const int* p) { return __ldg(p); }
__device__ __forceinline__ unsigned ld_index(const unsigned* p) { return __ldg(p); }

// clusters
// A CTA's coordinate along a cluster axis whose static extent is Extent. Clusters tile the grid
// in order (ctaid = clusterid * cluster_nctaid + cluster_ctaid on each axis), so it is blockIdx
// mod Extent: 0 where the extent is 1, an AND where it is a power of two, and the compiler hoists
// blockIdx out of loops. A read of %cluster_ctaid is the same modulo to ptxas, but with the extent
// read from the launch's constant bank and a float division, a dozen instructions at every read
// (non-volatile asm was re-read in each branch that used it: 164 SASS per K-tile in
// gemm_blackwell_2cta's issuer, 44 of them these).
// The empty asm hides the result's range (0 .. Extent - 1) from NVVM, as %cluster_ctaid's was
// hidden: knowing it, NVVM unrolled splitk_cluster's copy loop fully, and ptxas, holding sm_100a
// code to its 40-register occupancy target, spilled 12 bytes there.
template <unsigned Extent> __device__ __forceinline__ unsigned cluster_ctaid(int axis) {
  if (Extent == 1) return 0u;
  unsigned c = (axis == 0 ? blockIdx.x : axis == 1 ? blockIdx.y : blockIdx.z) % Extent;
  asm("" : "+r"(c));
  return c;
}
__device__ __forceinline__ void cluster_sync() {
  tc_before_sync();
  asm volatile("barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;" ::: "memory");
  tc_after_sync();
}

// Brings a tensor map (a __grid_constant__ parameter) into the descriptor cache before the first
// copy needs it, so that copy does not wait on a fetch of its 128 bytes.
__device__ __forceinline__ void prefetch_tmap(const tmap_t* map) {
  asm volatile("prefetch.tensormap [%0];" :: "l"(reinterpret_cast<unsigned long long>(map)) : "memory");
}

// TMA: coordinates innermost first, in elements
__device__ __forceinline__ void tma_load(unsigned dst, const tmap_t* map, unsigned bar, int rank, const int* c) {
  const unsigned long long m = reinterpret_cast<unsigned long long>(map);
  switch (rank) {
    case 1: asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(bar) : "memory"); break;
    case 2: asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(bar) : "memory"); break;
    case 3: asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(bar) : "memory"); break;
    case 4: asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(bar) : "memory"); break;
    default: asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                          :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(bar) : "memory"); break;
  }
}
__device__ __forceinline__ void tma_load_multicast(unsigned dst, const tmap_t* map, unsigned bar, unsigned short mask, int rank, const int* c) {
  const unsigned long long m = reinterpret_cast<unsigned long long>(map);
  switch (rank) {
    case 1: asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2}], [%3], %4;"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(bar), "h"(mask) : "memory"); break;
    case 2: asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(bar), "h"(mask) : "memory"); break;
    case 3: asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(bar), "h"(mask) : "memory"); break;
    case 4: asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4, %5}], [%6], %7;"
                         :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(bar), "h"(mask) : "memory"); break;
    default: asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4, %5, %6}], [%7], %8;"
                          :: "r"(dst), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(bar), "h"(mask) : "memory"); break;
  }
}
__device__ __forceinline__ void tma_store(const tmap_t* map, unsigned src, int rank, const int* c) {
  const unsigned long long m = reinterpret_cast<unsigned long long>(map);
  switch (rank) {
    case 1: asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%1}], [%2];" :: "l"(m), "r"(c[0]), "r"(src) : "memory"); break;
    case 2: asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" :: "l"(m), "r"(c[0]), "r"(c[1]), "r"(src) : "memory"); break;
    case 3: asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];" :: "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(src) : "memory"); break;
    case 4: asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4}], [%5];" :: "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(src) : "memory"); break;
    default: asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];" :: "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(src) : "memory"); break;
  }
}

// Reducing stores (ir::Reduce): a TMA reduce combines its box into GMEM element by element
// (cp.reduce.async.bulk.tensor, the element type from the tensor map), joining the bulk group as
// a store does; red.relaxed.gpu.global combines one element, atomically, with no result.
enum reduce_op { reduce_add, reduce_min, reduce_max };
template <reduce_op Op, class T>  // T: the element type (the tensor map has it; the host backend needs it)
__device__ __forceinline__ void tma_reduce(const tmap_t* map, unsigned src, int rank, const int* c) {
  const unsigned long long m = reinterpret_cast<unsigned long long>(map);
#define SC_TMA_REDUCE(OP)                                                                                                                                                          \
  switch (rank) {                                                                                                                                                                  \
    case 1: asm volatile("cp.reduce.async.bulk.tensor.1d.global.shared::cta." OP ".tile.bulk_group [%0, {%1}], [%2];" :: "l"(m), "r"(c[0]), "r"(src) : "memory"); break;             \
    case 2: asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta." OP ".tile.bulk_group [%0, {%1, %2}], [%3];" :: "l"(m), "r"(c[0]), "r"(c[1]), "r"(src) : "memory"); break; \
    case 3: asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta." OP ".tile.bulk_group [%0, {%1, %2, %3}], [%4];" :: "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(src) : "memory"); break; \
    case 4: asm volatile("cp.reduce.async.bulk.tensor.4d.global.shared::cta." OP ".tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];" :: "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(src) : "memory"); break; \
    default: asm volatile("cp.reduce.async.bulk.tensor.5d.global.shared::cta." OP ".tile.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];" :: "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(src) : "memory"); break; \
  }
  if (Op == reduce_add) { SC_TMA_REDUCE("add") }
  else if (Op == reduce_min) { SC_TMA_REDUCE("min") }
  else { SC_TMA_REDUCE("max") }
#undef SC_TMA_REDUCE
}
__device__ __forceinline__ void red_add(float* p, float v) { asm volatile("red.relaxed.gpu.global.add.f32 [%0], %1;" :: "l"(p), "f"(v) : "memory"); }
__device__ __forceinline__ void red_add(int* p, int v) { asm volatile("red.relaxed.gpu.global.add.s32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void red_add(unsigned* p, unsigned v) { asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
// Grid-wide semaphores (ops/semaphore.hpp), each run by one thread of its warpgroup: a signal
// is a release at .gpu scope; a wait polls with ld.acquire (a 100 ns nanosleep between polls
// leaves the memory system to the CTA it waits for) and takes its value with an acquiring CAS
// (another waiter may have taken the count first: then it polls again).
// Scope 0 is .gpu, 1 .sys (ir::MemoryScope).
template <int Scope>
__device__ __forceinline__ void sem_signal(int* p, int v) {
  if constexpr (Scope == 0) asm volatile("red.release.gpu.global.add.s32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
  else asm volatile("red.release.sys.global.add.s32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}
// Atomics that return what the counter held (ops/atomic.hpp): Op ir::Atomic (add, min, max, exch,
// cas), Order ir::MemoryOrder (relaxed, acquire, release, acq_rel), Scope ir::MemoryScope (gpu, sys).
#define SC_ATOM(SEM, SCOPE)                                                                                                         \
  if constexpr (Op == 0) asm volatile("atom." SEM "." SCOPE ".global.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory"); \
  else if constexpr (Op == 1) asm volatile("atom." SEM "." SCOPE ".global.min.s32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory"); \
  else if constexpr (Op == 2) asm volatile("atom." SEM "." SCOPE ".global.max.s32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory"); \
  else if constexpr (Op == 3) asm volatile("atom." SEM "." SCOPE ".global.exch.b32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory"); \
  else asm volatile("atom." SEM "." SCOPE ".global.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(p), "r"(expected), "r"(v) : "memory");
#define SC_ATOM_SCOPE(SEM) \
  if constexpr (Scope == 0) { SC_ATOM(SEM, "gpu") } else { SC_ATOM(SEM, "sys") }
template <int Op, int Order, int Scope>
__device__ __forceinline__ int atom_fetch(int* p, int v, int expected) {
  int old;
  if constexpr (Order == 0) { SC_ATOM_SCOPE("relaxed") }
  else if constexpr (Order == 1) { SC_ATOM_SCOPE("acquire") }
  else if constexpr (Order == 2) { SC_ATOM_SCOPE("release") }
  else { SC_ATOM_SCOPE("acq_rel") }
  return old;
}
#undef SC_ATOM_SCOPE
#undef SC_ATOM
// One poll: true once v is taken; `now` is what the counter held.
template <int Scope>
__device__ __forceinline__ bool sem_try_take(int* p, int v, int& now) {
  if constexpr (Scope == 0) asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(now) : "l"(p) : "memory");
  else asm volatile("ld.acquire.sys.global.s32 %0, [%1];" : "=r"(now) : "l"(p) : "memory");
  if (now < v) return false;
  int old;
  if constexpr (Scope == 0) asm volatile("atom.acquire.gpu.global.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(p), "r"(now), "r"(now - v) : "memory");
  else asm volatile("atom.acquire.sys.global.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(p), "r"(now), "r"(now - v) : "memory");
  return old == now;
}
template <int Scope>
__device__ __forceinline__ void sem_wait(int* p, int v) {
  for (int now; !sem_try_take<Scope>(p, v, now);)
    if (now < v) asm volatile("nanosleep.u32 100;" ::: "memory");
}
// The watchdog's form (codegen_options::watchdog_ms): a wait that has not taken its count after
// limit_ns reports the counter, what it holds and what it needs, then traps (watchdog_trap's rule:
// one report per grid).
__device__ __noinline__ void sem_watchdog_trap(const char* kernel, int op, const char* sem, int elem, int value, int holds,
                                               unsigned long long limit_ns) {
  if (atomicExch(&watchdog_fired, 1u) == 0u)
    printf("stagecraft watchdog: kernel '%s', op #%d: semaphore_wait on %s[%d] for %d (it holds %d) did not complete within %llu ms; "
           "CTA (%u, %u, %u), thread %u; trapping\n",
           kernel, op, sem, elem, value, holds, limit_ns / 1000000ull, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x);
  __trap();
}
template <int Scope>
__device__ __forceinline__ void sem_wait_watchdog(int* p, int v, const char* kernel, int op, const char* name, int elem,
                                                  unsigned long long limit_ns) {
  const unsigned long long start = globaltimer();
  for (int now; !sem_try_take<Scope>(p, v, now);) {
    if (now >= v) continue;  // another waiter took the count first: poll again at once
    if (globaltimer() - start > limit_ns) sem_watchdog_trap(kernel, op, name, elem, v, now, limit_ns);
    asm volatile("nanosleep.u32 100;" ::: "memory");
  }
}
// Vector forms (sm_90): each element is still its own atomic add; the address is 8- or 16-byte aligned.
__device__ __forceinline__ void red_add_v2(float* p, const float* v) {
  asm volatile("red.relaxed.gpu.global.add.v2.f32 [%0], {%1, %2};" :: "l"(p), "f"(v[0]), "f"(v[1]) : "memory");
}
__device__ __forceinline__ void red_add_v4(float* p, const float* v) {
  asm volatile("red.relaxed.gpu.global.add.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(p), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3]) : "memory");
}
__device__ __forceinline__ void red_min(int* p, int v) { asm volatile("red.relaxed.gpu.global.min.s32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void red_min(unsigned* p, unsigned v) { asm volatile("red.relaxed.gpu.global.min.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void red_max(int* p, int v) { asm volatile("red.relaxed.gpu.global.max.s32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void red_max(unsigned* p, unsigned v) { asm volatile("red.relaxed.gpu.global.max.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }

// wgmma. The accumulator registers are asm operands of the instructions that write them, but
// the wait that makes their values visible has none: reg_fence ties each register to a point in
// the instruction stream (an empty asm that "modifies" it), so the compiler neither reads it
// before the wait nor moves ordinary writes past a wgmma.fence.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory"); }
__device__ __forceinline__ void reg_fence(float& r) { asm volatile("" : "+f"(r) :: "memory"); }
__device__ __forceinline__ void reg_fence(unsigned& r) { asm volatile("" : "+r"(r) :: "memory"); }
__device__ __forceinline__ void reg_fence(int& r) { asm volatile("" : "+r"(r) :: "memory"); }  // s32 accumulators (s8 inputs)

// stmatrix (sm_90): the warp stores four 8 x 8 matrices of 16-bit elements. Lane 8 m + r gives
// the shared-window address of row r of matrix m (16 bytes, 16-byte aligned); lane 4 r + k's
// register m is word k of that row, its low half the lower column (the PTX ISA's fragment for
// m8n8 .b16). .sync.aligned: every lane of the warp executes this very instruction, as every
// thread of the warpgroup runs a fragment store. One STSM.16.M88.4 where four STS take a word each.
__device__ __forceinline__ void stmatrix_x4(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" :: "r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}

// conversions (round to nearest even), 16-bit types stored as their bit patterns
__device__ __forceinline__ float f16_to_f32(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short f32_to_f16(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ unsigned short f32_to_bf16(float f) { unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
// Two elements in one instruction (F2FP), lo in bits 0-15: the same bits as two conversions.
__device__ __forceinline__ unsigned f32x2_to_bf16x2(float lo, float hi) { unsigned d; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo)); return d; }
__device__ __forceinline__ unsigned f32x2_to_f16x2(float lo, float hi) { unsigned d; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo)); return d; }
// Two f32 to a pair of fp8 codes in one instruction (F2FP), lo in bits 0-7: round to nearest even
// with saturation, the bits of two sc::f32_to_e4m3 / f32_to_e5m2 (ir/fp8.hpp). Fast mode's A from
// registers; exact mode packs the portable functions' codes (the host defines these from them).
__device__ __forceinline__ unsigned short cvt_e4m3x2(float lo, float hi) { unsigned short d; asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo)); return d; }
__device__ __forceinline__ unsigned short cvt_e5m2x2(float lo, float hi) { unsigned short d; asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo)); return d; }
// shfl.sync.idx over the whole warp, and prmt.b32 (byte i of the result: byte (s >> 4 i) & 7 of
// the pair y:x): what sc::quad_gather8 is made of (the host defines both from its runtime).
__device__ __forceinline__ unsigned shfl_idx(unsigned w, int src) { return __shfl_sync(0xffffffffu, w, src); }
__device__ __forceinline__ unsigned byte_perm(unsigned x, unsigned y, unsigned s) { return __byte_perm(x, y, s); }

// Fast math mode's primitives (ir/math.hpp, STAGECRAFT_FAST_MATH_FN): one SFU instruction each
// (MUFU.EX2, MUFU.LG2, MUFU.RSQ, MUFU.TANH; div.full is a short FFMA sequence around MUFU.RCP).
// Not volatile: they have no side effects, so the compiler may hoist, sink and merge them. The
// host backend defines the same names with the C library (STAGECRAFT_APPROX_HOST_FN).
__device__ __forceinline__ float approx_ex2(float x) { float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
__device__ __forceinline__ float approx_lg2(float x) { float y; asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
__device__ __forceinline__ float approx_rsqrt(float x) { float y; asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
__device__ __forceinline__ float approx_tanh(float x) { float y; asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
__device__ __forceinline__ float approx_div(float a, float b) { float y; asm("div.full.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)); return y; }

// ---- portable ----
// Plain C++ from here to the end of the namespace: the host backend (backends/host) compiles
// this very text, so what it checks is what the GPU runs.
__device__ __forceinline__ float bf16_to_f32(unsigned short h) { return __uint_as_float(static_cast<unsigned>(h) << 16); }
__device__ __forceinline__ float round_f16(float f) { return f16_to_f32(f32_to_f16(f)); }
__device__ __forceinline__ float round_bf16(float f) { return bf16_to_f32(f32_to_bf16(f)); }
// f16 accumulators: fragment element e is the (e % 2) half of register e / 2 (wgmma's .f16 D).
// e is a constant once the fragment loops are unrolled, so the array stays in registers.
__device__ __forceinline__ float acc_f16(const unsigned* acc, int e) {
  return f16_to_f32(static_cast<unsigned short>(e % 2 ? acc[e / 2] >> 16 : acc[e / 2] & 0xFFFFu));
}
__device__ __forceinline__ float acc_bf16(const unsigned* acc, int e) {  // bf16 register tiles: the same packing
  return bf16_to_f32(static_cast<unsigned short>(e % 2 ? acc[e / 2] >> 16 : acc[e / 2] & 0xFFFFu));
}
__device__ __forceinline__ unsigned pack_f16(float lo, float hi) {
  return static_cast<unsigned>(f32_to_f16(lo)) | static_cast<unsigned>(f32_to_f16(hi)) << 16;
}
// integer tile division: by zero gives -1 (div.s32's result, and the interpreter's), not C++ UB
__device__ __forceinline__ long long idiv(long long n, long long d) { return d == 0 ? -1LL : n / d; }

// shared-window byte address -> swizzled address (16-byte chunks XOR bits 7.. of the address). TMA
// swizzles by the absolute SMEM address, so callers pass smem_base + offset, not the offset.
)PTX" STAGECRAFT_PRELUDE_STR(STAGECRAFT_SWIZZLE_FN(__device__ __forceinline__)) R"PTX(
// tiling(TR, TC) SMEM: element e of the logical (.., rows, Cols) layout -> its element offset.
)PTX" STAGECRAFT_PRELUDE_STR(STAGECRAFT_TILED_FN(__device__ __forceinline__)) R"PTX(
// 8-bit A from registers (wgmma .m64nNk32): a lane's four bytes of a register are four columns
// in a row, which the D fragment spreads over two lanes of its quad (two columns each). Every lane
// packs its pairs of two adjacent 8-column groups into `w` (group 2 q in the low half, 2 q + 1 in
// the high); lane t of the quad takes the low (t < 2) or high half of the words of quad lanes
// 2 (t % 2) and 2 (t % 2) + 1: two shuffles and a byte permute (emitter::quad_gather8_matches
// checks this against ir/wgmma.hpp's fragment descriptions; the host backend runs this text).
__device__ __forceinline__ unsigned quad_gather8(unsigned w, int lane) {
  const int src = (lane & 0x1c) | (lane & 1) << 1;
  return byte_perm(shfl_idx(w, src), shfl_idx(w, src + 1), lane & 2 ? 0x7632u : 0x5410u);
}
// e4m3 / e5m2 <-> f32, round to nearest even with saturation (cuda_fp8's __NV_SATFINITE).
)PTX" STAGECRAFT_PRELUDE_STR(STAGECRAFT_FP8_FN(__device__ __forceinline__, __float_as_uint, __uint_as_float)) R"PTX(
// e4m3 / e5m2 register tiles: four elements per register, in quad_gather8's input order:
// register 2p + h holds D fragment elements 8p + 2h and + 1 (its low half) and 8p + 2h + 4 and
// + 5 (its high half). e is a constant once the fragment loops are unrolled.
__device__ __forceinline__ int acc8_word(int e) { return e / 8 * 2 + e / 2 % 2; }
__device__ __forceinline__ unsigned acc8_byte(const unsigned* acc, int e) { return acc[acc8_word(e)] >> (16 * (e / 4 % 2) + 8 * (e % 2)) & 0xFFu; }
__device__ __forceinline__ float acc_e4m3(const unsigned* acc, int e) { return e4m3_to_f32(static_cast<unsigned char>(acc8_byte(acc, e))); }
__device__ __forceinline__ float acc_e5m2(const unsigned* acc, int e) { return e5m2_to_f32(static_cast<unsigned char>(acc8_byte(acc, e))); }
// wgmma register fragments: (row, col) of element i of thread t of the warpgroup.
)PTX" STAGECRAFT_PRELUDE_STR(STAGECRAFT_WGMMA_FRAGMENT_FN(__device__ __forceinline__)) R"PTX(
// The bank-conflict-free order of a 32 x 32 transpose between 128-byte swizzled SMEM tiles.
)PTX" STAGECRAFT_PRELUDE_STR(STAGECRAFT_TRANSPOSE32_FN(__device__ __forceinline__)) R"PTX(
// exp, exp2, log, rsqrt, tanh in IEEE f32 operations only: the interpreter's very functions.
)PTX" STAGECRAFT_PRELUDE_STR(STAGECRAFT_MATH_FN(__device__ __forceinline__, __float_as_uint, __uint_as_float, sqrtf)) R"PTX(
// The same in fast mode, from the approx_* primitives (what the code generator calls with --math fast).
)PTX" STAGECRAFT_PRELUDE_STR(STAGECRAFT_FAST_MATH_FN(__device__ __forceinline__)) R"PTX(
// ---- end of portable ----
}  // namespace sc
// ---- end of prelude ----
)PTX";

}  // namespace stagecraft::nvrtc::detail
