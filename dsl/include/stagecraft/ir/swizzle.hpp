// The SMEM swizzle, as one token sequence every backend compiles.
//
// TMA writes, wgmma reads and the generated code's generic accesses all swizzle by the absolute
// shared-window address: the 16-byte chunk index (bits 4..6) is XORed with the row of the
// swizzle pattern (bits 7..9), for as many bits as the width has chunks. NVRTC gets the macro
// stringified into the prelude; the interpreter and the IR's wgmma addressing instantiate it as
// constexpr host code; tests/nvrtc/test_codegen_numbers.cpp checks it against the PTX ISA's
// table. So the function the GPU runs is the one the CPU backends and the tests evaluate.
#pragma once

#include <cstdint>

#define STAGECRAFT_SWIZZLE_FN(QUALIFIERS)                               \
  template <int Bytes>                                                  \
  QUALIFIERS unsigned swz(unsigned o) {                                 \
    if constexpr (Bytes == 128) return o ^ (((o >> 7) & 7u) << 4);      \
    else if constexpr (Bytes == 64) return o ^ (((o >> 7) & 3u) << 4);  \
    else if constexpr (Bytes == 32) return o ^ (((o >> 7) & 1u) << 4);  \
    else return o;                                                      \
  }

// tiling(TR, TC): the two innermost dimensions (.., rows, Cols) stored as TR x TC tiles, tile
// after tile in row-major order, each tile row-major: element e (row-major over the logical
// shape) lives at element tiled(e). The rows of every leading index form a whole number of tile
// rows (the verifier checks that TR divides them), so the row can run on across them. Unsigned:
// SMEM offsets are non-negative, and unsigned division by a power of two is one shift.
#define STAGECRAFT_TILED_FN(QUALIFIERS)                                                     \
  template <unsigned Cols, unsigned TR, unsigned TC>                                        \
  QUALIFIERS unsigned tiled(unsigned e) {                                                   \
    const unsigned row = e / Cols, col = e % Cols;                                          \
    return ((row / TR) * (Cols / TC) + col / TC) * (TR * TC) + (row % TR) * TC + col % TC;   \
  }

namespace stagecraft::ir {

STAGECRAFT_SWIZZLE_FN(constexpr inline)
STAGECRAFT_TILED_FN(constexpr inline)

// The same, with the layout known only at run time (tr = 0: not tiled).
constexpr std::int64_t tiled_element(std::int64_t e, std::int64_t cols, std::int64_t tr, std::int64_t tc) {
  if (tr == 0) return e;
  const std::int64_t row = e / cols, col = e % cols;
  return ((row / tr) * (cols / tc) + col / tc) * (tr * tc) + (row % tr) * tc + col % tc;
}

// The same, with the width known only at run time (0: no swizzle).
constexpr unsigned swizzle_address(unsigned addr, int bytes) {
  switch (bytes) {
    case 128: return swz<128>(addr);
    case 64: return swz<64>(addr);
    case 32: return swz<32>(addr);
    default: return addr;
  }
}

}  // namespace stagecraft::ir
