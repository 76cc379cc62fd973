// fmt's compiled half, for portable builds (STAGECRAFT_PORTABLE: the GPU bundle), which must not
// need libfmt.so at run time and have no libfmt.a to link (Debian ships the shared library only).
// fmt's own header holds the implementation (format-inl.h); this one translation unit compiles it
// once, where fmt::fmt-header-only compiled it again in every translation unit that formats: the
// whole bundle (scripts/gpu_bundle.sh, from scratch) took 801 s of CPU that way and 594 s this
// way, and CI builds it in every run (bundle.self_contained). The explicit instantiations are the
// ones libfmt.so.9 exports from format.cc (format.h declares them extern; os.h's file classes are
// left out: nothing here includes it).
#include <fmt/format-inl.h>

namespace fmt {
inline namespace v9 {
namespace detail {
template FMT_API locale_ref::locale_ref(const std::locale&);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);
}  // namespace detail
}  // namespace v9
}  // namespace fmt
