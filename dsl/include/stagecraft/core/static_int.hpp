// Integers that may be known at compile time.
//
// A static integer carries its value in its type (`128_c`, `int_c<K>`), so shapes, barrier
// counts and index ranges built from it are checked by the compiler and cost nothing at run
// time (as in CuTe). A plain `int`/`long` is a run-time integer.
//
// stagecraft's constants are their own type rather than boost::hana::integral_constant: Hana's
// operators are found by argument-dependent lookup for *any* expression with a Hana constant in
// it, and `j + 4_c` (j an index expression) then fails with a hard error inside Hana instead of
// reaching stagecraft's operators. Hana and std integral constants are still accepted wherever a
// static integer is expected.
#pragma once
#include <concepts>
#include <cstdint>
#include <type_traits>

#include <boost/hana/integral_constant.hpp>

namespace stagecraft {

namespace hana = boost::hana;

template <long long V>
struct constant {
  using value_type = long long;
  static constexpr long long value = V;
  constexpr operator long long() const { return V; }  // NOLINT: decays to a run-time integer on purpose
};

template <long long V>
inline constexpr constant<V> int_c{};

namespace literal_parsing {
template <char... C>
constexpr long long parse() {
  long long v = 0;
  ((v = C == '\'' ? v : v * 10 + (C - '0')), ...);
  return v;
}
}  // namespace literal_parsing

namespace literals {
// 128_c: a static integer.
template <char... C>
constexpr auto operator""_c() {
  return constant<literal_parsing::parse<C...>()>{};
}
}  // namespace literals
using namespace literals;

// Arithmetic on static integers stays static.
template <long long A, long long B> constexpr constant<A + B> operator+(constant<A>, constant<B>) { return {}; }
template <long long A, long long B> constexpr constant<A - B> operator-(constant<A>, constant<B>) { return {}; }
template <long long A, long long B> constexpr constant<A * B> operator*(constant<A>, constant<B>) { return {}; }
template <long long A, long long B>
  requires(B != 0)
constexpr constant<A / B> operator/(constant<A>, constant<B>) { return {}; }
template <long long A, long long B>
  requires(B != 0)
constexpr constant<A % B> operator%(constant<A>, constant<B>) { return {}; }
template <long long A> constexpr constant<-A> operator-(constant<A>) { return {}; }

template <class T>
struct is_static_int_t : std::false_type {};
template <long long V>
struct is_static_int_t<constant<V>> : std::true_type {};
template <class T, T V>
  requires std::integral<T>
struct is_static_int_t<hana::integral_constant<T, V>> : std::true_type {};
template <class T, T V>
  requires std::integral<T>
struct is_static_int_t<std::integral_constant<T, V>> : std::true_type {};

template <class T>
concept static_int = is_static_int_t<std::remove_cvref_t<T>>::value;

template <class T>
concept runtime_int = std::integral<std::remove_cvref_t<T>> && !std::same_as<std::remove_cvref_t<T>, bool>;

// An extent, count or coordinate: known now or later.
template <class T>
concept int_like = static_int<T> || runtime_int<T>;

template <int_like T>
constexpr std::int64_t value_of(T const& v) {
  if constexpr (static_int<T>)
    return static_cast<std::int64_t>(std::remove_cvref_t<T>::value);
  else
    return static_cast<std::int64_t>(v);
}

// A value that stands for "not known at compile time" in static dimension lists.
inline constexpr std::int64_t dynamic_extent = -1;

template <class T>
constexpr std::int64_t static_value_or_dynamic() {
  if constexpr (static_int<T>)
    return static_cast<std::int64_t>(std::remove_cvref_t<T>::value);
  else
    return dynamic_extent;
}

}  // namespace stagecraft
