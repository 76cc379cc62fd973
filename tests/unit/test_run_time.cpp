// Run-time extents (expr/size.hpp, ir::bind): a size marked dynamic is a launch argument, the
// IR (and so the JIT cache key) is the same for all its values, a lowered kernel re-bound to a
// value equals the kernel lowered at it, and every mistake is named.
#include <catch2/catch.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/lower.hpp>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {

ir::Kernel build(std::string const& name, param_values const& set) {
  auto const& e = registry::global().find(name);
  return registry::build(e, registry::resolve(e, set));
}

struct sweep {
  std::string kernel, size;
  param_values fixed;
  std::vector<std::int64_t> values;
};

// The examples that take a run-time size, each at sizes with and without a partial last tile.
const std::vector<sweep> sweeps = {
    {"softmax_rows", "M", {}, {1000, 16, 333, 1024}},
    {"gemm_hopper", "M", {{"N", 1000}, {"K", 1000}}, {1000, 128, 777, 4096}},
    {"gemm_hopper", "M", {{"ctas", 132}, {"cluster", 1}, {"stages", 3}}, {1000, 129, 8192}},
    {"attention_hopper", "S", {{"causal", 1}}, {1000, 64, 4099}},
    {"attention_hopper", "S", {{"BK", 128}, {"overlap", 1}}, {1000, 128, 4096}},
    {"gemm_small", "M", {}, {1000, 64, 257}},
    {"gemm_small", "M", {{"int8", 2}, {"K", 256}}, {256, 65}},
    {"gemm_splitk", "M", {}, {256, 65}},
    {"gemm_fp8", "M", {{"scaled", 1}}, {256, 129}},
    {"gemm_blackwell", "M", {}, {256, 200}},
    {"gemm_blackwell_ts", "M", {}, {256, 300}},
    {"gemm_grouped", "T", {}, {600, 64, 1000}},
    {"attention_varlen", "T", {{"causal", 1}}, {300, 64, 777}},
};

param_values with(param_values set, std::string const& name, std::int64_t v, bool dynamic) {
  set[name] = v;
  if (dynamic) set[name + "?"] = 1;
  return set;
}

}  // namespace

TEST_CASE("a size marked dynamic is one IR for all its values, and bind() gives the kernel lowering gives", "[run_time]") {
  for (auto const& s : sweeps) {
    const auto k0 = build(s.kernel, with(s.fixed, s.size, s.values[0], true));
    INFO(s.kernel << " --dynamic " << s.size);
    REQUIRE(k0.extents.size() == 1);
    CHECK(k0.extents[0].name == s.size);
    CHECK(k0.extents[0].value == s.values[0]);
    CHECK_THAT(ir::print(k0), Contains(fmt::format("{}={}", s.size, s.values[0])));
    for (auto v : s.values) {
      INFO(s.size << "=" << v);
      const auto kv = build(s.kernel, with(s.fixed, s.size, v, true));
      CHECK(ir::hash(kv) == ir::hash(k0));  // the JIT cache key's part of the kernel
      CHECK(ir::bind(k0, {{s.size, v}}) == kv);
      // Compiled in, the size is part of the kernel: another value is another kernel.
      const auto ks = build(s.kernel, with(s.fixed, s.size, v, false));
      CHECK(ks.extents.empty());
      CHECK(ir::hash(ks) != ir::hash(k0));
      CHECK(ks.grid == kv.grid);
      CHECK(ks.params == ir::bind(ks, {}).params);
    }
  }
}

