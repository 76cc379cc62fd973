// What every zoo test file asks of an exhibit: find it by name, and run its buggy variant to get
// the one diagnostic it exists for (of the expected check, naming the kernel and the op).
#pragma once
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <stagecraft/host/tensor.hpp>
#include <stagecraft/interp/interp.hpp>

#include "zoo.hpp"

namespace stagecraft::zoo {

inline entry const& find_entry(std::vector<entry> const& exhibits, std::string const& name) {
  for (auto const& e : exhibits)
    if (name == e.name) return e;
  FAIL("no zoo kernel named " << name);
  throw;  // unreachable: FAIL throws
}

// The buggy variant under policy p on seeded inputs (rewritten by e.inputs): exactly one diagnostic, of `expected`, at op.
inline interp::diagnostic only_diagnostic(entry const& e, interp::policy p, interp::check expected, int op, std::uint64_t input_seed) {
  const auto k = e.build(variant::buggy);
  interp::options o;
  o.schedule = p;
  auto in = seeded_inputs(k, input_seed);
  if (e.inputs) e.inputs(in);
  const auto r = interp::run(k, in, o);
  std::string all;
  for (auto const& d : r.diagnostics) all += d.message + "\n";
  INFO(e.name << ", policy " << interp::policy_name(p) << ", diagnostics:\n" << all);
  REQUIRE(r.diagnostics.size() == 1);
  auto const& d = r.diagnostics.front();
  REQUIRE(std::string(interp::check_name(d.kind)) == interp::check_name(expected));
  CHECK_THAT(d.message, Catch::Matchers::Contains("kernel '" + std::string(e.name) + "'"));
  CHECK(d.op == op);
  CHECK_THAT(d.message, Catch::Matchers::Contains("op #" + std::to_string(op) + " ("));
  return d;
}

// The buggy variant under policy p on seeded inputs: it fails, and its first diagnostic is the
// one under test (for exhibits whose kind or wording depends on the schedule).
inline interp::diagnostic first_diagnostic(entry const& e, interp::policy p, std::uint64_t input_seed) {
  const auto k = e.build(variant::buggy);
  interp::options o;
  o.schedule = p;
  auto in = seeded_inputs(k, input_seed);
  if (e.inputs) e.inputs(in);
  const auto r = interp::run(k, in, o);
  REQUIRE_FALSE(r.ok());
  auto const& d = r.diagnostics.front();
  INFO(e.name << ", policy " << interp::policy_name(p) << ": " << d.message);
  CHECK_THAT(d.message, Catch::Matchers::Contains("kernel '" + std::string(e.name) + "'"));
  return d;
}

}  // namespace stagecraft::zoo
