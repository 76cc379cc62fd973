#include <catch2/catch.hpp>

#include <fmt/format.h>

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
  REQUIRE_THROWS_WITH(registry::resolve(registry::global().find("handoff"), {{"N", 102}}), Contains("N=102 must be a multiple of 4"));
  REQUIRE_THROWS_WITH(registry::resolve(e, {{"M", 0}}), Contains("M=0 is outside [1,"));
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

TEST_CASE("a parameter's named values stand for their numbers, and an unknown name lists the names", "[registry]") {
  auto const& e = registry::global().find("gemm_blackwell_mx");
  using kv = std::pair<std::string, std::int64_t>;
  CHECK(registry::parse_assignment("fmt=nvfp4", e) == kv{"fmt", 4});
  CHECK(registry::parse_assignment("fmt=mxfp4", e) == kv{"fmt", 3});
  CHECK(registry::parse_assignment("fmt=mxfp8", e) == kv{"fmt", 1});
  CHECK(registry::parse_assignment("fmt=2", e) == kv{"fmt", 2});    // numbers still work
  CHECK(registry::parse_assignment("K=512", e) == kv{"K", 512});    // parameters without names
  REQUIRE_THROWS_WITH(registry::parse_assignment("fmt=fp16", e),
                      Contains("'fmt=fp16': fmt has no value named 'fp16' (its names: mxfp8 (1), mxfp8_e5m2 (2), mxfp4 (3), nvfp4 (4), mxfp6 (5), mxfp6_e3m2 (6), "
                               "mxfp8_mxfp4 (7))"));
  REQUIRE_THROWS_AS(registry::parse_assignment("K=big", e), usage_error);  // no names: not an integer
}

TEST_CASE("dispatch maps run-time values onto type-level ones", "[registry]") {
  auto square = [](auto K) { return decltype(K)::value * decltype(K)::value; };
  CHECK(dispatch<1, 2, 3>(2, square) == 4);
  CHECK(dispatch<1, 2, 3>(3, square) == 9);
  REQUIRE_THROWS_AS((dispatch<1, 2, 3>(4, square)), usage_error);
}

TEST_CASE("a kernel's own build rejects parameter combinations its specs cannot express", "[registry]") {
  auto const& e = registry::global().find("add_one");
  auto v = registry::resolve(e, {{"N", 100}, {"splits", 3}});  // two column blocks of 64 for three CTAs
  REQUIRE_THROWS_WITH(e.build(v), Contains("add_one: splits = 3 CTAs per row strip, but N = 100 has only 2 column blocks of 64 (take splits <= 2)"));
}

TEST_CASE("registry::build: what the verifier rejects for the chosen values is a usage error, with them", "[registry]") {
  auto entry = [](std::function<ir::Kernel(param_values const&)> build) {
    return kernel_entry{.name = "k", .summary = "", .params = {{.name = "M", .default_value = 1, .help = ""}}, .build = std::move(build),
                        .reference = {}};
  };
  // A ConfigError carries the verifier's numbers; registry::build adds the values behind them.
  auto config = entry([](param_values const& p) -> ir::Kernel {
    throw ir::ConfigError(fmt::format("kernel 'k': grid dimension 0 must be at least 1, got {}", p.at("M") / 128));
  });
  REQUIRE_THROWS_MATCHES(registry::build(config, {{"M", 64}}), usage_error,
                         Catch::Matchers::Message("kernel 'k': grid dimension 0 must be at least 1, got 0 (parameters M=64)"));
  // Any other verifier failure is malformed IR (a bug in lowering), not the caller's: it stays.
  auto malformed = entry([](param_values const&) -> ir::Kernel { throw ir::VerifyError("kernel 'k': op #3 (store): refers to value 9"); });
  REQUIRE_THROWS_AS(registry::build(malformed, {{"M", 64}}), ir::VerifyError);
}

