// The indexing rule shared by barrier arrays and SMEM rings (DESIGN.md section 3).
//
//   static index outside the dimension         -> compile error with the numbers
//   index whose static range is inside          -> accepted, no run-time check
//   index whose static range reaches outside    -> compile error (wrap it in runtime_index() to
//                                                  have the interpreter check it instead)
//   thread_id()-derived index                   -> bound recorded in the info, checked by kernel()
//   index of unknown range                      -> accepted, checked by the interpreter
//   stage cursor of depth K                     -> accepted iff the dimension is K
//   anything else                               -> compile error
#pragma once
#include "stagecraft/core/info.hpp"
#include "stagecraft/expr/stage.hpp"

namespace stagecraft::detail {

template <class T>
concept index_operand = index_like<T> || stage_cursor_like<T>;

// Returns the info the indexing adds (a thread bound), or fires the diagnostic for `What`
// ("Barrier" or "SMEM") and returns no_info so the caller can go on without a cascade.
// The static_assert line names the array kind too: barriers keep Mosaic GPU's wording.
#define STAGECRAFT_OUT_OF_BOUNDS(...)                                     \
  do {                                                                    \
    if constexpr (What.text[0] == 'B')                                    \
      STAGECRAFT_ERROR("Barrier offset is out of bounds", __VA_ARGS__);   \
    else                                                                  \
      STAGECRAFT_ERROR("SMEM offset is out of bounds", __VA_ARGS__);      \
  } while (0)

template <diag::fixed_string What, long long Dim, class T>
constexpr info check_index() {
  using U = std::remove_cvref_t<T>;
  if constexpr (stage_cursor_like<U>) {
    if constexpr (U::depth != Dim)
      STAGECRAFT_ERROR("Stage cursor depth does not match the array: a cursor of depth K can only index a dimension of K stages",
                       What << ": a stage cursor of depth " << U::depth << " cannot index a dimension of " << Dim
                            << " stages");
    return no_info;
  } else {
    constexpr range_t r = range_of<U>();
    if constexpr (!r.known) {
      return no_info;
    } else if constexpr (r.nt == 0) {
      if constexpr (r.lo < 0 || r.hi > Dim) {
        if constexpr (r.is_constant())
          STAGECRAFT_OUT_OF_BOUNDS(What << " offset is out of bounds: offset = " << range_of<U>().lo
                                        << ", but the dimension has " << Dim << " elements");
        else
          STAGECRAFT_OUT_OF_BOUNDS(What << " offset is out of bounds: the index ranges over [" << range_of<U>().lo << ", " << range_of<U>().hi
                                << "), but the dimension has " << Dim
                                << " elements (use runtime_index(i) to check it at run time instead)");
      }
      return no_info;
    } else {
      constexpr long long max_threads = r.lo < 0 ? 0 : (Dim - r.hi) / r.nt;
      if constexpr (max_threads < 1)
        STAGECRAFT_OUT_OF_BOUNDS(What << " offset is out of bounds: an index derived from thread_id() exceeds the dimension of "
                              << Dim << " elements for any num_threads");
      return info{0, max_threads};
    }
  }
}

template <class T>
tree::ExprP index_node(T const& i) {
  if constexpr (stage_cursor_like<T>) return i.slot().node;
  else return node_of(i);
}

#undef STAGECRAFT_OUT_OF_BOUNDS

}  // namespace stagecraft::detail
