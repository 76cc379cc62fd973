// The SMEM swizzle, as one token sequence every backend compiles.
//
// TMA writes, wgmma reads and the generated code's generic accesses all swizzle by the absolute
// shared-window address: the 16-byte chunk index (bits 4..6) is XORed with the row of the
// swizzle pattern (bits 7..9), for as many bits as the width has chunks. NVRTC gets the macro
// stringified into the prelude; the interpreter and the IR's wgmma addressing instantiate it as
// constexpr host code; tests/nvrtc/test_codegen_numbers.cpp checks it against the PTX ISA's
// table. So the function the GPU runs is the one the CPU backends and the tests evaluate.
#pragma once

#define STAGECRAFT_SWIZZLE_FN(QUALIFIERS)                               \
  template <int Bytes>                                                  \
  QUALIFIERS unsigned swz(unsigned o) {                                 \
    if constexpr (Bytes == 128) return o ^ (((o >> 7) & 7u) << 4);      \
    else if constexpr (Bytes == 64) return o ^ (((o >> 7) & 3u) << 4);  \
    else if constexpr (Bytes == 32) return o ^ (((o >> 7) & 1u) << 4);  \
    else return o;                                                      \
  }

namespace stagecraft::ir {

STAGECRAFT_SWIZZLE_FN(constexpr inline)

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
