// Every lesson: the correct kernel is clean and right under eager, lazy and 100 PCT schedules;
// every buggy twin gets exactly the diagnostic its lesson promises, under the schedule it names.
#include <catch2/catch.hpp>

#include <random>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/lessons.hpp>

using namespace stagecraft;

namespace {
std::vector<host_tensor> lesson_inputs(ir::Kernel const& k, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-2, 2);
  std::vector<host_tensor> out;
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < t.elements(); ++i) t.set(i, dist(rng));
    out.push_back(std::move(t));
  }
  return out;
}
interp::policy policy_of(std::string const& name) {
  if (name == "lazy") return interp::policy::lazy;
  if (name == "pct") return interp::policy::pct;
  return interp::policy::eager;
}
}  // namespace

TEST_CASE("there are at least thirteen lessons, numbered from 1 without gaps, and none is still coming", "[lessons]") {
  auto const all = lesson_registry::global().all();
  REQUIRE(all.size() >= 13);
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(all[i]->number == static_cast<int>(i) + 1);
  CHECK(lesson_registry::coming().empty());
}

TEST_CASE("every correct lesson is clean and right under eager, lazy and 100 PCT schedules", "[lessons]") {
  for (auto const* l : lesson_registry::global().all()) {
    INFO("lesson " << l->number << " " << l->slug);
    const auto k = l->build();
    const auto inputs = lesson_inputs(k, 100 + l->number);
    auto expected = inputs;
    l->reference(expected);
    for (auto p : {interp::policy::eager, interp::policy::lazy}) {
      const auto r = interp::run(k, inputs, {.schedule = p});
      INFO("policy " << interp::policy_name(p) << ": " << (r.ok() ? "" : r.diagnostics.front().message));
      REQUIRE(r.ok());
      // Tensor-core lessons sum in the tensor core's order: within the MMA bound; the rest bit exact.
      const auto tol = interp::tolerance_of(k, r, inputs);
      for (int out : interp::written_params(k)) {
        if (!tol) {
          CHECK(r.buffers[out].bytes == expected[out].bytes);
          continue;
        }
        std::int64_t off = 0;
        for (std::int64_t i = 0; i < expected[out].elements(); ++i)
          off += !tol->within(r.buffers[out].get(i), expected[out].get(i), expected[out].dtype, out);
        CHECK(off == 0);
      }
    }
    const auto ex = interp::explore(k, inputs, {.schedule = interp::policy::pct, .seed = 1}, 100);
    INFO((ex.failure ? ex.failure->diagnostics.front().message : std::string()));
    CHECK(ex.schedules == 100);
    CHECK_FALSE(ex.failing_seed);
  }
}

TEST_CASE("every variant of a lesson is correct too: it differs in speed only", "[lessons]") {
  for (auto const* l : lesson_registry::global().all())
    for (auto const& v : l->variants) {
      INFO("lesson " << l->number << " variant " << v.name << " (" << v.change << ")");
      const auto k = v.build();
      const auto inputs = lesson_inputs(k, 11);
      auto expected = inputs;
      l->reference(expected);
      const auto r = interp::run(k, inputs, {.schedule = interp::policy::lazy});
      INFO((r.ok() ? std::string() : r.diagnostics.front().message));
      REQUIRE(r.ok());
      const auto tol = interp::tolerance_of(k, r, inputs);
      REQUIRE(tol);
      for (int out : interp::written_params(k))
        for (std::int64_t i = 0; i < expected[out].elements(); ++i)
          REQUIRE(tol->within(r.buffers[out].get(i), expected[out].get(i), expected[out].dtype, out));
      const auto ex = interp::explore(k, inputs, {.schedule = interp::policy::pct, .seed = 1}, 100);
      INFO((ex.failure ? ex.failure->diagnostics.front().message : std::string()));
      CHECK_FALSE(ex.failing_seed);
    }
}

TEST_CASE("every buggy twin gets the diagnostic its lesson names", "[lessons]") {
  for (auto const* l : lesson_registry::global().all())
    for (auto const& t : l->twins) {
      INFO("lesson " << l->number << " twin " << t.name << " (" << t.mistake << ")");
      CHECK(!t.hardware.empty());
      CHECK(!t.fix.empty());
      const auto k = t.build();
      // A twin that needs a preemption names pct: the first failing schedule of 50 must show it.
      const auto inputs = lesson_inputs(k, 7);
      const auto ex = interp::explore(k, inputs, {.schedule = policy_of(t.policy), .seed = 1}, t.policy == "pct" ? 50 : 1);
      auto const r = ex.failure ? *ex.failure : interp::run(k, inputs, {.schedule = policy_of(t.policy)});
      REQUIRE_FALSE(r.ok());
      INFO(r.diagnostics.front().message);
      CHECK(std::string(interp::check_name(r.diagnostics.front().kind)) == t.expect);
    }
}
