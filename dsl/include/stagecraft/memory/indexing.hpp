// The indexing rule shared by barrier arrays and SMEM rings (DESIGN.md section 3).
//
//   static index outside the dimension         -> compile error with the numbers
//   index whose static range is inside          -> accepted, no run-time check
//   index whose static range reaches outside    -> compile error (wrap it in runtime_index() to
//                                                  have the interpreter check it instead)
//   thread_id()/program_id()-derived index      -> bound recorded in the info, checked by kernel()
//                                                  against num_threads / the static grid
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

// thread_id() and program_id() together: keep the thread bound, assume the largest grid.
template <class U>
constexpr range_t checked_range() {
  return range_of<U>().nt ? range_ops::without_grid(range_of<U>()) : range_of<U>();
}

template <diag::fixed_string What, long long Dim, class T>
constexpr info check_index() {
  using U = std::remove_cvref_t<T>;
  if constexpr (Dim < 0) {
    return no_info;  // a run-time extent, already reported where the array was declared
  } else if constexpr (stage_cursor_like<U>) {
    if constexpr (U::depth != Dim)
      STAGECRAFT_ERROR("Stage cursor depth does not match the array: a cursor of depth K can only index a dimension of K stages",
                       What << ": a stage cursor of depth " << U::depth << " cannot index a dimension of " << Dim
                            << " stages");
    return no_info;
  } else {
    constexpr range_t r = checked_range<U>();
    if constexpr (!r.known) {
      return no_info;
    } else if constexpr (r.nt == 0 && r.ng == 0) {
      if constexpr (r.lo < 0 || r.hi > Dim) {
        if constexpr (r.is_constant())
          STAGECRAFT_OUT_OF_BOUNDS(What << " offset is out of bounds: offset = " << checked_range<U>().lo << ", but the dimension has " << Dim
                                        << " elements");
        else
          STAGECRAFT_OUT_OF_BOUNDS(What << " offset is out of bounds: the index ranges over [" << checked_range<U>().lo << ", " << checked_range<U>().hi
                                        << "), but the dimension has " << Dim
                                        << " elements (use runtime_index(i) to check it at run time instead)");
      }
      return no_info;
    } else if constexpr (r.lo < 0) {
      // The usual cause is a guard (if_(thread_id() > 0_c, ... bar[thread_id() - 1_c] ...)):
      // conditions do not narrow the ranges of the indices used under them.
      STAGECRAFT_OUT_OF_BOUNDS(What << " offset is out of bounds: an index derived from " << (checked_range<U>().nt ? "thread_id()" : "program_id()")
                                    << " can be negative (its range starts at " << checked_range<U>().lo
                                    << "); an if_ condition does not narrow the range of the indices under it: use runtime_index(i) "
                                       "to check it at run time instead");
      return no_info;
    } else if constexpr (r.nt != 0) {
      constexpr long long max_threads = (Dim - r.hi) / r.nt;
      if constexpr (max_threads < 1) {
        STAGECRAFT_OUT_OF_BOUNDS(What << " offset is out of bounds: an index derived from thread_id() exceeds the dimension of "
                                      << Dim << " elements for any num_threads");
        return no_info;
      } else {
        return info{0, max_threads};
      }
    } else {
      constexpr long long max_grid = (Dim - r.hi) / r.ng;
      if constexpr (max_grid < 1) {
        STAGECRAFT_OUT_OF_BOUNDS(What << " offset is out of bounds: an index derived from program_id(" << checked_range<U>().axis
                                      << ") exceeds the dimension of " << Dim << " elements for any grid");
        return no_info;
      } else {
        info i{};
        i.max_grid[r.axis] = max_grid;
        return i;
      }
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
