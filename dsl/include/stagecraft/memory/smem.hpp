// Shared-memory allocations and views.
//
//   smem<f32>(shape(4_c, 128_c, 64_c))                              // (stage, row, col)
//   smem<f16>(shape(2_c, 64_c, 64_c), swizzle(128_c))               // 128-byte swizzled rows
//   smem<bf16>(shape(128_c, 256_c), tiling(64_c, 64_c), swizzle(128_c))
//
// Indexing drops leading dimensions: `buf[s]` of the first is a (128, 64) view. The layout
// (tiling, swizzle) stays with every view: it decides addresses in codegen and TMA descriptors.
//
//   slice<0>(buf[s], 64_c, 64_c)                                   // rows 64..127: (64, 64)
//   slice<1>(buf[s], 16_c, 32_c)                                   // columns 16..47: (128, 32)
//   slice<0>(buf[s], j * 16_c, 16_c)                               // a start the range proves
//
// A sub-view keeps its parent's strides (no data moves); its type remembers the parent's extents
// (Full), which decide whether its bytes are one contiguous run (what TMA and MMA operands need).
#pragma once
#include "stagecraft/core/dtype.hpp"
#include "stagecraft/core/shape.hpp"
#include "stagecraft/memory/indexing.hpp"
#include "stagecraft/memory/kinds.hpp"

