// Global-memory parameters and the blocks of them that copies and loads address.
//
//   gmem<f32>("x", shape(M, N))         // (row, col); M, N known at run time
//   x.block(program_id(0), j)           // block (i, j) of whatever shape the other side has
//   x.tile(shape(128_c, 64_c), i, j)    // the same, with the block shape given: for load/store
//   x.tile(shape(1_c, 256_c), masked(-INFINITY), i, 0_c)  // may overhang: loads read the fill
//                                                         // outside the array, stores drop it
//   x.block(strides(2_c, 1_c), i, j)    // every 2nd row of a (2*rows, cols) footprint: TMA loads only
//   x.block(masked(NAN), i, j)          // a TMA load fills what overhangs the array with NaN, not 0
//   gmem_like("y", buf_decl)            // a parameter shaped like an SMEM declaration
//   workspace<f32>("part", shape(4_c, M)) // kernel-owned scratch: zero at launch, not an output
#pragma once
#include <string>

#include "stagecraft/core/dtype.hpp"
#include "stagecraft/core/shape.hpp"
#include "stagecraft/expr/index.hpp"
#include "stagecraft/expr/size.hpp"
#include "stagecraft/memory/kinds.hpp"

namespace stagecraft {

template <dtype DT, class Dims>
struct gmem_decl {
  static constexpr operand_kind kind = operand_kind::other;  // a declaration, not a reference
  using dtype_t = DT;
  using static_dims = Dims;
  std::string name;
  std::vector<std::int64_t> extents;
  bool workspace = false;  // workspace<T>(...): owned by the kernel, zero at every launch
  std::int64_t segments = -1;  // segment_offsets(...): the rows its offsets cover
  std::vector<std::int32_t> extent{};  // per dimension, its run-time extent (expr/size.hpp); empty: none
  std::int32_t segments_extent = -1;   // segment_offsets over a run-time number of rows: its extent
  tree::ParamDecl decl() const {
    std::vector<bool> dyn;
    for (auto v : Dims::values) dyn.push_back(v == dynamic_extent);
    return {name, DT::code, extents, dyn, workspace, segments, extent, segments_extent};
  }
};

// Plain loads and stores address any rank up to ir::max_param_rank; TMA copies need 1 to 5
// dimensions, which copy_gmem_to_smem / copy_smem_to_gmem check where they are used.
template <dtype DT, class Shape>
  requires shape_like<Shape>
auto gmem(std::string name, Shape const& s) {
  using D = typename Shape::static_dims;
  if constexpr (D::rank < 1 || D::rank > ir::max_param_rank) {
    STAGECRAFT_ERROR("GMEM parameters have 1 to 8 dimensions",
                     "gmem<T>(name, shape): GMEM parameters have 1 to " << ir::max_param_rank << " dimensions, but the shape "
                                                                         << D{} << " has " << D::rank);
    return gmem_decl<DT, any_dims>{std::move(name), {}};  // a stand-in: its uses add no second error
  } else {
    gmem_decl<DT, D> d{std::move(name), s.vector()};
    d.extent = s.extent;
    return d;
  }
}

// GMEM scratch the kernel owns (split-K partials, cross-CTA exchange). It is addressed like a
// gmem parameter (loads, stores, TMA copies), but no caller passes it: every launcher allocates
// it, zero-fills it before the run and frees it after, and it is never compared as an output.
// A static shape is checked here against ir::max_workspace_bytes; run-time extents by verify().
template <dtype DT, class Shape>
  requires shape_like<Shape>
auto workspace(std::string name, Shape const& s) {
  using D = typename Shape::static_dims;
  constexpr long long bytes = [] {
    long long b = DT::bits / 8;
    for (auto v : D::values)  // run-time extents count 1 here; saturates instead of overflowing
      if (v > 0) b = b > ir::max_workspace_bytes / v ? ir::max_workspace_bytes + 1 : b * v;
    return b;
  }();
  if constexpr (DT::code == ir::DType::pred) {
    STAGECRAFT_ERROR_T(DT, "workspace<T>(name, shape): a workspace cannot hold pred, a register mask with no memory layout (use workspace<i32> and store cast<i32>(mask))");
    return gmem_decl<DT, any_dims>{std::move(name), {}, true};
  } else if constexpr (D::rank < 1 || D::rank > ir::max_param_rank) {
    STAGECRAFT_ERROR("workspace<T>(name, shape): a workspace has 1 to 8 dimensions",
                     "workspace<T>(name, shape): a workspace has 1 to " << ir::max_param_rank << " dimensions, but the shape " << D{}
                                                                       << " has " << D::rank);
    return gmem_decl<DT, any_dims>{std::move(name), {}, true};
  } else if constexpr (bytes > ir::max_workspace_bytes) {
    STAGECRAFT_ERROR("workspace<T>(name, shape): the workspace exceeds max_workspace_bytes (it is zero-filled on every launch)",
                     "workspace<T>(name, shape): a workspace of shape " << D{} << " and dtype " << dtype_name<DT>()
                         << " exceeds max_workspace_bytes=" << ir::max_workspace_bytes << " (it is zero-filled on every launch)");
    return gmem_decl<DT, any_dims>{std::move(name), {}, true};
  } else {
    gmem_decl<DT, D> d{std::move(name), s.vector(), true};
    d.extent = s.extent;
    return d;
  }
}

// The offsets of a packed ragged batch (FlashAttention's cu_seqlens, a grouped GEMM's row
// offsets): groups + 1 i32 values, 0 = t[0] <= t[1] <= ... <= t[groups] = rows, segment g being
// rows [t[g], t[g + 1]) of every packed parameter. An index table (t.at(g)), with the contract
// above, which every launcher checks before a run (a table that decreases, or does not end at
// rows, is the caller's mistake, named with its values) and from which seeded inputs draw
// random segment sizes, empty segments among them.
template <int_like G>
auto segment_offsets(std::string name, G const& groups, std::int64_t rows) {
  using D = dims<static_value_or_dynamic<G>() < 0 ? dynamic_extent : static_value_or_dynamic<G>() + 1>;
  gmem_decl<i32, D> d{std::move(name), {value_of(groups) + 1}};
  d.segments = rows;
  return d;
}
// Over a run-time number of rows (run_time("T", t): the packed parameters' dimension 0), so one
// compiled grouped GEMM or varlen attention serves every total, as an MoE layer's token count
// changes from step to step. The launcher checks the table against the bound T.
template <int_like G>
auto segment_offsets(std::string name, G const& groups, size_expr const& rows) {
  auto d = segment_offsets(std::move(name), groups, rows.value);
  if (rows.run_time) d.segments_extent = rows.extent;  // -2 (an expression): lowering names it
  return d;
}

// A GMEM parameter shaped like an SMEM declaration (Pallas's out_shape). A barrier has no
// shape to copy: that is the seed error "Barriers are not arrays".
template <class Spec>
auto gmem_like(std::string name, Spec const&) {
  if constexpr (is_barrier_like<Spec>) {
    STAGECRAFT_REJECT_BARRIER_AS_ARRAY(Spec);
    return gmem_decl<f32, any_dims>{std::move(name), {}};
  } else {
    using D = typename Spec::static_dims;
    return gmem_decl<typename Spec::dtype_t, D>{std::move(name), D::vector()};
  }
}

// A generic GMEM tile that may overhang its array (a tail of rows or columns): every element's
// access is predicated on its coordinates, a load reads `fill` where the tile lies outside the
// array, a store writes nothing there. Choose the fill for what the math does with the padding:
// -inf under a max, 0 under a sum. TMA copies need no mask: the hardware fills and drops. A TMA
// load's block may take masked(NAN) (f32, f16, bf16): the tensor map's OOB_FILL_NAN_REQUEST_ZERO_FMA,
// so padding that reaches an output shows as NaN rather than as a plausible zero.
struct masked_t {
  double fill;
};
inline masked_t masked(double fill) { return {fill}; }
inline masked_t masked() { return {0.0}; }  // for stores (nothing is read), or a zero fill

// TMA element strides (cuTensorMapEncodeTiled's elementStrides), one per dimension, outermost
// first: x.block(strides(2_c, 1_c), i, j) moves the block's shape (taken from the SMEM side)
// from a footprint of shape * strides, every stride-th element. Static: they go into the tensor
// map the host encodes once per launch.
template <class D>
struct strides_t {
  using static_dims = D;
};
template <int_like... S>
auto strides(S const&...) {
  using D = dims<static_value_or_dynamic<S>()...>;
  if constexpr (!D::all_static) STAGECRAFT_ERROR_T(D, "strides(...): TMA element strides must be static (2_c, not 2): they are part of the tensor map");
  return strides_t<D>{};
}
template <class T>
struct is_strides_t : std::false_type {};
template <class D>
struct is_strides_t<strides_t<D>> : std::true_type {};

// Block Dims = void: the block shape is taken from the other side of a copy. Strides: void, or
// the dims of its TMA element strides (x.block(strides(...), ...)).
template <dtype DT, class ArrayDims, class BlockDims, class Strides = void>
struct gmem_block {
  static constexpr operand_kind kind = operand_kind::gmem_block;
  using dtype_t = DT;
  using array_dims = ArrayDims;
  using static_dims = BlockDims;
  using element_strides = Strides;
  static constexpr info static_info = no_info;
  tree::Ref ref;  // param id, block coordinates; shape filled once known
};

// A GMEM block with TMA element strides: only copy_gmem_to_smem takes one.
template <class T>
concept strided_gmem = requires { typename std::remove_cvref_t<T>::element_strides; } &&
                       !std::is_void_v<typename std::remove_cvref_t<T>::element_strides>;

// A block of the stand-in parameter gmem_like returns after an error: operations skip it.
template <class T>
concept error_gmem = requires { typename std::remove_cvref_t<T>::array_dims; } &&
                     std::is_same_v<typename std::remove_cvref_t<T>::array_dims, any_dims>;

template <dtype DT, class Dims>
struct gmem_ref {
  static constexpr operand_kind kind = operand_kind::gmem_array;
  using dtype_t = DT;
  using static_dims = Dims;
  static constexpr info static_info = no_info;
  tree::Ref ref;  // the parameter; shape = its extents

