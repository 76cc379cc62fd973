// Run-time extents at launch: a lowered kernel for other values of its run-time extents, and
// those values read off the tensors a caller passes.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stagecraft/ir/eval.hpp"
#include "stagecraft/ir/kernel.hpp"

namespace stagecraft::ir {

Kernel bind(Kernel const& k, std::map<std::string, std::int64_t> const& values) {
  Kernel b = k;
  for (auto const& [name, v] : values) {
    auto it = std::find_if(b.extents.begin(), b.extents.end(), [&key = name](Extent const& x) { return x.name == key; });
    if (it == b.extents.end()) {
      std::vector<std::string> names;
      for (auto const& x : k.extents) names.push_back(x.name);
      throw ConfigError(fmt::format("kernel '{}': '{}' is no run-time extent of it (its run-time extents: {})", k.name, name,
                                    names.empty() ? std::string("none, every size is compiled in") : fmt::format("{}", fmt::join(names, ", "))));
    }
    if (v < 1) throw ConfigError(fmt::format("kernel '{}': run-time extent {} = {}: an extent is at least 1", k.name, name, v));
    it->value = v;
  }
  for (auto& p : b.params) {
    for (std::size_t d = 0; d < p.extent.size(); ++d)
      if (p.run_time(d) && static_cast<std::size_t>(p.extent[d]) < b.extents.size()) p.shape[d] = b.extents[static_cast<std::size_t>(p.extent[d])].value;
    if (p.segments_extent >= 0 && static_cast<std::size_t>(p.segments_extent) < b.extents.size())
      p.segments = b.extents[static_cast<std::size_t>(p.segments_extent)].value;
  }
  for (std::size_t i = 0; i < 3; ++i) {
    const auto g = b.grid_expr[i];
    if (g == none || g < 0 || static_cast<std::size_t>(g) >= b.exprs.size()) continue;  // verify() names a bad one
    // 0 where it cannot be evaluated: verify() then says why, with the extents' values.
    b.grid[i] = eval_on_host(b, g).value.value_or(0);
  }
  verify(b);
  return b;
}

std::map<std::string, std::int64_t> extents_of(Kernel const& k, std::vector<std::vector<std::int64_t>> const& shapes) {
  std::map<std::string, std::int64_t> out;
  std::map<std::string, std::string> from;  // where each value was read
  for (std::size_t i = 0; i < k.params.size() && i < shapes.size(); ++i) {
    auto const& p = k.params[i];
    for (std::size_t d = 0; d < p.extent.size() && d < shapes[i].size(); ++d) {
      if (!p.run_time(d) || static_cast<std::size_t>(p.extent[d]) >= k.extents.size()) continue;
      auto const& name = k.extents[static_cast<std::size_t>(p.extent[d])].name;
      const auto where = fmt::format("'{}' dimension {}", p.name, d);
      auto [it, fresh] = out.try_emplace(name, shapes[i][d]);
      if (fresh) from[name] = where;
      else if (it->second != shapes[i][d])
        throw ConfigError(fmt::format("kernel '{}': run-time extent {} is {} in {} but {} in {}: tensors that share an extent must agree", k.name,
                                      name, it->second, from[name], shapes[i][d], where));
    }
  }
  return out;
}

Kernel bind_to(Kernel const& k, std::vector<std::vector<std::int64_t>> const& shapes) {
  if (k.extents.empty()) return k;
  return bind(k, extents_of(k, shapes));
}

}  // namespace stagecraft::ir