namespace stagecraft {

template <class D>
struct tiling_opt {
  using static_dims = D;
};
template <static_int... T>
constexpr auto tiling(T...) {
  return tiling_opt<dims<T::value...>>{};
}
template <long long Bytes>
struct swizzle_opt {
  static constexpr long long bytes = Bytes;
};
template <static_int B>
constexpr auto swizzle(B) {
  return swizzle_opt<B::value>{};
}

// Tile shape (dims<> for none) and swizzle width in bytes (0 for none).
template <class Tile, long long Swizzle>
struct layout {
  using tile = Tile;
  static constexpr long long swizzle = Swizzle;
};
using plain_layout = layout<dims<>, 0>;

template <dtype DT, class Dims, class Layout>
struct smem_decl {
  static constexpr operand_kind kind = operand_kind::other;  // a declaration, not a view
  using dtype_t = DT;
  using static_dims = Dims;
  static constexpr long long bytes = Dims::product * DT::bits / 8;
  // A swizzle pattern repeats every 8 rows of its width (1024 B for 128-byte swizzle), and the
  // hardware swizzles by absolute address: swizzled buffers start on that boundary; TMA needs
  // 128 bytes for everything else.
  static constexpr long long alignment = Layout::swizzle ? 8 * Layout::swizzle : 128;
  decl_info info;
  tree::AllocDecl decl() const {
    tree::AllocDecl d{ir::AllocKind::smem, DT::code, Dims::vector()};
    d.tiling = Layout::tile::vector();
    d.swizzle = static_cast<int>(Layout::swizzle);
    return d;
  }
};

namespace detail {
template <class T>
struct is_tiling : std::false_type {};
template <class D>
struct is_tiling<tiling_opt<D>> : std::true_type {};
template <class T>
struct is_swizzle : std::false_type {};
template <long long B>
struct is_swizzle<swizzle_opt<B>> : std::true_type {};

template <dtype DT, class Dims, class Tile, long long Sw>
constexpr bool check_smem_layout() {
  constexpr int r = Dims::rank, tr = Tile::rank;
  if constexpr (!Dims::all_static) {
    STAGECRAFT_ERROR("SMEM allocations need static shapes: write 128_c, not 128",
                     "SMEM allocations need static shapes, but the shape " << Dims{} << " has a run-time extent (?): write 128_c, not 128");
    return false;
  } else if constexpr (tr > r) {
    STAGECRAFT_ERROR("tiling has more dimensions than the array", "tiling " << Tile{} << " has more dimensions than the SMEM array " << Dims{});
    return false;
  } else if constexpr (tr > 0 && ![] {
                         for (int i = 0; i < tr; ++i)
                           if (Tile::values[i] <= 0 || Dims::values[r - tr + i] % Tile::values[i] != 0) return false;
                         return true;
                       }()) {
    STAGECRAFT_ERROR("tiling must divide the trailing dimensions of the array",
                     "tiling " << Tile{} << " does not divide the trailing dimensions of the SMEM array " << Dims{});
    return false;
  } else if constexpr (Sw != 0 && Sw != 32 && Sw != 64 && Sw != 128) {
    STAGECRAFT_ERROR("swizzle must be 32, 64 or 128 bytes", "swizzle must be 32, 64 or 128 bytes, but got " << Sw);
    return false;
  } else if constexpr (Sw != 0) {
    constexpr long long trailing = tr > 0 ? Tile::values[tr > 0 ? tr - 1 : 0] : Dims::values[r > 0 ? r - 1 : 0];
    constexpr long long want = Sw * 8 / DT::bits;
    if constexpr (r == 0 || trailing != want) {
      STAGECRAFT_ERROR("the trailing dimension must be swizzle*8/bits elements",
                       "swizzle = " << Sw << " bytes with dtype " << dtype_name<DT>() << " needs a trailing dimension of "
                                    << want << " elements (swizzle*8/bits), but got " << trailing);
      return false;
    }
    return true;
  } else {
    return true;
  }
}
}  // namespace detail

namespace detail {
template <dtype DT, class Shape, class... Opts>
auto make_smem(decl_info info) {
  using Dims = typename Shape::static_dims;
  using Tile = typename detail::first_of<detail::is_tiling, tiling_opt<dims<>>, Opts...>::type::static_dims;
  constexpr long long sw = detail::first_of<detail::is_swizzle, swizzle_opt<0>, Opts...>::type::bytes;
  static_assert(((detail::is_tiling<Opts>::value || detail::is_swizzle<Opts>::value || std::is_same_v<Opts, no_opt>) && ...),
                "smem<T>(shape, ...) takes tiling(...) and swizzle(...) options only");
  detail::check_smem_layout<DT, Dims, Tile, sw>();
  return smem_decl<DT, Dims, layout<Tile, sw>>{info};
}
}  // namespace detail

// Up to two options (tiling, swizzle); a name first is optional: smem<f32>("xs", shape(...)).
template <dtype DT, class Shape, class O1 = detail::no_opt, class O2 = detail::no_opt>
  requires shape_like<Shape>
auto smem(Shape const&, O1 = {}, O2 = {}, src_loc loc = src_loc::current()) {
  return detail::make_smem<DT, Shape, O1, O2>({nullptr, loc});
}
template <dtype DT, class Shape, class... Opts>
  requires shape_like<Shape>
auto smem(decl_name name, Shape const&, Opts...) {
  return detail::make_smem<DT, Shape, Opts...>({name.text, name.loc});
}

namespace detail {
constexpr long long gcd_ll(long long a, long long b) {
  while (b != 0) {
    const long long t = a % b;
    a = b;
    b = t;
  }
  return a < 0 ? -a : a;
}
// What is known of where the view `parent[i]` starts: parent views start on Align-byte
// boundaries and their elements along the indexed dimension are Step bytes apart.
template <long long Align, long long Step, class T>
constexpr long long indexed_alignment() {
  if constexpr (Step <= 0) {
    return Align;  // a run-time extent, already reported where the array was declared
  } else if constexpr (index_like<T>) {
    if constexpr (range_of<T>().is_constant()) return range_of<T>().lo == 0 ? Align : gcd_ll(Align, range_of<T>().lo * Step);
    else return gcd_ll(Align, Step);
  } else {
    return gcd_ll(Align, Step);
  }
}
}  // namespace detail

namespace detail {
template <class D, int Axis, long long Extent>
struct sub_dims;
template <long long... S, int Axis, long long Extent>
struct sub_dims<dims<S...>, Axis, Extent> {
  static constexpr std::array<long long, sizeof...(S)> v{S...};
  template <std::size_t... I>
  static auto make(std::index_sequence<I...>) -> dims<(I == static_cast<std::size_t>(Axis) ? Extent : v[I])...>;
  using type = decltype(make(std::make_index_sequence<sizeof...(S)>{}));
};
// A sub-view's elements are one contiguous run of its parent's iff every axis before the last
// one it cuts has extent 1: rows 64..127 of (128, 64) are, columns 16..47 are not (each row is
// cut), half of row 3, (1, 32) of (128, 64), is.
template <class Dims, class Full>
constexpr bool contiguous_in() {
  if constexpr (Dims::rank != Full::rank) {
    return true;  // the stand-in of an error already reported
  } else {
    int k = -1;  // the last axis that is cut
    for (int d = 0; d < Dims::rank; ++d)
      if (Dims::values[d] != Full::values[d]) k = d;
    for (int d = 0; d < k; ++d)
      if (Dims::values[d] != 1) return false;
    return true;
  }
}
template <class D>
constexpr long long product_of() {
  if constexpr (requires { D::product; }) return D::product;
  else return 0;  // any_dims: an error stand-in
}
}  // namespace detail

// Align: the byte boundary the view is known to start on (the allocation's alignment, reduced
// by every index taken), which TMA copies check against what the hardware needs. Full: the
// extents of the view this one was sliced from (Dims itself when it is not a sub-view).
template <dtype DT, class Dims, class Layout, info I, long long Align, class Full = Dims>
struct smem_ref {
  static constexpr operand_kind kind = operand_kind::smem;
  using dtype_t = DT;
  using static_dims = Dims;
  using full_dims = Full;
  using layout_t = Layout;
  static constexpr info static_info = I;
  static constexpr long long bytes = detail::product_of<Dims>() * DT::bits / 8;
  static constexpr long long start_alignment = Align;
  static constexpr bool is_subview = !std::is_same_v<Dims, Full>;
  static constexpr bool contiguous = detail::contiguous_in<Dims, Full>();

