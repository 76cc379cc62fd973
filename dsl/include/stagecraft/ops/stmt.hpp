// Statements and control: seq, for_, if_.
//
// A statement's type is only its info (tensor-core features used, thread-index bounds); the
// structure is run-time data. That keeps kernels with many ops cheap to compile.
#pragma once
#include <utility>

#include "stagecraft/core/info.hpp"
#include "stagecraft/expr/index.hpp"
#include "stagecraft/memory/kinds.hpp"

namespace stagecraft {

template <info I = no_info>
struct stmt {
  static constexpr operand_kind kind = operand_kind::other;
  static constexpr info static_info = I;
  static constexpr bool is_stmt = true;
  tree::StmtP node;
};

template <class T>
concept statement = requires { requires std::remove_cvref_t<T>::is_stmt; };

namespace detail {
template <class...>
struct pack {};
template <info I>
stmt<I> make_stmt(tree::StmtP s) {
  return {std::move(s)};
}
// Operands that carry info (views, tiles) contribute it to the statement that uses them.
template <class... T>
constexpr info info_of_operands() {
  return (no_info | ... | [] {
    if constexpr (requires { std::remove_cvref_t<T>::static_info; }) return std::remove_cvref_t<T>::static_info;
    else return no_info;
  }());
}
}  // namespace detail

// seq(a, b, c): run in order.
template <class... S>
auto seq(S const&... s) {
  if constexpr (!(statement<S> && ...)) {
    STAGECRAFT_ERROR_T(detail::pack<S...>, "seq(...) takes statements (did a lambda forget to return its statement?)");
    return stmt<>{};
  } else {
    return detail::make_stmt<info_of<S...>()>(tree::stmt_seq({&s.node...}));
  }
}

// range(hi) = [0, hi); range(lo, hi). Static bounds give the induction variable a static range.
template <class Lo, class Hi>
struct range_spec {
  Lo lo;
  Hi hi;
};
template <int_like Hi>
auto range(Hi hi) {
  return range_spec<constant<0>, Hi>{{}, hi};
}
template <index_like Hi>
  requires(!int_like<Hi>)
auto range(Hi hi) {  // a run-time bound (an index expression: a CTA's share of the steps)
  return range_spec<constant<0>, Hi>{{}, hi};
}
template <index_like Lo, index_like Hi>
auto range(Lo lo, Hi hi) {
  return range_spec<Lo, Hi>{lo, hi};
}

// for_(range(8_c), [&](auto j) { return ...; })
template <class Lo, class Hi, class Body>
[[gnu::cold]] auto for_(range_spec<Lo, Hi> const& r, Body&& body, src_loc loc = src_loc::current()) {
  constexpr range_t rl = range_of<Lo>(), rh = range_of<Hi>();
  constexpr range_t var_range = (rl.is_constant() && rh.is_constant() && rh.lo > rl.lo) ? interval(rl.lo, rh.lo) : unknown_range;
  const int var = tree::fresh_var_id();
  idx<var_range> j{tree::make_expr(ir::ExprOp::var, var)};
  // requires and decltype rather than std::is_invocable_v/invoke_result_t: the body is
  // instantiated here, and a mistake inside it should not be reported through five lines of
  // <type_traits> internals per loop level.
  if constexpr (!requires { body(j); }) {
    STAGECRAFT_ERROR_T(Body, "for_(range, body): body must be callable with the induction variable: [&](auto j) { return ...; }");
    return stmt<>{};
  } else {
    using R = decltype(body(j));
    if constexpr (!statement<R>) {
      STAGECRAFT_ERROR_T(R, "for_(range, body): body must return a statement (did it forget `return`?)");
      return stmt<>{};
    } else {
      R b = body(j);
      return detail::make_stmt<R::static_info>(tree::stmt_for(var, node_of(r.lo), node_of(r.hi), std::move(b.node), loc));
    }
  }
}

// if_(cond, then) and if_(cond, then, else)
namespace detail {
template <class C, class Then, class... Else>
auto make_if(src_loc loc, C const& cond, Then const& then_, Else const&... else_) {
  if constexpr (!index_like<C>) {
    STAGECRAFT_ERROR_T(C, "if_(cond, ...): the condition must be an integer expression (a comparison of indices)");
    return stmt<>{};
  } else if constexpr (!statement<Then> || !(statement<Else> && ...) || sizeof...(Else) > 1) {
    STAGECRAFT_ERROR_T(Then, "if_(cond, then[, else]): then and else must be statements");
    return stmt<>{};
  } else {
    tree::StmtP otherwise;
    ((otherwise = else_.node), ...);
    // Each branch's ops a warp cannot issue are the roles' that may take it (core/info.hpp).
    constexpr auto roles = range_ops::as_condition(range_of<C>());
    return make_stmt<(Then::static_info.only_roles(roles.t) | ... | Else::static_info.only_roles(roles.f))>(
        tree::stmt_if(node_of(cond), then_.node, std::move(otherwise), loc));
  }
}
}  // namespace detail
template <class C, class Then>
auto if_(C const& cond, Then const& then_, src_loc loc = src_loc::current()) {
  return detail::make_if(loc, cond, then_);
}
template <class C, class Then, class Else>
  requires(!std::is_same_v<Else, src_loc>)
auto if_(C const& cond, Then const& then_, Else const& else_, src_loc loc = src_loc::current()) {
  return detail::make_if(loc, cond, then_, else_);
}

// break_if(cond): leave the innermost enclosing for_ when cond is nonzero, skipping the rest of
// this iteration and every later one (a loop whose end a response decides: clc_tiles). Every
// thread of a role evaluates the same cond, so the role leaves as one. The verifier checks that a
// loop encloses it.
template <class C>
auto break_if(C const& cond, src_loc loc = src_loc::current()) {
  if constexpr (!index_like<C>) {
    STAGECRAFT_ERROR_T(C, "break_if(cond): the condition must be an integer expression (a comparison of indices)");
    return stmt<>{};
  } else {
    return detail::make_stmt<no_info>(tree::stmt_op(ir::StmtOp::break_if, loc, {}, {.e0 = node_of(cond)}));
  }
}

}  // namespace stagecraft