  // x.at(i): element i of an index table as an index expression: an offset from cu_seqlens, a
  // group's first row. The table is a rank-1 i32 or u32 input that the kernel never writes (the
  // verifier holds that), so reading it is as pure as any index arithmetic and may be repeated
  // freely. Its range is unknown: the interpreter checks each index that it reaches.
  template <index_like I>
  auto at(I const& i) const {
    constexpr range_t r = range_of<I>();
    if constexpr (std::is_same_v<Dims, any_dims>) {
    } else if constexpr (Dims::rank != 1 || !ir::dtype_is_index(DT::code)) {
      STAGECRAFT_ERROR("x.at(i): an index table is a rank-1 array of i32 or u32",
                       "x.at(i): an index table is a rank-1 array of i32 or u32, but this parameter is " << dtype_name<DT>() << " of shape "
                                                                                                          << Dims{});
    } else if constexpr (r.known && r.nt == 0 && r.ng == 0 && (r.lo < 0 || (Dims::values[0] >= 0 && r.hi > Dims::values[0]))) {
      STAGECRAFT_ERROR("x.at(i): the index reaches outside the table",
                       "x.at(i): the index in [" << range_of<I>().lo << ", " << range_of<I>().hi << ") reaches outside the table's "
                                                 << Dims::values[0] << " elements");
    }
    return idx<unknown_range>{tree::make_expr(ir::ExprOp::load, ref.id, node_of(i))};
  }

