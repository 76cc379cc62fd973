#include "narrate.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

#include <fmt/format.h>

namespace stagecraft::cli {
namespace {

// "wg1" -> "warpgroup 1"; engines keep their names ("tma load").
std::string who(interp::trace const& t, interp::trace_event const& e) {
  const std::string lane = e.lane >= 0 && e.lane < static_cast<int>(t.lanes.size()) ? t.lanes[e.lane] : "?";
  const std::string name = lane.rfind("wg", 0) == 0 ? "warpgroup " + lane.substr(2) : lane;
  return t.ctas > 1 ? fmt::format("CTA {} {}", e.cta, name) : name;
}

// Does `label` name barrier `b` ("b1" matches "b1[0]" and "b1 ", not "b12")?
bool names(std::string const& label, std::string const& b) {
  for (auto at = label.find(b); at != std::string::npos; at = label.find(b, at + 1)) {
    const bool starts = at == 0 || !std::isalnum(static_cast<unsigned char>(label[at - 1]));
    const auto after = at + b.size();
    const bool ends = after == label.size() || !std::isdigit(static_cast<unsigned char>(label[after]));
    if (starts && ends) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> narrate(interp::trace const& t, std::string const& barrier) {
  // (time, order, text): an async op is told twice, when issued and when it completes.
  std::vector<std::tuple<std::uint64_t, std::size_t, std::string>> lines;
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    auto const& e = t.events[i];
    if (!barrier.empty() && e.what != interp::trace_event::kind::diagnostic && !names(e.label, barrier)) continue;
    const std::string op = e.op >= 0 ? fmt::format(" (op #{})", e.op) : "";
    switch (e.what) {
      case interp::trace_event::kind::op:
        lines.emplace_back(e.t0, i, fmt::format("{}: {}{}{}", who(t, e), e.label, op,
                                                e.t1 > e.t0 + 1 ? fmt::format(", blocked until step {}", e.t1) : ""));
        break;
      case interp::trace_event::kind::async:
        lines.emplace_back(e.t0, i, fmt::format("{}: {}{} starts", who(t, e), e.label, op));
        lines.emplace_back(e.t1, i, fmt::format("{}: {}{} completes", who(t, e), e.label, op));
        break;
      case interp::trace_event::kind::phase:
      case interp::trace_event::kind::arrival:
        lines.emplace_back(e.t0, i, fmt::format("{}: {}", t.ctas > 1 ? fmt::format("CTA {} barrier", e.cta) : std::string("barrier"), e.label));
        break;
      case interp::trace_event::kind::diagnostic:
        lines.emplace_back(e.t0, i, fmt::format("{}: DIAGNOSTIC {}{}", who(t, e), e.label, op));
        break;
    }
  }
  std::stable_sort(lines.begin(), lines.end(), [](auto const& a, auto const& b) { return std::get<0>(a) < std::get<0>(b); });
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (auto const& [time, _, text] : lines) out.push_back(fmt::format("step {:>5}  {}", time, text));
  return out;
}

}  // namespace stagecraft::cli
