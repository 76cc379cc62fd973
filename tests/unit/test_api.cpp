// The C++ API on a user's own arrays: interp::run over host_views reads the inputs from them and
// writes the outputs back, with exactly what the copying entry point computes.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/registry.hpp>

using namespace stagecraft;
using Catch::Matchers::Contains;

TEST_CASE("interp::run_in_place writes the outputs into the user's arrays", "[api]") {
  auto const& e = registry::global().find("handoff");
  const auto k = e.build(registry::resolve(e, {}));  // x, z, y: (256, 512) f32
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-2, 2);
  std::vector<float> x(256 * 512), z(256 * 512), y(256 * 512, -7.0f);
  for (auto& v : x) v = dist(rng);
  for (auto& v : z) v = dist(rng);
  const host_view arrays[] = {view(std::span(x), {256, 512}), view(std::span(z), {256, 512}), view(std::span(y), {256, 512})};
  const auto r = interp::run_in_place(k, arrays, {.schedule = interp::policy::pct, .seed = 3});
  REQUIRE(r.ok());
  CHECK(r.buffers.empty());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < y.size(); ++i) wrong += y[i] != x[i] * 2.0f + z[i];
  CHECK(wrong == 0);

  // The same as the copying entry point, bit for bit.
  std::vector<host_tensor> copies;
  for (auto const& a : arrays) {
    auto t = host_tensor::zeros(a.dtype, a.shape);
    copies.push_back(std::move(t));
  }
  std::memcpy(copies[0].bytes.data(), x.data(), x.size() * 4);
  std::memcpy(copies[1].bytes.data(), z.data(), z.size() * 4);
  const auto c = interp::run(k, copies, {.schedule = interp::policy::pct, .seed = 3});
  CHECK(std::memcmp(c.buffers[2].bytes.data(), y.data(), y.size() * 4) == 0);
  CHECK(c.steps == r.steps);
}

TEST_CASE("interp::run_in_place rejects arrays that do not fit, naming the parameter", "[api]") {
  auto const& e = registry::global().find("handoff");
  const auto k = e.build(registry::resolve(e, {}));
  std::vector<float> a(256 * 512), b(256 * 512), short_y(100);
  const host_view wrong_size[] = {view(std::span(a), {256, 512}), view(std::span(b), {256, 512}), view(std::span(short_y), {256, 512})};
  REQUIRE_THROWS_WITH(interp::run_in_place(k, wrong_size, {}), Contains("handoff") && Contains("'y'") && Contains("400 bytes"));
  const host_view too_few[] = {view(std::span(a), {256, 512})};
  REQUIRE_THROWS_WITH(interp::run_in_place(k, too_few, {}), Contains("takes 3 arrays"));
  std::vector<std::int32_t> ints(256 * 512);
  const host_view wrong_type[] = {view(std::span(a), {256, 512}), view(std::span(ints), {256, 512}), view(std::span(b), {256, 512})};
  REQUIRE_THROWS_AS(interp::run_in_place(k, wrong_type, {}), std::invalid_argument);
}
