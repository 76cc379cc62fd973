// Tile (value) expressions: what a warpgroup computes in registers.
//
//   auto t = load(buf[s]);                  // tile<f32, (128, 64)>
//   store(out[s], cast<f16>(t * 2.0f + 1.0f));
//
// Operands must agree in dtype and shape (no implicit promotion, as on the GPU: say cast<>).
// Scalars take the tile's dtype. Barriers are not arrays and never appear here.
#pragma once
#include "stagecraft/core/dtype.hpp"
#include "stagecraft/core/info.hpp"
#include "stagecraft/core/shape.hpp"
#include "stagecraft/expr/index.hpp"
#include "stagecraft/memory/kinds.hpp"

namespace stagecraft {

template <dtype DT, class Dims, info I = no_info>
struct tile {
  static constexpr operand_kind kind = operand_kind::tile;
  using dtype_t = DT;
  using static_dims = Dims;
  static constexpr info static_info = I;
  tree::ValueP node;
};

template <class T>
inline constexpr bool is_tile = kind_of<T> == operand_kind::tile;

// The stand-in tile a failed check returns (load(barrier), barrier + 1.0f, ...): any_dims.
template <class T>
concept error_tile = is_tile<T> && std::is_same_v<typename std::remove_cvref_t<T>::static_dims, any_dims>;

template <class T>
concept scalar = std::is_arithmetic_v<std::remove_cvref_t<T>> && !std::is_same_v<std::remove_cvref_t<T>, bool>;

namespace detail {
template <class T>
tree::ValueP value_node(T const& v, ir::DType dt, tree::dims_view shape) {
  if constexpr (is_tile<T>) return v.node;
  else return tree::value_scalar(dt, shape, static_cast<double>(v));
}

// Binary tile operations: checks, then one node. Scalars broadcast to the tile.
template <diag::fixed_string Op, ir::ValueOp Code, class A, class B>
auto tile_binary(A const& a, B const& b) {
  if constexpr (is_barrier_like<A> || is_barrier_like<B>) {
    STAGECRAFT_REJECT_BARRIER_AS_ARRAY(std::conditional_t<is_barrier_like<A>, A, B>);
    return tile<f32, any_dims>{};
  } else if constexpr (error_tile<A> || error_tile<B>) {
    return tile<f32, any_dims>{};  // an operand stands in for an error already reported
  } else {
    using T = std::conditional_t<is_tile<A>, A, B>;
    using DT = typename T::dtype_t;
    using D = typename T::static_dims;
    if constexpr (is_tile<A> && is_tile<B>) {
      using DA = typename A::dtype_t;
      using DB = typename B::dtype_t;
      if constexpr (!std::is_same_v<DA, DB>) {
        STAGECRAFT_ERROR("Expected dtypes to match but lhs had type T and rhs had type U",
                         Op << ": Expected dtypes to match but lhs had type " << dtype_name<DA>() << " and rhs had type "
                            << dtype_name<DB>() << " (convert one with cast<T>(...))");
        return T{};
      } else if constexpr (!std::is_same_v<typename A::static_dims, typename B::static_dims>) {
        STAGECRAFT_ERROR("Expected shapes to match, but lhs had shape S and rhs had shape T",
                         Op << ": Expected shapes to match, but lhs had shape " << typename A::static_dims{}
                            << " and rhs had shape " << typename B::static_dims{});
        return T{};
      }
    }
    if constexpr (!(is_tile<A> || scalar<A>) || !(is_tile<B> || scalar<B>)) {
      STAGECRAFT_ERROR_T(T, "tile arithmetic takes tiles and scalars");
      return T{};
    } else {
      constexpr info I = [] {
        info i{};
        if constexpr (is_tile<A>) i = i | A::static_info;
        if constexpr (is_tile<B>) i = i | B::static_info;
        return i;
      }();
      constexpr tree::dims_view shape = D::values;
      return tile<DT, D, I>{tree::value_binary(Code, DT::code, shape, value_node(a, DT::code, shape), value_node(b, DT::code, shape))};
    }
  }
}

template <class A, class B>
concept tile_operands = (is_tile<A> || is_tile<B>) && !(index_like<A> && index_like<B>);
}  // namespace detail

#define STAGECRAFT_TILE_BINOP(op, name, code)                                       \
  template <class A, class B>                                                        \
    requires detail::tile_operands<A, B> || (is_barrier_like<A> || is_barrier_like<B>) \
  auto operator op(A const& a, B const& b) {                                         \
    return detail::tile_binary<name, ir::ValueOp::code>(a, b);                       \
  }
STAGECRAFT_TILE_BINOP(+, "operator+", add)
STAGECRAFT_TILE_BINOP(-, "operator-", sub)
STAGECRAFT_TILE_BINOP(*, "operator*", mul)
STAGECRAFT_TILE_BINOP(/, "operator/", div)
#undef STAGECRAFT_TILE_BINOP

template <class A, class B>
  requires detail::tile_operands<A, B>
auto max(A const& a, B const& b) {
  return detail::tile_binary<"max", ir::ValueOp::max>(a, b);
}
template <class A, class B>
  requires detail::tile_operands<A, B>
auto min(A const& a, B const& b) {
  return detail::tile_binary<"min", ir::ValueOp::min>(a, b);
}

template <dtype DT, class D, info I>
auto operator-(tile<DT, D, I> const& a) {
  return tile<DT, D, I>{tree::value_unary(ir::ValueOp::neg, DT::code, D::values, a.node)};
}

template <class T>
auto exp(T const& a) {
  if constexpr (!is_tile<T>) {
    if constexpr (is_barrier_like<T>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(T);
    else STAGECRAFT_ERROR_T(T, "exp(x) takes a tile");
    return tile<f32, any_dims>{};
  } else {
    using DT = typename T::dtype_t;
    if constexpr (!DT::is_float)
      STAGECRAFT_ERROR("exp(x) needs a floating-point tile", "exp(x) needs a floating-point tile, but got " << dtype_name<DT>());
    return T{tree::value_unary(ir::ValueOp::exp, DT::code, T::static_dims::values, a.node)};
  }
}

template <dtype To, class T>
auto cast(T const& a) {
  if constexpr (!is_tile<T>) {
    if constexpr (is_barrier_like<T>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(T);
    else STAGECRAFT_ERROR_T(T, "cast<T>(x) takes a tile");
    return tile<To, any_dims>{};
  } else {
    using D = typename T::static_dims;
    return tile<To, D, T::static_info>{tree::value_unary(ir::ValueOp::cast, To::code, D::values, a.node)};
  }
}

}  // namespace stagecraft
