// The host side of the stagecraft prelude: what the device prelude does with inline PTX, done
// by calls into the host runtime; the CUDA built-ins the generated code uses, as plain C++.
// The portable part of the device prelude (swizzle, conversions' rounding, integer division)
// is not here: the host backend compiles the device prelude's own text for it.
#pragma once
#include <climits>
#include <cmath>
#include <cstring>
#include <math.h>  // expf, fminf, fmaxf in the global namespace, as CUDA has them
#include <type_traits>

#include "sc_host_abi.h"

static const schost::api* sc_host_api = nullptr;
extern "C" __attribute__((visibility("default"))) void sc_host_bind(const schost::api* a) { sc_host_api = a; }
static inline schost::thread_regs* sc_host_regs() { return *sc_host_api->current; }

// ---- CUDA keywords and built-ins -------------------------------------------------------------
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __grid_constant__
#define threadIdx (sc_host_regs()->tid)
#define blockIdx (sc_host_regs()->ctaid)
#define blockDim (sc_host_regs()->ntid)
#define gridDim (sc_host_regs()->nctaid)
// Every CTA has its own SMEM; the runtime says where the running thread's is.
#define SC_DYNAMIC_SMEM(name) unsigned char* const name = sc_host_regs()->smem

struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
// Accumulator fragment stores write f32 element pairs as one 8-byte access.
struct alignas(8) uint2 {
  unsigned x, y;
};

// CUDA's min/max have overloads for every pair of integer types; the usual conversions pick one.
template <class A, class B>
inline std::common_type_t<A, B> min(A a, B b) {
  using T = std::common_type_t<A, B>;
  return static_cast<T>(b) < static_cast<T>(a) ? static_cast<T>(b) : static_cast<T>(a);
}
template <class A, class B>
inline std::common_type_t<A, B> max(A a, B b) {
  using T = std::common_type_t<A, B>;
  return static_cast<T>(a) < static_cast<T>(b) ? static_cast<T>(b) : static_cast<T>(a);
}

// Row reductions of a wgmma accumulator combine a quad's lanes with butterfly shuffles.
template <class T>
inline T __shfl_xor_sync(unsigned, T v, int lane_mask) {
  static_assert(sizeof(T) <= 8, "__shfl_xor_sync: at most 64 bits");
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  bits = sc_host_api->shfl_xor(bits, lane_mask);
  T r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, sizeof f); return f; }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, sizeof f); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, sizeof u); return u; }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, sizeof i); return i; }
// cvt.rzi.s32.f32 / cvt.rzi.u32.f32: truncate, saturate, NaN -> 0.
inline int __float2int_rz(float f) {
  if (std::isnan(f)) return 0;
  if (f >= 2147483648.0f) return INT_MAX;
  if (f <= -2147483648.0f) return INT_MIN;
  return static_cast<int>(f);
}
inline unsigned __float2uint_rz(float f) {
  if (std::isnan(f) || f <= 0.0f) return 0u;
  if (f >= 4294967296.0f) return UINT_MAX;
  return static_cast<unsigned>(f);
}
inline void __syncthreads() { sc_host_api->bar_sync(0, sc_host_regs()->ntid.x); }

// ---- the device prelude's PTX wrappers, same names and signatures --------------------------
namespace sc {
struct alignas(64) tmap_t { unsigned long long word[16]; };
static_assert(sizeof(schost::tensor_map) <= sizeof(tmap_t), "the host tensor map must fit a CUtensorMap");

inline unsigned smem_addr(const void* p) {
  auto* r = sc_host_regs();
  return r->smem_window + static_cast<unsigned>(static_cast<const unsigned char*>(p) - r->smem);
}
inline void mbar_init(unsigned bar, unsigned count) { sc_host_api->mbar_init(bar, count); }
inline void mbar_fence_init() { sc_host_api->mbar_fence_init(); }
inline void mbar_arrive(unsigned bar) { sc_host_api->mbar_arrive(bar, 0u); }
inline void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  // a zero expect_tx is a plain arrival on the hardware too
  sc_host_api->mbar_arrive(bar, bytes);
}
template <bool Cluster> inline void mbar_arrive_remote(unsigned bar, unsigned cta_rank) { sc_host_api->mbar_arrive_remote(bar, cta_rank, Cluster); }
inline void mbar_wait(unsigned bar, unsigned parity) { sc_host_api->mbar_wait(bar, parity, 0); }
inline void mbar_wait_cluster(unsigned bar, unsigned parity) { sc_host_api->mbar_wait(bar, parity, 1); }