  // x.rows(lo, hi): the rows [lo, hi) of the array as an array of its own, lo and hi known only at
  // run time (a segment of a packed ragged batch: x.rows(offsets.at(b), offsets.at(b + 1))). Its
  // blocks and tiles count dimension 0 from lo; a masked tile reads its fill, and drops its
  // stores, from row hi on as outside the array; a plain generic tile must end by hi; a TMA load
  // reads on past hi (the tensor map knows only the whole array: the next segment's rows, or the
  // fill past the array's end); a TMA store through a window is refused (it would write the next
  // segment). The interpreter checks 0 <= lo <= hi <= rows and every block against the window.
  template <index_like Lo, index_like Hi>
  gmem_ref rows(Lo const& lo, Hi const& hi) const {
    return {tree::ref_window(ref, node_of(lo), node_of(hi))};
  }

  template <class... C>
    requires(!(is_strides_t<std::remove_cvref_t<C>>::value || ...) && !(std::is_same_v<std::remove_cvref_t<C>, masked_t> || ...))
  auto block(C const&... c) const {
    check_coords<C...>();
    return gmem_block<DT, Dims, void>{with_coords(c...)};
  }
  // A TMA load's block with the fill TMA writes outside the array: masked(0.0) (the default) or
  // masked(NAN) (f32, f16 and bf16 tensor maps); the verifier holds both rules.
  template <class... C>
  auto block(masked_t m, C const&... c) const {
    check_coords<C...>();
    return gmem_block<DT, Dims, void>{tree::ref_masked(with_coords(c...), m.fill)};
  }
  // A strided block: the coordinates count footprints (block shape * strides) of the array.
  template <class S, class... C>
  auto block(strides_t<S> const&, C const&... c) const {
    constexpr int bad = [] {  // the first stride TMA does not take (-1: none)
      for (int d = 0; d < S::rank; ++d)
        if (S::values[d] < 1 || S::values[d] > ir::max_tma_element_stride) return d;
      return -1;
    }();
    if constexpr (std::is_same_v<Dims, any_dims> || !S::all_static) {
      return gmem_block<DT, any_dims, void>{};  // an error already reported
    } else if constexpr (S::rank != Dims::rank) {
      STAGECRAFT_ERROR("x.block(strides(...), ...): a strided block needs one element stride per dimension of the array",
                       "x.block(strides(...), ...): the strides " << S{} << " need one element stride per dimension of the array "
                                                                  << Dims{} << " (" << Dims::rank << ")");
      return gmem_block<DT, any_dims, void>{};
    } else if constexpr (bad >= 0) {
      STAGECRAFT_ERROR("x.block(strides(...), ...): TMA element strides are 1 to 8",
                       "x.block(strides(...), ...): TMA element strides are 1 to " << ir::max_tma_element_stride << ", but the strides "
                                                                                   << S{} << " have " << S::values[bad < 0 ? 0 : bad]
                                                                                   << " in dimension " << bad);
      return gmem_block<DT, any_dims, void>{};
    } else if constexpr (S::values[S::rank - 1] != 1) {
      // With interleave NONE the driver ignores dimension 0's (the innermost's) stride: a
      // stride there would be silently dropped, so it is an error here.
      STAGECRAFT_ERROR("x.block(strides(...), ...): TMA does not stride the innermost dimension: its element stride must be 1",
                       "x.block(strides(...), ...): TMA does not stride the innermost dimension (the driver ignores it), but the strides "
                           << S{} << " end in " << S::values[S::rank - 1] << " (keep it 1, and de-interleave the columns after the load)");
      return gmem_block<DT, any_dims, void>{};
    } else {
      check_coords<C...>();
      return gmem_block<DT, Dims, void, S>{tree::ref_strided(with_coords(c...), S::values)};
    }
  }
  template <class Shape, class... C>
    requires shape_like<Shape>
  auto tile(Shape const& s, C const&... c) const {
    return tile_of<false>(s, c...);
  }
  // The same, masked: the tile need not divide the array (masked_t above).
  template <class Shape, class... C>
    requires shape_like<Shape>
  auto tile(Shape const& s, masked_t m, C const&... c) const {
    auto t = tile_of<true>(s, c...);
    t.ref = tree::ref_masked(t.ref, m.fill);
    return t;
  }

