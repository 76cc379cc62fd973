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
  unsigned long long dims[5];     // innermost first, in elements
  unsigned long long strides[4];  // bytes between consecutive indices of dims 1..rank-1
  unsigned short box[5];          // innermost first, elements traversed (boxDim, at most 256)
  unsigned char elem_strides[5];  // innermost first (elementStrides, 1 to 8): ceil(box / stride) land
};
constexpr unsigned long long tensor_map_magic = 0x70616d74736f6873ull;  // "shostmap"

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
  void (*tma_load)(unsigned dst, const void* map, unsigned bar, unsigned mask, int multicast, int rank, const int* coords);
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
};

}  // namespace schost
