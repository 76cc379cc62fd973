// Atomic read-modify-writes of a grid-wide counter that return what it held: a ticket from a
// shared counter (a dynamic tile scheduler where cluster launch control is not there, as FA3's on
// Hopper), a max over CTAs, a lock taken by compare-and-swap.
//
//   fetch_add(c, v, slot)                       c := c + v        (atom.add.s32; wraps)
//   fetch_min(c, v, slot), fetch_max(c, v, slot)  c := min/max(c, v)  (atom.min/max.s32)
//   exchange(c, v, slot)                        c := v            (atom.exch.b32)
//   compare_exchange(c, expected, v, slot)      c := v if c == expected  (atom.cas.b32)
//   fetched(slot)                               what c held before: an index expression
//
//   semaphores("tiles", shape(1_c)), smem<i32>(shape(2_c, 1_c)) as `slot`:
//     seq(fetch_add(tiles(0_c), 1_c, slot[s]), if_(fetched(slot[s]) < n_tiles, ...))
//
// The counter is an element of a semaphore array (memory/semaphore.hpp: kernel-owned i32, zero at
// every launch); semaphore_signal and semaphore_wait may count the same one. Like them, an atomic
// is a statement of a warpgroup: its lanes meet (their reads of the slot's last value are done),
// one thread does the atomic and writes the old value into `slot`, one i32 of SMEM (slots[s] of
// smem<i32>(shape(R, 1_c)), or a whole smem<i32>(shape(1_c))), and the lanes meet again, so every
// one may read fetched(slot). Another warpgroup reads the slot only after a barrier orders it
// after the atomic, and the next atomic into a slot must come after every read of the old one:
// the interpreter reports either as a data race (or a read of a slot nothing wrote yet).
//
// Memory order, an optional argument after the slot: memory_order::relaxed (the default: only
// the value), acquire (what the releases this counter has seen published is visible to the
// warpgroup afterwards), release (what the warpgroup did before is published to whoever
// acquires the counter later) or acq_rel.
// Then the scope: memory_scope::gpu (the default) or sys (host-mapped or peer memory: .sys; the
// interpreter and the host backend model one GPU, where the two are the same).
#pragma once
#include <type_traits>

#include "stagecraft/core/diagnostic.hpp"
#include "stagecraft/expr/index.hpp"
#include "stagecraft/memory/semaphore.hpp"
#include "stagecraft/memory/smem.hpp"
#include "stagecraft/ops/memory_order.hpp"
#include "stagecraft/ops/stmt.hpp"

