// Partial tiles (issue 25): a TMA block may overhang its array. A load fills the outside with
// zeros and still completes the whole box's bytes (expect_tx counts the box, as the hardware
// signals it); a store writes only the part inside, and nothing when the box lies wholly
// outside. A load wholly outside is reported: it would load nothing but fill.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <catch2/catch.hpp>
#include <stagecraft/interp/interp.hpp>
#include <stagecraft/stagecraft.hpp>

#include "inputs.hpp"
#include "nan_fill_kernels.hpp"

using namespace stagecraft;
using Catch::Matchers::Contains;

namespace {

// x (100, 64): block 1 of 64 rows covers rows 64..99 and 28 rows of padding. The tile lands in
// buf, goes out whole through a generic store into y (128 rows: block 1 is rows 64..127), and by
// TMA into z (100 rows: block 1 is partial) and into z's block `far` (2: wholly outside).
template <bool FarLoad>
ir::Kernel overhang() {
  return lower(kernel<sm_90a>(
      "overhang", grid(1), threads(1_c), gmem<f32>("x", shape(100_c, 64_c)), gmem<f32>("y", shape(128_c, 64_c)),
      gmem<f32>("z", shape(100_c, 64_c)), smem<f32>(shape(64_c, 64_c)), smem<f32>(shape(64_c, 64_c)), barrier(arrivals(1_c), count(2_c)),
      [&](auto x, auto y, auto z, auto buf, auto spare, auto full) {
        auto far = program_id() + 2_c;
        auto far_load = [&] {
          if constexpr (FarLoad) return seq(copy_gmem_to_smem(x.block(far, 0_c), spare, full[1_c]), barrier_wait(full[1_c]));
          else return seq();
        }();
        return seq(copy_gmem_to_smem(x.block(1_c, 0_c), buf, full[0_c]), barrier_wait(full[0_c]), far_load,
                   store(y.tile(shape(64_c, 64_c), 1_c, 0_c), load(buf)),
                   copy_smem_to_gmem(buf, z.block(1_c, 0_c)), copy_smem_to_gmem(buf, z.block(far, 0_c)), commit_smem_to_gmem_group(),
                   wait_smem_to_gmem(0_c));
      }));
}

}  // namespace

TEST_CASE("an overhanging TMA load fills zeros and completes the whole box, an overhanging store drops the outside", "[interp][shapes]") {
  const auto k = overhang<false>();
  const auto inputs = testing::random_buffers(k, 11);
  for (auto policy : {interp::policy::eager, interp::policy::lazy}) {
    auto r = interp::run(k, inputs, {.schedule = policy, .trace = true});
    REQUIRE(r.ok());
    auto x = inputs[0].as<float>();
    auto y = r.buffers[1].as<float>();
    auto z = r.buffers[2].as<float>();
    auto z0 = inputs[2].as<float>();
    for (int row = 64; row < 128; ++row)
      for (int c = 0; c < 64; ++c) {
        const float want = row < 100 ? x[static_cast<std::size_t>(row * 64 + c)] : 0.0f;  // the fill: zeros
        REQUIRE(y[static_cast<std::size_t>(row * 64 + c)] == want);
      }
    // z: rows 64..99 written from the tile, rows 0..63 untouched; the wholly outside store wrote nothing.
    for (int row = 0; row < 100; ++row)
      for (int c = 0; c < 64; ++c) {
        const auto i = static_cast<std::size_t>(row * 64 + c);
        REQUIRE(z[i] == (row >= 64 ? x[i] : z0[i]));
      }
    // The barrier completed on the whole box's 16384 bytes, not the 9216 inside the array.
    const bool whole_box = std::any_of(r.timeline.events.begin(), r.timeline.events.end(), [](auto const& e) {
      return e.label.find("16384 B landed, 0 tx bytes") != std::string::npos;
    });
    CHECK(whole_box);
  }
}

TEST_CASE("a TMA load wholly outside its array is a runaway index", "[interp][shapes]") {
  const auto k = overhang<true>();
  auto r = interp::run(k, testing::random_buffers(k, 12), {.schedule = interp::policy::eager});
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.diagnostics[0].kind == interp::check::index_out_of_range);
  CHECK_THAT(r.diagnostics[0].message, Contains("addresses block 2 of 'x' in dimension 0, but (100, 64) blocks of (64, 64) cover only [0, 2) there "
                                                 "(the TMA box would lie wholly outside the array and load only its fill)"));
}

