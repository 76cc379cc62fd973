// The tile algebra in the interpreter: every op against a C++ reference written from its
// documented semantics, bit for bit, under eager, lazy and PCT schedules; and the verifier's
// view of a hand-broken reduction.
#include <catch2/catch.hpp>

#include <cstring>

#include <stagecraft/interp/interp.hpp>
#include <stagecraft/ir/tile_view.hpp>
#include <stagecraft/registry.hpp>

#include "row_state_kernels.hpp"
#include "tile_ops_kernels.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {
std::string first_difference(ir::Kernel const& k, std::vector<host_tensor> const& got, std::vector<host_tensor> const& want) {
  for (int p : interp::written_params(k))
    for (std::int64_t i = 0; i < got[p].elements(); ++i) {
      const auto w = static_cast<std::size_t>(ir::dtype_bits(got[p].dtype) / 8);
      if (std::memcmp(got[p].bytes.data() + i * w, want[p].bytes.data() + i * w, w) != 0)
        return k.params[p].name + "[" + std::to_string(i) + "] = " + std::to_string(got[p].get(i)) + ", reference " + std::to_string(want[p].get(i));
    }
  return {};
}
}  // namespace

TEST_CASE("tile ops: math, reductions, broadcast, iota and fills equal their references bit for bit under eager, lazy and 50 PCT schedules",
          "[interp][tile_ops]") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    for (auto& c : testing::tile_ops::all()) {
      INFO("kernel " << c.name << ", input seed " << seed);
      const auto in = testing::tile_ops::inputs(c.kernel, seed);
      auto want = in;
      c.reference(want);
      for (auto p : {interp::policy::eager, interp::policy::lazy}) {
        auto r = interp::run(c.kernel, in, {.schedule = p});
        for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
        REQUIRE(r.ok());
        const auto diff = first_difference(c.kernel, r.buffers, want);
        INFO("policy " << interp::policy_name(p) << ": " << diff);
        CHECK(diff.empty());
      }
      if (seed == 1) {
        auto ex = interp::explore(c.kernel, in, {.schedule = interp::policy::pct, .seed = 77}, 50);
        REQUIRE(ex.schedules == 50);
        REQUIRE_FALSE(ex.failing_seed);
      }
    }
  }
}

TEST_CASE("tile ops: the softmax row sums to one and a row reduction of a constant row is exact", "[interp][tile_ops]") {
  // Independent of the reference above: properties a wrong axis or a wrong broadcast breaks.
  auto c = testing::tile_ops::all()[1];
  const auto in = testing::tile_ops::inputs(c.kernel, 9);
  auto r = interp::run(c.kernel, in, {});
  REQUIRE(r.ok());
  auto const& sm = r.buffers[7];
  for (std::int64_t row = 0; row < testing::tile_ops::rows; ++row) {
    double s = 0, mx = 0;
    for (std::int64_t col = 0; col < testing::tile_ops::cols; ++col) s += sm.get(row * testing::tile_ops::cols + col), mx = std::max(mx, sm.get(row * testing::tile_ops::cols + col));
    CHECK(s == Approx(1.0).epsilon(1e-5));
    CHECK(mx <= 1.0);
  }
  // row_max of row r is the largest x of that row, not of a column.
  for (std::int64_t row = 0; row < testing::tile_ops::rows; ++row) {
    double mx = -1e30;
    for (std::int64_t col = 0; col < testing::tile_ops::cols; ++col) mx = std::max(mx, in[0].get(row * testing::tile_ops::cols + col));
    CHECK(r.buffers[3].get(row) == mx);
  }
}

TEST_CASE("tile ops: the verifier rejects a reduction whose axis or shape does not fit, naming the value", "[interp][tile_ops]") {
  auto k = testing::tile_ops::reduce_kernel();
  std::size_t at = 0;
  for (std::size_t i = 0; i < k.values.size(); ++i)
    if (k.values[i].op == ir::ValueOp::reduce_sum) { at = i; break; }
  REQUIRE(at > 0);
  {
    auto bad = k;
    bad.values[at].scalar = 2;
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains("tile value " + std::to_string(at) + " (sum) has axis 2, expected an integer in [0, 2)"));
  }
  {
    auto bad = k;
    bad.values[at].scalar = 0;  // (64, 32) -> (64) is axis 1 removed, not axis 0
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains("tile value " + std::to_string(at) + " (sum<0>) maps shape (64, 32) to (64)"));
  }
  {
    auto bad = k;
    bad.values[at].scalar = 0.5;
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains("has axis 0.5, expected an integer"));
  }
}

