// Memory orders and scopes, the optional arguments of the grid-wide operations: atomics
// (ops/atomic.hpp) take an order, then a scope; semaphore_signal and semaphore_wait
// (ops/semaphore.hpp), whose orders are fixed (release, acquire), take a scope.
//
//   memory_order::relaxed, acquire, release, acq_rel
//   memory_scope::gpu   the default: the GPU's CTAs see it
//   memory_scope::sys   .sys: host-mapped or peer memory, where the host or another GPU also
//                       reads or writes the counter (the interpreter and the host backend
//                       model one GPU, where the two are the same)
#pragma once
#include "stagecraft/ir/types.hpp"

namespace stagecraft {

template <ir::MemoryOrder O>
struct memory_order_tag {
  static constexpr ir::MemoryOrder order = O;
};
template <ir::MemoryScope S>
struct memory_scope_tag {
  static constexpr ir::MemoryScope scope = S;
};
struct memory_order {
  static constexpr memory_order_tag<ir::MemoryOrder::relaxed> relaxed{};
  static constexpr memory_order_tag<ir::MemoryOrder::acquire> acquire{};
  static constexpr memory_order_tag<ir::MemoryOrder::release> release{};
  static constexpr memory_order_tag<ir::MemoryOrder::acq_rel> acq_rel{};
};
struct memory_scope {
  static constexpr memory_scope_tag<ir::MemoryScope::gpu> gpu{};
  static constexpr memory_scope_tag<ir::MemoryScope::sys> sys{};
};

namespace detail {
template <class T>
constexpr bool is_order_tag = false;
template <ir::MemoryOrder O>
constexpr bool is_order_tag<memory_order_tag<O>> = true;
template <class T>
constexpr bool is_scope_tag = false;
template <ir::MemoryScope S>
constexpr bool is_scope_tag<memory_scope_tag<S>> = true;

}  // namespace detail

}  // namespace stagecraft
