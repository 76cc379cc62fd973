// Shapes: a static list of extents (dynamic_extent where only the run time knows) plus the
// run-time values. SMEM, TMEM and barrier shapes are fully static; GMEM extents may be dynamic.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "stagecraft/core/diagnostic.hpp"
#include "stagecraft/core/static_int.hpp"

namespace stagecraft {

// Tiles of `tile` elements that cover `extent`, the last one possibly overhanging it (a TMA box
// may: see copy_gmem_to_smem): a kernel's grid and step counts over any size.
constexpr std::int64_t ceil_div(std::int64_t extent, std::int64_t tile) { return (extent + tile - 1) / tile; }

template <long long... S>
struct dims {
  static constexpr int rank = sizeof...(S);
  static constexpr std::array<long long, sizeof...(S)> values{S...};
  static constexpr bool all_static = ((S >= 0) && ... && true);
  static constexpr long long product = (1LL * ... * S);
  static std::vector<std::int64_t> vector() { return {S...}; }
};

// The dims of a stand-in that a failed check returns (a tile, a GMEM parameter): operations
// accept it wherever its kind fits, so the error already reported is the only one.
struct any_dims {
  static constexpr int rank = 0;
  static constexpr std::array<long long, 0> values{};
  static std::vector<std::int64_t> vector() { return {}; }
};

template <class D>
struct is_dims_t : std::false_type {};
template <long long... S>
struct is_dims_t<dims<S...>> : std::true_type {};

namespace dims_ops {
template <class D>
struct drop_front;
template <long long S0, long long... S>
struct drop_front<dims<S0, S...>> {
  using type = dims<S...>;
};
template <class D, long long Len>
struct replace_front;
template <long long S0, long long... S, long long Len>
struct replace_front<dims<S0, S...>, Len> {
  using type = dims<Len, S...>;
};
template <class A, class B>
struct concat;
template <long long... A, long long... B>
struct concat<dims<A...>, dims<B...>> {
  using type = dims<A..., B...>;
};
}  // namespace dims_ops

// "(128, 64)" in compile-time messages; '?' for a dynamic extent.
template <long long... S>
constexpr diag::msg_buf& operator<<(diag::msg_buf& b, dims<S...>) {
  b << "(";
  int i = 0;
  ((b << (i++ ? ", " : ""), (S >= 0 ? (void)(b << S) : (void)(b << "?"))), ...);
  return b << ")";
}

// A shape value: `shape(M, 64_c)`.
template <class D>
struct shape_t {
  using static_dims = D;
  static constexpr int rank = D::rank;
  std::array<std::int64_t, D::rank> extents{};
  // Per dimension, the run-time extent it is (expr/size.hpp); empty: every extent compiled in.
  std::vector<std::int32_t> extent{};
  std::vector<std::int64_t> vector() const { return {extents.begin(), extents.end()}; }
};

template <int_like... E>
auto shape(E const&... e) {
  return shape_t<dims<static_value_or_dynamic<E>()...>>{{value_of(e)...}};
}

template <class T>
struct is_shape_t : std::false_type {};
template <class D>
struct is_shape_t<shape_t<D>> : std::true_type {};
template <class T>
concept shape_like = is_shape_t<std::remove_cvref_t<T>>::value;

}  // namespace stagecraft