TEST_CASE("sizes fold while compiled in and build expressions at run time", "[run_time]") {
  const auto a = ceil_div(compiled_in(1000), 128) * 2 + 1;
  CHECK_FALSE(a.run_time);
  CHECK(a.value == 17);
  REQUIRE(a.node);
  CHECK(a.node->op == ir::ExprOp::constant);
  CHECK(a.node->value == 17);
  const auto m = run_time("M", 1000);
  CHECK(m.extent >= 0);
  const auto b = ceil_div(m, 128);
  CHECK(b.run_time);
  CHECK(b.value == 8);
  CHECK(b.extent == -2);  // an expression: no parameter's dimension may be it
  CHECK(b.node->op == ir::ExprOp::div);
  CHECK(min(b, 5).value == 5);
  CHECK(max(compiled_in(3), 5).node->value == 5);
  CHECK((compiled_in(1) * m).extent == m.extent);  // 1 * M is M (a parameter's dimension may be it)
  CHECK((m + 0).node->op == ir::ExprOp::extent);
  // With a loop variable or a program_id, a size is an index like any other.
  const auto i = program_id(0_c) * m;
  CHECK(i.node->op == ir::ExprOp::mul);
}

TEST_CASE("run-time extents: each mistake names the kernel, the size and the values", "[run_time]") {
  auto const& gemm = registry::global().find("gemm_hopper");
  REQUIRE_THROWS_WITH(registry::resolve(gemm, {{"N?", 1}}),
                      Contains("kernel 'gemm_hopper': N cannot be a run-time extent (--dynamic N): the parameters that can are M"));
  REQUIRE_THROWS_WITH(registry::resolve(registry::global().find("add_one"), {{"M?", 1}}),
                      Contains("M cannot be a run-time extent (--dynamic M): every size of this kernel is compiled in"));

  const auto k = build("gemm_hopper", {{"M", 1000}, {"M?", 1}});
  REQUIRE_THROWS_WITH(ir::bind(k, {{"N", 512}}), Contains("kernel 'gemm_hopper': 'N' is no run-time extent of it (its run-time extents: M)"));
  REQUIRE_THROWS_WITH(ir::bind(k, {{"M", 0}}), Contains("kernel 'gemm_hopper': run-time extent M = 0: an extent is at least 1"));
  REQUIRE_THROWS_AS(ir::bind(k, {{"M", 0}}), ir::ConfigError);

  // The launch reads M off the tensors: 'a' and 'c' must agree.
  auto shapes = std::vector<std::vector<std::int64_t>>{{1000, 256}, {512, 256}, {900, 512}};
  REQUIRE_THROWS_WITH(ir::extents_of(k, shapes), Contains("run-time extent M is 1000 in 'a' dimension 0 but 900 in 'c' dimension 0"));
  shapes[2][0] = 1000;
  CHECK(ir::extents_of(k, shapes) == std::map<std::string, std::int64_t>{{"M", 1000}});

  // An extent no parameter has: a launch could not know it.
  auto loose = [] {
    auto T = run_time("T", 64);
    return kernel<sm_90a>("loose", grid(1_c), threads(1_c), gmem<f32>("x", shape(64_c)),
                          [&](auto x) { return for_(range(T), [&](auto) { return store(x.tile(shape(64_c), 0_c), 1.0f); }); });
  };
  REQUIRE_THROWS_WITH(lower(loose()), Contains("kernel 'loose': an index expression reads run-time extent 'T', which is no parameter's dimension"));
  // A parameter's run-time dimension is one extent, not an expression of some.
  auto doubled = [] {
    auto M = run_time("M", 64);
    return kernel<sm_90a>("doubled", grid(1_c), threads(1_c), gmem<f32>("x", shape(M * 2, 64_c)),
                          [&](auto x) { return store(x.tile(shape(64_c, 64_c), 0_c, 0_c), 1.0f); });
  };
  REQUIRE_THROWS_WITH(lower(doubled()), Contains("dimension 0 of parameter 'x' is an expression of run-time extents"));

  // A segment table over a run-time T: T is the packed parameters' extent, and bind() moves the
  // table's contract (it ends at T) with it.
  const auto grouped = build("gemm_grouped", {{"T", 600}, {"T?", 1}});
  CHECK_THAT(ir::print(grouped), Contains("param offsets: gmem i32[5?] segments of T=600 rows"));
  CHECK(ir::bind(grouped, {{"T", 4096}}).params[1].segments == 4096);
  auto over_sum = [] {
    auto T = run_time("T", 64);
    return kernel<sm_90a>("over_sum", grid(1_c), threads(1_c), gmem<f32>("x", shape(T, 64_c)), segment_offsets("t", 2, T + 1),
                          [&](auto x, auto) { return store(x.tile(shape(64_c, 64_c), masked(), 0_c, 0_c), 1.0f); });
  };
  REQUIRE_THROWS_WITH(lower(over_sum()), Contains("segment table 't' counts its rows with an expression of run-time extents, not one extent"));
}

