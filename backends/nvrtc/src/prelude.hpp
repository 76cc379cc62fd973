// The inline-PTX wrappers every generated kernel starts with. Kept as a raw string so NVRTC
// sees exactly this text; cuda.h and <cuda/ptx> are not used (the first does not compile under
// NVRTC, the second costs 150-250 ms per compile and has no wgmma).
#pragma once

// The swizzle is one token sequence compiled twice: by NVRTC, stringified into the prelude, and
// by the host compiler in tests/nvrtc/test_codegen_numbers.cpp, which checks it against the PTX
// ISA's swizzle table. So the function the GPU runs is the one the test evaluates.
#define STAGECRAFT_SWIZZLE_FN(QUALIFIERS)                               \
  template <int Bytes>                                                  \
  QUALIFIERS unsigned swz(unsigned o) {                                 \
    if constexpr (Bytes == 128) return o ^ (((o >> 7) & 7u) << 4);      \
    else if constexpr (Bytes == 64) return o ^ (((o >> 7) & 3u) << 4);  \
    else if constexpr (Bytes == 32) return o ^ (((o >> 7) & 1u) << 4);  \
    else return o;                                                      \
  }
#define STAGECRAFT_PRELUDE_STR_(...) #__VA_ARGS__
#define STAGECRAFT_PRELUDE_STR(...) STAGECRAFT_PRELUDE_STR_(__VA_ARGS__)

namespace stagecraft::nvrtc::detail {

inline constexpr const char* prelude = R"PTX(// ---- stagecraft prelude ----
namespace sc {
struct alignas(64) tmap_t { unsigned long long word[16]; };  // CUtensorMap: 128 opaque bytes

__device__ __forceinline__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

// mbarrier
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_fence_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive_remote(unsigned bar, unsigned cta_rank) {
  asm volatile("{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
               " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}" :: "r"(bar), "r"(cta_rank) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
}
// Cluster barriers are arrived on by peer CTAs with .release.cluster; only an .acquire.cluster
// wait synchronizes with those (a .cta-scoped acquire is not morally strong with them).
__device__ __forceinline__ void mbar_wait_cluster(unsigned bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
}

// proxies and groups
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void wg_sync(int wg) { asm volatile("bar.sync %0, 128;" :: "r"(wg + 1) : "memory"); }
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(N) : "memory"); }
template <int N> __device__ __forceinline__ void bulk_wait() { asm volatile("cp.async.bulk.wait_group %0;" :: "n"(N) : "memory"); }

// clusters
__device__ __forceinline__ unsigned cluster_ctaid(int axis) {
  unsigned v;
  if (axis == 0) asm volatile("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(v));
  else if (axis == 1) asm volatile("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(v));
  else asm volatile("mov.u32 %0, %%cluster_ctaid.z;" : "=r"(v));
  return v;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n barrier.cluster.wait.acquire.aligned;" ::: "memory");
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

// conversions (round to nearest even), 16-bit types stored as their bit patterns
__device__ __forceinline__ float f16_to_f32(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short f32_to_f16(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ float bf16_to_f32(unsigned short h) { return __uint_as_float(static_cast<unsigned>(h) << 16); }
__device__ __forceinline__ unsigned short f32_to_bf16(float f) { unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ float round_f16(float f) { return f16_to_f32(f32_to_f16(f)); }
__device__ __forceinline__ float round_bf16(float f) { return bf16_to_f32(f32_to_bf16(f)); }
// integer tile division: by zero gives -1 (div.s32's result, and the interpreter's), not C++ UB
__device__ __forceinline__ long long idiv(long long n, long long d) { return d == 0 ? -1LL : n / d; }

// shared-window byte address -> swizzled address (16-byte chunks XOR bits 7.. of the address). TMA
// swizzles by the absolute SMEM address, so callers pass smem_base + offset, not the offset.
)PTX" STAGECRAFT_PRELUDE_STR(STAGECRAFT_SWIZZLE_FN(__device__ __forceinline__)) R"PTX(
}  // namespace sc
// ---- end of prelude ----
)PTX";

}  // namespace stagecraft::nvrtc::detail
