// Index expressions: integers computed at run time whose *range* may be known at compile time.
//
// `j` from `for_(range(8_c), ...)` has the range [0, 8); `j % 4_c` has [0, 4); `thread_id()`
// has [0, num_threads). Indexing a barrier array or an SMEM stage with an expression whose range
// is proven inside the shape needs no run-time check; a range that reaches outside the shape is a
// compile error; an expression of unknown range is checked by the interpreter.
#pragma once
#include <functional>
#include <tuple>
#include <cstdint>
#include <type_traits>

#include "stagecraft/core/diagnostic.hpp"
#include "stagecraft/core/static_int.hpp"
#include "stagecraft/core/tree.hpp"

namespace stagecraft {

// A half-open interval [lo, hi + nt * num_threads + ng * grid[axis]), or unknown.
//
// The two symbolic terms are what only the kernel knows: thread_id() is [0, num_threads) and
// program_id(axis) is [0, grid[axis]). Indexing records how large each may be for the index to
// stay in bounds, and kernel() compares that with its threads(...) and static grid(...).
struct range_t {
  bool known = false;
  long long lo = 0, hi = 0;
  long long nt = 0;  // how many times num_threads is added to hi (thread_id-derived indices)
  long long ng = 0;  // how many times the grid extent along `axis` is added (program_id-derived)
  int axis = 0;
  // A 0/1 condition's roles (ir/roles.hpp): bit r of may_true is set when it may be true for
  // thread_id() == r, of may_false when it may be false. All ones: it does not depend on
  // thread_id(). Both 0: it does, in a way the front end does not read (its branches are the
  // verifier's to check). What if_ narrows the roles of its branches by.
  unsigned may_true = ~0u, may_false = ~0u;

