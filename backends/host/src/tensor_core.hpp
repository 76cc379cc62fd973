// The host machine's tensor cores: what one wgmma or tcgen05 instruction computes, from the bits
// the generated code issues it with (descriptors, instruction descriptor, TMEM addresses), read
// with the decoders the interpreter uses (ir::wgmma, ir::tcgen05) and summed by the same rule
// (ir::wgmma::accumulate). machine.cpp decides when an instruction runs and who takes part; this
// file only computes, and says in words what is wrong when the bits denote something the
// hardware would not do. Every function returns that text, empty when all is well.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sc_host_abi.h"

namespace stagecraft::hostexec::tensor_core {

// One CTA's SMEM as the tensor core reads it, by shared-window address. These are the generic
// view's bytes (TMA loads write them; machine.cpp publishes only TMA stores' sources to an async
// view): a generic store the tensor core reads without fence.proxy.async is the interpreter's
// diagnostic, not a wrong answer here.
struct smem_view {
  const unsigned char* bytes = nullptr;
  std::size_t size = 0;
  unsigned window = 0;  // the shared-window address of bytes[0]
};

// wgmma.mma_async for thread `thread` (0..127 of its warpgroup): its fragment of D (s.n / 2
// elements) += A * B. A from SMEM (a_regs null) or from the registers of the thread's quad:
// a_regs[q] holds the 4 registers of lane 4 * (lane / 4) + q, as that lane issued them.
std::string wgmma(schost::wgmma_instr const& s, int thread, void* d, smem_view const& smem, std::uint64_t a_desc,
                  std::array<const unsigned*, 4> const* a_regs, std::uint64_t b_desc);

// A CTA's tensor memory: 128 lanes of 512 32-bit columns, and which columns are allocated.
struct tmem {
  static constexpr unsigned lanes = 128, columns = 512;
  std::vector<std::uint32_t> words = std::vector<std::uint32_t>(lanes * columns, 0xFFFFFFFFu);  // never written: NaN
  std::array<unsigned, columns> owner{};  // per column: the size of the allocation holding it, 0 free
  // tcgen05.alloc: ncols a power of two in [32, 512], placed at the lowest free multiple of itself.
  std::string alloc(unsigned ncols, std::uint32_t& address);
  std::string dealloc(std::uint32_t address, unsigned ncols);
  // Whether columns [c, c + n) are all allocated.
  bool allocated(unsigned c, unsigned n) const;
  std::uint32_t& at(unsigned lane, unsigned column) { return words[lane * columns + column]; }
};

// The CTAs one tcgen05.mma touches: the issuer, and for cta_group::2 the odd CTA of the pair.
struct tc_cta {
  smem_view smem;
  tmem* t = nullptr;
};

// tcgen05.mma of kind `kind` (ir::tcgen05::Kind): D (TMEM address d) = A * B, + D if accumulate.
// pair: the odd CTA of a cta_group::2 instruction, else null.
// scales: a block-scaled MMA's (kind::mxf8f6f4, A in SMEM, cta_group::1), null for the others.
struct tc_scales {
  std::uint32_t sfa, sfb;  // TMEM addresses
};
std::string tc_mma(int kind, std::uint32_t idesc, std::uint32_t d, std::uint64_t a_desc, bool a_tmem, std::uint32_t a_taddr, std::uint64_t b_desc,
                   bool accumulate, tc_cta const& issuer, tc_cta const* pair, tc_scales const* scales = nullptr);
// tcgen05.cp.cta_group::1.32x128b.warpx4: 512 bytes of SMEM into TMEM at taddr.
std::string tc_cp(std::uint32_t taddr, std::uint64_t sdesc, tc_cta const& issuer);

}  // namespace stagecraft::hostexec::tensor_core