 private:
  template <bool Masked, class Shape, class... C>
  auto tile_of(Shape const& s, C const&... c) const {
    using B = typename Shape::static_dims;
    (void)s;
    if constexpr (std::is_same_v<Dims, any_dims>) {
      return gmem_block<DT, any_dims, B>{};  // the parameter stands in for an error already reported
    } else if constexpr (!B::all_static) {
      STAGECRAFT_ERROR_T(Shape, "x.tile(shape, ...): the tile shape must be static (128_c, not 128)");
      return gmem_block<DT, any_dims, B>{};
    } else if constexpr (B::rank != Dims::rank) {
      STAGECRAFT_ERROR("x.tile(shape, ...): the tile shape needs one extent per dimension of the array",
                       "x.tile(shape, ...): the tile shape " << B{} << " needs one extent per dimension of the array " << Dims{}
                                                             << " (" << Dims::rank << ")");
      return gmem_block<DT, any_dims, B>{};
    } else if constexpr ([] {
                           for (int d = 0; d < B::rank; ++d)
                             if (B::values[d] < 1 || (!Masked && Dims::values[d] >= 0 && Dims::values[d] % B::values[d] != 0)) return true;
                           return false;
                         }()) {
      STAGECRAFT_ERROR("x.tile(shape, ...): the tile shape must divide the shape of the array",
                       "x.tile(shape, ...): the tile shape " << B{} << " does not divide the shape of the array " << Dims{}
                           << " (generic loads and stores have no bounds check: give the tile a fill, x.tile(shape, masked(0.0f), ...), "
                              "to predicate each element, or copy it by TMA)");
      return gmem_block<DT, any_dims, B>{};
    } else {
      check_coords<C...>();
      return gmem_block<DT, Dims, B>{tree::ref_sized(with_coords(c...), B::values)};
    }
  }
  template <class... C>
  static constexpr void check_coords() {
    if constexpr (sizeof...(C) != Dims::rank && !std::is_same_v<Dims, any_dims>)
      STAGECRAFT_ERROR("a GMEM block needs one coordinate per dimension of the array",
                       "a GMEM block of an array of shape " << Dims{} << " needs " << Dims::rank << " coordinates, but got "
                                                            << sizeof...(C));
    else if constexpr (!(index_like<C> && ...))
      STAGECRAFT_ERROR_T(Dims, "GMEM block coordinates must be integers or index expressions");
  }
  template <class... C>
  tree::Ref with_coords(C const&... c) const {
    if constexpr ((index_like<C> && ...)) return tree::ref_block(ref, {node_of(c)...});
    else return ref;
  }
};

}  // namespace stagecraft
