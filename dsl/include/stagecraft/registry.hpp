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
#include <vector>

#include "stagecraft/core/static_int.hpp"
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
};

using param_values = std::map<std::string, std::int64_t>;

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
};

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

}  // namespace stagecraft

#define STAGECRAFT_CONCAT_(a, b) a##b
#define STAGECRAFT_CONCAT(a, b) STAGECRAFT_CONCAT_(a, b)
// At namespace scope in a kernel's translation unit: STAGECRAFT_REGISTER(entry_expression);
#define STAGECRAFT_REGISTER(...) \
  [[maybe_unused]] static const bool STAGECRAFT_CONCAT(stagecraft_registered_, __LINE__) = ::stagecraft::registry::global().add(__VA_ARGS__)