  tree::Ref ref;

  template <class T>
  auto operator[](T const& i) const {
    using Rest = typename dims_ops::drop_front<std::conditional_t<(Dims::rank > 0), Dims, dims<1>>>::type;
    using FullRest = typename dims_ops::drop_front<std::conditional_t<(Dims::rank > 0), Full, dims<1>>>::type;
    if constexpr (Dims::rank == 0) {
      STAGECRAFT_ERROR_T(T, "SMEM index out of bounds: every dimension of this view is already indexed");
      return *this;
    } else if constexpr (kind_of<T> == operand_kind::barrier || kind_of<T> == operand_kind::cluster_barrier) {
      STAGECRAFT_ERROR_T(T, "SMEM arrays can only be indexed with integers or stage cursors, but got a barrier");
      return smem_ref<DT, Rest, Layout, I, Align, FullRest>{ref};
    } else if constexpr (!detail::index_operand<T>) {
      STAGECRAFT_ERROR_T(T, "SMEM arrays can only be indexed with integers or stage cursors");
      return smem_ref<DT, Rest, Layout, I, Align, FullRest>{ref};
    } else {
      // An index into a sliced dimension counts from the slice's start (tree::ref_indexed adds it).
      constexpr info added = detail::check_index<"SMEM", Dims::values[0], T>();
      constexpr long long align = detail::indexed_alignment<Align, FullRest::product * DT::bits / 8, T>();
      return smem_ref<DT, Rest, Layout, I | added, align, FullRest>{tree::ref_indexed(ref, detail::index_node(i), nullptr, true)};
    }
  }
  template <class T0, class... T>
  auto operator()(T0 const& i0, T const&... i) const {
    if constexpr (sizeof...(T) == 0) return (*this)[i0];
    else return (*this)[i0](i...);
  }
};

// Elements start .. start + extent - 1 of an SMEM view along Axis, the other axes whole: the
// spelling of a register tile's slice (expr/view.hpp). The extent is static; the start is static
// or an index expression, checked as an index is (static when its range is known, else by the
// interpreter). A unit stride only: a strided view is no TMA box and no MMA operand.
template <int Axis, class V, class Start, class Extent>
  requires(kind_of<V> == operand_kind::smem)
auto slice(V const& v, Start const& start, Extent const&) {
  using D = typename V::static_dims;
  using F = typename V::full_dims;
  using DT = typename V::dtype_t;
  // What a failed check returns: operations accept it as a view of unknown shape (any_dims), so
  // the error reported is the only one.
  using error_view = smem_ref<DT, any_dims, typename V::layout_t, V::static_info, V::start_alignment, any_dims>;
  if constexpr (std::is_same_v<D, any_dims>) {
    return v;  // a stand-in for an error already reported
  } else if constexpr (!static_int<Extent>) {
    STAGECRAFT_ERROR_T(Extent, "slice<Axis>(view, start, extent) of an SMEM view: the extent is a static integer (16_c), as SMEM shapes are");
    return error_view{};
  } else if constexpr (!index_like<Start>) {
    STAGECRAFT_ERROR_T(Start, "slice<Axis>(view, start, extent) of an SMEM view: the start is an integer or an index expression");
    return error_view{};
  } else if constexpr (Axis < 0 || Axis >= D::rank) {
    STAGECRAFT_ERROR("slice<A>(view, start, extent): axis A is out of range for an SMEM view of shape S",
                     "slice<" << Axis << ">(view, start, extent): axis " << Axis << " is out of range for an SMEM view of shape " << D{});
    return error_view{};
  } else {
    constexpr long long extent = std::remove_cvref_t<Extent>::value, dim = D::values[static_cast<std::size_t>(Axis)];
    constexpr range_t s = range_ops::without_grid(range_of<Start>());
    using R = typename detail::sub_dims<D, Axis, extent>::type;
    if constexpr (extent < 1 || extent > dim) {
      STAGECRAFT_ERROR("slice<A>(view, start, extent): the extent must be 1 to the extent of axis A",
                       "slice<" << Axis << ">(view, start, " << extent << "): the extent must be 1 to " << dim << ", the extent of axis " << Axis
                                << " of the SMEM view " << D{});
      return error_view{};
    } else if constexpr (s.known && s.nt == 0 && (s.lo < 0 || s.hi - 1 + extent > dim)) {
      if constexpr (s.is_constant())
        STAGECRAFT_ERROR("SMEM offset is out of bounds: slice<A>(view, start, extent) past the end of axis A",
                         "SMEM offset is out of bounds: slice<" << Axis << ">(view, " << range_ops::without_grid(range_of<Start>()).lo << ", " << extent
                                                               << "): elements " << range_ops::without_grid(range_of<Start>()).lo << " to "
                                                               << (range_ops::without_grid(range_of<Start>()).lo + extent - 1) << " do not lie in axis "
                                                               << Axis << " of the SMEM view " << D{});
      else
        STAGECRAFT_ERROR("SMEM offset is out of bounds: a slice start whose range reaches past the end of axis A",
                         "SMEM offset is out of bounds: slice<" << Axis << ">(view, start, " << extent << ") with a start ranging over ["
                                                               << range_ops::without_grid(range_of<Start>()).lo << ", "
                                                               << range_ops::without_grid(range_of<Start>()).hi << ") reaches past axis " << Axis
                                                               << " of the SMEM view " << D{} << " (use runtime_index(i) to check it at run time instead)");
      return smem_ref<DT, R, typename V::layout_t, V::static_info, V::start_alignment, F>{v.ref};  // the shape asked for: no second error
    } else {
      // The start moves the view's first byte by start * (bytes between elements of Axis).
      constexpr long long step = [] {
        long long b = DT::bits / 8;
        for (int d = Axis + 1; d < F::rank; ++d) b *= F::values[static_cast<std::size_t>(d)];
        return b;
      }();
      constexpr long long align = detail::indexed_alignment<V::start_alignment, step, Start>();
      return smem_ref<DT, R, typename V::layout_t, V::static_info, align, F>{tree::ref_sliced(v.ref, Axis, node_of(start), extent)};
    }
  }
}

}  // namespace stagecraft
