// What kind of thing an operand is, so that every operation can say precisely what it got.
#pragma once
#include <type_traits>

namespace stagecraft {

enum class operand_kind {
  other, gmem_array, gmem_block, smem, barrier, cluster_barrier, tmem, accumulator, tile,
  smem_transposed,  // transpose(smem view): read by wgmma with rows and columns swapped
  barrier_spec,  // a barrier declaration (not yet a reference)
  semaphore,     // a grid-wide semaphore array or one of its counters (signal and wait only)
};

template <class T>
struct operand_kind_of {
  static constexpr operand_kind value = operand_kind::other;
};
template <class T>
  requires requires { std::remove_cvref_t<T>::kind; }
struct operand_kind_of<T> {
  static constexpr operand_kind value = std::remove_cvref_t<T>::kind;
};
template <class T>
inline constexpr operand_kind kind_of = operand_kind_of<std::remove_cvref_t<T>>::value;

template <class T>
inline constexpr bool is_barrier_like = kind_of<T> == operand_kind::barrier || kind_of<T> == operand_kind::cluster_barrier ||
                                        kind_of<T> == operand_kind::barrier_spec;

}  // namespace stagecraft

// The two seed errors, for every place where an array is expected: both read exactly as in
// Mosaic GPU, but here they are compile errors.
#define STAGECRAFT_REJECT_BARRIER_AS_ARRAY(...)                                                        \
  do {                                                                                                  \
    using stagecraft_rejected_t_ = __VA_ARGS__;                                                         \
    if constexpr (::stagecraft::kind_of<__VA_ARGS__> == ::stagecraft::operand_kind::cluster_barrier)              \
      STAGECRAFT_ERROR_T(stagecraft_rejected_t_, "Cluster barriers are not arrays");                                         \
    else if constexpr (::stagecraft::kind_of<__VA_ARGS__> == ::stagecraft::operand_kind::barrier ||               \
                       ::stagecraft::kind_of<__VA_ARGS__> == ::stagecraft::operand_kind::barrier_spec)            \
      STAGECRAFT_ERROR_T(stagecraft_rejected_t_, "Barriers are not arrays");                                                 \
  } while (0)
