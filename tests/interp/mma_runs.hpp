// What the MMA interpreter tests share: a run is correct when every output element is within the
// documented MMA tolerance of the reference (interp::tolerance_of; in fast math mode plus the
// fast-math bound), under eager, lazy and PCT. outside_bound applies the predicate `run` applies.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/registry.hpp>

#include "inputs.hpp"

namespace stagecraft::testing {

// The first output element outside the MMA bound, as text ("" when every one is within it).
inline std::string outside_bound(ir::Kernel const& k, interp::result const& r, std::vector<host_tensor> const& in,
                          std::vector<host_tensor> const& expected) {
  const auto tol = interp::tolerance_of(k, r, in);
  const auto outs = interp::written_params(k);
  // Integer outputs (s8/u8 MMA into s32) have no tolerance: they compare exactly.
  const bool exact = std::none_of(outs.begin(), outs.end(), [&](int p) { return ir::dtype_is_float(k.params[p].dtype); });
  if (!tol && !exact) return "no MMA tolerance: the run read no accumulator or TMEM";
  for (int p : outs)
    for (std::int64_t i = 0; i < r.buffers[p].elements(); ++i) {
      const double got = r.buffers[p].get(i), want = expected[p].get(i), bound = tol ? tol->bound(want, r.buffers[p].dtype, p) : 0.0;
      if (tol ? !tol->within(got, want, r.buffers[p].dtype, p) : got != want)
        return k.params[p].name + "[" + std::to_string(i) + "] = " + std::to_string(got) + ", reference " + std::to_string(want) +
               ", bound " + std::to_string(bound);
    }
  return "";
}

// $STAGECRAFT_TEST_PCT_CAP, where it is set, caps the PCT schedules of every run_everywhere. The
// sanitizer step sets it to 10 (scripts/sanitize.sh): ASan and UBSan look for memory errors and
// undefined behaviour on the paths a run takes, which eager, lazy and ten PCT schedules walk, and
// at 50 the attention tests were 250 s of that step's test time; the search of many schedules for
// protocol bugs is the g++ and clang builds', which run every count as written.
inline int pct_cap(int pct_schedules) {
  const char* cap = std::getenv("STAGECRAFT_TEST_PCT_CAP");
  return cap != nullptr && *cap != '\0' ? std::min(pct_schedules, std::atoi(cap)) : pct_schedules;
}

// math: the interpreter's math mode; fast runs are compared within the MMA bound plus the fast-math
// bound (interp.hpp), which tolerance_of adds for a fast run.
inline void run_everywhere(ir::Kernel const& k, std::vector<host_tensor> const& in, std::vector<host_tensor> const& expected, int pct_schedules,
                           ir::math_mode math = ir::math_mode::exact) {
  pct_schedules = pct_cap(pct_schedules);
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    INFO(k.name << ", policy " << interp::policy_name(p) << ", math " << ir::math_mode_name(math));
    const auto r = interp::run(k, in, {.schedule = p, .math = math});
    INFO((r.ok() ? std::string() : r.diagnostics.front().message));
    REQUIRE(r.ok());
    CHECK(outside_bound(k, r, in, expected) == "");
  }
  for (int s = 0; s < pct_schedules; ++s) {
    INFO(k.name << ", policy pct --seed " << s << ", math " << ir::math_mode_name(math));
    const auto r = interp::run(k, in, {.schedule = interp::policy::pct, .seed = static_cast<std::uint64_t>(s), .math = math});
    INFO((r.ok() ? std::string() : r.diagnostics.front().message));
    REQUIRE(r.ok());
    REQUIRE(outside_bound(k, r, in, expected) == "");
  }
}

// A registered kernel at `set`, run everywhere (run_everywhere) on seeded inputs against its
// reference, then once more eagerly for the caller's checks of the result and its tolerance.
struct registered_run {
  param_values vals;
  ir::Kernel kernel;
  std::vector<host_tensor> in, expected;
  interp::result result;
  std::optional<interp::mma_tolerance> tol;  // none: integer outputs, compared exactly
};
inline registered_run run_registered(std::string const& name, param_values const& set, std::uint64_t seed, int pct_schedules) {
  auto const& e = registry::global().find(name);
  registered_run x;
  x.vals = registry::resolve(e, set);
  x.kernel = e.build(x.vals);
  x.in = random_buffers(x.kernel, seed);
  x.expected = x.in;
  e.reference(x.expected, x.vals);
  run_everywhere(x.kernel, x.in, x.expected, pct_schedules);
  x.result = interp::run(x.kernel, x.in);
  x.tol = interp::tolerance_of(x.kernel, x.result, x.in);
  return x;
}

// The interpreter is far inside the (hardware-sized) fp8 bound: its f32 accumulator of exact
// fp8 products ends at most one bf16 ulp from the reference's rounding of the exact sum.
inline void within_one_bf16_ulp(host_tensor const& got, host_tensor const& want) {
  for (std::int64_t i = 0; i < got.elements(); ++i) {
    const double w = want.get(i);
    REQUIRE(std::abs(got.get(i) - w) <= std::ldexp(std::abs(w), -7) + 1e-30);
  }
}

}  // namespace stagecraft::testing
