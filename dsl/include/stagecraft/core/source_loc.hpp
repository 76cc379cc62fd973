// Where the user wrote an op or a declaration, and the names they gave scratch declarations.
//
// Every public op takes a trailing `src_loc loc = src_loc::current()`: the default argument is
// evaluated at the caller, so the location is the user's line, not this library's. We use the
// compiler builtins rather than std::source_location because Clang 14 with libstdc++ (a
// supported toolchain) has no std::source_location; the builtins behave the same on both.
// A location is two words, so passing it costs user translation units next to nothing.
#pragma once
#include <string>
#include <type_traits>

namespace stagecraft {

struct src_loc {
  const char* file = nullptr;  // static storage: __FILE__ of the caller
  unsigned line = 0;
  static constexpr src_loc current(const char* f = __builtin_FILE(), unsigned l = __builtin_LINE()) noexcept { return {f, l}; }
};

namespace detail {
constexpr bool is_identifier(const char* s) {
  if (!s || !*s) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(*s)) return false;
  for (++s; *s; ++s)
    if (!alpha(*s) && !(*s >= '0' && *s <= '9')) return false;
  return true;
}
// Not constexpr on purpose: reaching it in a constant evaluation is the compile error, and its
// name is what the compiler prints.
void declaration_name_must_be_a_C_identifier();
}  // namespace detail

// The optional first argument of smem, barrier, cluster_barrier, tmem and accumulator:
// `barrier("full", arrivals(1_c), count(4_c))`. Names are string literals, checked while
// compiling: diagnostics, traces and generated code print them, so they must read as identifiers.
// (Uniqueness needs the whole kernel: the verifier checks it.)
struct decl_name {
  const char* text;
  src_loc loc;
  consteval decl_name(const char* s, src_loc l = src_loc::current()) : text(s), loc(l) {  // NOLINT: implicit by design
    if (!detail::is_identifier(s)) detail::declaration_name_must_be_a_C_identifier();
  }
};

// What a scratch declaration records besides its type: the user's name (null: unnamed) and line.
struct decl_info {
  const char* name = nullptr;
  src_loc loc;
};

namespace detail {
struct no_opt {};  // an optional argument the caller left out
}  // namespace detail

// The name argument of kernel(...): any string, located where kernel(...) is called.
struct kernel_name {
  std::string text;
  src_loc loc;
  template <class S>
    requires std::is_constructible_v<std::string, S const&>
  kernel_name(S const& s, src_loc l = src_loc::current()) : text(s), loc(l) {}  // NOLINT: implicit by design
};

}  // namespace stagecraft
