#include <cctype>
#include "stagecraft/registry.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace stagecraft {

registry& registry::global() {
  static registry r;
  return r;
}

bool registry::add(kernel_entry e) {
  if (entries_.count(e.name)) throw std::logic_error("kernel '" + e.name + "' is registered twice");
  auto name = e.name;
  entries_.emplace(std::move(name), std::move(e));
  return true;
}

kernel_entry const& registry::find(std::string const& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    std::vector<std::string> names;
    for (auto const& [n, _] : entries_) names.push_back(n);
    throw usage_error(fmt::format("unknown kernel '{}' (known: {})", name, fmt::join(names, ", ")));
  }
  return it->second;
}

std::vector<kernel_entry const*> registry::all() const {
  std::vector<kernel_entry const*> out;
  for (auto const& [_, e] : entries_) out.push_back(&e);
  return out;
}

param_values registry::resolve(kernel_entry const& e, param_values const& overrides) {
  param_values v;
  for (auto const& p : e.params) v[p.name] = p.default_value;
  for (auto const& [key, value] : overrides) {
    // "M?": M marked dynamic (--dynamic M), which only a run_time parameter may be.
    if (key.empty() || key.back() != '?') continue;
    const auto name = key.substr(0, key.size() - 1);
    auto it = std::find_if(e.params.begin(), e.params.end(), [&](param_spec const& p) { return p.name == name; });
    if (it == e.params.end() || !it->run_time) {
      std::vector<std::string> names;
      for (auto const& p : e.params)
        if (p.run_time) names.push_back(p.name);
      throw usage_error(fmt::format("kernel '{}': {} cannot be a run-time extent (--dynamic {}): {}", e.name, name, name,
                                    names.empty() ? std::string("every size of this kernel is compiled in")
                                                  : fmt::format("the parameters that can are {}", fmt::join(names, ", "))));
    }
    v[key] = 1;
  }
  for (auto const& [name, value] : overrides) {
    if (!name.empty() && name.back() == '?') continue;
    // Init-capture: clang 14 cannot capture a structured binding.
    auto it = std::find_if(e.params.begin(), e.params.end(), [&key = name](param_spec const& p) { return p.name == key; });
    if (it == e.params.end()) {
      std::vector<std::string> names;
      for (auto const& p : e.params) names.push_back(p.name);
      throw usage_error(fmt::format("kernel '{}' has no parameter '{}' (parameters: {})", e.name, name,
                                    names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
    }
    // A listed set of values is the whole rule: .min's default of 1 must not reject a listed 0.
    if (!it->allowed.empty()) {
      if (std::find(it->allowed.begin(), it->allowed.end(), value) == it->allowed.end())
        throw usage_error(fmt::format("kernel '{}': {}={} is not one of the values it is built for ({})", e.name, name, value,
                                      fmt::join(it->allowed, ", ")));
      v[name] = value;
      continue;
    }
    if (value < it->min || value > it->max)
      throw usage_error(fmt::format("kernel '{}': {}={} is outside [{}, {}]", e.name, name, value, it->min, it->max));
    if (value % it->multiple_of != 0)
      throw usage_error(fmt::format("kernel '{}': {}={} must be a multiple of {}", e.name, name, value, it->multiple_of));
    v[name] = value;
  }
  return v;
}

ir::Kernel registry::build(kernel_entry const& e, param_values const& values) {
  try {
    return e.build(values);
  } catch (ir::ConfigError const& err) {
    std::vector<std::string> set;
    for (auto const& [n, v] : values) set.push_back(fmt::format("{}={}", n, v));
    throw usage_error(fmt::format("{} (parameters {})", err.what(), set.empty() ? std::string("none") : fmt::format("{}", fmt::join(set, " "))));
  }
}

std::pair<std::string, std::int64_t> registry::parse_assignment(std::string const& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw usage_error(fmt::format("'{}' is not of the form name=value", text));
  std::int64_t value = 0;
  auto const* first = text.data() + eq + 1;
  auto const* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc{} || ptr != last) throw usage_error(fmt::format("'{}': the value '{}' is not an integer", text, text.substr(eq + 1)));
  return {text.substr(0, eq), value};
}

std::pair<std::string, std::int64_t> registry::parse_assignment(std::string const& text, kernel_entry const& e) {
  const auto eq = text.find('=');
  if (eq != std::string::npos && eq > 0 && eq + 1 < text.size()) {
    const std::string name = text.substr(0, eq), value = text.substr(eq + 1);
    auto spec = std::find_if(e.params.begin(), e.params.end(), [&](param_spec const& p) { return p.name == name; });
    if (spec != e.params.end() && !spec->names.empty() && !value.empty() && (std::isalpha(static_cast<unsigned char>(value[0])) || value[0] == '_')) {
      for (auto const& [n, v] : spec->names)
        if (n == value) return {name, v};
      std::vector<std::string> known;
      for (auto const& [n, v] : spec->names) known.push_back(fmt::format("{} ({})", n, v));
      throw usage_error(fmt::format("'{}': {} has no value named '{}' (its names: {})", text, name, value, fmt::join(known, ", ")));
    }
  }
  return parse_assignment(text);
}

}  // namespace stagecraft

namespace stagecraft {

std::vector<host_tensor> entry_inputs(kernel_entry const& e, param_values const& values, ir::Kernel const& k, std::uint64_t seed) {
  auto t = seeded_inputs(k, seed);
  if (e.inputs) e.inputs(t, values);
  return t;
}

}  // namespace stagecraft
