// The order in which a warpgroup writes a 32 x 32 tile of 4-byte elements that is the transpose
// of another, both in 128-byte swizzled SMEM (what TMA reads and writes): store(out, transpose(
// load(in))) with out(r, c) = in(c, r). One token sequence, like the swizzle: the NVRTC prelude
// compiles it, and tests/unit/test_transpose_order.cpp counts the banks it touches through
// ir::swz, so the order the GPU runs is the one whose banks were counted.
//
// Why an order at all. The generic store gives thread t elements 4t .. 4t+3 of the destination:
// per instruction a warp writes 4 rows x 8 columns (stride 4) and reads the source's transpose,
// 8 rows x 4 columns. Through the 128-byte swizzle (16-byte chunk k of row r sits at chunk
// k ^ (r % 8); bank = 4 * chunk + element % 4) either side covers only 8 of the 32 banks: 4-way
// conflicts, 4 wavefronts per instruction instead of 1. Padding would fix it, but TMA writes
// dense boxes.
//
// The order below. Lane L (0..31) of warp w, instruction u (0..7) writes element (r, c):
//   r = L0 | L1 << 1 | (L4 ^ u0) << 2 | u1 << 3 | u2 << 4      c = L2 | L3 << 1 | L4 << 2 | w << 3
// Destination bank of out(r, c), 5 bits: c % 4 gives L2, L3; the chunk (c / 4) ^ (r % 8) gives
// L4 ^ L0, w0 ^ L1 and w1 ^ L4 ^ u0. With w and u fixed (one instruction) the last pins L4, then
// L0 and L1: all five lane bits, so the 32 lanes hit 32 banks. Source bank of in(c, r): r % 4
// gives L0, L1; the chunk (r / 4) ^ (c % 8) gives L4 ^ u0 ^ L2, u1 ^ L3 and u2 ^ L4: again all
// five lane bits, 32 banks. Both sides take one wavefront per instruction, and (w, u, L) ->
// (r, c) is a bijection of the 1024 elements.
#pragma once

#define STAGECRAFT_TRANSPOSE32_FN(QUALIFIERS)                                          \
  QUALIFIERS int transpose32_element(int thread, int u) {                              \
    const int L = thread & 31, w = thread >> 5;                                        \
    const int r = (L & 3) | ((((L >> 4) ^ u) & 1) << 2) | ((u >> 1) << 3);             \
    const int c = ((L >> 2) & 3) | (((L >> 4) & 1) << 2) | (w << 3);                   \
    return r * 32 + c;                                                                 \
  }

namespace stagecraft::ir {

STAGECRAFT_TRANSPOSE32_FN(constexpr inline)

}  // namespace stagecraft::ir
