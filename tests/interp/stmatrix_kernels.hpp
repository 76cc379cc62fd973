// Epilogues the code generator stores by stmatrix (docs/codegen.md, "The stmatrix epilogue"):
// C = A * B^T by wgmma into an f32 accumulator, rounded to bf16 into an SMEM staging tile of one
// of the layouts stmatrix serves (unswizzled row-major, 32/64/128-byte swizzled rows, tiles of
// those, two m64 blocks, a ring of two buffers indexed by a loop variable), then out by TMA.
// Shared by the codegen tests (addresses and registers against the PTX ISA's stmatrix fragment)
// and the host tests (the generated code run on the CPU, bit for bit against the interpreter).
// `fallback_kernel` is a layout stmatrix does not fit (8 columns: no pair of 8-column groups).
#pragma once
#include <string>
#include <vector>

#include <stagecraft/stagecraft.hpp>

namespace stagecraft::testing::stmatrix {

// M x N of C (M = 64 or 128), K = 64, into `staging` (an SMEM bf16 (M, N) buffer).
template <long long M, long long N, class Staging>
ir::Kernel epilogue_kernel(std::string const& name, Staging staging) {
  return lower(kernel<sm_90a>(name, grid(1), threads(1_c), gmem<bf16>("a", shape(int_c<M>, 64_c)), gmem<bf16>("b", shape(int_c<N>, 64_c)),
                              gmem<bf16>("c", shape(int_c<M>, int_c<N>)), smem<bf16>(shape(int_c<M>, 64_c), swizzle(128_c)),
                              smem<bf16>(shape(int_c<N>, 64_c), swizzle(128_c)), staging, barrier(arrivals(2_c)),
                              accumulator<f32>(shape(int_c<M>, int_c<N>)), [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto acc) {
                                return seq(copy_gmem_to_smem(a.block(0_c, 0_c), as, full), copy_gmem_to_smem(b.block(0_c, 0_c), bs, full),
                                           barrier_wait(full), store(acc, 0.0f), wgmma(acc, as, transpose(bs)), wgmma_commit(), wgmma_wait(0_c),
                                           store_tile(cs, cast<bf16>(load(acc)), c.block(0_c, 0_c), 0_c), wait_smem_to_gmem(0_c));
                              }));
}

// The (64, 64) product stored twice, into both column halves of C (64, 128), through a ring of
// two 128-byte swizzled buffers named by the loop variable (a run-time view index); each half's
// TMA store overlaps the rounding of the next (store_tile's pending = 1).
inline ir::Kernel ring_kernel() {
  return lower(kernel<sm_90a>("stsm_ring", grid(1), threads(1_c), gmem<bf16>("a", shape(64_c, 64_c)), gmem<bf16>("b", shape(64_c, 64_c)),
                              gmem<bf16>("c", shape(64_c, 128_c)), smem<bf16>(shape(64_c, 64_c), swizzle(128_c)),
                              smem<bf16>(shape(64_c, 64_c), swizzle(128_c)), smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)), barrier(arrivals(2_c)),
                              accumulator<f32>(shape(64_c, 64_c)), [](auto a, auto b, auto c, auto as, auto bs, auto cs, auto full, auto acc) {
                                return seq(copy_gmem_to_smem(a.block(0_c, 0_c), as, full), copy_gmem_to_smem(b.block(0_c, 0_c), bs, full),
                                           barrier_wait(full), store(acc, 0.0f), wgmma(acc, as, transpose(bs)), wgmma_commit(), wgmma_wait(0_c),
                                           for_(range(2_c), [&](auto j) { return store_tile(cs[j], cast<bf16>(load(acc)), c.block(0_c, j), 1_c); }),
                                           wait_smem_to_gmem(0_c));
                              }));
}

// Every layout above, by name.
inline std::vector<ir::Kernel> kernels() {
  return {
      epilogue_kernel<64, 64>("stsm_plain", smem<bf16>(shape(64_c, 64_c))),
      epilogue_kernel<64, 16>("stsm_swizzle32", smem<bf16>(shape(64_c, 16_c), swizzle(32_c))),
      epilogue_kernel<64, 32>("stsm_swizzle64", smem<bf16>(shape(64_c, 32_c), swizzle(64_c))),
      epilogue_kernel<64, 64>("stsm_swizzle128", smem<bf16>(shape(64_c, 64_c), swizzle(128_c))),
      epilogue_kernel<128, 64>("stsm_two_blocks", smem<bf16>(shape(128_c, 64_c), swizzle(128_c))),
      epilogue_kernel<64, 128>("stsm_tiled128", smem<bf16>(shape(64_c, 128_c), tiling(64_c, 64_c), swizzle(128_c))),
      epilogue_kernel<64, 64>("stsm_tiled32", smem<bf16>(shape(64_c, 64_c), tiling(64_c, 16_c), swizzle(32_c))),
      ring_kernel(),
  };
}

// N = 8: each thread's 4 registers per block are one 8-column group, not the two an x4 takes,
// so the store keeps its 4-byte pair stores.
inline ir::Kernel fallback_kernel() { return epilogue_kernel<64, 8>("stsm_fallback", smem<bf16>(shape(64_c, 8_c))); }

}  // namespace stagecraft::testing::stmatrix
