// Generic-proxy access by the whole warpgroup: load a view into a tile, store a tile to a view.
#pragma once
#include "stagecraft/expr/tile.hpp"
#include "stagecraft/memory/gmem.hpp"
#include "stagecraft/memory/smem.hpp"
#include "stagecraft/memory/tmem.hpp"
#include "stagecraft/ops/copy.hpp"
#include "stagecraft/ops/reduce.hpp"

namespace stagecraft {

namespace detail {
// Views a warpgroup can read and write with ordinary loads and stores.
template <diag::fixed_string Op, class V>
constexpr bool check_view() {
  if constexpr (is_barrier_like<V>) {
    STAGECRAFT_REJECT_BARRIER_AS_ARRAY(V);
    return false;
  } else if constexpr (error_gmem<V>) {
    return false;  // a stand-in for an error already reported
  } else if constexpr (kind_of<V> == operand_kind::tmem) {
    STAGECRAFT_ERROR_T(V, "TMEM is not read or written with load/store: use async_load_tmem (tcgen05.ld) or tcgen05_mma");
    return false;
  } else if constexpr (strided_gmem<V>) {
    STAGECRAFT_ERROR_T(V, "load/store of GMEM: a strided block (x.block(strides(...), ...)) is a TMA traversal, only copy_gmem_to_smem takes it");
    return false;
  } else if constexpr (kind_of<V> == operand_kind::gmem_block && std::is_void_v<typename V::static_dims>) {
    STAGECRAFT_ERROR_T(V, "load/store of GMEM needs a block shape: use x.tile(shape(...), i, j) instead of x.block(i, j)");
    return false;
  } else if constexpr (kind_of<V> != operand_kind::smem && kind_of<V> != operand_kind::gmem_block &&
                       kind_of<V> != operand_kind::accumulator) {
    STAGECRAFT_ERROR("expected a SMEM, GMEM or accumulator view",
                     Op << ": expected a SMEM, GMEM or accumulator view, but got " << kind_name(kind_of<V>));
    return false;
  } else if constexpr (ir::dtype_is_packed_code(V::dtype_t::code)) {
    // ir::verify says the same of a tile value of these types in hand-built IR.
    STAGECRAFT_ERROR("e2m1x2, e2m3, e3m2 and ue4m3 are storage types: TMA and tcgen05_copy_scales move them, tcgen05_mma reads them",
                     Op << ": " << dtype_name<typename V::dtype_t>()
                        << " is a storage type (packed FP4, FP6 or NVFP4 scale codes): TMA and tcgen05_copy_scales move it, tcgen05_mma "
                           "reads it; it is not loaded into or stored from a tile");
    return false;
  } else {
    return true;
  }
}
}  // namespace detail

template <class V>
auto load(V const& v) {
  constexpr bool ok = detail::check_view<"load", V>();
  if constexpr (!ok) {
    return tile<f32, any_dims>{};
  } else {
    using DT = typename V::dtype_t;
    using D = typename V::static_dims;
    return tile<DT, D, V::static_info>{tree::value_load(ir::ValueOp::load, DT::code, D::values, v.ref)};
  }
}

namespace detail {
// 1: a tile of another dtype than the view's, 2: of another shape, 0: neither (or a scalar).
template <class T, class DT, class D>
constexpr int store_mismatch() {
  if constexpr (is_tile<T> && !error_tile<T>) {
    if constexpr (!std::is_same_v<typename T::dtype_t, DT>) return 1;
    else if constexpr (!std::is_same_v<typename T::static_dims, D>) return 2;
  }
  return 0;
}

template <ir::Reduce R, class V, class T>
auto store_impl(V const& dst, T const& value, src_loc loc) {
  constexpr bool ok = [] {  // the reduction is checked only on a view that passed (one message, no cascade)
    if constexpr (!detail::check_view<"store", V>()) return false;
    else return detail::check_reduction<"store", R, V>();
  }();
  if constexpr (!ok) {
    return stmt<>{};
  } else if constexpr (is_barrier_like<T>) {
    STAGECRAFT_REJECT_BARRIER_AS_ARRAY(T);
    return stmt<>{};
  } else if constexpr (!is_tile<T> && !scalar<T>) {
    STAGECRAFT_ERROR_T(T, "store(view, value): the value must be a tile or a scalar");
    return stmt<>{};
  } else {
    using DT = typename V::dtype_t;
    using D = typename V::static_dims;
    if constexpr (store_mismatch<T, DT, D>() == 1) {
      STAGECRAFT_ERROR("Expected dtypes to match but src had type T and dst had type U",
                       "store: Expected dtypes to match but src had type " << dtype_name<typename T::dtype_t>()
                                                                           << " and dst had type " << dtype_name<DT>()
                                                                           << " (convert with cast<T>(...))");
      return stmt<>{};
    } else if constexpr (store_mismatch<T, DT, D>() == 2) {
      STAGECRAFT_ERROR("Expected shapes to match, but src had shape S and dst had shape T",
                       "store: Expected shapes to match, but src had shape " << typename T::static_dims{}
                                                                             << " and dst had shape " << D{});
      return stmt<>{};
    } else {
      return detail::make_stmt<detail::info_of_operands<V, T>() | needs_warpgroup(warp_op_tile)>(tree::stmt_op(
          ir::StmtOp::store, loc, {&dst.ref}, {.value = detail::value_node(value, DT::code, D::values), .n = static_cast<std::int64_t>(R)}));
    }
  }
}
}  // namespace detail

template <class V, class T>
auto store(V const& dst, T const& value, src_loc loc = src_loc::current()) {
  return detail::store_impl<ir::Reduce::none>(dst, value, loc);
}
// A reducing store (ops/reduce.hpp): each element of `value` combined into GMEM atomically.
template <class V, class T, ir::Reduce R>
auto store(V const& dst, T const& value, reduction<R>, src_loc loc = src_loc::current()) {
  return detail::store_impl<R>(dst, value, loc);
}

// The size of a view in bytes, from its type.
template <class V>
constexpr long long size_bytes(V const&) {
  if constexpr (is_barrier_like<V>) {
    STAGECRAFT_REJECT_BARRIER_AS_ARRAY(V);
    return 0;
  } else {
    static_assert(requires { V::static_dims::product; }, "size_bytes(x) takes a view or a declaration with a static shape");
    return V::static_dims::product * V::dtype_t::bits / 8;
  }
}

}  // namespace stagecraft
