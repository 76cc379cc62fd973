// What the MMA interpreter tests share: a run is correct when every output element is within the
// documented MMA tolerance of the reference (interp::tolerance_of), under eager, lazy and PCT.
#pragma once
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <stagecraft/interp/interp.hpp>

namespace stagecraft::testing {

// The first output element outside the MMA bound, as text ("" when every one is within it).
inline std::string outside_bound(ir::Kernel const& k, interp::result const& r, std::vector<host_tensor> const& in,
                          std::vector<host_tensor> const& expected) {
  const auto tol = interp::tolerance_of(k, r, in);
  if (!tol) return "no MMA tolerance: the run read no accumulator or TMEM";
  for (int p : interp::written_params(k))
    for (std::int64_t i = 0; i < r.buffers[p].elements(); ++i) {
      const double got = r.buffers[p].get(i), want = expected[p].get(i), bound = tol->bound(want, r.buffers[p].dtype);
      if (!(std::abs(got - want) <= bound))
        return k.params[p].name + "[" + std::to_string(i) + "] = " + std::to_string(got) + ", reference " + std::to_string(want) +
               ", bound " + std::to_string(bound);
    }
  return "";
}

inline void run_everywhere(ir::Kernel const& k, std::vector<host_tensor> const& in, std::vector<host_tensor> const& expected, int pct_schedules) {
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    INFO(k.name << ", policy " << interp::policy_name(p));
    const auto r = interp::run(k, in, {.schedule = p});
    INFO((r.ok() ? std::string() : r.diagnostics.front().message));
    REQUIRE(r.ok());
    CHECK(outside_bound(k, r, in, expected) == "");
  }
  for (int s = 0; s < pct_schedules; ++s) {
    INFO(k.name << ", policy pct --seed " << s);
    const auto r = interp::run(k, in, {.schedule = interp::policy::pct, .seed = static_cast<std::uint64_t>(s)});
    INFO((r.ok() ? std::string() : r.diagnostics.front().message));
    REQUIRE(r.ok());
    REQUIRE(outside_bound(k, r, in, expected) == "");
  }
}

}  // namespace stagecraft::testing
