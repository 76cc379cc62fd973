// Typed stage cursors: one counter from which a ring slot and its phase both follow.
//
// `stage<K>(j)` is step j of a K-deep ring: `slot()` is j % K and `phase()` is j / K. A barrier
// array or SMEM ring of K stages can be indexed by the cursor itself (no run-time check, the
// range is [0, K) by construction); indexing a ring of any other depth with it does not compile.
#pragma once
#include "stagecraft/expr/index.hpp"

namespace stagecraft {

template <long long K, range_t R>
struct stage_cursor {
  static constexpr long long depth = K;
  idx<R> step;  // how many steps precede this one

  auto slot() const { return step % int_c<K>; }
  auto phase() const { return step / int_c<K>; }
  // The cursor `n` steps later: the only way to move through the ring.
  template <static_int N>
  auto advance(N n) const {
    auto s = step + n;
    return stage_cursor<K, decltype(s)::range>{s};
  }
};

template <class T>
struct is_stage_cursor_t : std::false_type {};
template <long long K, range_t R>
struct is_stage_cursor_t<stage_cursor<K, R>> : std::true_type {};
template <class T>
concept stage_cursor_like = is_stage_cursor_t<std::remove_cvref_t<T>>::value;

template <long long K, index_like J>
auto stage(J const& j) {
  static_assert(K >= 1, "stage<K>(j): a ring needs at least one stage (K >= 1)");
  auto s = as_index(j);
  return stage_cursor<K, decltype(s)::range>{s};
}

}  // namespace stagecraft