TEST_CASE("a launch takes run-time extents from its tensors: the interpreter runs softmax_rows --dynamic M at any M", "[run_time]") {
  const auto k = build("softmax_rows", {{"M", 1000}, {"M?", 1}});
  for (std::int64_t M : {333, 16, 2000}) {
    INFO("M=" << M);
    const auto km = ir::bind(k, {{"M", M}});
    auto inputs = seeded_inputs(km, 7);
    auto expected = inputs;
    registry::global().find("softmax_rows").reference(expected, {{"M", M}, {"K", 2}});
    const auto r = interp::run(k, inputs);  // k was lowered at M = 1000: the run binds M = this
    REQUIRE(r.ok());
    CHECK(first_difference(r.buffers[1], expected[1]) == -1);
  }
  // x and y must agree on M.
  auto inputs = seeded_inputs(ir::bind(k, {{"M", 64}}), 7);
  inputs[1] = host_tensor::zeros(ir::DType::f32, {48, 128});
  REQUIRE_THROWS_WITH(interp::run(k, inputs), Contains("run-time extent M is 64 in 'x' dimension 0 but 48 in 'y' dimension 0"));
}

TEST_CASE("a run-time grid is checked: constants and extents only, and the value it gives", "[run_time]") {
  const auto k = build("softmax_rows", {{"M", 1000}, {"M?", 1}});
  REQUIRE(k.grid_expr[0] != ir::none);
  auto pid = std::find_if(k.exprs.begin(), k.exprs.end(), [](ir::Expr const& e) { return e.op == ir::ExprOp::program_id; });
  REQUIRE(pid != k.exprs.end());
  auto reads_pid = k;
  reads_pid.grid_expr[0] = static_cast<ir::ExprId>(pid - k.exprs.begin());
  REQUIRE_THROWS_WITH(ir::verify(reads_pid), Contains("grid dimension 0 reads program_id: a grid is computed on the host"));
  auto wrong = k;
  wrong.grid[0] += 1;
  REQUIRE_THROWS_WITH(ir::verify(wrong), Contains("grid dimension 0 is 17, but its expression gives 16 for M=1000"));
}

TEST_CASE("bind() re-verifies: a size the kernel's blocks cannot take is refused at launch in lowering's words", "[run_time]") {
  // Generic tiles of 64 rows over x (M, 64) without a mask: M must be a multiple of 64. Lowered
  // at 128 the kernel is fine; at 100 the verifier's rule for a block that does not divide its
  // parameter applies, at bind() as it would have at lowering.
  auto make = [](std::int64_t m) {
    auto M = run_time("M", m);
    return lower(kernel<sm_90a>("rows64", grid(ceil_div(M, 64)), threads(1_c), gmem<f32>("x", shape(M, 64_c)), [&](auto x) {
      auto t = x.tile(shape(64_c, 64_c), program_id(0_c), 0_c);
      return store(t, load(t) + 1.0f);
    }));
  };
  const auto k = make(128);
  CHECK(k.grid[0] == 2);
  CHECK(ir::bind(k, {{"M", 640}}).grid[0] == 10);
  std::string lowered, bound;
  try {
    (void)make(100);
  } catch (ir::ConfigError const& e) {
    lowered = e.what();
  }
  try {
    (void)ir::bind(k, {{"M", 100}});
  } catch (ir::ConfigError const& e) {
    bound = e.what();
  }
  INFO(lowered);
  REQUIRE_FALSE(lowered.empty());
  CHECK(bound == lowered);
}
