// Tensor memory (Blackwell) and register accumulators (Hopper wgmma).
//
//   tmem<f32>(shape(128_c, 256_c))          // (lane, column): 256 of the SM's 512 columns
//   accumulator<f32>(shape(64_c, 128_c))    // wgmma accumulator held in the warpgroup's registers
#pragma once
#include "stagecraft/core/dtype.hpp"
#include "stagecraft/core/info.hpp"
#include "stagecraft/core/shape.hpp"
#include "stagecraft/memory/indexing.hpp"
#include "stagecraft/memory/kinds.hpp"
#include "stagecraft/memory/smem.hpp"  // detail::sub_dims: a slice's shape

namespace stagecraft {

template <dtype DT, class Dims>
struct tmem_decl {
  static constexpr operand_kind kind = operand_kind::other;
  using dtype_t = DT;
  using static_dims = Dims;
  // tcgen05.alloc hands out 32-bit columns in powers of two from 32 to 512. A ring (stages,
  // lanes, columns) is one allocation of every stage's columns side by side.
  static constexpr long long columns = Dims::rank == 2   ? Dims::values[1] * DT::bits / 32
                                       : Dims::rank == 3 ? Dims::values[0] * Dims::values[2] * DT::bits / 32
                                                         : 0;
  decl_info info;
  tree::AllocDecl decl() const { return {ir::AllocKind::tmem, DT::code, Dims::vector()}; }
};

namespace detail {
template <dtype DT, class Shape>
auto make_tmem(decl_info info) {
  using D = typename Shape::static_dims;
  using T = tmem_decl<DT, D>;
  if constexpr (!D::all_static || (D::rank != 2 && D::rank != 3))
    STAGECRAFT_ERROR_T(D, "tmem<T>(shape(lanes, columns)): a TMEM allocation is 2-D (or a ring, shape(stages, lanes, columns)) with static extents");
  else if constexpr (D::values[D::rank - 2] != 128)
    STAGECRAFT_ERROR("TMEM allocations span all 128 lanes", "TMEM allocations span all 128 lanes, but got " << D::values[D::rank - 2]);
  else if constexpr (T::columns < 32 || T::columns > 512 || (T::columns & (T::columns - 1)) != 0)
    STAGECRAFT_ERROR("TMEM allocations must be a power of two between 32 and 512 columns",
                     "TMEM allocations must be a power of two between 32 and 512 columns, but " << D{} << " of "
                                                                                               << dtype_name<DT>() << " needs " << T::columns);
  return T{info};
}
}  // namespace detail

template <dtype DT, class Shape>
  requires shape_like<Shape>
auto tmem(Shape const&, src_loc loc = src_loc::current()) {
  return detail::make_tmem<DT, Shape>({nullptr, loc});
}
template <dtype DT, class Shape>
  requires shape_like<Shape>
auto tmem(decl_name name, Shape const&) {
  return detail::make_tmem<DT, Shape>({name.text, name.loc});
}

template <dtype DT, class Dims>
struct accumulator_decl {
  static constexpr operand_kind kind = operand_kind::other;
  using dtype_t = DT;
  using static_dims = Dims;
  decl_info info;
  tree::AllocDecl decl() const { return {ir::AllocKind::accumulator, DT::code, Dims::vector()}; }
};

namespace detail {
template <dtype DT, class Shape>
auto make_accumulator(decl_info info) {
  using D = typename Shape::static_dims;
  // 1-D: a row vector, one value per row of a (m, n) accumulator, held where that row's fragment
  // is (per-row state of an online softmax: running max and sum).
  if constexpr (!D::all_static || (D::rank != 2 && D::rank != 1))
    STAGECRAFT_ERROR_T(D, "accumulator<T>(shape(m, n)): a wgmma accumulator is 2-D (or a 1-D row vector, shape(m)) with static extents");
  else if constexpr (D::values[0] % 64 != 0)
    STAGECRAFT_ERROR("a wgmma accumulator has a multiple of 64 rows",
                     "a wgmma accumulator has a multiple of 64 rows (one warpgroup instruction covers 64), but got "
                         << D::values[0]);
  return accumulator_decl<DT, D>{info};
}
}  // namespace detail

template <dtype DT, class Shape>
  requires shape_like<Shape>
auto accumulator(Shape const&, src_loc loc = src_loc::current()) {
  return detail::make_accumulator<DT, Shape>({nullptr, loc});
}
template <dtype DT, class Shape>
  requires shape_like<Shape>
auto accumulator(decl_name name, Shape const&) {
  return detail::make_accumulator<DT, Shape>({name.text, name.loc});
}

template <dtype DT, class Dims>
struct tmem_ref {
  static constexpr operand_kind kind = operand_kind::tmem;
  using dtype_t = DT;
  using static_dims = Dims;
  static constexpr info static_info = no_info;
  tree::Ref ref;

