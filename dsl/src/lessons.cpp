#include "stagecraft/lessons.hpp"

#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace stagecraft {

lesson_registry& lesson_registry::global() {
  static lesson_registry r;
  return r;
}

bool lesson_registry::add(lesson_entry e) {
  if (entries_.count(e.number)) throw std::logic_error(fmt::format("lesson {:02} is registered twice", e.number));
  const int n = e.number;
  entries_.emplace(n, std::move(e));
  return true;
}

lesson_entry const& lesson_registry::find(std::string const& key) const {
  int n = -1;
  auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), n);
  if (ec == std::errc() && end == key.data() + key.size()) {
    if (auto it = entries_.find(n); it != entries_.end()) return it->second;
    if (auto c = coming().find(n); c != coming().end())
      throw usage_error(fmt::format("lesson {:02} ({}) is not written yet: it arrives with its ops", n, c->second));
  }
  for (auto const& [_, e] : entries_)
    if (e.slug == key) return e;
  std::vector<std::string> known;
  for (auto const& [num, e] : entries_) known.push_back(fmt::format("{:02} {}", num, e.slug));
  throw usage_error(fmt::format("unknown lesson '{}' (known: {})", key, fmt::join(known, ", ")));
}

std::vector<lesson_entry const*> lesson_registry::all() const {
  std::vector<lesson_entry const*> out;
  for (auto const& [_, e] : entries_) out.push_back(&e);
  return out;
}

std::map<int, std::string> const& lesson_registry::coming() {
  static const std::map<int, std::string> c;
  return c;
}

}  // namespace stagecraft