inline void fence_proxy_async() { sc_host_api->fence_proxy_async(); }
// The unqualified fence also orders GMEM; the host keeps one view of GMEM (its TMA reads what
// generic stores wrote), so only the SMEM half has anything to publish. The interpreter checks
// that the GMEM fence is there.
inline void fence_proxy_async_all() { sc_host_api->fence_proxy_async(); }
inline void wg_sync(int wg) { sc_host_api->bar_sync(static_cast<unsigned>(wg + 1), 128u); }
inline void warp_sync() { sc_host_api->warp_sync(); }
template <int = 0> inline void clc_try_cancel(unsigned resp, unsigned bar) { sc_host_api->clc_try_cancel(resp, bar); }
template <int What> inline unsigned clc_query(unsigned resp) { return sc_host_api->clc_query(resp, What); }
inline void role_sync(int wg, bool one_warp) {
  if (one_warp) warp_sync();
  else wg_sync(wg);
}
template <unsigned Id, unsigned N> inline void named_bar_sync() { sc_host_api->bar_sync(Id, N); }
template <unsigned Id, unsigned N> inline void named_bar_arrive() { sc_host_api->bar_arrive(Id, N); }
template <unsigned N> inline void named_bar_sync(unsigned id) { sc_host_api->bar_sync(id, N); }
template <unsigned N> inline void named_bar_arrive(unsigned id) { sc_host_api->bar_arrive(id, N); }
inline void bulk_commit() { sc_host_api->bulk_commit(); }
// elect.sync: the host elects each warp's first lane.
inline bool elect_one() { return threadIdx.x % 32u == 0u; }
// Register budgets move between warpgroups on the GPU; host threads have no register file.
template <int N> inline void setmaxnreg_dec() {}
template <int N> inline void setmaxnreg_inc() {}
template <int N> inline void bulk_wait_read() { sc_host_api->bulk_wait(N, 1); }
template <int N> inline void bulk_wait() { sc_host_api->bulk_wait(N, 0); }

// x.at(i): an index table, which nothing writes while the kernel runs.
inline int ld_index(const int* p) { return *p; }
inline unsigned ld_index(const unsigned* p) { return *p; }

// The host machine's own record of the CTA's place in its cluster (the GPU prelude derives it
// from blockIdx and the static extent; the host keeps it as its launcher assigned it).
template <unsigned Extent> inline unsigned cluster_ctaid(int axis) {
  auto const& c = sc_host_regs()->cluster_ctaid;
  return axis == 0 ? c.x : axis == 1 ? c.y : c.z;
}
inline void cluster_sync() { sc_host_api->cluster_sync(); }

inline void prefetch_tmap(const tmap_t*) {}  // a cache hint: nothing to do on the CPU
inline void tma_load(unsigned dst, const tmap_t* map, unsigned bar, int rank, const int* c) {
  sc_host_api->tma_load(dst, map, bar, 0u, 0, rank, c, 0);
}
inline void tma_load_multicast(unsigned dst, const tmap_t* map, unsigned bar, unsigned short mask, int rank, const int* c) {
  sc_host_api->tma_load(dst, map, bar, mask, 1, rank, c, 0);
}
// The pair's loads (.cta_group::2): the runtime finds each destination's pair leader itself (the
// GPU form maps `bar` to the leader's shared::cluster address with mapa).
inline void tma_load_pair(unsigned dst, const tmap_t* map, unsigned bar, unsigned /*leader*/, int rank, const int* c) {
  sc_host_api->tma_load(dst, map, bar, 0u, 0, rank, c, 1);
}
inline void tma_load_multicast_pair(unsigned dst, const tmap_t* map, unsigned bar, unsigned /*leader*/, unsigned short mask, int rank, const int* c) {
  sc_host_api->tma_load(dst, map, bar, mask, 1, rank, c, 1);
}
inline void tma_store(const tmap_t* map, unsigned src, int rank, const int* c) { sc_host_api->tma_store(map, src, rank, c); }
enum reduce_op { reduce_add, reduce_min, reduce_max };
template <reduce_op Op, class T>
inline void tma_reduce(const tmap_t* map, unsigned src, int rank, const int* c) {
  static_assert(sizeof(T) == 4, "TMA reductions take 4-byte elements (ir::reduce_takes)");
  const int kind = std::is_same<T, float>::value ? 0 : std::is_same<T, int>::value ? 1 : 2;
  sc_host_api->tma_reduce(map, src, rank, c, static_cast<int>(Op) + 1, kind);
}
// red.relaxed.gpu.global: one OS thread runs every CUDA thread and switches only inside runtime
// calls, so a plain read-modify-write is atomic here. .add.f32 flushes subnormal inputs and
// results to a zero of their sign (PTX ISA; stagecraft::ir::reduce_add_f32 in the interpreter).
inline float red_flush(float x) { return (x > -1.17549435e-38f && x < 1.17549435e-38f) ? x * 0.0f : x; }
inline void red_add(float* p, float v) { *p = red_flush(red_flush(*p) + red_flush(v)); }
inline void red_add(int* p, int v) { *p = static_cast<int>(static_cast<unsigned>(*p) + static_cast<unsigned>(v)); }
inline void red_add(unsigned* p, unsigned v) { *p += v; }
inline void red_add_v2(float* p, const float* v) { red_add(p, v[0]), red_add(p + 1, v[1]); }
inline void red_add_v4(float* p, const float* v) { for (int i = 0; i < 4; ++i) red_add(p + i, v[i]); }
// Semaphores: one OS thread, so the signal is a plain add; a wait that cannot take its value
// blocks in the runtime until a signal of the same counter (or reports the deadlock).
// The scope (.gpu or .sys) only matters to the GPU's memory model.
template <int /*Scope*/>
inline void sem_signal(int* p, int v) { red_add(p, v); sc_host_api->sem_signalled(p); }
template <int /*Scope*/>
inline void sem_wait(int* p, int v) { sc_host_api->sem_wait(p, v); }
// Atomics that return what the counter held (ops/atomic.hpp; Op is ir::Atomic): a plain
// read-modify-write on one OS thread; the counter changed, so its waiters look again (and the
// runtime may switch threads there). Order and scope only matter to the GPU's memory model.
template <int Op, int /*Order*/, int /*Scope*/>
inline int atom_fetch(int* p, int v, int expected) {
  const int old = *p;
  if (Op == 0) *p = static_cast<int>(static_cast<unsigned>(old) + static_cast<unsigned>(v));
  else if (Op == 1) *p = old < v ? old : v;
  else if (Op == 2) *p = old > v ? old : v;
  else if (Op == 3) *p = v;
  else if (old == expected) *p = v;
  sc_host_api->sem_signalled(p);
  return old;
}
inline void red_min(int* p, int v) { *p = *p < v ? *p : v; }
inline void red_min(unsigned* p, unsigned v) { *p = *p < v ? *p : v; }
inline void red_max(int* p, int v) { *p = *p > v ? *p : v; }
inline void red_max(unsigned* p, unsigned v) { *p = *p > v ? *p : v; }

