// Shared-memory allocations and views.
//
//   smem<f32>(shape(4_c, 128_c, 64_c))                              // (stage, row, col)
//   smem<f16>(shape(2_c, 64_c, 64_c), swizzle(128_c))               // 128-byte swizzled rows
//   smem<bf16>(shape(128_c, 256_c), tiling(64_c, 64_c), swizzle(128_c))
//
// Indexing drops leading dimensions: `buf[s]` of the first is a (128, 64) view. The layout
// (tiling, swizzle) stays with every view: it decides addresses in codegen and TMA descriptors.
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

// Align: the byte boundary the view is known to start on (the allocation's alignment, reduced
// by every index taken), which TMA copies check against what the hardware needs.
template <dtype DT, class Dims, class Layout, info I, long long Align>
struct smem_ref {
  static constexpr operand_kind kind = operand_kind::smem;
  using dtype_t = DT;
  using static_dims = Dims;
  using layout_t = Layout;
  static constexpr info static_info = I;
  static constexpr long long bytes = Dims::product * DT::bits / 8;
  static constexpr long long start_alignment = Align;

  tree::Ref ref;

  template <class T>
  auto operator[](T const& i) const {
    using Rest = typename dims_ops::drop_front<std::conditional_t<(Dims::rank > 0), Dims, dims<1>>>::type;
    if constexpr (Dims::rank == 0) {
      STAGECRAFT_ERROR_T(T, "SMEM index out of bounds: every dimension of this view is already indexed");
      return *this;
    } else if constexpr (kind_of<T> == operand_kind::barrier || kind_of<T> == operand_kind::cluster_barrier) {
      STAGECRAFT_ERROR_T(T, "SMEM arrays can only be indexed with integers or stage cursors, but got a barrier");
      return smem_ref<DT, Rest, Layout, I, Align>{ref};
    } else if constexpr (!detail::index_operand<T>) {
      STAGECRAFT_ERROR_T(T, "SMEM arrays can only be indexed with integers or stage cursors");
      return smem_ref<DT, Rest, Layout, I, Align>{ref};
    } else {
      constexpr info added = detail::check_index<"SMEM", Dims::values[0], T>();
      constexpr long long align = detail::indexed_alignment<Align, Rest::product * DT::bits / 8, T>();
      return smem_ref<DT, Rest, Layout, I | added, align>{tree::ref_indexed(ref, detail::index_node(i), nullptr, true)};
    }
  }
  template <class T0, class... T>
  auto operator()(T0 const& i0, T const&... i) const {
    if constexpr (sizeof...(T) == 0) return (*this)[i0];
    else return (*this)[i0](i...);
  }
};

}  // namespace stagecraft