TEST_CASE("the verifier reports launch configurations and shapes it cannot run as ConfigError, malformed IR as VerifyError", "[registry]") {
  auto const& e = registry::global().find("add_one");
  const ir::Kernel good = e.build(registry::resolve(e, {}));  // grid (4, 2), x and y (512, 1024) in 128x64 blocks
  auto k = good;
  k.grid[1] = 0;
  // One line, with no source location: the value at fault came from the command line.
  REQUIRE_THROWS_MATCHES(ir::verify(k), ir::ConfigError, Catch::Matchers::Message("kernel 'add_one': grid dimension 1 must be at least 1, got 0"));
  k = good;
  k.cluster_rank = 1;
  k.cluster[0] = 8;
  REQUIRE_THROWS_AS(ir::verify(k), ir::ConfigError);
  REQUIRE_THROWS_WITH(ir::verify(k), Contains("grid dimension 0 (4) must be a multiple of the cluster dimension (8)"));
  k = good;
  k.params[0].shape[0] = 100;  // TMA blocks may overhang the array, but not exceed it
  REQUIRE_THROWS_AS(ir::verify(k), ir::ConfigError);
  REQUIRE_THROWS_WITH(ir::verify(k), Contains("the block shape (128, 64) is larger than the shape (100, 1024) of parameter 'x'"));
  k.params[0].shape[0] = 200;
  REQUIRE_NOTHROW(ir::verify(k));
  k = good;
  k.body = static_cast<ir::StmtId>(k.stmts.size());
  try {
    ir::verify(k);
    FAIL("a body that does not exist verified");
  } catch (ir::ConfigError const&) {
    FAIL("malformed IR reported as a configuration the caller chose");
  } catch (ir::VerifyError const&) {
  }
}

TEST_CASE("a parameter's allowed values are its whole rule: 0 needs no .min = 0 beside them", "[registry]") {
  // Issue 27 item 3: `.allowed = {0, 1}` alone rejected 0 (the default .min = 1 still applied).
  auto build = [](param_values const&) -> ir::Kernel { throw ir::ConfigError("not built in this test"); };
  kernel_entry e{.name = "k",
                 .summary = "",
                 .params = {{.name = "flag", .default_value = 1, .help = "", .allowed = {0, 1}},
                            {.name = "neg", .default_value = -3, .help = "", .allowed = {-3, 5, 1000}},
                            {.name = "both", .default_value = 0, .help = "", .allowed = {0, 2}, .min = 0},
                            {.name = "M", .default_value = 64, .help = "", .min = 64, .multiple_of = 64}},
                 .build = build,
                 .reference = {}};
  CHECK(registry::resolve(e, {{"flag", 0}}).at("flag") == 0);
  CHECK(registry::resolve(e, {{"flag", 1}}).at("flag") == 1);
  CHECK(registry::resolve(e, {{"neg", -3}}).at("neg") == -3);
  CHECK(registry::resolve(e, {{"neg", 5}}).at("neg") == 5);   // not a multiple of anything, no range
  CHECK(registry::resolve(e, {{"both", 0}}).at("both") == 0);  // the older spelling keeps working
  REQUIRE_THROWS_WITH(registry::resolve(e, {{"flag", 2}}), Contains("flag=2 is not one of the values it is built for (0, 1)"));
  REQUIRE_THROWS_WITH(registry::resolve(e, {{"neg", 4}}), Contains("neg=4 is not one of the values it is built for (-3, 5, 1000)"));
  // Without .allowed the range and the multiple still apply.
  REQUIRE_THROWS_WITH(registry::resolve(e, {{"M", 0}}), Contains("M=0 is outside [64,"));
  REQUIRE_THROWS_WITH(registry::resolve(e, {{"M", 96}}), Contains("M=96 must be a multiple of 64"));
  // The examples that spell both keep accepting 0.
  CHECK(registry::resolve(registry::global().find("splitk_cluster"), {{"tma", 0}}).at("tma") == 0);
  CHECK(registry::resolve(registry::global().find("splitk_cluster"), {{"tma", 1}}).at("tma") == 1);
}
