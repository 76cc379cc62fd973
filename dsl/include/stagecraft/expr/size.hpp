// Sizes: compiled into the kernel (the default), or launch arguments that one compiled kernel
// takes for every value (a GEMM's M, a sequence length).
//
//   auto M = run_time("M", m);      // lowered and verified at m; the generated code reads M
//   auto M = compiled_in(m);        // the same code as a plain integer m
//   gmem<bf16>("a", shape(M, K));   // dimension 0 of 'a' is M: a launch reads it off the tensor
//   grid(ceil_div(M, 128))          // computed on the host at launch
//   for_(range(ceil_div(M, 128)), ...), x.block(min(i, ceil_div(M, 128) - 1), k)
//
// A size_expr carries the value the kernel is lowered for and the index expression the kernel
// computes it with. Arithmetic among sizes and integers folds when every operand is compiled in,
// so a builder written once over size_expr generates, for compiled-in sizes, exactly the IR it
// generated over plain integers; with a run-time operand it builds the expression instead.
// Anywhere an index is expected a size is one (an index expression of unknown range), and in
// tile math it is a scalar (ValueOp::scalar compiled in, ValueOp::index at run time).
#pragma once
#include <array>
#include <string>

#include "stagecraft/core/shape.hpp"
#include "stagecraft/expr/index.hpp"

namespace stagecraft {

struct size_expr {
  static constexpr range_t range = unknown_range;  // an index expression like any other
  tree::ExprP node;             // constant(value) when compiled in
  std::int64_t value = 0;       // what lowering (and the verifier) takes it to be
  bool run_time = false;        // depends on a run-time extent
  // run_time(name, v) itself: its extent (tree::extent_id), which a parameter's dimension may
  // be. -1: compiled in; -2: an expression of run-time extents (no parameter's dimension can be
  // one: a launch reads extents off tensors, it does not solve for them).
  std::int32_t extent = -1;
};
template <>
struct is_idx_t<size_expr> : std::true_type {};

template <class T>
concept size_value = std::same_as<std::remove_cvref_t<T>, size_expr>;

// A run-time extent named `name` (a C identifier: it names the kernel's argument), lowered for
// `value`. Every run-time extent must be some parameter's dimension.
inline size_expr run_time(std::string const& name, std::int64_t value) {
  const auto id = tree::extent_id(name);
  return {tree::make_expr(ir::ExprOp::extent, id), value, true, id};
}
// A size as a plain index expression (what stage<K>(j), loops and refs hold).
inline idx<unknown_range> as_index(size_expr const& s) { return {s.node}; }

// A compiled-in size: a builder over size_expr taking a plain value.
inline size_expr compiled_in(std::int64_t value) { return {tree::make_expr(ir::ExprOp::constant, value), value, false, -1}; }

namespace detail {
template <class E>
constexpr long long size_dim() {
  if constexpr (size_value<E>) return dynamic_extent;
  else return static_value_or_dynamic<E>();
}
template <class T>
size_expr as_size(T const& v) {
  if constexpr (size_value<T>) return v;
  else return compiled_in(value_of(v));
}
template <class A, class B>
concept size_operands = index_operands<A, B> && (size_value<A> || int_like<A>) && (size_value<B> || int_like<B>);

// One folded or built node: `fold` computes the value as lowering will see it (C semantics,
// 0 for a division by zero, which the verifier then reports where the size is used).
template <class Fold>
size_expr size_op(ir::ExprOp op, size_expr const& a, size_expr const& b, Fold fold) {
  const std::int64_t v = fold(a.value, b.value);
  if (!a.run_time && !b.run_time) return compiled_in(v);
  // x * 1 and x + 0 with a compiled-in 1 or 0 are x (B * tiles at B = 1 prints as tiles).
  auto is = [](size_expr const& s, std::int64_t c) { return !s.run_time && s.value == c; };
  if ((op == ir::ExprOp::mul && is(a, 1)) || (op == ir::ExprOp::add && is(a, 0))) return b;
  if ((op == ir::ExprOp::mul && is(b, 1)) || ((op == ir::ExprOp::add || op == ir::ExprOp::sub) && is(b, 0))) return a;
  return {tree::make_expr(op, 0, a.node, b.node), v, true, -2};
}
}  // namespace detail

// These subsume the index operators (index_operands is part of size_operands): with sizes and
// integers only, the result is a size; with a loop variable or a program_id, an index.
#define STAGECRAFT_SIZE_BINOP(op, code, expr)                                                      \
  template <class A, class B>                                                                      \
    requires detail::size_operands<A, B>                                                           \
  size_expr operator op(A const& a, B const& b) {                                                  \
    return detail::size_op(ir::ExprOp::code, detail::as_size(a), detail::as_size(b),               \
                           [](std::int64_t x, std::int64_t y) -> std::int64_t { return expr; }); \
  }
STAGECRAFT_SIZE_BINOP(+, add, x + y)
STAGECRAFT_SIZE_BINOP(-, sub, x - y)
STAGECRAFT_SIZE_BINOP(*, mul, x * y)
STAGECRAFT_SIZE_BINOP(/, div, y == 0 ? 0 : x / y)
STAGECRAFT_SIZE_BINOP(%, mod, y == 0 ? 0 : x % y)
#undef STAGECRAFT_SIZE_BINOP

template <class A, class B>
  requires detail::size_operands<A, B>
size_expr min(A const& a, B const& b) {
  return detail::size_op(ir::ExprOp::min, detail::as_size(a), detail::as_size(b), [](std::int64_t x, std::int64_t y) { return x < y ? x : y; });
}
template <class A, class B>
  requires detail::size_operands<A, B>
size_expr max(A const& a, B const& b) {
  return detail::size_op(ir::ExprOp::max, detail::as_size(a), detail::as_size(b), [](std::int64_t x, std::int64_t y) { return x > y ? x : y; });
}
// Tiles of `tile` that cover `extent` (the last may overhang): a grid or a step count.
template <class A, class B>
  requires detail::size_operands<A, B>
size_expr ceil_div(A const& extent, B const& tile) {
  return (extent + (detail::as_size(tile) - 1)) / tile;  // (M + 127) / 128: the constant folds
}

// shape(...) with sizes among the extents: a run-time size is a dynamic extent of the type,
// lowered at its value, and its extent id goes with the shape to the parameter it declares.
template <class... E>
  requires((size_value<E> || int_like<E>) && ...) && (size_value<E> || ...)
auto shape(E const&... e) {
  shape_t<dims<detail::size_dim<E>()...>> s{{detail::as_size(e).value...}};
  s.extent = {detail::as_size(e).extent...};
  return s;
}

}  // namespace stagecraft