  constexpr bool is_constant() const { return known && nt == 0 && ng == 0 && hi == lo + 1; }
  friend constexpr bool operator==(range_t, range_t) = default;
};

inline constexpr range_t unknown_range{};
constexpr range_t exact(long long v) { return {true, v, v + 1, 0}; }
constexpr range_t interval(long long lo, long long hi) { return {true, lo, hi, 0}; }

// The most CTAs along one grid axis that a range without the grid's extent assumes (the
// bound program_id had before it carried the grid).
inline constexpr long long max_grid_extent = 1LL << 30;

namespace range_ops {
constexpr long long floordiv(long long a, long long b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
// Replaces the grid term by its largest value: for operations that cannot keep it symbolic.
constexpr range_t without_grid(range_t a) {
  if (!a.known || a.ng == 0) return a;
  return {true, a.lo, a.hi + a.ng * max_grid_extent, a.nt};
}
constexpr range_t add(range_t a, range_t b) {
  if (!a.known || !b.known) return unknown_range;
  if (a.ng && b.ng && a.axis != b.axis) return add(without_grid(a), without_grid(b));
  return {true, a.lo + b.lo, a.hi + b.hi - 1, a.nt + b.nt, a.ng + b.ng, a.ng ? a.axis : b.axis};
}
constexpr range_t sub(range_t a, range_t b) {
  if (!a.known || !b.known || b.nt != 0) return unknown_range;
  b = without_grid(b);
  return {true, a.lo - (b.hi - 1), a.hi - b.lo, a.nt, a.ng, a.axis};
}
constexpr range_t mul(range_t a, range_t b) {
  if (!a.known || !b.known) return unknown_range;
  if (b.is_constant() && !a.is_constant()) return mul(b, a);
  if (a.is_constant() && a.lo >= 0) {  // c * [lo, hi + nt*T + ng*G)
    const long long c = a.lo;
    if (c == 0) return exact(0);
    return {true, b.lo * c, (b.hi - 1) * c + 1, b.nt * c, b.ng * c, b.axis};
  }
  a = without_grid(a);
  b = without_grid(b);
  if (a.nt || b.nt || a.lo < 0 || b.lo < 0) return unknown_range;
  return {true, a.lo * b.lo, (a.hi - 1) * (b.hi - 1) + 1, 0};
}
// C semantics (truncation), which is what the GPU computes; ranges only for non-negative values.
constexpr range_t div(range_t a, range_t b) {
  a = without_grid(a);
  if (!a.known || !b.is_constant() || b.lo <= 0 || a.nt || a.lo < 0) return unknown_range;
  return {true, a.lo / b.lo, (a.hi - 1) / b.lo + 1, 0};
}
constexpr range_t mod(range_t a, range_t b) {
  if (!b.is_constant() || b.lo <= 0) return unknown_range;
  if (!a.known || a.lo < 0) return unknown_range;  // C's % may be negative
  if (a.nt == 0 && a.ng == 0 && a.hi <= b.lo) return a;  // already inside
  return interval(0, b.lo);
}
// Which roles a condition holds for (range_t::may_true/may_false). A value computed from thread_id()
// or from a role condition by arithmetic is read as nothing: both sets empty.
struct role_sets {
  unsigned t, f;
};
constexpr bool is_thread_id(range_t a) { return a.known && a.lo == 0 && a.hi == 0 && a.nt == 1 && a.ng == 0; }
constexpr bool role_dependent(range_t a) { return a.nt != 0 || a.may_true != ~0u || a.may_false != ~0u; }
constexpr role_sets as_condition(range_t a) {
  if (a.nt != 0) return {0, 0};  // a role-derived number used as a condition
  return {a.may_true, a.may_false};
}
constexpr range_t condition(role_sets s) {
  range_t r = interval(0, 2);
  r.may_true = s.t;
  r.may_false = s.f;
  return r;
}
// Arithmetic on a role condition: the result still depends on the role, unreadably.
constexpr range_t opaque_roles(range_t r, range_t a, range_t b) {
  if ((a.may_true != ~0u || a.may_false != ~0u || b.may_true != ~0u || b.may_false != ~0u)) r.may_true = r.may_false = 0;
  return r;
}
// a < b, a == b, ...: decided per role where one side is thread_id() and the other a constant.
template <class Cmp>
constexpr range_t compare(range_t a, range_t b, Cmp cmp) {
  const bool ra = is_thread_id(a) && b.is_constant(), rb = is_thread_id(b) && a.is_constant();
  if (ra || rb) {
    unsigned t = 0;
    for (long long v = 0; v < 32; ++v)
      if (ra ? cmp(v, b.lo) : cmp(a.lo, v)) t |= 1u << v;
    return condition({t, ~t});
  }
  if (role_dependent(a) || role_dependent(b)) return condition({0, 0});
  return interval(0, 2);
}
constexpr range_t logical_and(range_t a, range_t b) {
  const auto x = as_condition(a), y = as_condition(b);
  return condition({x.t & y.t, x.f | y.f});
}
constexpr range_t logical_or(range_t a, range_t b) {
  const auto x = as_condition(a), y = as_condition(b);
  return condition({x.t | y.t, x.f & y.f});
}
constexpr range_t logical_not(range_t a) {
  const auto x = as_condition(a);
  return condition({x.f, x.t});
}

constexpr range_t minmax(range_t a, range_t b, bool is_min) {
  a = without_grid(a);
  b = without_grid(b);
  if (!a.known || !b.known || a.nt || b.nt) return unknown_range;
  if (is_min) return {true, a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi, 0};
  return {true, a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi, 0};
}
}  // namespace range_ops

// The index expression type: only the range is static, the structure is run-time data.
template <range_t R>
struct idx {
  static constexpr range_t range = R;
  tree::ExprP node;
};

template <class T>
struct is_idx_t : std::false_type {};
template <range_t R>
struct is_idx_t<idx<R>> : std::true_type {};
template <class T>
concept index_expr = is_idx_t<std::remove_cvref_t<T>>::value;

// Anything usable where an index is expected: an index expression or an integer.
template <class T>
concept index_like = index_expr<T> || int_like<T>;

template <index_like T>
constexpr range_t range_of() {
  using U = std::remove_cvref_t<T>;
  if constexpr (index_expr<U>) return U::range;
  else if constexpr (static_int<U>) return exact(static_cast<long long>(U::value));
  else return unknown_range;
}

template <index_like T>
tree::ExprP node_of(T const& v) {
  if constexpr (index_expr<T>) return v.node;
  else return tree::make_expr(ir::ExprOp::constant, value_of(v));
}

// `as_index(3_c)`, `as_index(n)`: lift integers into index expressions.
template <index_like T>
auto as_index(T const& v) {
  if constexpr (index_expr<T>) return v;
  else return idx<range_of<T>()>{node_of(v)};
}

// Forget what is known of the range: the interpreter checks the index at run time instead.
template <index_like T>
idx<unknown_range> runtime_index(T const& v) {
  return {node_of(v)};
}

// ---- arithmetic ---------------------------------------------------------------------------
// Enabled when at least one side is an index expression (integers keep their own operators).
template <class A, class B>
concept index_operands = index_like<A> && index_like<B> && (index_expr<A> || index_expr<B>);

// The range goes straight into the template argument: clang 14 rejects a constexpr local used
// there ("reference to local variable declared in enclosing function") when the operator is
// instantiated from inside a generic lambda, as every kernel body is.
#define STAGECRAFT_INDEX_BINOP(op, code, rangefn)                                        \
  template <class A, class B>                                                            \
    requires index_operands<A, B>                                                        \
  auto operator op(A const& a, B const& b) {                                             \
    return idx<(rangefn)>{tree::make_expr(ir::ExprOp::code, 0, node_of(a), node_of(b))}; \
  }
#define STAGECRAFT_INDEX_ARITH(op, code, fn) STAGECRAFT_INDEX_BINOP(op, code, range_ops::opaque_roles(range_ops::fn(range_of<A>(), range_of<B>()), range_of<A>(), range_of<B>()))
#define STAGECRAFT_INDEX_COMPARE(op, code, cmp) STAGECRAFT_INDEX_BINOP(op, code, range_ops::compare(range_of<A>(), range_of<B>(), cmp{}))
STAGECRAFT_INDEX_ARITH(+, add, add)
STAGECRAFT_INDEX_ARITH(-, sub, sub)
STAGECRAFT_INDEX_ARITH(*, mul, mul)
STAGECRAFT_INDEX_ARITH(/, div, div)
STAGECRAFT_INDEX_ARITH(%, mod, mod)
STAGECRAFT_INDEX_COMPARE(<, lt, std::less<>)
STAGECRAFT_INDEX_COMPARE(<=, le, std::less_equal<>)
STAGECRAFT_INDEX_COMPARE(>, gt, std::greater<>)
STAGECRAFT_INDEX_COMPARE(>=, ge, std::greater_equal<>)
STAGECRAFT_INDEX_COMPARE(==, eq, std::equal_to<>)
STAGECRAFT_INDEX_COMPARE(!=, ne, std::not_equal_to<>)
STAGECRAFT_INDEX_BINOP(&&, land, range_ops::logical_and(range_of<A>(), range_of<B>()))
STAGECRAFT_INDEX_BINOP(||, lor, range_ops::logical_or(range_of<A>(), range_of<B>()))
#undef STAGECRAFT_INDEX_COMPARE
#undef STAGECRAFT_INDEX_ARITH
#undef STAGECRAFT_INDEX_BINOP

template <range_t R>
auto operator!(idx<R> const& a) {
  return idx<range_ops::logical_not(R)>{tree::make_expr(ir::ExprOp::lnot, 0, a.node)};
}

template <class A, class B>
  requires index_operands<A, B>
auto min(A const& a, B const& b) {
  return idx<range_ops::opaque_roles(range_ops::minmax(range_of<A>(), range_of<B>(), true), range_of<A>(), range_of<B>())>{
      tree::make_expr(ir::ExprOp::min, 0, node_of(a), node_of(b))};
}
template <class A, class B>
  requires index_operands<A, B>
auto max(A const& a, B const& b) {
  return idx<range_ops::opaque_roles(range_ops::minmax(range_of<A>(), range_of<B>(), false), range_of<A>(), range_of<B>())>{
      tree::make_expr(ir::ExprOp::max, 0, node_of(a), node_of(b))};
}

// ---- where a thread is ----------------------------------------------------------------------
namespace detail {
template <class Axis>
constexpr int axis_value() {  // 0 for a non-static axis, which program_id's static_assert rejects
  if constexpr (static_int<Axis>) return static_cast<int>(Axis::value);
  else return 0;
}
}  // namespace detail

// The CTA's coordinate in the grid along `axis` (0, 1, 2): [0, grid[axis]), so that with a
// static grid (grid(4_c)) it indexes a 4-element barrier array or SMEM ring without a check.
template <class Axis = constant<0>>
idx<range_t{true, 0, 0, 0, 1, detail::axis_value<Axis>()}> program_id(Axis = {}) {
  static_assert(static_int<Axis>, "program_id(axis): the axis must be a static integer (0_c, 1_c or 2_c)");
  static_assert(Axis::value >= 0 && Axis::value < 3, "program_id(axis): axis must be 0, 1 or 2");
  return {tree::make_expr(ir::ExprOp::program_id, Axis::value)};
}
// The CTA's coordinates along the first N axes at once: `auto [m, n] = program_ids<2>();`. Each
// axis keeps a type of its own (its range is [0, grid[axis])), which is why
// `auto m = program_id(0_c), n = program_id(1_c);` does not compile: one `auto` declaration
// deduces one type. (clang before 16 cannot capture structured bindings in a lambda: there,
// declare `auto m = program_id(0_c); auto n = program_id(1_c);` on two lines.)
template <int N = 2>
auto program_ids() {
  static_assert(N >= 1 && N <= 3, "program_ids<N>(): N is 1, 2 or 3 (the grid has three axes)");
  if constexpr (N == 1) return std::tuple{program_id(constant<0>{})};
  else if constexpr (N == 2) return std::tuple{program_id(constant<0>{}), program_id(constant<1>{})};
  else return std::tuple{program_id(constant<0>{}), program_id(constant<1>{}), program_id(constant<2>{})};
}
// The CTA's coordinate inside its cluster along `axis`.
template <class Axis = constant<0>>
idx<interval(0, 16)> cluster_idx(Axis = {}) {
  static_assert(static_int<Axis>, "cluster_idx(axis): the axis must be a static integer (0_c, 1_c or 2_c)");
  static_assert(Axis::value >= 0 && Axis::value < 3, "cluster_idx(axis): axis must be 0, 1 or 2");
  return {tree::make_expr(ir::ExprOp::cluster_idx, Axis::value)};
}
// The role of the threads running the statement: [0, roles), where threads(n) declares n roles of a
// warpgroup each and threads(warpgroup, warp, ...) one role per argument (ir/roles.hpp).
inline idx<range_t{true, 0, 0, 1}> thread_id() { return {tree::make_expr(ir::ExprOp::thread_id)}; }

}  // namespace stagecraft
