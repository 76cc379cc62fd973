// The contract between a generated kernel compiled for the host (a shared object) and the
// host runtime that runs it (backends/host/src/machine.cpp). Both sides include this file, so
// it is plain C++17 with no dependency: the kernel's object is built at run time by whatever
// host compiler the user has.
#pragma once

namespace schost {

struct dim3u {
  unsigned x, y, z;
};

// What a CUDA thread reads from its special registers (named as in PTX: %tid is threadIdx,
// %ctaid blockIdx, %ntid blockDim, %nctaid gridDim), plus where its CTA's SMEM lives.
struct thread_regs {
  dim3u tid, ctaid, ntid, nctaid;
  dim3u cluster_ctaid, cluster_nctaid;
  unsigned cluster_ctarank;
  unsigned char* smem;    // the CTA's dynamic shared memory, as generic loads and stores see it
  unsigned smem_window;   // its shared-window address (what __cvta_generic_to_shared gives)
};

// The host's encoding of a CUtensorMap: the parameters the CUDA runtime hands
// cuTensorMapEncodeTiled, in the 128 bytes the kernel receives by value.
struct tensor_map {
  unsigned long long magic;
  unsigned long long global_address;
  unsigned rank, elem_bytes, swizzle;
  unsigned nan_fill;              // 1: OOB_FILL_NAN_REQUEST_ZERO_FMA, what lies outside lands as NaN
  unsigned unit_bits;             // 6 or 4: 16U6/16U4_ALIGN16B, GMEM packed that many bits an element, SMEM in 16-byte units of 16 (ir/types.hpp); 0: neither
  unsigned long long dims[5];     // innermost first, in elements
  unsigned long long strides[4];  // bytes between consecutive indices of dims 1..rank-1
  unsigned short box[5];          // innermost first, elements traversed (boxDim, at most 256)
  unsigned char elem_strides[5];  // innermost first (elementStrides, 1 to 8): ceil(box / stride) land
};
constexpr unsigned long long tensor_map_magic = 0x70616d74736f6873ull;  // "shostmap"

// One wgmma.mma_async instruction as its PTX text names it (m64nNk*.dtype.atype.btype and the
// transpose immediates); where A and B lie is in their descriptors. Types are
// stagecraft::ir::DType values, majors ir::wgmma::Major (0: K-major, 1: MN-major).
struct wgmma_instr {
  int n;
  int a_type, b_type, acc_type;
  int a_major, b_major;
};

// Everything the prelude cannot do in plain C++: each entry is one PTX instruction (or the
// loop around one) and may switch to another CUDA thread.
struct api {
  thread_regs* const* current;  // the running thread's registers
  void (*mbar_init)(unsigned bar, unsigned count);
  void (*mbar_fence_init)();
  void (*mbar_arrive)(unsigned bar, unsigned expect_tx_bytes);
  void (*mbar_arrive_remote)(unsigned bar, unsigned cta_rank, int cluster_scope);  // 1: .release.cluster
  void (*mbar_wait)(unsigned bar, unsigned parity, int cluster_scope);
  void (*fence_proxy_async)();
  void (*bar_sync)(unsigned id, unsigned threads);
  void (*bulk_commit)();
  void (*bulk_wait)(int n, int read_only);
  void (*cluster_sync)();
  // pair: .cta_group::2, the bytes landing in each destination complete on the barrier at `bar`'s
  // offset in that destination's pair leader (the even CTA along cluster axis 0).
  void (*tma_load)(unsigned dst, const void* map, unsigned bar, unsigned mask, int multicast, int rank, const int* coords, int pair);
  void (*tma_store)(const void* map, unsigned src, int rank, const int* coords);
  unsigned short (*f32_to_f16)(float);
  float (*f16_to_f32)(unsigned short);
  unsigned short (*f32_to_bf16)(float);
  // shfl.sync.bfly.b32 (twice for 64 bits) over all 32 lanes: the bits lane ^ lane_mask passed.
  unsigned long long (*shfl_xor)(unsigned long long bits, int lane_mask);
  void (*bar_arrive)(unsigned id, unsigned threads);  // bar.arrive: counted like bar.sync, does not wait
  // cp.reduce.async.bulk.tensor: a TMA store whose GMEM write combines. op: 1 add, 2 min, 3 max
  // (stagecraft::ir::Reduce); kind: the 4-byte element type, 0 f32, 1 s32, 2 u32.
  void (*tma_reduce)(const void* map, unsigned src, int rank, const int* coords, int op, int kind);
  // Grid-wide semaphores: a wait blocks until *counter >= value, then takes value from it; a
  // signal (the prelude's plain add) wakes the counter's waiters.
  void (*sem_wait)(int* counter, int value);
  void (*sem_signalled)(int* counter);
  // wgmma.mma_async, called by every thread of the warpgroup with its own fragment of D (N/2
  // elements: f32, s32, or f16 two to a register): D += A * B for those elements. a_regs: the
  // thread's 4 registers of A (A from registers), or null (A from SMEM through a_desc).
  void (*wgmma)(void* d, const wgmma_instr* s, unsigned long long a_desc, const unsigned* a_regs, unsigned long long b_desc);
  // Tensor memory (sm_100a): alloc and dealloc by a whole warp (lane 0 acts), the address
  // written to the SMEM slot at shared-window address `slot`.
  void (*tmem_alloc)(unsigned slot, unsigned ncols);
  void (*tmem_dealloc)(unsigned taddr, unsigned ncols);
  // tcgen05.mma by one thread: D (TMEM address d) = A * B (+ D when accumulate), M, N and the
  // types from the instruction descriptor; A from SMEM (a_desc) or, a_tmem set, from TMEM at
  // a_taddr. kind: stagecraft::ir::tcgen05::Kind (0 kind::f16, 1 kind::tf32, 2 kind::f8f6f4,
  // 3 kind::i8).
  void (*tc_mma)(unsigned d, unsigned long long a_desc, int a_tmem, unsigned a_taddr, unsigned long long b_desc, unsigned idesc,
                 unsigned accumulate, int kind);
  // tcgen05.commit: one arrival on `bar` once the thread's MMAs completed; cta_mask 0 for
  // cta_group::1, else the CTA ranks (the barrier at the same offset in each) for cta_group::2.
  void (*tc_commit)(unsigned bar, unsigned cta_mask);
  // tcgen05.ld / tcgen05.st .32x32b.xN by each thread of a warp: its lane of TMEM, n columns from taddr.
  void (*tmem_ld)(unsigned taddr, unsigned* r, int n);
  void (*tmem_st)(unsigned taddr, const unsigned* r, int n);
  // __syncwarp (bar.warp.sync) over all 32 lanes: a role of one warp meets there.
  void (*warp_sync)();
  // Cluster launch control (clusterlaunchcontrol.try_cancel / query_cancel): cancel a cluster that
  // has not started, the response landing at shared-window address `resp` and completing 16 bytes
  // on the mbarrier at `bar`; what a landed response says (what 0: canceled; 1-3: ctaid x, y, z).
  void (*clc_try_cancel)(unsigned resp, unsigned bar);
  unsigned (*clc_query)(unsigned resp, int what);
  // stmatrix.sync.aligned.m8n8.xN.shared.b16 (n = 1, 2 or 4) by every lane of a warp: `addr` is
  // this lane's row address (lanes 8 m .. 8 m + 7: the rows of matrix m), regs its n registers
  // (register m: two 16-bit elements of matrix m).
  void (*stmatrix)(unsigned addr, const unsigned* regs, int n);
  // shfl.sync.idx.b32 (twice for 64 bits) over all 32 lanes: the bits lane src_lane % 32 passed.
  unsigned long long (*shfl_idx)(unsigned long long bits, int src_lane);
  // Block-scaled tcgen05.mma (kind::mxf8f6f4, kind::mxf4 .block32; kind::mxf4nvf4 .block16) by
  // one thread: tc_mma's with A in SMEM, and the TMEM addresses of the scales of A and B (ue8m0
  // or ue4m3 bytes; the descriptor's IDs pick the first byte of each 32-bit cell). kind:
  // ir::tcgen05::Kind.
  void (*tc_mma_scaled)(unsigned d, unsigned long long a_desc, unsigned long long b_desc, unsigned idesc, unsigned sfa, unsigned sfb, unsigned accumulate,
                        int kind);
  // tcgen05.cp.cta_group::1.32x128b.warpx4 by one thread: 32 rows of 16 bytes from SMEM (the
  // sm_100 descriptor sdesc) into columns taddr .. taddr + 3 of every lane quarter.
  void (*tc_cp)(unsigned taddr, unsigned long long sdesc);
};

}  // namespace schost
