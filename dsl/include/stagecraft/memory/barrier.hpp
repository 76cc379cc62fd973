// Barrier arrays in the type system (DESIGN.md section 3).
//
//   barrier(arrivals(1_c), count(4_c))                     4 mbarriers, 1 arrival per phase
//   barrier(arrivals(2_c), count(2_c, 3_c))                a 2x3 array
//   barrier(arrivals(1_c), count(2_c), orders_tensor_core) may be committed to by tcgen05
//   cluster_barrier(collective_axes(0_c), arrivals(2_c))   arrivals come from the peer CTAs
//
// A reference records the dimensions not yet indexed. Operations need a single barrier: a
// fully indexed reference, or an unindexed one whose array has exactly one element.
#pragma once
#include <vector>

#include "stagecraft/core/shape.hpp"
#include "stagecraft/memory/indexing.hpp"
#include "stagecraft/memory/kinds.hpp"

namespace stagecraft {

// ---- declaration options ---------------------------------------------------------------------
template <long long A>
struct arrivals_opt {
  static constexpr long long value = A;
};
template <static_int A>
constexpr auto arrivals(A) {
  return arrivals_opt<A::value>{};
}

template <class D>
struct count_opt {
  using static_dims = D;
};
template <static_int... N>
constexpr auto count(N...) {
  static_assert(sizeof...(N) >= 1, "count(...) needs at least one extent");
  return count_opt<dims<N::value...>>{};
}

struct orders_tensor_core_opt {};
inline constexpr orders_tensor_core_opt orders_tensor_core{};

template <int... Axes>
struct collective_axes_opt {
  static constexpr std::size_t size = sizeof...(Axes);
  static constexpr std::array<int, sizeof...(Axes)> array{Axes...};
  static std::vector<int> vector() { return {Axes...}; }
  static constexpr int max_axis = [] { int m = -1; ((m = Axes > m ? Axes : m), ...); return m; }();
};
template <static_int... A>
constexpr auto collective_axes(A...) {
  static_assert(sizeof...(A) >= 1, "collective_axes(...) needs at least one cluster axis (0_c, 1_c or 2_c)");
  static_assert(((A::value >= 0 && A::value < 3) && ...), "collective_axes(...): cluster axes are 0, 1 or 2");
  return collective_axes_opt<static_cast<int>(A::value)...>{};
}

namespace detail {
template <class T>
struct is_arrivals : std::false_type {};
template <long long A>
struct is_arrivals<arrivals_opt<A>> : std::true_type {};
template <class T>
struct is_count : std::false_type {};
template <class D>
struct is_count<count_opt<D>> : std::true_type {};
template <class T>
struct is_axes : std::false_type {};
template <int... A>
struct is_axes<collective_axes_opt<A...>> : std::true_type {};

// The first option satisfying Pred, or Default.
template <template <class> class Pred, class Default, class... Opts>
struct first_of {
  using type = Default;
};
template <template <class> class Pred, class Default, class O, class... Opts>
struct first_of<Pred, Default, O, Opts...> {
  using type = std::conditional_t<Pred<O>::value, O, typename first_of<Pred, Default, Opts...>::type>;
};
}  // namespace detail

// ---- declarations ----------------------------------------------------------------------------
template <long long Arrivals, class Dims, bool TensorCore, class Axes>
struct barrier_decl {
  static constexpr operand_kind kind = operand_kind::barrier_spec;
  static constexpr bool is_cluster = !std::is_void_v<Axes>;
  decl_info info;
  tree::AllocDecl decl() const {
    tree::AllocDecl d{is_cluster ? ir::AllocKind::cluster_barrier : ir::AllocKind::barrier};
    d.shape = Dims::vector();
    d.arrivals = static_cast<int>(Arrivals);
    d.orders_tensor_core = TensorCore;
    if constexpr (is_cluster) d.collective_axes = Axes::vector();
    return d;
  }
};

namespace detail {
template <bool Cluster, class... Opts>
auto make_barrier_decl(decl_info info) {
  using A = typename first_of<is_arrivals, arrivals_opt<1>, Opts...>::type;
  using C = typename first_of<is_count, count_opt<dims<1>>, Opts...>::type;
  using X = typename first_of<is_axes, void, Opts...>::type;
  constexpr bool tc = (std::is_same_v<Opts, orders_tensor_core_opt> || ...);
  constexpr bool known = ((is_arrivals<Opts>::value || is_count<Opts>::value || is_axes<Opts>::value ||
                           std::is_same_v<Opts, orders_tensor_core_opt> || std::is_same_v<Opts, no_opt>) && ...);
  if constexpr (!known) {
    STAGECRAFT_ERROR_T(A, "barrier(...) takes arrivals(n), count(n...), orders_tensor_core and (for cluster barriers) collective_axes(...)");
  } else if constexpr (A::value < 1) {
    STAGECRAFT_ERROR("Num arrivals must be at least 1, but got N", "Num arrivals must be at least 1, but got " << A::value);
  } else if constexpr (Cluster && std::is_void_v<X>) {
    STAGECRAFT_ERROR_T(A, "cluster_barrier(...) needs collective_axes(...): the cluster axes whose CTAs arrive");
  } else if constexpr (!Cluster && !std::is_void_v<X>) {
    STAGECRAFT_ERROR_T(A, "barrier(...) takes no collective_axes: use cluster_barrier(...) for arrivals from other CTAs");
  }
  return barrier_decl<(A::value < 1 ? 1 : A::value), typename C::static_dims, tc, X>{info};
}
template <class T>
concept not_a_name = !std::is_convertible_v<T, const char*>;
}  // namespace detail

// Up to four options (arrivals, count, orders_tensor_core, collective_axes, in any order); a name
// first is optional: barrier("full", arrivals(1_c), count(4_c)).
template <detail::not_a_name O1 = detail::no_opt, class O2 = detail::no_opt, class O3 = detail::no_opt, class O4 = detail::no_opt>
auto barrier(O1 = {}, O2 = {}, O3 = {}, O4 = {}, src_loc loc = src_loc::current()) {
  return detail::make_barrier_decl<false, O1, O2, O3, O4>({nullptr, loc});
}
template <class... Opts>
auto barrier(decl_name name, Opts...) {
  return detail::make_barrier_decl<false, Opts...>({name.text, name.loc});
}
template <detail::not_a_name O1 = detail::no_opt, class O2 = detail::no_opt, class O3 = detail::no_opt, class O4 = detail::no_opt>
auto cluster_barrier(O1 = {}, O2 = {}, O3 = {}, O4 = {}, src_loc loc = src_loc::current()) {
  return detail::make_barrier_decl<true, O1, O2, O3, O4>({nullptr, loc});
}
template <class... Opts>
auto cluster_barrier(decl_name name, Opts...) {
  return detail::make_barrier_decl<true, Opts...>({name.text, name.loc});
}

// ---- references ------------------------------------------------------------------------------
template <long long Arrivals, bool TensorCore, bool Cluster, class Dims, info I>
struct barrier_ref {
  static constexpr operand_kind kind = Cluster ? operand_kind::cluster_barrier : operand_kind::barrier;
  static constexpr long long arrivals = Arrivals;
  static constexpr bool orders_tc = TensorCore;
  static constexpr bool is_cluster = Cluster;
  using static_dims = Dims;
  static constexpr long long num_barriers = Dims::product;
  static constexpr info static_info = I;

