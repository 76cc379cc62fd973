// Shared-memory bank conflicts of one warp-wide access: how many wavefronts (passes through the
// 32 four-byte banks) the hardware needs for the addresses the 32 lanes use.
//
// A warp's access of W bytes per lane is split into phases of 128 bytes' worth of lanes (32
// lanes for W <= 4, 16 for 8 bytes, 8 for 16 bytes); within a phase, lanes reading or writing the
// same 4-byte word share it, and each bank serves one distinct word per wavefront, so a phase
// takes as many wavefronts as the most distinct words any one bank holds. The ideal is one per
// phase (32 x W / 128, at least 1). This is the model CUTLASS's and the CUDA guide's
// bank-conflict counts follow; the GEMM-speed issue's audit counted the same way (512 where 64
// suffice for gemm_hopper's epilogue).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <span>

namespace stagecraft::ir {

struct wavefronts {
  std::int64_t actual = 0, ideal = 0;
};

// addresses: the byte address of each lane's access (32 of them); width: bytes per lane (1..16).
inline wavefronts smem_wavefronts(std::span<const std::uint32_t> addresses, int width) {
  const int words = std::max(1, width / 4);
  const int lanes_per_phase = 32 / words;
  wavefronts w;
  for (std::size_t first = 0; first < addresses.size(); first += static_cast<std::size_t>(lanes_per_phase)) {
    std::array<std::set<std::uint32_t>, 32> bank;
    for (std::size_t l = first; l < std::min(addresses.size(), first + static_cast<std::size_t>(lanes_per_phase)); ++l)
      for (int j = 0; j < words; ++j) {
        const std::uint32_t word = addresses[l] / 4 + static_cast<std::uint32_t>(j);
        bank[word % 32].insert(word);
      }
    std::size_t most = 1;
    for (auto const& b : bank) most = std::max(most, b.size());
    w.actual += static_cast<std::int64_t>(most);
    w.ideal += 1;
  }
  return w;
}

}  // namespace stagecraft::ir
