// ir::Kernel -> CUDA C++ with inline PTX (DESIGN.md section 7). Plain string generation, no
// CUDA needed: the result is compiled by NVRTC (nvrtc.hpp) when the toolkit is present.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "stagecraft/ir/kernel.hpp"
#include "stagecraft/ir/math.hpp"

namespace stagecraft::nvrtc {

// A TMA descriptor the host must encode (cuTensorMapEncodeTiled) and pass, in this order,
// before the GMEM pointers. Dimensions are listed outermost first, as in the IR.
struct tensor_map_spec {
  int param = 0;                     // which GMEM parameter it describes
  ir::DType dtype = ir::DType::f32;
  std::vector<std::int64_t> shape;   // the whole array
  std::vector<std::int64_t> box;     // the GMEM box one copy traverses (its footprint when strided)
  int swizzle = 0;                   // bytes: 0, 32, 64, 128 (from the SMEM side)
  std::vector<std::int64_t> elem_strides = {};  // TMA element strides (ir::Ref::stride); empty: 1
  bool nan_fill = false;             // OOB_FILL_NAN_REQUEST_ZERO_FMA (a load's masked(NAN) block)
  friend bool operator==(tensor_map_spec const&, tensor_map_spec const&) = default;
};

// How the code is generated (part of every cache key).
struct codegen_options {
  // GPU safety: every barrier wait gives up after this many milliseconds, prints the kernel, op,
  // barrier element, the completion it waited for, CTA and thread, and traps (so a hang on a
  // lent GPU costs seconds, not the lease). 0: waits spin until they complete, as production
  // code does. The GPU tests and the check script turn it on (docs/gpu.md).
  std::uint32_t watchdog_ms = 0;
  // exact: the shared polynomials (ir/math.hpp) and --fmad=false, bit-equal with the interpreter
  // and the host backend. fast: ex2/lg2/rsqrt/tanh.approx, div.full and --fmad=true, within the
  // bound docs/codegen.md derives from the PTX ISA's stated errors. The CLI's ptx, run --backend
  // gpu and bench ask for fast unless told --math exact; the library's default stays exact so a
  // caller comparing bits with the interpreter gets what it compares (part of every cache key).
  ir::math_mode math = ir::math_mode::exact;
  friend bool operator==(codegen_options const&, codegen_options const&) = default;
};

// Where one IR op's statements sit in `generated::source`: [begin, end) in bytes. Loops and
// conditionals span their bodies. Tests read the numbers each op emitted from exactly this text
// (the text NVRTC compiles), so a record and its text cannot drift apart unnoticed.
struct op_span {
  int op = -1;            // the op number `stagecraft show` prints
  ir::StmtOp kind = ir::StmtOp::seq;
  std::size_t begin = 0, end = 0;
};

// The SMEM bank conflicts of a store the generator maps to threads itself (a store over a
// wgmma accumulator's fragment: the epilogues), from the addresses its code computes for each
// lane (ir::smem_wavefronts), per warp for the whole store. The view is taken at index 0; its
// other slabs have the same pattern when they are multiples of 128 bytes (1024 swizzled), which
// `assumed` says was not checked otherwise.
struct store_banks {
  int op = -1;
  const char* source = "a wgmma fragment";  // what the store writes: "a wgmma fragment", "rows loaded from TMEM"
  std::string target;              // the SMEM allocation's name
  std::int64_t accesses = 0;       // store instructions per thread
  int width = 0;                   // bytes per lane per instruction
  std::int64_t wavefronts = 0;     // per warp, all its instructions, the worst warp
  std::int64_t ideal = 0;          // the same bytes without a conflict
  bool slabs_aligned = true;       // every slab of the allocation starts on the same bank pattern
  bool stmatrix = false;           // by stmatrix.x4: `width` is the 16-byte row each lane addresses
};

struct generated {
  std::string entry;                 // the extern "C" symbol: "stagecraft_" + the kernel name
  std::string source;                // a complete NVRTC translation unit
  std::vector<tensor_map_spec> maps;
  std::int64_t smem_bytes = 0;       // dynamic shared memory to request
  int block_threads = 128;           // 128 x warpgroups
  codegen_options options;
  std::vector<op_span> ops;          // every op but seq, by op number
  std::vector<store_banks> banks;    // every fragment store into SMEM, in op order
};

// Something the IR says that this backend cannot express (yet); names the kernel and op.
struct unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

generated generate(ir::Kernel const& k, codegen_options const& o = {});

}  // namespace stagecraft::nvrtc