// Masked generic tiles (issue 25 item 2): x.tile(shape, masked(fill), ...) may overhang its
// array; every element is predicated. x (100, 50) f32 and n (100, 50) i32; block (1, 0) of a
// (64, 64) tile covers rows 64..99 and columns 0..49 of the array and 28 rows and 14 columns of
// padding. The loaded tiles go out whole (exact (128, 64) arrays), and through masked tiles of
// the same shape as x, which drop the padding.
namespace {
template <int Block>
ir::Kernel masked_tiles() {
  return lower(kernel<sm_90a>(
      "masked_tiles", grid(1), threads(1_c), gmem<f32>("x", shape(100_c, 50_c)), gmem<i32>("n", shape(100_c, 50_c)),
      gmem<f32>("whole_x", shape(128_c, 64_c)), gmem<i32>("whole_n", shape(128_c, 64_c)), gmem<f32>("y", shape(100_c, 50_c)),
      gmem<i32>("m", shape(100_c, 50_c)), [&](auto x, auto n, auto whole_x, auto whole_n, auto y, auto m) {
        auto X = load(x.tile(shape(64_c, 64_c), masked(-INFINITY), int_c<Block>, 0_c));
        auto N = load(n.tile(shape(64_c, 64_c), masked(7), int_c<Block>, 0_c));
        return seq(store(whole_x.tile(shape(64_c, 64_c), 1_c, 0_c), X), store(whole_n.tile(shape(64_c, 64_c), 1_c, 0_c), N),
                   store(y.tile(shape(64_c, 64_c), masked(), int_c<Block>, 0_c), X + 1.0f),
                   store(m.tile(shape(64_c, 64_c), masked(), int_c<Block>, 0_c), N * 2));
      }));
}
}  // namespace

TEST_CASE("a masked tile reads its fill outside the array and a store through one drops the outside", "[interp][shapes][masked]") {
  const auto k = masked_tiles<1>();
  const auto inputs = testing::random_buffers(k, 21);
  for (auto policy : {interp::policy::eager, interp::policy::lazy}) {
    auto r = interp::run(k, inputs, {.schedule = policy});
    REQUIRE(r.ok());
    auto x = inputs[0].as<float>();
    auto n = inputs[1].as<std::int32_t>();
    auto wx = r.buffers[2].as<float>();
    auto wn = r.buffers[3].as<std::int32_t>();
    auto y = r.buffers[4].as<float>();
    auto y0 = inputs[4].as<float>();
    auto m = r.buffers[5].as<std::int32_t>();
    auto m0 = inputs[5].as<std::int32_t>();
    for (int row = 64; row < 128; ++row)
      for (int c = 0; c < 64; ++c) {
        const bool in = row < 100 && c < 50;
        const auto w = static_cast<std::size_t>(row * 64 + c), a = static_cast<std::size_t>(row * 50 + c);
        REQUIRE(wx[w] == (in ? x[a] : -INFINITY));
        REQUIRE(wn[w] == (in ? n[a] : 7));
      }
    for (int row = 0; row < 100; ++row)  // rows 0..63 are untouched, 64..99 written
      for (int c = 0; c < 50; ++c) {
        const auto a = static_cast<std::size_t>(row * 50 + c);
        REQUIRE(y[a] == (row >= 64 ? x[a] + 1.0f : y0[a]));
        REQUIRE(m[a] == (row >= 64 ? n[a] * 2 : m0[a]));
      }
  }
}

TEST_CASE("a masked tile wholly outside its array is a runaway index", "[interp][shapes][masked]") {
  const auto k = masked_tiles<2>();
  auto r = interp::run(k, testing::random_buffers(k, 22), {.schedule = interp::policy::eager});
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.diagnostics[0].kind == interp::check::index_out_of_range);
  CHECK_THAT(r.diagnostics[0].message, Contains("addresses block 2 of 'x' in dimension 0, but (100, 50) blocks of (64, 64) cover only [0, 2) there "
                                                 "(the masked tile would lie wholly outside the array: nothing of it is the array's)"));
}

