#include <catch2/catch.hpp>

#include <stagecraft/registry.hpp>

using namespace stagecraft;
using Catch::Matchers::Contains;

TEST_CASE("parameters resolve against their specs", "[registry]") {
  auto const& e = registry::global().find("add_one");
  auto v = registry::resolve(e, {{"K", 2}});
  CHECK(v.at("K") == 2);
  CHECK(v.at("M") == 512);
  REQUIRE_THROWS_WITH(registry::resolve(e, {{"K", 7}}), Contains("K=7 is not one of the values it is built for (1, 2, 3, 4, 5, 6)"));
  REQUIRE_THROWS_WITH(registry::resolve(e, {{"Q", 1}}), Contains("kernel 'add_one' has no parameter 'Q' (parameters: M, N, K, splits)"));
  REQUIRE_THROWS_WITH(registry::resolve(e, {{"N", 100}}), Contains("N=100 must be a multiple of 64"));
  REQUIRE_THROWS_WITH(registry::resolve(e, {{"M", 0}}), Contains("M=0 is outside [128,"));
  REQUIRE_THROWS_AS(registry::global().find("nope"), usage_error);
}

TEST_CASE("assignments parse strictly", "[registry]") {
  CHECK(registry::parse_assignment("K=3") == std::pair<std::string, std::int64_t>{"K", 3});
  CHECK(registry::parse_assignment("M=-4") == std::pair<std::string, std::int64_t>{"M", -4});
  REQUIRE_THROWS_AS(registry::parse_assignment("K"), usage_error);
  REQUIRE_THROWS_AS(registry::parse_assignment("=3"), usage_error);
  REQUIRE_THROWS_AS(registry::parse_assignment("K=3x"), usage_error);
  REQUIRE_THROWS_AS(registry::parse_assignment("K="), usage_error);
}

TEST_CASE("dispatch maps run-time values onto type-level ones", "[registry]") {
  auto square = [](auto K) { return decltype(K)::value * decltype(K)::value; };
  CHECK(dispatch<1, 2, 3>(2, square) == 4);
  CHECK(dispatch<1, 2, 3>(3, square) == 9);
  REQUIRE_THROWS_AS((dispatch<1, 2, 3>(4, square)), usage_error);
}

TEST_CASE("a kernel's own build rejects parameter combinations its specs cannot express", "[registry]") {
  auto const& e = registry::global().find("add_one");
  auto v = registry::resolve(e, {{"N", 192}, {"splits", 2}});
  REQUIRE_THROWS_WITH(e.build(v), Contains("N must be a multiple of 64 * splits"));
}