  tree::Ref ref;        // the allocation and the indices given so far
  tree::ExprP offset;   // start of a slice of the first remaining dimension, if any

  template <class T>
  auto operator[](T const& i) const {
    if constexpr (Dims::rank == 0) {
      STAGECRAFT_ERROR_T(T, "Barrier offset is out of bounds: every dimension of this barrier array is already indexed");
      return *this;
    } else if constexpr (!detail::index_operand<T>) {
      STAGECRAFT_ERROR_T(T, "Barrier can only be indexed with integers or slices");
      return barrier_ref<Arrivals, TensorCore, Cluster, typename dims_ops::drop_front<Dims>::type, I>{ref, nullptr};
    } else {
      constexpr info added = detail::check_index<"Barrier", Dims::values[0], T>();
      return barrier_ref<Arrivals, TensorCore, Cluster, typename dims_ops::drop_front<Dims>::type, I | added>{
          tree::ref_indexed(ref, detail::index_node(i), offset, false), nullptr};
    }
  }

  // bar(i, j) == bar[i][j]
  template <class T0, class... T>
  auto operator()(T0 const& i0, T const&... i) const {
    if constexpr (sizeof...(T) == 0) return (*this)[i0];
    else return (*this)[i0](i...);
  }

  // A contiguous sub-array of the first remaining dimension: bar.slice(start, len).
  template <class Start, class Len, class Stride = constant<1>>
  auto slice(Start const& start, Len, Stride = {}) const {
    if constexpr (!static_int<Stride>) {
      STAGECRAFT_ERROR_T(Stride, "Barrier does not support slice with stride != 1 (the stride must be the static 1_c)");
      return *this;
    } else if constexpr (Stride::value != 1) {
      STAGECRAFT_ERROR("Barrier does not support slice with `stride != 1`",
                       "Barrier does not support slice with `stride != 1`, got stride = " << Stride::value);
      return *this;
    } else if constexpr (Dims::rank == 0 || !static_int<Len> || !index_like<Start>) {
      STAGECRAFT_ERROR_T(Len, "Barrier can only be indexed with integers or slices: slice(start, len) needs an integer start and a static length");
      return *this;
    } else {
      constexpr range_t s = range_ops::without_grid(range_of<Start>());
      constexpr long long len = Len::value, dim = Dims::values[0];
      if constexpr (len < 1 || (s.known && s.nt == 0 && (s.lo < 0 || s.hi - 1 + len > dim)))
        STAGECRAFT_ERROR("Barrier offset is out of bounds",
                         "Barrier offset is out of bounds: slice of length " << len << " starting in ["
                                                                            << range_ops::without_grid(range_of<Start>()).lo << ", "
                                                                            << range_ops::without_grid(range_of<Start>()).hi
                                                                            << ") of a dimension of " << dim);
      auto st = offset ? tree::make_expr(ir::ExprOp::add, 0, offset, node_of(start)) : node_of(start);
      return barrier_ref<Arrivals, TensorCore, Cluster, typename dims_ops::replace_front<Dims, len>::type, I>{ref, st};
    }
  }
};

// Operands of barrier operations: one barrier, however it was reached.
namespace detail {
template <diag::fixed_string Op, class B>
constexpr bool check_barrier_operand() {
  using U = std::remove_cvref_t<B>;
  if constexpr (kind_of<U> == operand_kind::barrier_spec) {
    STAGECRAFT_ERROR("barrier operations take a barrier reference from the kernel body's arguments, not a barrier(...) declaration",
                     Op << ": expected a barrier reference (an argument of the kernel body), but got a barrier(...) declaration");
    return false;
  } else if constexpr (requires { typename U::static_dims; } && std::is_same_v<typename U::static_dims, any_dims>) {
    return false;  // the stand-in for an error already reported (full + 1 on a barrier array): one error, no cascade
  } else if constexpr (kind_of<U> != operand_kind::barrier && kind_of<U> != operand_kind::cluster_barrier) {
    STAGECRAFT_ERROR("expected a barrier", Op << ": expected a barrier, but got something else (an array, a tile or a number)");
    return false;
  } else if constexpr (U::static_dims::rank > 0 && U::num_barriers != 1) {
    STAGECRAFT_ERROR("Attempting to operate on barrier without indexing, but num_barriers = N",
                     Op << ": Attempting to operate on barrier without indexing, but num_barriers = " << U::num_barriers);
    return false;
  } else {
    return true;
  }
}

// The element a checked operand names: remaining dimensions (all of extent 1) index 0.
template <class B>
tree::Ref barrier_element(B const& b) {
  return tree::ref_element(b.ref, B::static_dims::rank, b.offset);
}
}  // namespace detail

}  // namespace stagecraft
