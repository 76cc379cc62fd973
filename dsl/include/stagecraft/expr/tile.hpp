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
#include "stagecraft/expr/size.hpp"
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
  else if constexpr (size_value<T>)  // compiled in: the plain scalar a builder over integers made
    return v.run_time ? tree::value_index(dt, shape, v.node) : tree::value_scalar(dt, shape, static_cast<double>(v.value));
  else if constexpr (index_expr<T>) return tree::value_index(dt, shape, v.node);  // a run-time scalar
  else return tree::value_scalar(dt, shape, static_cast<double>(v));
}

// Binary tile operations: checks, then one node. Scalars broadcast to the tile. Comparisons
// give a pred tile (a mask) of the operands' shape; masks themselves are no numbers.
template <diag::fixed_string Op, ir::ValueOp Code, class A, class B>
auto tile_binary(A const& a, B const& b) {
  constexpr bool compare = ir::value_is_compare(Code);
  if constexpr (is_barrier_like<A> || is_barrier_like<B>) {
    STAGECRAFT_REJECT_BARRIER_AS_ARRAY(std::conditional_t<is_barrier_like<A>, A, B>);
    return tile<f32, any_dims>{};
  } else if constexpr (error_tile<A> || error_tile<B>) {
    return tile<f32, any_dims>{};  // an operand stands in for an error already reported
  } else {
    using T = std::conditional_t<is_tile<A>, A, B>;
    using DT = typename T::dtype_t;
    using D = typename T::static_dims;
    using R = std::conditional_t<compare, tile<pred, D, T::static_info>, T>;
    if constexpr (std::is_same_v<DT, pred>) {
      STAGECRAFT_ERROR("a pred tile is a mask, not a number", Op << ": a pred tile is a mask, not a number (select(mask, a, b) uses it, cast<i32>(mask) counts it)");
      return tile<f32, any_dims>{};  // stands in, so the mistake is reported once
    } else {
      if constexpr (is_tile<A> && is_tile<B>) {
        using DA = typename A::dtype_t;
        using DB = typename B::dtype_t;
        if constexpr (!std::is_same_v<DA, DB>) {
          STAGECRAFT_ERROR("Expected dtypes to match but lhs had type T and rhs had type U",
                           Op << ": Expected dtypes to match but lhs had type " << dtype_name<DA>() << " and rhs had type "
                              << dtype_name<DB>() << " (convert one with cast<T>(...))");
          return R{};
        } else if constexpr (!std::is_same_v<typename A::static_dims, typename B::static_dims>) {
          STAGECRAFT_ERROR("Expected shapes to match, but lhs had shape S and rhs had shape T",
                           Op << ": Expected shapes to match, but lhs had shape " << typename A::static_dims{}
                              << " and rhs had shape " << typename B::static_dims{});
          return R{};
        }
      }
      // An index expression is a scalar known at run time: iota<1>(s) + j * 64 < hi - lo.
      if constexpr (!(is_tile<A> || scalar<A> || index_expr<A>) || !(is_tile<B> || scalar<B> || index_expr<B>)) {
        STAGECRAFT_ERROR_T(T, "tile arithmetic takes tiles and scalars");
        return R{};
      } else {
        constexpr info I = [] {
          info i{};
          if constexpr (is_tile<A>) i = i | A::static_info;
          if constexpr (is_tile<B>) i = i | B::static_info;
          return i;
        }();
        constexpr tree::dims_view shape = D::values;
        using RD = std::conditional_t<compare, pred, DT>;
        return tile<RD, D, I>{tree::value_binary(Code, RD::code, shape, value_node(a, DT::code, shape), value_node(b, DT::code, shape))};
      }
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
// Comparisons: a pred tile (a mask), 1 where the comparison holds. iota<0>(s) >= iota<1>(s) is the
// causal mask; select(mask, a, b) applies one.
#undef STAGECRAFT_TILE_BINOP
// The class-type test comes first: is_tile itself compares enums, which must not find these.
#define STAGECRAFT_TILE_COMPARE(op, name, code)                                              \
  template <class A, class B>                                                                \
    requires(std::is_class_v<A> || std::is_class_v<B>) && detail::tile_operands<A, B>        \
  auto operator op(A const& a, B const& b) {                  \
    return detail::tile_binary<name, ir::ValueOp::code>(a, b); \
  }
STAGECRAFT_TILE_COMPARE(<, "operator<", lt)
STAGECRAFT_TILE_COMPARE(<=, "operator<=", le)
STAGECRAFT_TILE_COMPARE(>, "operator>", gt)
STAGECRAFT_TILE_COMPARE(>=, "operator>=", ge)
STAGECRAFT_TILE_COMPARE(==, "operator==", eq)
STAGECRAFT_TILE_COMPARE(!=, "operator!=", ne)
#undef STAGECRAFT_TILE_COMPARE

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

// A tile whose every element is the one element of t, a value known only at run time (a scale
// factor read from memory): full(shape(64_c), load(sb.tile(shape(1_c, 1_c), n, k))). No new
// operation: t viewed as (1), repeated along axis 1 of (1, size), viewed as `s`.
template <class S, class T>
  requires is_tile<T>
auto full(S const& s, T const& t) {
  using DT = typename T::dtype_t;
  if constexpr (error_tile<T>) {
    return tile<DT, any_dims>{};
  } else if constexpr (!shape_like<S>) {
    STAGECRAFT_ERROR_T(S, "full(shape, t) takes a shape(...)");
    return tile<DT, any_dims>{};
  } else if constexpr (!S::static_dims::all_static) {
    STAGECRAFT_ERROR("full(shape, t): the shape S is not static", "full(shape, t): the shape " << typename S::static_dims{} << " is not static");
    return tile<DT, any_dims>{};
  } else if constexpr (T::static_dims::product != 1) {
    STAGECRAFT_ERROR("full(shape, t): t is the one-element tile whose value fills the shape, but it has shape S",
                     "full(shape, t): t is the one-element tile whose value fills the shape, but it has shape " << typename T::static_dims{});
    return tile<DT, any_dims>{};
  } else {
    return reshape(broadcast<1>(reshape(t, shape(1_c)), shape(1_c, int_c<S::static_dims::product>)), s);
  }
}

namespace detail {
// The first tile among the operands (it gives dtype and shape; scalars take them), or void.
template <class... T>
struct first_tile {
  using type = void;
};
template <class T, class... R>
struct first_tile<T, R...> {
  using type = std::conditional_t<is_tile<T>, T, typename first_tile<R...>::type>;
};
template <class T, class Ref>
constexpr bool fits_ref() {
  if constexpr (is_tile<T>)
    return std::is_same_v<typename T::dtype_t, typename Ref::dtype_t> && std::is_same_v<typename T::static_dims, typename Ref::static_dims>;
  else
    return true;
}
template <class T, class Ref>
constexpr bool fits = fits_ref<T, Ref>();
template <class T>
constexpr bool operand_ok = is_tile<T> || scalar<T>;
template <class DT, class D, class T>
tree::ValueP operand(T const& v) {
  if constexpr (is_tile<T>) return v.node;
  else return tree::value_scalar(DT::code, D::values, static_cast<double>(v));
}
template <class T>
constexpr info operand_info() {
  if constexpr (is_tile<T>) return T::static_info;
  else return info{};
}
template <class... T>
constexpr info infos() {
  return (operand_info<T>() | ...);
}
template <class T>
struct is_mask : std::false_type {};
template <class D, info I>
struct is_mask<tile<pred, D, I>> : std::true_type {};
}  // namespace detail

// Elementwise mask ? a : b. a and b are tiles of one dtype and the mask's shape, or scalars
// (which take the other's dtype); the mask is a pred tile, what comparisons give.
template <class M, class A, class B>
auto select(M const& mask, A const& a, B const& b) {
  using T = typename detail::first_tile<A, B>::type;
  if constexpr (error_tile<M>) {
    return tile<f32, any_dims>{};
  } else if constexpr (!detail::is_mask<M>::value) {
    STAGECRAFT_ERROR_T(M, "select(mask, a, b): the mask is a pred tile (what a comparison gives)");
    return tile<f32, any_dims>{};
  } else if constexpr (std::is_void_v<T> || !detail::operand_ok<A> || !detail::operand_ok<B>) {
    STAGECRAFT_ERROR_T(M, "select(mask, a, b): a and b are tiles or scalars, at least one a tile (it gives the dtype)");
    return tile<f32, any_dims>{};
  } else if constexpr (error_tile<T>) {
    return T{};
  } else if constexpr (!detail::fits<A, T> || !detail::fits<B, T>) {
    STAGECRAFT_ERROR("select(mask, a, b): Expected a and b to match, but a had type T and shape S and b had type U and shape V",
                     "select(mask, a, b): Expected a and b to match, but a had type " << dtype_name<typename A::dtype_t>() << " and shape "
                                                                                       << typename A::static_dims{} << " and b had type "
                                                                                       << dtype_name<typename B::dtype_t>() << " and shape "
                                                                                       << typename B::static_dims{});
    return T{};
  } else if constexpr (!std::is_same_v<typename M::static_dims, typename T::static_dims>) {
    STAGECRAFT_ERROR("select(mask, a, b): the mask has shape S, but the values have shape T",
                     "select(mask, a, b): the mask has shape " << typename M::static_dims{} << ", but the values have shape "
                                                                << typename T::static_dims{} << " (broadcast<Axis>(...) one of them)");
    return T{};
  } else {
    using DT = typename T::dtype_t;
    using D = typename T::static_dims;
    return tile<DT, D, detail::infos<M, A, B>()>{
        tree::value_ternary(ir::ValueOp::select, DT::code, D::values, mask.node, detail::operand<DT, D>(a), detail::operand<DT, D>(b))};
  }
}

// a * b + c with one rounding (fmaf on the GPU, std::fma in the interpreter: the same bits).
// Floating-point tiles of one dtype and shape, or scalars, at least one a tile.
template <class A, class B, class C>
auto fma(A const& a, B const& b, C const& c) {
  using T = typename detail::first_tile<A, B, C>::type;
  if constexpr (std::is_void_v<T> || !detail::operand_ok<A> || !detail::operand_ok<B> || !detail::operand_ok<C>) {
    STAGECRAFT_ERROR_T(A, "fma(a, b, c) takes tiles and scalars, at least one a tile");
    return tile<f32, any_dims>{};
  } else if constexpr (error_tile<T>) {
    return T{};
  } else if constexpr (!detail::fits<A, T> || !detail::fits<B, T> || !detail::fits<C, T>) {
    STAGECRAFT_ERROR_T(T, "fma(a, b, c): Expected the tiles to match in dtype and shape (convert with cast<T>(...))");
    return T{};
  } else if constexpr (!T::dtype_t::is_float) {
    STAGECRAFT_ERROR("fma(a, b, c) needs floating-point tiles, but got T",
                     "fma(a, b, c) needs floating-point tiles, but got " << dtype_name<typename T::dtype_t>());
    return T{};
  } else {
    using DT = typename T::dtype_t;
    using D = typename T::static_dims;
    return tile<DT, D, detail::infos<A, B, C>()>{tree::value_ternary(ir::ValueOp::fma, DT::code, D::values, detail::operand<DT, D>(a),
                                                                     detail::operand<DT, D>(b), detail::operand<DT, D>(c))};
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
