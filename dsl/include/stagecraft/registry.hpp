// Registering kernels with the CLI (DESIGN.md section 10).
//
// An entry names a kernel, its integer parameters (problem sizes, pipeline depth), how to build
// its IR for given parameter values, and a plain C++ reference of what it computes. Parameters
// that live in types (a ring depth K) are built for a declared set of values through dispatch().
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "stagecraft/core/static_int.hpp"
#include "stagecraft/expr/size.hpp"
#include "stagecraft/host/tensor.hpp"
#include "stagecraft/ir/kernel.hpp"

namespace stagecraft {

// A mistake in what the user asked for (unknown kernel, bad parameter): one line, no crash.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct param_spec {
  std::string name;
  std::int64_t default_value;
  std::string help;
  // If not empty: the only values (type-level parameters), and the whole rule: min, max and
  // multiple_of then apply to nothing (`.allowed = {0, 1}` accepts 0 without `.min = 0`).
  std::vector<std::int64_t> allowed;
  // For a parameter without `allowed`: the range and the step its values must keep.
  std::int64_t min = 1;
  std::int64_t max = std::numeric_limits<std::int32_t>::max();
  std::int64_t multiple_of = 1;
  // May be a run-time extent (`--dynamic NAME`): the builder takes it with size_param(), and
  // the kernel compiled once serves every value in [min, max]. Off: always compiled in.
  bool run_time = false;
  // Names for values (`--set fmt=nvfp4` for fmt=4): each name stands for its value wherever the
  // CLI reads an assignment; the value's own rule (allowed, range) still applies.
  std::vector<std::pair<std::string, std::int64_t>> names;
};

// Parameter values by name. A parameter marked dynamic (`--dynamic M`) is also there as "M?" = 1
// (the listing's mark for an extent only the launch knows); size_param() reads both.
using param_values = std::map<std::string, std::int64_t>;

inline bool is_dynamic(param_values const& p, std::string const& name) {
  auto it = p.find(name + "?");
  return it != p.end() && it->second != 0;
}
// What a builder takes for a size parameter: run_time(name, value) when the user marked it
// dynamic, else compiled_in(value) (expr/size.hpp). Throws std::out_of_range for an unknown name.
inline size_expr size_param(param_values const& p, std::string const& name) {
  return is_dynamic(p, name) ? run_time(name, p.at(name)) : compiled_in(p.at(name));
}

struct kernel_entry {
  std::string name;
  std::string summary;
  std::vector<param_spec> params;
  std::function<ir::Kernel(param_values const&)> build;
  // Given every GMEM parameter's initial contents (in declaration order), writes what the
  // kernel's outputs must hold afterwards. Inputs it does not write stay as they are. A
  // workspace parameter's slot is there too (indices stay parameter ids), but it is no input:
  // a reference must not read it, and nothing compares what it holds afterwards.
  std::function<void(std::vector<host_tensor>&, param_values const&)> reference;
  // Optional. Rewrites the seeded random inputs (declaration order) where some must follow from
  // others: attention_hopper_bwd's LSE and delta are its forward pass's, computed from the random
  // Q, K, V and dO. Every run that draws inputs for a registered kernel calls it (entry_inputs).
  std::function<void(std::vector<host_tensor>&, param_values const&)> inputs;
};

// The inputs a run of a registered kernel draws: seeded_inputs(k, seed), then e.inputs.
std::vector<host_tensor> entry_inputs(kernel_entry const& e, param_values const& values, ir::Kernel const& k, std::uint64_t seed);

class registry {
 public:
  static registry& global();
  bool add(kernel_entry e);  // returns true so it can initialise a static
  kernel_entry const& find(std::string const& name) const;  // throws usage_error
  std::vector<kernel_entry const*> all() const;              // sorted by name

  // Defaults overridden by `overrides`, each checked against its spec. Throws usage_error.
  static param_values resolve(kernel_entry const& e, param_values const& overrides);
  // e.build(values). Values that pass their specs can still make a kernel its ops do not allow
  // (a grid of 0, a block that does not divide the shape): that is the caller's mistake, a
  // usage_error with the verifier's numbers and the values. Any other VerifyError stays one (a
  // bug in lowering or in a hand-built IR).
  static ir::Kernel build(kernel_entry const& e, param_values const& values);
  // "M=4096" -> {"M", 4096}; throws usage_error.
  static std::pair<std::string, std::int64_t> parse_assignment(std::string const& text);
  // The same, where the value may also be one of the parameter's names (param_spec::names);
  // an unknown name is a usage_error listing them.
  static std::pair<std::string, std::int64_t> parse_assignment(std::string const& text, kernel_entry const& e);

