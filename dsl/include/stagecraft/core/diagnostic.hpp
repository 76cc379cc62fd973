// Compile-time diagnostics with numbers in them.
//
// A static_assert message must be a string literal, so it cannot say *which* barrier count or
// shape was wrong. We build the full message as a compile-time string and make it a template
// argument of the failing check: GCC and Clang print that argument, so the user reads e.g.
//   diagnostic<fixed_string<72>{"Attempting to operate on barrier without indexing, but num_barriers = 4"}>
// right beside the one `static assertion failed` line. Every public entry point checks its
// operands first and, on failure, returns a well-typed stand-in (an empty statement, a tile of
// the expected type), so one mistake gives one error and no cascade behind it.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace stagecraft {
template <class T>
inline constexpr bool always_false = false;
}

namespace stagecraft::diag {

template <std::size_t N>
struct fixed_string {
  char text[N]{};
  constexpr fixed_string() = default;
  constexpr fixed_string(const char (&s)[N]) {  // NOLINT: implicit from a literal, by design
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
};

// A small constexpr string builder for messages.
struct msg_buf {
  std::array<char, 768> d{};
  std::size_t n = 0;
  constexpr msg_buf& operator<<(const char* s) {
    while (*s && n + 1 < d.size()) d[n++] = *s++;
    return *this;
  }
  constexpr msg_buf& operator<<(long long v) {
    if (v < 0) { d[n++] = '-'; v = -v; }
    char t[24]{};
    int k = 0;
    do { t[k++] = char('0' + v % 10); v /= 10; } while (v);
    while (k) d[n++] = t[--k];
    return *this;
  }
  constexpr msg_buf& operator<<(long v) { return *this << static_cast<long long>(v); }
  constexpr msg_buf& operator<<(int v) { return *this << static_cast<long long>(v); }
  constexpr msg_buf& operator<<(unsigned long v) { return *this << static_cast<long long>(v); }
  constexpr msg_buf& operator<<(bool v) { return *this << (v ? "true" : "false"); }
  template <std::size_t N>
  constexpr msg_buf& operator<<(fixed_string<N> const& s) { return *this << s.text; }
};

template <auto Make>
constexpr auto to_fixed() {
  constexpr msg_buf b = Make();
  fixed_string<b.n + 1> f;
  for (std::size_t i = 0; i < b.n; ++i) f.text[i] = b.d[i];
  return f;
}

// The type whose name carries the message. `ok` is false, always; it is a template so the
// static_assert that reads it only fires when the failing branch is instantiated.
template <fixed_string Message>
struct diagnostic {
  static constexpr bool ok = false;
};

}  // namespace stagecraft::diag

// STAGECRAFT_ERROR(literal, parts...): inside a failing `if constexpr` branch of a template.
// `literal` is the message with its numbers as letters (what static_assert can print);
// `parts` is a `<<` chain that builds the same message with the numbers filled in.
#define STAGECRAFT_ERROR(literal, ...)                                                          \
  static_assert(::stagecraft::diag::diagnostic<::stagecraft::diag::to_fixed<[] {               \
                  ::stagecraft::diag::msg_buf stagecraft_msg_;                                  \
                  stagecraft_msg_ << __VA_ARGS__;                                               \
                  return stagecraft_msg_;                                                       \
                }>()>::ok,                                                                      \
                literal)

// STAGECRAFT_ERROR_T(T, literal): a message without numbers; T makes it depend on the
// template being instantiated so it fires only in the failing branch.
#define STAGECRAFT_ERROR_T(T, literal) static_assert(::stagecraft::always_false<T>, literal)
