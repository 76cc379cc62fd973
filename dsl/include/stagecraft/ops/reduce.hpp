// Reducing stores: CTAs that nothing orders combine their results into the same GMEM.
//
//   store(dq.tile(shape(64_c, 64_c), i, j), load(acc), reduce_add);   // red.relaxed.gpu.global.add, per element
//   copy_smem_to_gmem(part[s], y.block(i, j), reduce_add);             // cp.reduce.async.bulk.tensor .add
//
// Each element is combined atomically (add, min, max), relaxed, at .gpu scope: the sum of many
// CTAs' partials needs no barrier, cluster or second pass. What still needs one is reading the
// result: a plain load or store of an element that an unordered access reduces into is a race
// (the interpreter reports it), and nothing inside a kernel orders CTAs of different clusters.
// So a kernel reduces into an output its caller reads afterwards (y += ..., as a beta = 1 GEMM,
// or into zeros the caller gave), or into a workspace a later launch reads.
//
// add takes f32, i32 and u32; min and max i32 and u32 (ir::reduce_takes). The float sum's order
// is the hardware's, so it is exact only up to reassociation: references compare with a bound.
#pragma once
#include "stagecraft/core/diagnostic.hpp"
#include "stagecraft/core/dtype.hpp"
#include "stagecraft/ir/types.hpp"
#include "stagecraft/memory/gmem.hpp"

namespace stagecraft {

template <ir::Reduce R>
struct reduction {
  static constexpr ir::Reduce op = R;
};
inline constexpr reduction<ir::Reduce::add> reduce_add{};
inline constexpr reduction<ir::Reduce::min> reduce_min{};
inline constexpr reduction<ir::Reduce::max> reduce_max{};

namespace detail {
// The destination of a reducing store: a GMEM block of a dtype the instruction takes.
template <diag::fixed_string Op, ir::Reduce R, class V>
constexpr bool check_reduction() {
  if constexpr (R == ir::Reduce::none) {
    return true;  // a plain store
  } else if constexpr (kind_of<V> != operand_kind::gmem_block) {
    STAGECRAFT_ERROR("a reduction goes to GMEM only (red.global, cp.reduce.async.bulk.tensor)",
                     Op << " with reduce_" << ir::reduce_name(R)
                        << ": a reduction goes to GMEM only (red.global, cp.reduce.async.bulk.tensor); a CTA's own SMEM or registers need "
                           "no atomics: store the combined value");
    return false;
  } else if constexpr (!ir::reduce_takes(R, V::dtype_t::code)) {
    STAGECRAFT_ERROR("this reduction does not take the destination's dtype",
                     Op << " with reduce_" << ir::reduce_name(R) << ": the destination is " << dtype_name<typename V::dtype_t>()
                        << ", but reduce_" << ir::reduce_name(R) << " takes "
                        << (R == ir::Reduce::add ? "f32, i32 and u32" : "i32 and u32 (red has no f32 min or max)"));
    return false;
  } else {
    return true;
  }
}
}  // namespace detail

}  // namespace stagecraft