TEST_CASE("tile ops: masks stay in registers and are only made by comparisons, select and fma take three operands", "[interp][tile_ops]") {
  auto k = testing::tile_ops::select_kernel();
  {
    auto bad = k;
    bad.params[3].dtype = ir::DType::pred;
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains("parameter 'causal' has dtype pred, a register mask with no memory layout"));
  }
  std::size_t cmp = 0, sel = 0;
  for (std::size_t i = 0; i < k.values.size(); ++i) {
    if (ir::value_is_compare(k.values[i].op) && !cmp) cmp = i;
    if (k.values[i].op == ir::ValueOp::select && !sel) sel = i;
  }
  REQUIRE(cmp > 0);
  REQUIRE(sel > 0);
  {
    auto bad = k;
    bad.values[cmp].dtype = ir::DType::i32;  // a comparison must give a mask
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains("is a comparison of dtype i32, expected pred"));
  }
  {
    auto bad = k;
    bad.values[sel].a = bad.values[sel].b;  // the condition is the f32 value, not a mask
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains("(select): Expected a pred mask and two f32 operands"));
  }
  {
    auto bad = k;
    bad.values[cmp].c = 0;  // a binary op with a third operand
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains("has a third operand, but takes at most two"));
  }
  {
    auto bad = k;
    bad.values[sel].c = ir::none;
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains("(select) refers to value -1"));
  }
}

TEST_CASE("tile views: the verifier rejects a view it cannot decode, naming the value and why", "[interp][tile_ops]") {
  auto k = testing::tile_ops::view_kernel();
  auto first = [&](ir::ValueOp op) {
    for (std::size_t i = 0; i < k.values.size(); ++i)
      if (k.values[i].op == op) return i;
    return std::size_t{0};
  };
  const auto perm = first(ir::ValueOp::permute), re = first(ir::ValueOp::reshape), sl = first(ir::ValueOp::slice);
  REQUIRE(perm > 0);
  REQUIRE(re > 0);
  REQUIRE(sl > 0);
  const auto id = [](std::size_t i) { return "tile value " + std::to_string(i); };
  {
    auto bad = k;
    bad.values[perm].scalar = ir::pack_permutation({0, 0});  // axis 0 twice
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains(id(perm) + " (permute, parameter 0)") && Contains("not a permutation of the axes"));
  }
  {
    auto bad = k;
    bad.values[perm].scalar = ir::pack_permutation({0, 1});  // the identity, but the result is (32, 64) of a (64, 32)
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains("of (64, 32) as (32, 64) is no view: the result's extents are not the operand's, permuted"));
  }
  {
    auto bad = k;
    bad.values[re].shape = {4, 16, 16};  // half the elements
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains(id(re) + " (reshape") && Contains("the element counts differ"));
  }
  {
    auto bad = k;
    bad.values[sl].scalar = ir::pack_slice(1, 20);  // columns 20 .. 35 of 32
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains(id(sl) + " (slice, parameter 161)") && Contains("the slice runs past the end of the axis"));
  }
  {
    auto bad = k;
    bad.values[sl].scalar = -8;
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains("its parameter is not a non-negative integer"));
  }
  for (double corrupt : {std::nan(""), 1e300, -1e300}) {
    // Rejected IR still prints (the fuzzer's contract); converting these to an integer would be
    // undefined behaviour, which the sanitizer build reports.
    auto bad = k;
    bad.values[sl].scalar = corrupt;
    bad.values[perm].scalar = corrupt;
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains("its parameter is not a non-negative integer"));
    CHECK_THAT(ir::print(bad), Contains("slice<7>(") && Contains("permute<7, 7>("));
  }
  {
    auto bad = k;
    bad.values[sl].dtype = ir::DType::i32;
    REQUIRE_THROWS_WITH(ir::verify(bad), Contains(id(sl) + " (slice) changes the dtype"));
  }
}

TEST_CASE("tile views: a transposed tile stored twice through SMEM is the input again, under 50 PCT schedules", "[interp][tile_ops]") {
  // Independent of any reference: transpose is its own inverse, and the transpose example's
  // block walk (TMA in, SMEM transpose, TMA out) covers every element once.
  auto const& e = registry::global().find("transpose");
  const auto vals = registry::resolve(e, {{"M", 64}, {"N", 96}, {"K", 3}});
  const auto k = e.build(vals);
  auto in = testing::tile_ops::inputs(k, 5);
  auto r = interp::run(k, in, {});
  REQUIRE(r.ok());
  for (std::int64_t row = 0; row < 64; ++row)
    for (std::int64_t col = 0; col < 96; ++col) REQUIRE(r.buffers[1].get(col * 64 + row) == in[0].get(row * 96 + col));
  auto ex = interp::explore(k, in, {.schedule = interp::policy::pct, .seed = 3}, 50);
  REQUIRE(ex.schedules == 50);
  REQUIRE_FALSE(ex.failing_seed);
}