 private:
  std::map<std::string, kernel_entry> entries_;
};

template <long long V, long long...>
inline constexpr long long first_of = V;

// Calls f(int_c<V>) for the V among Vs equal to v: run-time parameter -> type-level parameter.
template <long long... Vs, class F>
auto dispatch(std::int64_t v, F&& f) {
  using R = decltype(f(int_c<first_of<Vs...>>));
  R result{};
  bool hit = ((v == Vs ? (result = f(int_c<Vs>), true) : false) || ...);
  if (!hit) throw usage_error("value " + std::to_string(v) + " is not one of the values this kernel was instantiated for");
  return result;
}

// Which values of a named parameter this translation unit instantiates. A kernel runner built
// for the edit loop (stagecraft_add_kernel_runner(... INSTANTIATE K=4)) compiles its kernel files
// with STAGECRAFT_INSTANTIATE="K=4": the named dispatch below then builds only the kernels it
// will run (add_one: one ring depth of six, a third of its compile). Every other build
// instantiates every listed value.
namespace detail {
static constexpr bool instantiated(std::string_view name, long long v) {  // static: its body depends on the TU's macro
#ifdef STAGECRAFT_INSTANTIATE
  constexpr std::string_view only = STAGECRAFT_INSTANTIATE;  // "K=4 S=2" (spaces or commas)
  for (std::size_t i = 0; i < only.size();) {
    while (i < only.size() && (only[i] == ' ' || only[i] == ',')) ++i;
    std::size_t eq = i;
    while (eq < only.size() && only[eq] != '=') ++eq;
    if (eq >= only.size()) return true;
    long long value = 0;
    bool negative = eq + 1 < only.size() && only[eq + 1] == '-';
    std::size_t j = eq + 1 + (negative ? 1 : 0);
    for (; j < only.size() && only[j] >= '0' && only[j] <= '9'; ++j) value = value * 10 + (only[j] - '0');
    if (only.substr(i, eq - i) == name) return v == (negative ? -value : value);
    i = j;
  }
#endif
  (void)name, (void)v;
  return true;
}
template <std::size_t N>
struct param_name {
  char text[N]{};
  constexpr param_name(const char (&s)[N]) {  // NOLINT: implicit from a literal, by design
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
  constexpr std::string_view view() const { return {text, N - 1}; }
};
}  // namespace detail

// dispatch<"K", 1, 2, 3>(values, f): f(int_c<V>) for the value of parameter "K" among the Vs,
// building only the Vs this translation unit instantiates (STAGECRAFT_INSTANTIATE, above).
template <detail::param_name Name, long long... Vs, class F>
auto dispatch(param_values const& values, F&& f) {
  constexpr long long first = [] {
    long long out = first_of<Vs...>;
    bool found = false;
    ((!found && detail::instantiated(Name.view(), Vs) ? (out = Vs, found = true) : false), ...);
    return out;
  }();
  static_assert(((detail::instantiated(Name.view(), Vs)) || ...),
                "STAGECRAFT_INSTANTIATE names a value of this parameter that its dispatch does not list");
  const std::string name(Name.view());
  const std::int64_t v = values.at(name);
  using R = decltype(f(int_c<first>));
  R result{};
  bool hit = false;
  (
      [&] {
        if constexpr (detail::instantiated(Name.view(), Vs))
          if (!hit && v == Vs) result = f(int_c<Vs>), hit = true;
      }(),
      ...);
  if (!hit) {
    const bool listed = ((v == Vs) || ...);
    throw usage_error(listed ? name + "=" + std::to_string(v) + ": this build instantiates only the values STAGECRAFT_INSTANTIATE names "
                                   "(a kernel runner's INSTANTIATE); run it with those, or through the CLI, which has every value"
                             : "value " + std::to_string(v) + " is not one of the values this kernel was instantiated for");
  }
  return result;
}

}  // namespace stagecraft

#define STAGECRAFT_CONCAT_(a, b) a##b
#define STAGECRAFT_CONCAT(a, b) STAGECRAFT_CONCAT_(a, b)
// At namespace scope in a kernel's translation unit: STAGECRAFT_REGISTER(entry_expression);
#define STAGECRAFT_REGISTER(...) \
  [[maybe_unused]] static const bool STAGECRAFT_CONCAT(stagecraft_registered_, __LINE__) = ::stagecraft::registry::global().add(__VA_ARGS__)