  // d[s]: stage s of a TMEM ring (stages, 128, columns), an integer or a stage cursor
  // (stage<2>(i)): the (128, columns) accumulator at columns s * columns.
  template <class T>
  auto operator[](T const& i) const {
    using Rest = typename dims_ops::drop_front<std::conditional_t<(Dims::rank > 0), Dims, dims<1>>>::type;
    if constexpr (Dims::rank != 3) {
      STAGECRAFT_ERROR_T(T, "only a TMEM ring, tmem<T>(shape(stages, 128, columns)), is indexed: d[s] is its stage s");
      return *this;  // the view as it was: what follows sees no second error
    } else if constexpr (!detail::index_operand<T>) {
      STAGECRAFT_ERROR_T(T, "a TMEM ring is indexed with an integer or a stage cursor");
      return tmem_ref<DT, Rest>{ref};
    } else {
      detail::check_index<"TMEM", Dims::values[0], T>();
      return tmem_ref<DT, Rest>{tree::ref_indexed(ref, detail::index_node(i), nullptr, true)};
    }
  }
};

template <dtype DT, class Dims>
struct accumulator_ref {
  static constexpr operand_kind kind = operand_kind::accumulator;
  using dtype_t = DT;
  using static_dims = Dims;
  static constexpr info static_info = no_info;
  tree::Ref ref;
};

// Columns start .. start + extent - 1 of a TMEM view (an allocation, or a ring's stage), every
// lane: what async_load_tmem reads a subtile of the accumulator from (an epilogue that rounds and
// stores D 64 columns at a time through two SMEM buffers). Axis 1 only (the 32x32b load covers all
// 128 lanes); the extent is static, a multiple of 16 (a tcgen05.ld moves 16 or 32 columns); the
// start is static or an index expression (the interpreter checks a start it cannot know).
template <int Axis, class V, class Start, class Extent>
  requires(kind_of<V> == operand_kind::tmem)
auto slice(V const& v, Start const& start, Extent const&) {
  using D = typename V::static_dims;
  using DT = typename V::dtype_t;
  // What a failed check returns: a view of unknown shape, which the ops after it accept, so the
  // error reported is the only one.
  using error_view = tmem_ref<DT, any_dims>;
  if constexpr (std::is_same_v<D, any_dims>) {
    return v;  // a stand-in for an error already reported
  } else if constexpr (Axis != 1 || D::rank != 2) {
    STAGECRAFT_ERROR("slice<A>(tmem, start, extent) cuts columns of a (lanes, columns) TMEM view: A is 1 (index a ring's stage first)",
                     "slice<" << Axis << ">(tmem, start, extent) of a TMEM view of shape " << D{}
                              << ": TMEM views are cut along their columns only, slice<1> of a (lanes, columns) view (index a ring's stage first)");
    return error_view{v.ref};
  } else if constexpr (!static_int<Extent> || !index_like<Start>) {
    STAGECRAFT_ERROR_T(Extent, "slice<1>(tmem, start, extent): the extent is a static integer (64_c) and the start an integer or an index expression");
    return error_view{v.ref};
  } else {
    constexpr long long extent = std::remove_cvref_t<Extent>::value, dim = D::values[1];
    constexpr range_t s = range_ops::without_grid(range_of<Start>());
    using R = typename detail::sub_dims<D, 1, extent>::type;
    if constexpr (extent < 16 || extent > dim || extent % 16 != 0) {
      STAGECRAFT_ERROR("slice<1>(tmem, start, extent): the extent is a multiple of 16 columns, at most the view's",
                       "slice<1>(tmem, start, " << extent << "): the extent is a multiple of 16 columns (a tcgen05.ld moves 16 or 32), at most the "
                                                << dim << " of the TMEM view " << D{});
      return error_view{v.ref};
    } else if constexpr (s.known && s.nt == 0 && (s.lo < 0 || s.hi - 1 + extent > dim)) {
      STAGECRAFT_ERROR("TMEM offset is out of bounds: slice<1>(tmem, start, extent) past the view's last column",
                       "TMEM offset is out of bounds: slice<1>(tmem, start, " << extent << ") with a start in [" << range_ops::without_grid(range_of<Start>()).lo
                                                                              << ", " << range_ops::without_grid(range_of<Start>()).hi
                                                                              << ") reaches past the " << dim << " columns of the TMEM view " << D{});
      return tmem_ref<DT, R>{v.ref};  // the shape asked for: no second error
    } else {
      return tmem_ref<DT, R>{tree::ref_sliced(v.ref, 1, node_of(start), extent)};
    }
  }
}

}  // namespace stagecraft
