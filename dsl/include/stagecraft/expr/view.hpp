// Views of register tiles: the same elements in another arrangement, with no arithmetic.
//
//   auto T = transpose(load(xs[s]));              // (64, 32) -> (32, 64)
//   auto P = permute<1, 0, 2>(t);                 // axis d of the result is axis P_d of t
//   auto R = reshape(t, shape(8_c, 256_c));       // same element count, row-major order kept
//   auto S = slice<1>(t, 16_c, 32_c);             // columns 16 to 47: (64, 128) -> (64, 32)
//
// Every extent, start and axis is static, so each misuse is one compile error here, and the
// backends only ever see a valid view. The IR packs the parameters into Value::scalar, as
// ir/tile_view.hpp decodes them (kept out of this header: kernel translation units stay light).
#pragma once
#include <array>
#include <cstddef>

#include "stagecraft/expr/tile.hpp"

namespace stagecraft {

namespace detail {
template <class D, int... P>
struct permuted;
template <long long... S, int... P>
struct permuted<dims<S...>, P...> {
  static constexpr std::array<long long, sizeof...(S)> v{S...};
  using type = dims<v[static_cast<std::size_t>(P)]...>;
};

template <int... P>
constexpr bool is_permutation() {
  constexpr int n = sizeof...(P);
  std::array<bool, n> seen{};
  for (int p : {P...}) {
    if (p < 0 || p >= n || seen[static_cast<std::size_t>(p)]) return false;
    seen[static_cast<std::size_t>(p)] = true;
  }
  return true;
}

// ir::pack_permutation and ir::pack_slice, at compile time.
template <int... P>
constexpr double packed_permutation() {
  long long code = 0, d = 0;
  ((code |= static_cast<long long>(P) << (3 * d++)), ...);
  return static_cast<double>(code);
}

template <int... P>
struct axes {};
template <int... P>
constexpr diag::msg_buf& operator<<(diag::msg_buf& b, axes<P...>) {
  b << "(";
  int i = 0;
  ((b << (i++ ? ", " : "") << P), ...);
  return b << ")";
}

template <class D, int Axis, long long Extent>
struct with_extent;
template <long long... S, int Axis, long long Extent>
struct with_extent<dims<S...>, Axis, Extent> {
  static constexpr std::array<long long, sizeof...(S)> v{S...};
  template <std::size_t... I>
  static auto make(std::index_sequence<I...>) -> dims<(I == static_cast<std::size_t>(Axis) ? Extent : v[I])...>;
  using type = decltype(make(std::make_index_sequence<sizeof...(S)>{}));
};
}  // namespace detail

// The axes of t reordered: result axis d is axis P_d of t (permute<1, 0>(t) is transpose(t)).
template <int... P, class T>
auto permute(T const& t) {
  if constexpr (!is_tile<T>) {
    if constexpr (is_barrier_like<T>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(T);
    else STAGECRAFT_ERROR_T(T, "permute<P...>(t) takes a tile");
    return tile<f32, any_dims>{};
  } else if constexpr (error_tile<T>) {
    return T{};
  } else {
    using D = typename T::static_dims;
    using DT = typename T::dtype_t;
    if constexpr (static_cast<int>(sizeof...(P)) != D::rank) {
      STAGECRAFT_ERROR("permute<P>(t): t has shape S of rank R, but the permutation P names N axes",
                       "permute<P>(t): t has shape " << D{} << " of rank " << D::rank << ", but the permutation " << detail::axes<P...>{}
                                                     << " names " << static_cast<int>(sizeof...(P)) << " axes");
      return tile<DT, any_dims>{};
    } else if constexpr (!detail::is_permutation<P...>()) {
      STAGECRAFT_ERROR("permute<P>(t): P is not a permutation of the axes 0 to R",
                       "permute<P>(t): " << detail::axes<P...>{} << " is not a permutation of the axes 0 to " << (D::rank - 1)
                                         << " (each axis of t exactly once)");
      return tile<DT, any_dims>{};
    } else {
      using R = typename detail::permuted<D, P...>::type;
      return tile<DT, R, T::static_info>{
          tree::value_view(ir::ValueOp::permute, DT::code, R::values, t.node, detail::packed_permutation<P...>())};
    }
  }
}

namespace detail {
// transpose(t) of a register tile: the two axes of a rank-2 tile swapped, (M, N) -> (N, M).
// The public transpose (ops/mma.hpp) also takes SMEM views, which wgmma reads MN-major.
template <class T>
auto transpose_tile(T const& t) {
  if constexpr (!error_tile<T> && T::static_dims::rank != 2) {
    STAGECRAFT_ERROR("transpose(t) swaps the axes of a rank-2 tile, but t has shape S (permute<P...>(t) reorders any rank)",
                     "transpose(t) swaps the axes of a rank-2 tile, but t has shape " << typename T::static_dims{}
                                                                                       << " (permute<P...>(t) reorders any rank)");
    return tile<typename T::dtype_t, any_dims>{};
  } else {
    return permute<1, 0>(t);
  }
}
}  // namespace detail

// The elements of t in row-major order, arranged as `s` (a static shape of the same size).
template <class T, class S>
auto reshape(T const& t, S const&) {
  if constexpr (!is_tile<T>) {
    if constexpr (is_barrier_like<T>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(T);
    else STAGECRAFT_ERROR_T(T, "reshape(t, shape) takes a tile t");
    return tile<f32, any_dims>{};
  } else if constexpr (!shape_like<S>) {
    STAGECRAFT_ERROR_T(S, "reshape(t, shape): the new shape is a shape(...)");
    return tile<typename T::dtype_t, any_dims>{};
  } else if constexpr (error_tile<T>) {
    return T{};
  } else {
    using D = typename T::static_dims;
    using N = typename S::static_dims;
    using DT = typename T::dtype_t;
    if constexpr (!N::all_static) {
      STAGECRAFT_ERROR("reshape(t, shape): the shape S is not static", "reshape(t, shape): the shape " << N{} << " is not static (tile shapes are compile-time extents, 128_c)");
      return tile<DT, any_dims>{};
    } else if constexpr (N::product != D::product) {
      STAGECRAFT_ERROR("reshape(t, shape): t has shape S (N elements), but the shape T has M",
                       "reshape(t, shape): t has shape " << D{} << " (" << D::product << " elements), but the shape " << N{} << " has "
                                                         << N::product);
      return tile<DT, any_dims>{};
    } else {
      return tile<DT, N, T::static_info>{tree::value_view(ir::ValueOp::reshape, DT::code, N::values, t.node, 0)};
    }
  }
}

// Elements start .. start + extent - 1 of t along Axis (static start and extent: 16_c, 32_c).
template <int Axis, class T, class Start, class Extent>
auto slice(T const& t, Start const&, Extent const&) {
  if constexpr (!is_tile<T>) {
    if constexpr (is_barrier_like<T>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(T);
    else STAGECRAFT_ERROR_T(T, "slice<Axis>(t, start, extent) takes a tile t");
    return tile<f32, any_dims>{};
  } else if constexpr (!static_int<Start> || !static_int<Extent>) {
    STAGECRAFT_ERROR_T(T, "slice<Axis>(t, start, extent): start and extent are static integers (16_c), as tile shapes are");
    return tile<typename T::dtype_t, any_dims>{};
  } else if constexpr (error_tile<T>) {
    return T{};
  } else {
    using D = typename T::static_dims;
    using DT = typename T::dtype_t;
    constexpr long long start = std::remove_cvref_t<Start>::value, extent = std::remove_cvref_t<Extent>::value;
    if constexpr (Axis < 0 || Axis >= D::rank) {
      STAGECRAFT_ERROR("slice<A>(t, start, extent): axis A is out of range for t of shape S",
                       "slice<" << Axis << ">(t, start, extent): axis " << Axis << " is out of range for t of shape " << D{});
      return tile<DT, any_dims>{};
    } else if constexpr (start < 0 || extent < 1 || start + extent > D::values[static_cast<std::size_t>(Axis)]) {
      STAGECRAFT_ERROR("slice<A>(t, start, extent): elements B to E do not lie in axis A of t, which has extent X",
                       "slice<" << Axis << ">(t, " << start << ", " << extent << "): elements " << start << " to " << (start + extent - 1)
                                << " do not lie in axis " << Axis << " of t, which has extent "
                                << D::values[static_cast<std::size_t>(Axis)] << " (shape " << D{} << ")");
      return tile<DT, any_dims>{};
    } else {
      using R = typename detail::with_extent<D, Axis, extent>::type;
      return tile<DT, R, T::static_info>{tree::value_view(ir::ValueOp::slice, DT::code, R::values, t.node, static_cast<double>(Axis + 8 * start))};
    }
  }
}

}  // namespace stagecraft
