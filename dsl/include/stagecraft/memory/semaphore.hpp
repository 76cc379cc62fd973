// Grid-wide semaphores: GMEM counters that order CTAs which share no cluster (Pallas's
// semaphore_signal / semaphore_wait, CUTLASS's generic barrier).
//
//   semaphores("turn", shape(row_blocks, S_c))   // (row block, slice): i32 counters, zero at launch
//   turn(rb, s)                                   // one counter: what signal and wait take
//
// The array is kernel-owned, like a workspace: every launcher allocates it and zero-fills it
// before the run, and nobody compares it afterwards. Its elements are touched only by the two
// semaphore operations (ops/semaphore.hpp), never loaded or stored: the type has no load, block
// or tile, and a counter is not a GMEM view.
#pragma once
#include <array>
#include <string>

#include "stagecraft/core/diagnostic.hpp"
#include "stagecraft/core/dtype.hpp"
#include "stagecraft/core/shape.hpp"
#include "stagecraft/expr/index.hpp"
#include "stagecraft/memory/gmem.hpp"
#include "stagecraft/memory/kinds.hpp"

namespace stagecraft {

// The declaration is a workspace<i32>'s (the parameter it lowers to is one); only its type, and
// so the reference the kernel body receives, differs.
template <class Dims>
struct semaphore_decl : gmem_decl<i32, Dims> {};

// One counter of a semaphore array: a 1-element block of it.
struct semaphore_elem {
  static constexpr operand_kind kind = operand_kind::semaphore;
  using dtype_t = i32;         // (for the operations that reject it: their checks name the kind,
  using static_dims = dims<1>;  // and nothing cascades from a missing member)
  static constexpr info static_info = no_info;
  tree::Ref ref;
};

template <class Dims>
struct semaphore_ref {
  static constexpr operand_kind kind = operand_kind::semaphore;
  using static_dims = Dims;
  static constexpr info static_info = no_info;
  tree::Ref ref;  // the parameter; shape = its extents

  // sem(i, j): one index per dimension (integers or index expressions; a run-time index outside
  // the array is the interpreter's index-out-of-range report).
  template <class... C>
  semaphore_elem operator()(C const&... c) const {
    if constexpr (sizeof...(C) != Dims::rank) {
      STAGECRAFT_ERROR("a semaphore needs one index per dimension of its array",
                       "a semaphore of an array of shape " << Dims{} << " needs " << Dims::rank << " indices, but got " << sizeof...(C));
      return {};
    } else if constexpr (!(index_like<C> && ...)) {
      STAGECRAFT_ERROR_T(Dims, "semaphore indices must be integers or index expressions");
      return {};
    } else {
      static constexpr std::array<long long, Dims::rank> ones = [] {
        std::array<long long, Dims::rank> o{};
        o.fill(1);
        return o;
      }();
      return {tree::ref_sized(tree::ref_block(ref, {node_of(c)...}), ones)};
    }
  }
};

// A kernel-owned array of i32 counters, zero at every launch (1 to 8 dimensions, static or
// run-time extents).
template <class Shape>
  requires shape_like<Shape>
auto semaphores(std::string name, Shape const& s) {
  using D = typename Shape::static_dims;
  if constexpr (D::rank < 1 || D::rank > ir::max_param_rank) {
    STAGECRAFT_ERROR("semaphores(name, shape): a semaphore array has 1 to 8 dimensions",
                     "semaphores(name, shape): a semaphore array has 1 to " << ir::max_param_rank << " dimensions, but the shape " << D{}
                                                                          << " has " << D::rank);
    return semaphore_decl<dims<1>>{{std::move(name), {1}, true}};
  } else {
    return semaphore_decl<D>{{std::move(name), s.vector(), true}};
  }
}

}  // namespace stagecraft