// ---- the tensor cores: each instruction computed by the host runtime when it is issued --------
// The generated source writes wgmma as inline PTX where it needs its registers as operands;
// under SC_HOST it calls wgmma_host instead (nvrtc/src/codegen.cpp), and the tcgen05 wrappers
// it would define for the GPU are these.
#define SC_HOST 1
inline unsigned warp_uniform(unsigned x) { return x; }  // a broadcast from lane 0 where every lane holds x
inline void reg_fence(float&) {}
inline void reg_fence(unsigned&) {}
inline void reg_fence(int&) {}
inline void wgmma_fence() {}
inline void wgmma_commit() {}
template <int N> inline void wgmma_wait() {}
inline void wgmma_host(schost::wgmma_instr s, void* d, unsigned long long a_desc, const unsigned* a_regs, unsigned long long b_desc) {
  sc_host_api->wgmma(d, &s, a_desc, a_regs, b_desc);
}
inline void tc_before_sync() {}
inline void tc_after_sync() {}
inline void tmem_alloc(unsigned slot, unsigned ncols) { sc_host_api->tmem_alloc(slot, ncols); }
inline void tmem_relinquish() {}
inline void tmem_dealloc(unsigned taddr, unsigned ncols) { sc_host_api->tmem_dealloc(taddr, ncols); }
// kind: ir::tcgen05::Kind
inline void tc_mma_f16(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, unsigned acc) { sc_host_api->tc_mma(d, a, 0, 0u, b, idesc, acc, 0); }
inline void tc_mma_tf32(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, unsigned acc) { sc_host_api->tc_mma(d, a, 0, 0u, b, idesc, acc, 1); }
inline void tc_mma_f8f6f4(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, unsigned acc) { sc_host_api->tc_mma(d, a, 0, 0u, b, idesc, acc, 2); }
inline void tc_mma_i8(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, unsigned acc) { sc_host_api->tc_mma(d, a, 0, 0u, b, idesc, acc, 3); }
inline void tc_mma_ts_f16(unsigned d, unsigned a, unsigned long long b, unsigned idesc, unsigned acc) { sc_host_api->tc_mma(d, 0ull, 1, a, b, idesc, acc, 0); }
inline void tc_mma_ts_tf32(unsigned d, unsigned a, unsigned long long b, unsigned idesc, unsigned acc) { sc_host_api->tc_mma(d, 0ull, 1, a, b, idesc, acc, 1); }
inline void tc_mma_mxf8f6f4(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, unsigned sfa, unsigned sfb, unsigned acc) {
  sc_host_api->tc_mma_scaled(d, a, b, idesc, sfa, sfb, acc, 4);
}
inline void tc_mma_mxf4(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, unsigned sfa, unsigned sfb, unsigned acc) {
  sc_host_api->tc_mma_scaled(d, a, b, idesc, sfa, sfb, acc, 5);
}
inline void tc_mma_mxf4nvf4(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, unsigned sfa, unsigned sfb, unsigned acc) {
  sc_host_api->tc_mma_scaled(d, a, b, idesc, sfa, sfb, acc, 6);
}
inline void tc_cp_32x128b_warpx4(unsigned taddr, unsigned long long sdesc) { sc_host_api->tc_cp(taddr, sdesc); }
inline void tc_commit(unsigned bar) { sc_host_api->tc_commit(bar, 0u); }
inline void tc_commit_pair(unsigned bar, unsigned short cta_mask) { sc_host_api->tc_commit(bar, cta_mask); }
template <int N> inline void tmem_ld_32x32b(unsigned taddr, float (&r)[N]) {
  unsigned u[N];
  sc_host_api->tmem_ld(taddr, u, N);
  std::memcpy(r, u, sizeof u);
}
template <int N> inline void tmem_st_32x32b(unsigned taddr, const unsigned (&r)[N]) { sc_host_api->tmem_st(taddr, r, N); }
inline void tmem_ld_32x32b_x16(unsigned taddr, float (&r)[16]) { tmem_ld_32x32b(taddr, r); }
inline void tmem_ld_32x32b_x32(unsigned taddr, float (&r)[32]) { tmem_ld_32x32b(taddr, r); }
inline void tmem_ld_32x32b_x64(unsigned taddr, float (&r)[64]) { tmem_ld_32x32b(taddr, r); }
inline void tmem_st_32x32b_x16(unsigned taddr, const unsigned (&r)[16]) { tmem_st_32x32b(taddr, r); }
inline void tmem_st_32x32b_x32(unsigned taddr, const unsigned (&r)[32]) { tmem_st_32x32b(taddr, r); }
inline void tmem_st_wait() {}
// f32x2 arithmetic: each lane rounded once, as fma.rn / add.rn / mul.rn .f32x2 round it.
inline void fma2(float& r0, float& r1, float a0, float a1, float b0, float b1, float c0, float c1) { r0 = std::fma(a0, b0, c0); r1 = std::fma(a1, b1, c1); }
inline void add2(float& r0, float& r1, float a0, float a1, float b0, float b1) { r0 = a0 + b0; r1 = a1 + b1; }
inline void mul2(float& r0, float& r1, float a0, float a1, float b0, float b1) { r0 = a0 * b0; r1 = a1 * b1; }
// stmatrix: a warp-collective, so the lanes meet in the runtime, which writes each row from the
// registers of the lanes the ISA's fragment names.
inline void stmatrix_x4(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3) {
  const unsigned r[4] = {r0, r1, r2, r3};
  sc_host_api->stmatrix(addr, r, 4);
}

