// kernel<Target>(name, config..., declarations..., body): the public entry point.
//
//   auto k = kernel<sm_90a>("add_one", grid(M / 128, 2), threads(1_c),
//       gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)),
//       smem<f32>(shape(4_c, 128_c, 64_c)), barrier(arrivals(1_c), count(4_c)),
//       [&](auto x, auto y, auto buf, auto full) { return ...; });
//
// The body receives one reference per declaration, in order, and returns a statement. Here the
// rules that need the whole kernel are checked: target vs tensor-core generation, SMEM and TMEM
// budgets, thread_id()-derived indices vs num_threads, program_id()-derived indices vs the static
// grid, cluster axes vs the cluster shape.
#pragma once
#include <boost/hana/back.hpp>
#include <boost/hana/drop_back.hpp>
#include <boost/hana/filter.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <bit>
#include <string>
#include <utility>

#include "stagecraft/memory/barrier.hpp"
#include "stagecraft/memory/gmem.hpp"
#include "stagecraft/memory/semaphore.hpp"
#include "stagecraft/memory/smem.hpp"
#include "stagecraft/memory/tmem.hpp"
#include "stagecraft/ir/roles.hpp"
#include "stagecraft/ops/stmt.hpp"

namespace stagecraft {

// ---- targets ---------------------------------------------------------------------------------
struct sm_90a {
  static constexpr ir::Target code = ir::Target::sm_90a;
  static constexpr const char* name = "sm_90a";
};
struct sm_100a {
  static constexpr ir::Target code = ir::Target::sm_100a;
  static constexpr const char* name = "sm_100a";
};
template <class T>
concept target = std::same_as<T, sm_90a> || std::same_as<T, sm_100a>;

// ---- launch configuration ---------------------------------------------------------------------
template <class D>
struct grid_cfg {
  using static_dims = D;
  std::array<std::int64_t, 3> extents{1, 1, 1};
  std::array<tree::ExprP, 3> run_time{};  // dimensions over run-time extents (expr/size.hpp)
};
template <int_like... E>
auto grid(E const&... e) {
  static_assert(sizeof...(E) >= 1 && sizeof...(E) <= 3, "grid(...) has 1 to 3 dimensions");
  using D = dims<static_value_or_dynamic<E>()...>;
  static_assert(((static_value_or_dynamic<E>() != 0) && ...), "grid(...): every grid dimension must be at least 1");
  grid_cfg<D> g;
  int i = 0;
  ((g.extents[i++] = value_of(e)), ...);
  return g;
}
// A grid over sizes (expr/size.hpp): a run-time dimension is computed at launch from the
// extents (a dynamic extent of the type, lowered at its value).
template <class... E>
  requires((size_value<E> || int_like<E>) && ...) && (size_value<E> || ...)
auto grid(E const&... e) {
  static_assert(sizeof...(E) >= 1 && sizeof...(E) <= 3, "grid(...) has 1 to 3 dimensions");
  grid_cfg<dims<detail::size_dim<E>()...>> g;
  int i = 0;
  ((g.extents[i] = detail::as_size(e).value, g.run_time[i] = detail::as_size(e).run_time ? detail::as_size(e).node : tree::ExprP{}, ++i), ...);
  return g;
}

// threads(n): n roles of one warpgroup (128 threads) each. threads(warpgroup, warp, warp): one
// role per argument, a warpgroup or a single warp, laid out in that order from warp 0
// (ir/roles.hpp); thread_id() is the role. WarpRoles: bit r set when role r is one warp.
template <long long N, unsigned WarpRoles = 0, long long Warps = 4 * N>
struct threads_cfg {
  static constexpr long long value = N;
  static constexpr unsigned warp_roles = WarpRoles;
  static constexpr long long warps = Warps;
};
template <int W>
struct role_kind_t {
  static constexpr int warps = W;
};
inline constexpr role_kind_t<1> warp{};
inline constexpr role_kind_t<4> warpgroup{};
template <class T>
struct is_role_kind : std::false_type {};
template <int W>
struct is_role_kind<role_kind_t<W>> : std::true_type {};
template <class T>
concept role_kind = is_role_kind<std::remove_cvref_t<T>>::value;

namespace detail {
// The first warpgroup role that does not start on a warpgroup boundary, as (role, its first warp);
// role -1: none.
template <int... W>
constexpr std::pair<int, int> misaligned_warpgroup_role() {
  int r = 0, warp = 0;
  for (int w : {W...}) {
    if (w == 4 && warp % 4 != 0) return {r, warp};
    warp += w;
    ++r;
  }
  return {-1, 0};
}
}  // namespace detail

template <role_kind... R>
  requires(sizeof...(R) >= 1)
auto threads(R...) {
  constexpr long long roles = sizeof...(R), warps = (0 + ... + R::warps);
  constexpr auto bad = detail::misaligned_warpgroup_role<R::warps...>();
  if constexpr (warps > ir::max_warps) {
    STAGECRAFT_ERROR("threads(...): the roles take more than 32 warps (1024 threads)",
                     "threads(...): the roles take " << warps << " warps, but a CTA has at most 32 (1024 threads)");
    return threads_cfg<1>{};
  } else if constexpr (bad.first >= 0) {
    STAGECRAFT_ERROR("threads(...): a warpgroup role must start on a warpgroup boundary (warp 0, 4, 8, ...)",
                     "threads(...): role " << detail::misaligned_warpgroup_role<R::warps...>().first << " is a warpgroup but starts at warp "
                                           << detail::misaligned_warpgroup_role<R::warps...>().second
                                           << ": a warpgroup role starts on a warpgroup boundary (warp 0, 4, 8, ...), since wgmma, setmaxnreg "
                                              "and the TMEM lane quarters of tcgen05.ld belong to the hardware warpgroup (declare warpgroup "
                                              "roles before the single warps)");
    return threads_cfg<1>{};
  } else {
    constexpr unsigned mask = [] {
      unsigned m = 0, bit = 1;
      ((m |= R::warps == 1 ? bit : 0u, bit <<= 1), ...);
      return m;
    }();
    return threads_cfg<roles, mask, warps>{};
  }
}

template <class N>
  requires(!role_kind<N>)
auto threads(N) {
  if constexpr (!static_int<N>) {
    STAGECRAFT_ERROR_T(N, "threads(n): the number of warpgroups must be static (2_c, not 2)");
    return threads_cfg<1>{};
  } else {
    if constexpr (N::value < 1 || N::value > ir::max_warpgroups) {
      STAGECRAFT_ERROR("num_threads must be between 1 and 8 warpgroups",
                       "num_threads must be between 1 and 8 warpgroups (128 to 1024 CUDA threads), but got " << N::value);
      return threads_cfg<1>{};  // a stand-in, so that the kernel's own checks add no second error
    } else {
      return threads_cfg<N::value>{};
    }
  }
}

template <class D, bool NonPortable>
struct cluster_cfg {
  using static_dims = D;
  static constexpr bool non_portable = NonPortable;
};
template <static_int... E>
auto cluster(E...) {
  static_assert(sizeof...(E) >= 1 && sizeof...(E) <= 3, "cluster(...) has 1 to 3 dimensions");
  return cluster_cfg<dims<E::value...>, false>{};
}
// Clusters of up to 16 CTAs need the non-portable attribute (and hardware that allows it).
template <static_int... E>
auto cluster_nonportable(E...) {
  static_assert(sizeof...(E) >= 1 && sizeof...(E) <= 3, "cluster_nonportable(...) has 1 to 3 dimensions");
  return cluster_cfg<dims<E::value...>, true>{};
}

namespace detail {
template <class T> struct is_grid : std::false_type {};
template <class D> struct is_grid<grid_cfg<D>> : std::true_type {};
template <class T> struct is_threads : std::false_type {};
template <long long N, unsigned W, long long Warps> struct is_threads<threads_cfg<N, W, Warps>> : std::true_type {};
template <class T> struct is_cluster : std::false_type {};
template <class D, bool P> struct is_cluster<cluster_cfg<D, P>> : std::true_type {};

template <class T> struct decl_kind { static constexpr int value = 0; };  // 0: not a declaration
template <dtype DT, class D> struct decl_kind<gmem_decl<DT, D>> { static constexpr int value = 1; };
template <class D> struct decl_kind<semaphore_decl<D>> { static constexpr int value = 1; };
template <dtype DT, class D, class L> struct decl_kind<smem_decl<DT, D, L>> { static constexpr int value = 2; };
template <long long A, class D, bool TC, class X> struct decl_kind<barrier_decl<A, D, TC, X>> { static constexpr int value = 2; };
template <dtype DT, class D> struct decl_kind<tmem_decl<DT, D>> { static constexpr int value = 2; };
template <dtype DT, class D> struct decl_kind<accumulator_decl<DT, D>> { static constexpr int value = 2; };

template <class T>
inline constexpr bool is_decl = decl_kind<std::remove_cvref_t<T>>::value != 0;
template <class T>
inline constexpr bool is_param_decl = decl_kind<std::remove_cvref_t<T>>::value == 1;

// The reference a kernel body receives for a declaration.
template <dtype DT, class D>
auto make_ref(gmem_decl<DT, D> const& d, int id) {
  return gmem_ref<DT, D>{tree::ref_root(tree::Base::param, id, DT::code, std::span<const std::int64_t>(d.extents))};
}
template <class D>
auto make_ref(semaphore_decl<D> const& d, int id) {
  return semaphore_ref<D>{tree::ref_root(tree::Base::param, id, ir::DType::i32, std::span<const std::int64_t>(d.extents))};
}
template <dtype DT, class D, class L>
auto make_ref(smem_decl<DT, D, L> const&, int id) {
  return smem_ref<DT, D, L, no_info, smem_decl<DT, D, L>::alignment>{tree::ref_root(tree::Base::alloc, id, DT::code, D::values)};
}
template <long long A, class D, bool TC, class X>
auto make_ref(barrier_decl<A, D, TC, X> const&, int id) {
  return barrier_ref<A, TC, !std::is_void_v<X>, D, no_info>{tree::ref_root(tree::Base::alloc, id, ir::DType::f32, D::values), nullptr};
}
template <dtype DT, class D>
auto make_ref(tmem_decl<DT, D> const&, int id) {
  return tmem_ref<DT, D>{tree::ref_root(tree::Base::alloc, id, DT::code, D::values)};
}
template <dtype DT, class D>
auto make_ref(accumulator_decl<DT, D> const&, int id) {
  return accumulator_ref<DT, D>{tree::ref_root(tree::Base::alloc, id, DT::code, D::values)};
}

// Static resource use of the declarations.
template <class T> struct smem_use { static constexpr long long bytes = 0, align = 1; };
template <dtype DT, class D, class L> struct smem_use<smem_decl<DT, D, L>> {
  static constexpr long long bytes = smem_decl<DT, D, L>::bytes, align = smem_decl<DT, D, L>::alignment;
};
template <long long A, class D, bool TC, class X> struct smem_use<barrier_decl<A, D, TC, X>> {
  static constexpr long long bytes = 8 * D::product, align = 8;
};
template <class... Decls>
constexpr long long smem_bytes() {
  long long off = 0;
  ((off = (off + smem_use<Decls>::align - 1) / smem_use<Decls>::align * smem_use<Decls>::align + smem_use<Decls>::bytes), ...);
  return off;
}
template <class T> struct tmem_use { static constexpr long long columns = 0; };
template <dtype DT, class D> struct tmem_use<tmem_decl<DT, D>> { static constexpr long long columns = tmem_decl<DT, D>::columns; };
template <class T> struct axes_use { static constexpr int max_axis = -1; };
template <long long A, class D, bool TC, class X>
  requires(!std::is_void_v<X>)
struct axes_use<barrier_decl<A, D, TC, X>> { static constexpr int max_axis = X::max_axis; };

template <class C>
struct cluster_rank_of {
  static constexpr int value = C::static_dims::rank;
};
template <>
struct cluster_rank_of<void> {
  static constexpr int value = 0;
};

// The first grid axis whose extent the program_id()-derived indices of the body do not allow
// (-1: none). An axis the grid does not have has extent 1; a run-time extent allows nothing.
template <class GridDims>
constexpr int grid_axis_out_of_bounds(info const& I) {
  for (int a = 0; a < 3; ++a) {
    if (I.max_grid[a] == 0) continue;
    const long long extent = a < GridDims::rank ? GridDims::values[a < GridDims::rank ? a : 0] : 1;
    if (extent < 0 || extent > I.max_grid[a]) return a;
  }
  return -1;
}

// The cluster's extent along axis 0, where the CTA pairs of cta_group::2 lie (1: no cluster).
template <class C>
constexpr long long pair_extent() {
  if constexpr (std::is_void_v<C>) return 1;
  else return C::static_dims::values[0];
}

// The first grid axis whose static extent the cluster's does not divide (-1: none, or run-time).
template <class G, class C>
constexpr int grid_not_multiple_of_cluster() {
  for (int a = 0; a < C::rank; ++a) {
    const long long g = a < G::rank ? G::values[a < G::rank ? a : 0] : 1;
    if (g > 0 && g % C::values[a] != 0) return a;
  }
  return -1;
}

template <class Target, class Threads, class Cluster, class GridDims, class Body, class... Decls>
constexpr bool check_kernel() {
  constexpr long long NT = Threads::value;
  constexpr unsigned warp_roles = Threads::warp_roles;
  constexpr long long block_threads = 32 * Threads::warps;
  constexpr info I = Body::static_info;
  constexpr long long smem = smem_bytes<Decls...>();
  constexpr long long tmem_cols = (0 + ... + tmem_use<Decls>::columns);
  constexpr int decl_axis = [] { int m = -1; ((m = axes_use<Decls>::max_axis > m ? axes_use<Decls>::max_axis : m), ...); return m; }();
  constexpr int max_axis = I.max_axis > decl_axis ? I.max_axis : decl_axis;
  constexpr int cluster_rank = cluster_rank_of<Cluster>::value;
  if constexpr ((I.features & uses_wgmma) && Target::code != ir::Target::sm_90a) {
    STAGECRAFT_ERROR("wgmma is a Hopper instruction: it needs a kernel<sm_90a>, this kernel targets sm_100a (use tcgen05_mma)",
                     "wgmma is a Hopper instruction: it needs a kernel<sm_90a>, but this kernel targets " << Target::name
                                                                                                         << " (use tcgen05_mma)");
    return false;
  } else if constexpr ((I.features & uses_tcgen05) && Target::code != ir::Target::sm_100a) {
    STAGECRAFT_ERROR("tcgen05 is a Blackwell instruction: it needs a kernel<sm_100a>, this kernel targets sm_90a (use wgmma)",
                     "tcgen05 instructions (tcgen05_mma, tcgen05_commit_arrive, async_load_tmem, store_tmem) need a kernel<sm_100a>, but this kernel targets "
                         << Target::name << " (use wgmma)");
    return false;
  } else if constexpr ((I.features & uses_tcgen05_pair) && (I.features & uses_tcgen05_single)) {
    STAGECRAFT_ERROR("every tcgen05 MMA and commit of a kernel uses one CTA group: this kernel mixes the pair ops with single-CTA ones",
                     "every tcgen05 MMA and commit of a kernel uses one CTA group (PTX: one .cta_group per kernel): this kernel mixes the pair ops "
                     "(tcgen05_mma_2cta, tcgen05_commit_arrive_2cta) with single-CTA ones (tcgen05_mma, tcgen05_commit_arrive)");
    return false;
  } else if constexpr ((I.features & uses_tcgen05_pair) && pair_extent<Cluster>() % 2 != 0) {
    STAGECRAFT_ERROR("a pair MMA (cta_group::2) needs a cluster with an even extent along axis 0, the CTA pair",
                     "a pair MMA (tcgen05_mma_2cta / tcgen05_commit_arrive_2cta: cta_group::2) runs on the two CTAs of a pair, cluster "
                     "ranks 2p and 2p + 1 along axis 0, but the cluster of this kernel has extent "
                         << pair_extent<Cluster>() << " there (declare cluster(2_c))");
    return false;
  } else if constexpr ((I.features & uses_pair_copy) && Target::code != ir::Target::sm_100a) {
    STAGECRAFT_ERROR("a pair_leader copy is a Blackwell TMA load (.cta_group::2): it needs a kernel<sm_100a>",
                     "copy_gmem_to_smem(..., pair_leader) is a Blackwell TMA load (cp.async.bulk.tensor .cta_group::2): it needs a kernel<sm_100a>, "
                     "but this kernel targets " << Target::name);
    return false;
  } else if constexpr ((I.features & uses_pair_copy) && pair_extent<Cluster>() % 2 != 0) {
    STAGECRAFT_ERROR("a pair_leader copy completes on the barrier of the pair's even CTA: it needs a cluster with an even extent along axis 0",
                     "copy_gmem_to_smem(..., pair_leader) completes on its barrier in the even CTA of the CTA pair, cluster ranks 2p and 2p + 1 "
                     "along axis 0, but the cluster of this kernel has extent "
                         << pair_extent<Cluster>() << " there (declare cluster(2_c))");
    return false;
  } else if constexpr ((I.features & uses_clc) && Target::code != ir::Target::sm_100a) {
    STAGECRAFT_ERROR("cluster launch control (try_cancel) is a Blackwell instruction: it needs a kernel<sm_100a>",
                     "cluster launch control (try_cancel: clusterlaunchcontrol.try_cancel) is a Blackwell instruction: it needs a kernel<sm_100a>, "
                     "but this kernel targets " << Target::name);
    return false;
  } else if constexpr (tmem_cols > 0 && Target::code != ir::Target::sm_100a) {
    STAGECRAFT_ERROR("TMEM exists on Blackwell only", "TMEM exists on Blackwell only: tmem<T>(...) needs a kernel<sm_100a>, but this kernel targets " << Target::name);
    return false;
  } else if constexpr (NT > I.max_threads) {
    STAGECRAFT_ERROR("Barrier offset is out of bounds: an index derived from thread_id() reaches past its dimension",
                     "Barrier offset is out of bounds: the kernel has num_threads = " << Threads::value
                         << (Threads::warp_roles ? " roles" : " warpgroups") << ", but an index derived from thread_id() stays in bounds only for up to "
                         << Body::static_info.max_threads);
    return false;
  } else if constexpr (I.named_barrier_threads > block_threads) {
    STAGECRAFT_ERROR("a named barrier counts more threads than the kernel has: its phase could never complete",
                     "a named barrier counts " << Body::static_info.named_barrier_threads << " threads, but the kernel has num_threads = " << Threads::value
                         << (Threads::warp_roles ? " roles (" : " warpgroups (") << (32 * Threads::warps) << " threads): its phase could never complete");
    return false;
  } else if constexpr (I.named_barrier_partial != 0 && warp_roles == 0) {
    STAGECRAFT_ERROR("a named barrier counts threads that no set of warpgroups arrives with: every role of this kernel is a warpgroup",
                     "a named barrier counts " << Body::static_info.named_barrier_partial << " threads, but every role of this kernel is a warpgroup, "
                         "which arrives with 128 (bar.sync counts 32 per warp, and a warpgroup's 4 warps all run the statement): no set "
                         "of them arrives with exactly " << Body::static_info.named_barrier_partial << " (declare single warps with threads(warpgroup, warp, ...))");
    return false;
  } else if constexpr ((I.warp_ops[warp_op_wgmma] & warp_roles) != 0) {
    STAGECRAFT_ERROR("wgmma in a role of one warp: wgmma is a warpgroup instruction (.sync.aligned over 128 threads)",
                     "wgmma in role " << std::countr_zero(Body::static_info.warp_ops[warp_op_wgmma] & Threads::warp_roles) << " (thread_id() == "
                         << std::countr_zero(Body::static_info.warp_ops[warp_op_wgmma] & Threads::warp_roles) << "), which is one warp (32 threads): wgmma is a warpgroup "
                         "instruction (.sync.aligned over 128 threads); issue it from a warpgroup role");
    return false;
  } else if constexpr ((I.warp_ops[warp_op_tmem_load] & warp_roles) != 0) {
    STAGECRAFT_ERROR("a TMEM load in a role of one warp: the tcgen05.ld of a warp reaches only its quarter of the 128 TMEM lanes",
                     "async_load_tmem in role " << std::countr_zero(Body::static_info.warp_ops[warp_op_tmem_load] & Threads::warp_roles) << " (thread_id() == "
                         << std::countr_zero(Body::static_info.warp_ops[warp_op_tmem_load] & Threads::warp_roles) << "), which is one warp: the tcgen05.ld of a warp reaches "
                         "only its quarter of the 128 TMEM lanes (32 lanes), and the tile spans all 128; load TMEM in a warpgroup role");
    return false;
  } else if constexpr ((I.warp_ops[warp_op_tile] & warp_roles) != 0) {
    STAGECRAFT_ERROR("tile math in a role of one warp: a tile is spread over the 128 threads of a warpgroup",
                     "store in role " << std::countr_zero(Body::static_info.warp_ops[warp_op_tile] & Threads::warp_roles) << " (thread_id() == "
                         << std::countr_zero(Body::static_info.warp_ops[warp_op_tile] & Threads::warp_roles) << "), which is one warp (32 threads): tile math spreads a "
                         "tile over the 128 threads of a warpgroup; store tiles from a warpgroup role");
    return false;
  } else if constexpr (constexpr int ga = grid_axis_out_of_bounds<GridDims>(I); ga >= 0) {
    if constexpr (ga < GridDims::rank && GridDims::values[ga < GridDims::rank ? ga : 0] < 0)
      STAGECRAFT_ERROR("Offset is out of bounds: a barrier or SMEM index derived from program_id() needs a static grid extent",
                       "Offset is out of bounds: a barrier or SMEM index derived from program_id(" << ga << ") stays in bounds only for up to "
                           << Body::static_info.max_grid[ga] << " CTAs along grid axis " << ga
                           << ", but that extent is a run-time value: give grid(...) a static extent (4_c, not 4) or use runtime_index(i)");
    else
      STAGECRAFT_ERROR("Offset is out of bounds: a barrier or SMEM index derived from program_id() reaches past its dimension",
                       "Offset is out of bounds: a barrier or SMEM index derived from program_id(" << ga << ") stays in bounds only for up to "
                           << Body::static_info.max_grid[ga] << " CTAs along grid axis " << ga << ", but the grid has "
                           << (ga < GridDims::rank ? GridDims::values[ga < GridDims::rank ? ga : 0] : 1LL));
    return false;
  } else if constexpr (smem > ir::max_smem_bytes) {
    STAGECRAFT_ERROR("kernel exceeds available shared memory",
                     "kernel exceeds available shared memory: smem_bytes=" << smem << " > max_smem_bytes=" << ir::max_smem_bytes);
    return false;
  } else if constexpr (tmem_cols > ir::max_tmem_columns) {
    STAGECRAFT_ERROR("kernel exceeds available tensor memory",
                     "kernel exceeds available tensor memory: tmem_columns=" << tmem_cols << " > max_tmem_columns=" << ir::max_tmem_columns);
    return false;
  } else if constexpr (max_axis >= cluster_rank) {
    STAGECRAFT_ERROR("collective axes name a cluster dimension the kernel does not have",
                     "a cluster barrier, multicast copy or pair commit uses cluster axis " << max_axis << ", but the cluster of the kernel has "
                                                                            << cluster_rank << " dimensions (declare cluster(...))");
    return false;
  } else if constexpr (!std::is_void_v<Cluster>) {
    constexpr long long size = Cluster::static_dims::product;
    constexpr long long limit = Cluster::non_portable ? ir::max_cluster_nonportable : ir::max_cluster_portable;
    constexpr int ga = grid_not_multiple_of_cluster<GridDims, typename Cluster::static_dims>();
    if constexpr (size < 1 || size > limit) {
      STAGECRAFT_ERROR("cluster too large", "a cluster of " << size << " CTAs exceeds the limit of " << limit
                                                           << (Cluster::non_portable ? "" : " (up to 16 with cluster_nonportable(...))"));
      return false;
    } else if constexpr (ga >= 0) {
      // The same rule the verifier applies to a run-time grid, with the same words.
      STAGECRAFT_ERROR("the grid must be a whole number of clusters",
                       "grid dimension " << ga << " (" << (ga < GridDims::rank ? GridDims::values[ga < GridDims::rank ? ga : 0] : 1LL)
                                         << ") must be a multiple of the cluster dimension (" << Cluster::static_dims::values[ga] << ")");
      return false;
    }
    return true;
  } else {
    return true;
  }
}

template <class Target, class Threads, class Cluster, class GridDims, class Body>
struct kernel_checker {
  template <class... Decls>
  struct check {
    static constexpr bool value = check_kernel<Target, Threads, Cluster, GridDims, Body, Decls...>();
  };
};

// The element types of a hana::tuple, for type-level questions about the kernel's arguments.
template <class Tuple>
struct types_of;
template <class... T>
struct types_of<hana::tuple<T...>> {
  static constexpr long long size = sizeof...(T);
  template <template <class> class P>
  static constexpr int count = (0 + ... + (P<std::remove_cvref_t<T>>::value ? 1 : 0));
  template <template <class> class P, class Default>
  using first = typename first_of<P, Default, std::remove_cvref_t<T>...>::type;
  // A requires-expression, not std::is_invocable_v: calling the body instantiates it, so a
  // mistake inside it is reported from here, and <type_traits>' invoke machinery would add five
  // `required from` lines of library internals to every such report.
  template <class F>
  static constexpr bool invocable = requires(F& f, T&... t) { f(t...); };
  template <template <class...> class C>
  static constexpr bool apply() {
    return C<std::remove_cvref_t<T>...>::value;
  }
};
}  // namespace detail

// A kernel: the typed checks have passed; what remains is the run-time description.
template <target Target>
struct kernel_def {
  using target_t = Target;
  tree::KernelDesc desc;
};

// Building a kernel is run-once code: `cold` keeps GCC from spending optimisation effort (and
// compile time) on inlining the whole tree construction into its callers.
template <target Target, class... Args>
[[gnu::cold]] auto kernel(kernel_name name, Args const&... args) {
  static_assert(sizeof...(Args) >= 1, "kernel<target>(name, ..., body): the last argument is the body");
  auto all = hana::make_tuple(args...);
  auto body = hana::back(all);
  auto rest = hana::drop_back(all);
  auto decls = hana::filter(rest, [](auto const& a) { return hana::bool_c<detail::is_decl<decltype(a)>>; });
  auto configs = hana::filter(rest, [](auto const& a) { return hana::bool_c<!detail::is_decl<decltype(a)>>; });
  using Cfgs = detail::types_of<decltype(configs)>;
  using Decls = detail::types_of<decltype(decls)>;

  static_assert(Cfgs::template count<detail::is_grid> + Cfgs::template count<detail::is_threads> +
                        Cfgs::template count<detail::is_cluster> == Cfgs::size,
                "kernel(...): arguments are grid(...), threads(...), cluster(...), declarations (gmem, smem, barrier, "
                "cluster_barrier, tmem, accumulator) and, last, the body");
  static_assert(Cfgs::template count<detail::is_grid> <= 1 && Cfgs::template count<detail::is_threads> <= 1 &&
                    Cfgs::template count<detail::is_cluster> <= 1,
                "kernel(...): grid, threads and cluster may each be given once");
  using Threads = typename Cfgs::template first<detail::is_threads, threads_cfg<1>>;
  constexpr long long NT = Threads::value;
  using ClusterCfg = typename Cfgs::template first<detail::is_cluster, void>;
  using GridDims = typename Cfgs::template first<detail::is_grid, grid_cfg<dims<1>>>::static_dims;

  tree::KernelDesc desc;
  desc.name = std::move(name.text);
  desc.loc = name.loc;
  desc.target = Target::code;
  desc.roles = static_cast<int>(NT);
  if constexpr (Threads::warp_roles != 0)  // only warpgroups: threads(n)'s IR, whichever way it was declared
    for (unsigned r = 0; r < NT; ++r) desc.role_warps.push_back(Threads::warp_roles >> r & 1u ? 1 : 4);
  hana::for_each(configs, [&](auto const& c) {
    using C = std::remove_cvref_t<decltype(c)>;
    if constexpr (detail::is_grid<C>::value) {
      desc.grid = c.extents;
      desc.grid_expr = c.run_time;
      desc.grid_rank = C::static_dims::rank;
    } else if constexpr (detail::is_cluster<C>::value) {
      for (int i = 0; i < C::static_dims::rank; ++i) desc.cluster[i] = C::static_dims::values[i];
      desc.cluster_rank = C::static_dims::rank;
      desc.cluster_nonportable = C::non_portable;
    }
  });

  // Number parameters and allocations separately, in declaration order.
  auto refs = hana::unpack(decls, [&](auto const&... d) {
    int params = 0, allocs = 0;
    auto one = [&](auto const& x) {
      if constexpr (detail::is_param_decl<decltype(x)>) {
        tree::add_param(desc, x.decl());
        return detail::make_ref(x, params++);
      } else {
        tree::add_alloc(desc, x.decl(), x.info.name, x.info.loc);
        return detail::make_ref(x, allocs++);
      }
    };
    return hana::tuple<decltype(one(d))...>{one(d)...};  // braced init: evaluated left to right
  });

  using Refs = detail::types_of<decltype(refs)>;
  constexpr bool callable = Refs::template invocable<decltype(body)>;
  if constexpr (!callable) {
    STAGECRAFT_ERROR("kernel body must accept one argument per declaration (gmem, smem, barrier, ...), in order",
                     "kernel body must accept one argument per declaration, in order: this kernel declares "
                         << Decls::size << " (did it return a statement from every branch?)");
    return kernel_def<Target>{std::move(desc)};
  } else {
    auto result = hana::unpack(refs, body);
    using R = decltype(result);
    if constexpr (!statement<R>) {
      STAGECRAFT_ERROR_T(R, "kernel body must return a statement (seq(...), for_(...), ...): did it forget `return`?");
      return kernel_def<Target>{std::move(desc)};
    } else {
      Decls::template apply<detail::kernel_checker<Target, Threads, ClusterCfg, GridDims, R>::template check>();
      desc.body = result.node;
      return kernel_def<Target>{std::move(desc)};
    }
  }
}

}  // namespace stagecraft