TEST_CASE("row state in accumulators: an online softmax over three blocks equals its reference bit for bit under eager, lazy and 50 PCT schedules",
          "[interp][tile_ops][row_state]") {
  const auto k = testing::row_state::online_softmax_kernel();
  for (std::uint64_t seed : {1u, 2u}) {
    INFO("input seed " << seed);
    const auto in = testing::row_state::inputs(k, seed);
    auto want = in;
    testing::row_state::reference(want, testing::row_state::sum_in_order);
    for (auto p : {interp::policy::eager, interp::policy::lazy}) {
      auto r = interp::run(k, in, {.schedule = p});
      for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
      REQUIRE(r.ok());
      INFO("policy " << interp::policy_name(p));
      CHECK(first_difference(k, r.buffers, want).empty());
    }
  }
  auto ex = interp::explore(k, testing::row_state::inputs(k, 1), {.schedule = interp::policy::pct, .seed = 77}, 50);
  REQUIRE(ex.schedules == 50);
  REQUIRE_FALSE(ex.failing_seed);
}

TEST_CASE("row state in accumulators: a row vector read before it is written is reported, naming op and element", "[interp][tile_ops][row_state]") {
  // The running max must be initialised before the first block: without store(m, -1e30f) the
  // first max(m, max<1>(S)) reads registers nothing wrote.
  auto s = shape(64_c, 64_c);
  auto r = shape(64_c);
  const auto k = lower(kernel<sm_90a>("acc_rowmax_uninit", grid(1), threads(1_c), gmem<f32>("x", s), gmem<f32>("y", r), accumulator<f32>("S", s),
                                      accumulator<f32>("m", r), [=](auto x, auto y, auto S, auto m) {
                                        return seq(store(S, load(x.tile(s, 0_c, 0_c))), store(m, max(load(m), max<1>(load(S)))),
                                                   store(y.tile(r, 0_c), load(m)));
                                      }));
  const auto in = testing::row_state::inputs(k, 1);
  const auto res = interp::run(k, in, {.schedule = interp::policy::eager});
  REQUIRE_FALSE(res.ok());
  CHECK_THAT(res.diagnostics.front().message, Contains("poison-read: kernel 'acc_rowmax_uninit', op #2 (store)") && Contains("reads acc1[0]"));
}

TEST_CASE("row state in accumulators: one attention block step (wgmma S, online softmax, P V from registers) is within the bf16 P bound",
          "[interp][tile_ops][row_state][wgmma]") {
  // P is rounded to bf16 for the second wgmma while l sums the f32 P: each O element is off by
  // at most 2^-8 sum_j p_j |v_j| / l <= 2^-8 max|V|, plus f32 accumulation and exp2's ulp
  // (2^-12 max|V| covers them for K = 64 and |q|, |k| <= 1).
  const auto k = testing::row_state::attention_block_kernel();
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<host_tensor> in;
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < t.elements(); ++i) t.set(i, unit(rng));
    in.push_back(std::move(t));
  }
  auto want = in;
  testing::row_state::attention_block_reference(want);
  double vmax = 0;
  for (std::int64_t i = 0; i < in[2].elements(); ++i) vmax = std::max(vmax, std::abs(in[2].get(i)));
  const double bound = vmax * (std::ldexp(1.0, -8) + std::ldexp(1.0, -12));
  auto check = [&](interp::result const& r) {
    for (auto const& d : r.diagnostics) UNSCOPED_INFO(d.message);
    REQUIRE(r.ok());
    double worst = 0;
    for (std::int64_t i = 0; i < want[3].elements(); ++i) worst = std::max(worst, std::abs(r.buffers[3].get(i) - want[3].get(i)));
    INFO("largest error " << worst << ", bound " << bound);
    CHECK(worst <= bound);
    CHECK(worst > 0);  // P really is rounded: an exact match would mean the bound tests nothing
  };
  for (auto p : {interp::policy::eager, interp::policy::lazy}) check(interp::run(k, in, {.schedule = p}));
  for (std::uint64_t s = 0; s < 50; ++s) check(interp::run(k, in, {.schedule = interp::policy::pct, .seed = s}));
}

// ---- sub-views of SMEM views (the kernels are in smem_view_kernels.hpp; tile_ops::all() runs smem_views above) ----