namespace stagecraft {

namespace detail {
// A slot is one unswizzled i32 of SMEM: slots[s] of smem<i32>(shape(R, 1_c)), or smem<i32>(shape(1_c)).
template <class V>
constexpr bool atomic_slot_view() {
  if constexpr (kind_of<V> != operand_kind::smem) return false;
  else return std::is_same_v<typename V::dtype_t, i32> && std::is_same_v<typename V::static_dims, dims<1>> && !V::is_subview &&
              V::layout_t::swizzle == 0 && V::layout_t::tile::rank == 0 && V::full_dims::rank == 1;
}

template <class V>
constexpr bool check_atomic_slot() {
  if constexpr (!atomic_slot_view<V>()) {
    STAGECRAFT_ERROR_T(V, "the slot of an atomic is one i32 of an unswizzled SMEM allocation: slots[s] of smem<i32>(shape(stages, 1_c)), or "
                          "smem<i32>(shape(1_c))");
    return false;
  } else {
    return true;
  }
}

// The slot's element in its allocation: row s of (R, 1), or 0.
template <class V>
tree::ExprP slot_offset(V const& v) {
  if (v.ref.index.empty()) return tree::make_expr(ir::ExprOp::constant, 0);
  return v.ref.index.back();
}

template <ir::Atomic Op, class C, class E, class V, class Slot, class O, class S>
auto atomic_stmt(C const& counter, E const* expected, V const& v, Slot const& slot, src_loc loc) {
  if constexpr (!std::is_same_v<std::remove_cvref_t<C>, semaphore_elem>) {
    if constexpr (kind_of<C> == operand_kind::semaphore)
      STAGECRAFT_ERROR_T(C, "an atomic takes one counter: index the semaphore array, sem(i, j)");
    else
      STAGECRAFT_ERROR_T(C, "an atomic takes a counter of a semaphore array (semaphores(name, shape), then sem(i, j)): a kernel-owned i32, zero at "
                            "launch");
    return stmt<>{};
  } else if constexpr (!index_like<V> || !index_like<E>) {
    STAGECRAFT_ERROR_T(V, "the operands of an atomic are integer expressions (1, an index, fetched(slot) + 1)");
    return stmt<>{};
  } else if constexpr (!check_atomic_slot<Slot>()) {
    return stmt<>{};
  } else if constexpr (!is_order_tag<O> || !is_scope_tag<S>) {
    STAGECRAFT_ERROR_T(O, "the memory order of an atomic is memory_order::relaxed, acquire, release or acq_rel, then its scope memory_scope::gpu or sys");
    return stmt<>{};
  } else {
    constexpr std::int64_t code = ir::atomic_code({Op, O::order, S::scope});
    tree::op_extra extra{.e0 = node_of(v), .n = code};
    if (expected) extra.e1 = node_of(*expected);
    return make_stmt<info_of_operands<Slot>()>(tree::stmt_op(ir::StmtOp::atomic_fetch, loc, {&counter.ref, &slot.ref}, extra));
  }
}
}  // namespace detail

// old = c; c = old + v; slot = old (and the same shape for the others below).
template <class C, class V, class Slot, class O = memory_order_tag<ir::MemoryOrder::relaxed>, class S = memory_scope_tag<ir::MemoryScope::gpu>>
auto fetch_add(C const& c, V const& v, Slot const& slot, O = {}, S = {}, src_loc loc = src_loc::current()) {
  return detail::atomic_stmt<ir::Atomic::add, C, V, V, Slot, O, S>(c, nullptr, v, slot, loc);
}
template <class C, class V, class Slot, class O = memory_order_tag<ir::MemoryOrder::relaxed>, class S = memory_scope_tag<ir::MemoryScope::gpu>>
auto fetch_min(C const& c, V const& v, Slot const& slot, O = {}, S = {}, src_loc loc = src_loc::current()) {
  return detail::atomic_stmt<ir::Atomic::min, C, V, V, Slot, O, S>(c, nullptr, v, slot, loc);
}
template <class C, class V, class Slot, class O = memory_order_tag<ir::MemoryOrder::relaxed>, class S = memory_scope_tag<ir::MemoryScope::gpu>>
auto fetch_max(C const& c, V const& v, Slot const& slot, O = {}, S = {}, src_loc loc = src_loc::current()) {
  return detail::atomic_stmt<ir::Atomic::max, C, V, V, Slot, O, S>(c, nullptr, v, slot, loc);
}
template <class C, class V, class Slot, class O = memory_order_tag<ir::MemoryOrder::relaxed>, class S = memory_scope_tag<ir::MemoryScope::gpu>>
auto exchange(C const& c, V const& v, Slot const& slot, O = {}, S = {}, src_loc loc = src_loc::current()) {
  return detail::atomic_stmt<ir::Atomic::exch, C, V, V, Slot, O, S>(c, nullptr, v, slot, loc);
}
// c = v if c held `expected`; slot = what c held (== expected: the swap happened).
template <class C, class E, class V, class Slot, class O = memory_order_tag<ir::MemoryOrder::relaxed>,
          class S = memory_scope_tag<ir::MemoryScope::gpu>>
auto compare_exchange(C const& c, E const& expected, V const& v, Slot const& slot, O = {}, S = {}, src_loc loc = src_loc::current()) {
  return detail::atomic_stmt<ir::Atomic::cas, C, E, V, Slot, O, S>(c, &expected, v, slot, loc);
}

// What the counter held before the atomic that wrote `slot`, as an index expression (i32).
template <class Slot>
auto fetched(Slot const& slot) {
  using R = idx<range_t{true, -2147483648LL, 2147483648LL, 0, 0, 0}>;
  if constexpr (!detail::check_atomic_slot<Slot>()) return R{tree::make_expr(ir::ExprOp::constant, 0)};
  else return R{tree::make_expr(ir::ExprOp::fetched, slot.ref.id, detail::slot_offset(slot))};
}

}  // namespace stagecraft
