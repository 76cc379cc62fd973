// Compile-time diagnostics with numbers in them.
//
// A static_assert message must be a string literal, so it cannot say *which* barrier count or
// shape was wrong. We build the full message as a compile-time string and make it a template
// argument of the failing check, so the user reads e.g.
//   "barrier_wait: Attempting to operate on barrier without indexing, but num_barriers = 4"
// Every public entry point checks its operands first and, on failure, returns a well-typed
// stand-in (an empty statement, a tile of the expected type), so one mistake gives one error
// and no cascade behind it.
//
// How the message reaches the screen depends on the compiler, and the goal is the same for
// both: the first `error:` line says what is wrong, and the whole report fits on a screen
// (docs/compile_errors.md measures it; tests/failtest/check_error_size.cmake holds the seed
// errors to 25 lines with g++).
//  - g++ prints a template argument in full, strings as strings, and it prints "In expansion of
//    macro" notes (two lines each, per macro level) for any diagnostic located in a macro. So
//    the macros only *name* `diag::reject<Message>`; the failing use of a deleted function sits
//    in that template, outside every macro, and its error line reads
//      error: use of deleted function 'void stagecraft::diag::rejected() [with ... Message =
//             fixed_string<86>{"barrier_wait: Attempting ... num_barriers = 4"}]'
//  - clang 14 prints a class-type template argument as character codes, and only the first
//    ten, so there the static_assert's literal (the message with letters for its numbers) is
//    what the user can read, and the macros expand to a static_assert.
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

// With clang: the type whose name carries the message. `ok` is false, always; it is a
// template so the static_assert that reads it only fires when the failing branch is
// instantiated.
template <fixed_string Message>
struct diagnostic {
  static constexpr bool ok = false;
};

// Deleted: referring to it is the error, and g++ names Message in that error's line.
template <fixed_string Message>
void rejected() = delete;  // stagecraft rejected the kernel: the message is the line above

// Instantiated only by a failing check. `Dependent` ties a fixed message (one without
// numbers) to the template being instantiated, so the check fires only in its own branch.
template <fixed_string Message, class... Dependent>
struct reject {
  using fire = decltype(rejected<Message>());
};

}  // namespace stagecraft::diag

// STAGECRAFT_ERROR(literal, parts...): inside a failing `if constexpr` branch of a template.
// `literal` is the message with its numbers as letters (what static_assert can print);
// `parts` is a `<<` chain that builds the same message with the numbers filled in.
// STAGECRAFT_ERROR_T(T, literal): a message without numbers; T makes it depend on the
// template being instantiated so it fires only in the failing branch.
#define STAGECRAFT_MESSAGE_(...)                                         \
  ::stagecraft::diag::to_fixed<[] {                                      \
    ::stagecraft::diag::msg_buf stagecraft_msg_;                         \
    stagecraft_msg_ << __VA_ARGS__;                                      \
    return stagecraft_msg_;                                              \
  }>()
#if defined(__clang__)
#define STAGECRAFT_ERROR(literal, ...) \
  static_assert(::stagecraft::diag::diagnostic<STAGECRAFT_MESSAGE_(__VA_ARGS__)>::ok, literal)
#define STAGECRAFT_ERROR_T(T, literal) static_assert(::stagecraft::always_false<T>, literal)
#else
#define STAGECRAFT_ERROR(literal, ...) (void)sizeof(::stagecraft::diag::reject<STAGECRAFT_MESSAGE_(__VA_ARGS__)>)
#define STAGECRAFT_ERROR_T(T, literal) \
  (void)sizeof(::stagecraft::diag::reject<::stagecraft::diag::fixed_string{literal}, T>)
#endif
