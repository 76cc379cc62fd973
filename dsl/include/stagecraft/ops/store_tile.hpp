// store_tile(buf, value, dst, pending): the epilogue's staged TMA store of one tile or subtile,
// the five ops every GEMM epilogue ends a tile with, as one:
//
//   wait_smem_to_gmem(pending, read_only)  the bulk store that last read `buf` has read it: at most
//                                          `pending` newer groups still reading (with B staging
//                                          buffers used in turn, B - 1; 0 with one buffer)
//   store(buf, value)                      the tile into SMEM, rounded as `value` says
//   commit_smem()                          the generic writes made visible to the TMA
//   copy_smem_to_gmem(buf, dst)            the TMA store
//   commit_smem_to_gmem_group()            in a bulk group of its own
//
// With two buffers and pending = 1, a subtile's rounding overlaps the store of the one before
// (gemm_blackwell's epilogue). A buffer one rank above the value, whose leading dimension is 1
// (the slice dimension of a 3-D TMA box: attention_hopper's (1, rows, d) chunks of O), takes the
// value in its [0] and is copied whole. The kernel still ends its stores with wait_smem_to_gmem(0_c)
// before it exits (GMEM written). Each op keeps the caller's source line: a diagnostic names the
// line that called store_tile, and which of the five it was.
#pragma once
#include "stagecraft/ops/copy.hpp"
#include "stagecraft/ops/load_store.hpp"
#include "stagecraft/ops/stmt.hpp"

namespace stagecraft {

template <class Buf, class V, class Dst, class N>
auto store_tile(Buf const& buf, V const& value, Dst const& dst, N pending, src_loc loc = src_loc::current()) {
  if constexpr (!static_int<N>) {
    STAGECRAFT_ERROR_T(N, "store_tile(buf, value, dst, pending): pending must be a static integer (0_c, 1_c: the stores allowed to still read their buffers)");
    return stmt<>{};
  } else {
    auto target = [&] {
      if constexpr (requires { V::static_dims::rank; } && Buf::static_dims::rank == V::static_dims::rank + 1 && Buf::static_dims::values[0] == 1)
        return buf[0_c];
      else return buf;
    }();
    return seq(wait_smem_to_gmem(pending, read_only, loc), store(target, value, loc), commit_smem(loc), copy_smem_to_gmem(buf, dst, loc),
               commit_smem_to_gmem_group(loc));
  }
}

}  // namespace stagecraft