// The device's cvt.rn.satfinite.e4m3x2.f32 / e5m2x2: the portable part's conversions (defined
// after this header, in the device prelude's own text), lo in bits 0-7.
unsigned char f32_to_e4m3(float f);
unsigned char f32_to_e5m2(float f);
inline unsigned short cvt_e4m3x2(float lo, float hi) { return static_cast<unsigned short>(f32_to_e4m3(lo) | f32_to_e4m3(hi) << 8); }
inline unsigned short cvt_e5m2x2(float lo, float hi) { return static_cast<unsigned short>(f32_to_e5m2(lo) | f32_to_e5m2(hi) << 8); }
// What the portable quad_gather8 (8-bit A from registers) is made of: shfl.sync.idx through the
// runtime (the warp meets there), and prmt.b32's default mode.
inline unsigned shfl_idx(unsigned w, int src) { return static_cast<unsigned>(sc_host_api->shfl_idx(w, src)); }
inline unsigned byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long yx = static_cast<unsigned long long>(y) << 32 | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<unsigned>(yx >> (8 * (s >> (4 * i) & 7)) & 0xffu) << (8 * i);
  return r;
}

inline float f16_to_f32(unsigned short h) { return sc_host_api->f16_to_f32(h); }
inline unsigned short f32_to_f16(float f) { return sc_host_api->f32_to_f16(f); }
inline unsigned short f32_to_bf16(float f) { return sc_host_api->f32_to_bf16(f); }
// the device's cvt.rn.{bf16,f16}x2.f32: lo in bits 0-15
inline unsigned f32x2_to_bf16x2(float lo, float hi) { return f32_to_bf16(lo) | static_cast<unsigned>(f32_to_bf16(hi)) << 16; }
inline unsigned f32x2_to_f16x2(float lo, float hi) { return f32_to_f16(lo) | static_cast<unsigned>(f32_to_f16(hi)) << 16; }
}  // namespace sc