TEST_CASE("the verifier keeps masks to generic loads and stores of GMEM, and fills to values of the dtype", "[verify][masked]") {
  SECTION("a tile larger than its array, or not dividing it, needs a mask, and the error says so") {
    auto k = masked_tiles<1>();
    for (auto& r : k.refs) r.fill.reset();
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("the block shape (64, 64) is larger than the shape (100, 50) of parameter 'x'") && Contains("masked("));
    for (auto& p : k.params) p.shape[1] = p.shape[1] == 50 ? 128 : p.shape[1];  // (100, 128): tiles of 64 fit, but do not divide 100
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("does not divide the shape (100, 128) of parameter 'x'") && Contains("masked("));
  }
  SECTION("a fill that is not an i32") {
    auto k = masked_tiles<1>();
    for (auto& r : k.refs)
      if (r.fill && *r.fill == 7) r.fill = 7.5;
    REQUIRE_THROWS_AS(ir::verify(k), ir::ConfigError);
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("the fill 7.5 of a masked tile of parameter 'n' is not a value of its dtype i32"));
  }
  SECTION("a mask on a TMA store's block (a TMA load's may ask for TMA's own fills: 0 or NaN)") {
    auto k = overhang<false>();
    for (auto& s : k.stmts)
      if (s.op == ir::StmtOp::copy_gmem_to_smem) k.refs[s.refs[0]].fill = 0.0;
    REQUIRE_NOTHROW(ir::verify(k));
    for (auto& s : k.stmts)
      if (s.op == ir::StmtOp::copy_smem_to_gmem) k.refs[s.refs[1]].fill = 0.0;
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("takes a masked GMEM tile (fill 0), but only generic loads and stores predicate their elements"));
  }
  SECTION("a fill on an SMEM view") {
    auto k = overhang<false>();
    for (auto& s : k.stmts)
      if (s.op == ir::StmtOp::copy_gmem_to_smem) k.refs[s.refs[1]].fill = 0.0;
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("a fill (0) belongs to masked GMEM tiles, not to allocation"));
  }
}

// TMA's NaN fill (issue 25 item 1): x.block(masked(NAN), ...) asks the tensor map for
// OOB_FILL_NAN_REQUEST_ZERO_FMA; what overhangs lands as the OOB-NaN's bits (ir/types.hpp) and
// the barrier still counts the whole box.
TEMPLATE_TEST_CASE("a TMA load's masked(NAN) block fills the overhang with NaN, bit for bit", "[interp][shapes][nan_fill]", f32, bf16, f16) {
  const auto k = testing::nan_fill_probe<TestType>("nan_fill_probe");
  const auto inputs = testing::random_buffers(k, 31);
  const auto eb = static_cast<std::size_t>(ir::dtype_bits(k.params[0].dtype) / 8);
  const std::uint32_t nan_bits = eb == 4 ? ir::tma_oob_nan_f32 : ir::tma_oob_nan_16;
  for (auto policy : {interp::policy::eager, interp::policy::lazy}) {
    auto r = interp::run(k, inputs, {.schedule = policy});
    REQUIRE(r.ok());
    auto const& x = inputs[0].bytes;
    auto const& y = r.buffers[1].bytes;
    auto const& y0 = inputs[1].bytes;
    auto z = r.buffers[2].template as<float>();
    for (std::size_t row = 0; row < 128; ++row)
      for (std::size_t c = 0; c < 64; ++c) {
        const std::size_t i = (row * 64 + c) * eb;
        std::uint32_t got = 0, want = 0;
        std::memcpy(&got, y.data() + i, eb);
        if (row < 64) std::memcpy(&want, y0.data() + i, eb);  // not the tile's: untouched
        else if (row < 100) std::memcpy(&want, x.data() + i, eb);
        else want = nan_bits;
        REQUIRE(got == want);
        if (row >= 64) REQUIRE(std::isnan(z[(row - 64) * 64 + c]) == (row >= 100));
      }
  }
}

TEST_CASE("the verifier keeps TMA's fills to zeros and NaN, NaN to floating-point maps, and masked boxes inside the array", "[verify][nan_fill]") {
  SECTION("another fill value") {
    auto k = testing::nan_fill_probe<f32>("nan_fill_probe");
    for (auto& r : k.refs)
      if (r.fill) r.fill = -1.0;
    REQUIRE_THROWS_AS(ir::verify(k), ir::ConfigError);
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("fills the overhang of its TMA block of parameter 'x' with -1, but TMA fills with zeros or NaN only"));
  }
  SECTION("NaN for an integer array, or an fp8 one (TMA moves those as bytes)") {
    REQUIRE_THROWS_WITH(testing::nan_fill_probe<i32>("nan_fill_probe"), Contains("the fill nan of a masked tile of parameter 'x' is not a value of its dtype i32"));
    REQUIRE_THROWS_WITH(testing::nan_fill_probe<e4m3>("nan_fill_probe"),
                        Contains("asks TMA to fill the overhang of parameter 'x' with NaN, but its dtype e4m3 has no NaN fill"));
  }
  SECTION("a box wider than the array") {
    auto k = testing::nan_fill_probe<f32>("nan_fill_probe");
    k.params[0].shape[1] = 32;
    REQUIRE_THROWS_WITH(ir::verify(k), Contains("copies a TMA block of shape (64, 64) from parameter 'x' of shape (100, 32): a TMA box must fit in the array"));
  }
}
