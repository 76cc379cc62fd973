// Tile (value) expressions: what a warpgroup computes in registers.
//
//   auto t = load(buf[s]);                  // tile<f32, (128, 64)>
//   store(out[s], cast<f16>(t * 2.0f + 1.0f));
//
// Operands must agree in dtype and shape (no implicit promotion, as on the GPU: say cast<>).
// Scalars take the tile's dtype. Barriers are not arrays and never appear here.
#pragma once
#include <array>
#include <utility>

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

namespace detail {
// Element-wise math: one operand, the same dtype and shape. The transcendentals are the shared
// f32 implementations of stagecraft/ir/math.hpp in every backend (the numerics policy).
template <diag::fixed_string Name, ir::ValueOp Code, bool FloatOnly, class T>
auto tile_math(T const& a) {
  if constexpr (!is_tile<T>) {
    if constexpr (is_barrier_like<T>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(T);
    else STAGECRAFT_ERROR("F(x) takes a tile", Name << "(x) takes a tile (a constant tile is full<T>(shape, value))");
    return tile<f32, any_dims>{};
  } else if constexpr (error_tile<T>) {
    return T{};
  } else {
    using DT = typename T::dtype_t;
    if constexpr (FloatOnly && !DT::is_float) {
      STAGECRAFT_ERROR("F(x) needs a floating-point tile", Name << "(x) needs a floating-point tile, but got " << dtype_name<DT>()
                                                                 << " (convert it with cast<f32>(...))");
      return T{};
    } else {
      return T{tree::value_unary(Code, DT::code, T::static_dims::values, a.node)};
    }
  }
}

// (S0, ..., Sr) without axis A, and with extent E inserted at axis A.
template <class D, int A>
struct remove_axis;
template <long long... S, int A>
struct remove_axis<dims<S...>, A> {
  static constexpr std::array<long long, sizeof...(S)> v{S...};
  template <std::size_t... I>
  static auto make(std::index_sequence<I...>) -> dims<v[I < static_cast<std::size_t>(A) ? I : I + 1]...>;
  using type = decltype(make(std::make_index_sequence<sizeof...(S) - 1>{}));
};

template <diag::fixed_string Name, ir::ValueOp Code, int Axis, class T>
auto tile_reduce(T const& a) {
  if constexpr (!is_tile<T>) {
    if constexpr (is_barrier_like<T>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(T);
    else STAGECRAFT_ERROR("F<Axis>(t) takes a tile", Name << "<Axis>(t) takes a tile");
    return tile<f32, any_dims>{};
  } else if constexpr (error_tile<T>) {
    return T{};
  } else {
    using D = typename T::static_dims;
    using DT = typename T::dtype_t;
    if constexpr (D::rank < 2) {
      STAGECRAFT_ERROR("F<A>(t) reduces a tile of rank at least 2, but t has shape S",
                       Name << "<" << Axis << ">(t) reduces a tile of rank at least 2 (the result is a tile, not a single element), but t has shape "
                            << D{});
      return tile<DT, any_dims>{};
    } else if constexpr (Axis < 0 || Axis >= D::rank) {
      STAGECRAFT_ERROR("F<A>(t): axis A is out of range for t of shape S",
                       Name << "<" << Axis << ">(t): axis " << Axis << " is out of range for t of shape " << D{} << " (axes are 0 to "
                            << (D::rank - 1) << ")");
      return tile<DT, any_dims>{};
    } else {
      using R = typename remove_axis<D, Axis>::type;
      return tile<DT, R, T::static_info>{tree::value_axis(Code, DT::code, R::values, a.node, Axis)};
    }
  }
}

template <class T>
struct static_dims_of {
  using type = void;
};
template <class T>
  requires(is_tile<T> || shape_like<T>)
struct static_dims_of<T> {
  using type = typename std::remove_cvref_t<T>::static_dims;
};
}  // namespace detail

template <class T>
auto exp(T const& a) {
  return detail::tile_math<"exp", ir::ValueOp::exp, true>(a);
}
template <class T>
auto exp2(T const& a) {
  return detail::tile_math<"exp2", ir::ValueOp::exp2, true>(a);
}
template <class T>
auto log(T const& a) {
  return detail::tile_math<"log", ir::ValueOp::log, true>(a);
}
template <class T>
auto rsqrt(T const& a) {
  return detail::tile_math<"rsqrt", ir::ValueOp::rsqrt, true>(a);
}
template <class T>
auto tanh(T const& a) {
  return detail::tile_math<"tanh", ir::ValueOp::tanh, true>(a);
}
// Integers too: abs of the most negative value wraps to itself, as abs.s32 does.
template <class T>
auto abs(T const& a) {
  return detail::tile_math<"abs", ir::ValueOp::abs, false>(a);
}

// Reductions along one axis: a (M, N) tile gives a (M) tile for Axis 1 (the axis is removed, no
// keepdims: broadcast<1>(v, t) puts it back explicitly). Summed in f32 (integers: 64 bits) from
// index 0 upward and rounded to the tile's dtype once, the same order in every backend.
template <int Axis, class T>
auto sum(T const& a) {
  return detail::tile_reduce<"sum", ir::ValueOp::reduce_sum, Axis>(a);
}
template <int Axis, class T>
auto max(T const& a) {
  return detail::tile_reduce<"max", ir::ValueOp::reduce_max, Axis>(a);
}
template <int Axis, class T>
auto min(T const& a) {
  return detail::tile_reduce<"min", ir::ValueOp::reduce_min, Axis>(a);
}

// v repeated along a new axis Axis of `like` (a tile, or a static shape): the row maxima of a
// (M, N) tile t back to (M, N) are broadcast<1>(max<1>(t), t).
template <int Axis, class V, class Like>
auto broadcast(V const& v, Like const&) {
  using D = typename detail::static_dims_of<Like>::type;
  if constexpr (!is_tile<V>) {
    if constexpr (is_barrier_like<V>) STAGECRAFT_REJECT_BARRIER_AS_ARRAY(V);
    else STAGECRAFT_ERROR_T(V, "broadcast<Axis>(v, like) takes a tile v");
    return tile<f32, any_dims>{};
  } else if constexpr (std::is_void_v<D>) {
    STAGECRAFT_ERROR_T(V, "broadcast<Axis>(v, like): like is a tile or a shape(...) giving the result's shape");
    return tile<f32, any_dims>{};
  } else if constexpr (error_tile<V> || std::is_same_v<D, any_dims>) {
    return tile<typename V::dtype_t, any_dims>{};
  } else {
    using DT = typename V::dtype_t;
    using DV = typename V::static_dims;
    if constexpr (!D::all_static) {
      STAGECRAFT_ERROR("broadcast<A>(v, like): the shape S is not static",
                       "broadcast<" << Axis << ">(v, like): the shape " << D{} << " is not static (tile shapes are compile-time extents, 128_c)");
      return tile<DT, any_dims>{};
    } else if constexpr (D::rank < 2 || Axis < 0 || Axis >= D::rank) {
      STAGECRAFT_ERROR("broadcast<A>(v, like): axis A is not an axis of a shape S of rank at least 2",
                       "broadcast<" << Axis << ">(v, like): axis " << Axis << " is not an axis of the shape " << D{} << " of rank at least 2");
      return tile<DT, any_dims>{};
    } else if constexpr (!std::is_same_v<typename detail::remove_axis<D, Axis>::type, DV>) {
      STAGECRAFT_ERROR("broadcast<A>(v, like): v has shape S, but the shape T without axis A is U",
                       "broadcast<" << Axis << ">(v, like): v has shape " << DV{} << ", but the shape " << D{} << " without axis " << Axis
                                    << " is " << typename detail::remove_axis<D, Axis>::type{});
      return tile<DT, any_dims>{};
    } else {
      return tile<DT, D, V::static_info>{tree::value_axis(ir::ValueOp::broadcast, DT::code, D::values, v.node, Axis)};
    }
  }
}

// A tile whose every element is its coordinate along Axis: iota<0>(s) >= iota<1>(s) is the
// causal mask's condition, iota<1>(s) + 64 * block the column a thread's element belongs to.
template <int Axis, dtype DT = i32, class S>
auto iota(S const&) {
  if constexpr (!shape_like<S>) {
    STAGECRAFT_ERROR_T(S, "iota<Axis>(shape) takes a shape(...)");
    return tile<DT, any_dims>{};
  } else {
    using D = typename S::static_dims;
    if constexpr (!D::all_static) {
      STAGECRAFT_ERROR("iota<A>(shape): the shape S is not static", "iota<" << Axis << ">(shape): the shape " << D{} << " is not static");
      return tile<DT, any_dims>{};
    } else if constexpr (Axis < 0 || Axis >= D::rank) {
      STAGECRAFT_ERROR("iota<A>(shape): axis A is out of range for the shape S",
                       "iota<" << Axis << ">(shape): axis " << Axis << " is out of range for the shape " << D{});
      return tile<DT, any_dims>{};
    } else {
      return tile<DT, D>{tree::value_axis(ir::ValueOp::iota, DT::code, D::values, nullptr, Axis)};
    }
  }
}

// A constant tile: every element `value`, rounded or wrapped to DT.
template <dtype DT, class S, class V>
auto full(S const&, V const& value) {
  if constexpr (!shape_like<S>) {
    STAGECRAFT_ERROR_T(S, "full<T>(shape, value) takes a shape(...)");
    return tile<DT, any_dims>{};
  } else if constexpr (!scalar<V>) {
    STAGECRAFT_ERROR_T(V, "full<T>(shape, value) takes an arithmetic value");
    return tile<DT, any_dims>{};
  } else {
    using D = typename S::static_dims;
    if constexpr (!D::all_static) {
      STAGECRAFT_ERROR("full<T>(shape, value): the shape S is not static", "full<T>(shape, value): the shape " << D{} << " is not static");
      return tile<DT, any_dims>{};
    } else {
      return tile<DT, D>{tree::value_scalar(DT::code, D::values, static_cast<double>(value))};
    }
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