TEST_CASE("SMEM sub-views: a run-time start past the view is reported with its numbers", "[interp][smem_views]") {
  // range(10) is a run-time trip count: j * 16 has no static range, so the interpreter checks it.
  const auto k = lower(kernel<sm_90a>("sub_oob", grid(1), threads(1_c), gmem<f32>("y", shape(16_c, 64_c)), smem<f32>("rows", shape(128_c, 64_c)),
                                      [](auto y, auto buf) {
                                        return seq(store(buf, full<f32>(shape(128_c, 64_c), 1.0f)), for_(range(10), [&](auto j) {
                                                     return store(y.tile(shape(16_c, 64_c), 0_c, 0_c), load(slice<0>(buf, j * 16_c, 16_c)));
                                                   }));
                                      }));
  const auto r = interp::run(k, testing::tile_ops::inputs(k, 4));
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].kind == interp::check::index_out_of_range);
  CHECK_THAT(r.diagnostics[0].message, Contains("kernel 'sub_oob'") && Contains("SMEM offset is out of bounds") &&
                                           Contains("takes a sub-view of 16 elements from 128 in dimension 0 of rows, which has 128 elements"));
}

namespace {
// A TMA store reads rows 64..127 of the view until wait_smem_to_gmem; a generic store of 8 rows
// from `first` before that wait races it exactly when those rows overlap the sub-view.
template <long long First>
ir::Kernel store_under_tma_read() {
  return lower(kernel<sm_90a>("sub_race", grid(1), threads(1_c), gmem<f32>("x", shape(128_c, 64_c)), gmem<f32>("y", shape(64_c, 64_c)),
                              smem<f32>(shape(128_c, 64_c)), barrier(arrivals(1_c)), [](auto x, auto y, auto buf, auto full_bar) {
                                return seq(copy_gmem_to_smem(x.block(0_c, 0_c), buf, full_bar), barrier_wait(full_bar),
                                           copy_smem_to_gmem(slice<0>(buf, 64_c, 64_c), y.block(0_c, 0_c)), commit_smem_to_gmem_group(),
                                           store(slice<0>(buf, int_c<First>, 8_c), full<f32>(shape(8_c, 64_c), 2.0f)), wait_smem_to_gmem(0_c));
                              }));
}
}  // namespace

TEST_CASE("SMEM sub-views: races are judged at the sub-view's rows", "[interp][smem_views]") {
  for (auto p : {interp::policy::eager, interp::policy::lazy}) {
    INFO("policy " << interp::policy_name(p));
    const auto apart = store_under_tma_read<56>();  // rows 56..63: outside the stored half
    const auto ra = interp::run(apart, testing::tile_ops::inputs(apart, 1), {.schedule = p});
    for (auto const& d : ra.diagnostics) UNSCOPED_INFO(d.message);
    CHECK(ra.ok());
    const auto overlap = store_under_tma_read<60>();  // rows 60..67: 64..67 are being read by the TMA store
    const auto ro = interp::run(overlap, testing::tile_ops::inputs(overlap, 1), {.schedule = p});
    REQUIRE_FALSE(ro.diagnostics.empty());
    CHECK(ro.diagnostics[0].kind == interp::check::data_race);
    CHECK_THAT(ro.diagnostics[0].message, Contains("kernel 'sub_race'"));
  }
}

TEST_CASE("SMEM sub-views: the verifier checks hand-built sub-views", "[interp][smem_views]") {
  auto k = testing::tile_ops::smem_view_kernel();
  ir::verify(k);
  // The TMA store of rows 64..127 cut to their columns 0..31 as well: no dense box any more.
  bool cut = false;
  for (auto& s : k.stmts)
    if (s.op == ir::StmtOp::copy_smem_to_gmem && !k.refs[s.refs[0]].block.empty()) {
      k.refs[s.refs[0]].shape = {64, 32};
      k.refs[s.refs[1]].shape = {64, 32};
      cut = true;
      break;
    }
  REQUIRE(cut);
  REQUIRE_THROWS_WITH(ir::verify(k), Contains("a TMA box is dense in SMEM, but the sub-view (64, 32)"));
  // An origin past the end.
  auto k2 = testing::tile_ops::smem_view_kernel();
  for (auto& r : k2.refs)
    if (r.base == ir::RefBase::alloc && !r.block.empty() && r.shape == std::vector<std::int64_t>{128, 32}) {
      k2.exprs.push_back({ir::ExprOp::constant, 40});
      r.block[1] = static_cast<ir::ExprId>(k2.exprs.size() - 1);
      cut = false;
      break;
    }
  REQUIRE_FALSE(cut);
  REQUIRE_THROWS_WITH(ir::verify(k2), Contains("SMEM offset is out of bounds: a sub-view of extent 32 from 40 in a dimension of 64"));
}
