// Partial tiles (issue 25): a TMA block may overhang its array. A load fills the outside with
// zeros and still completes the whole box's bytes (expect_tx counts the box, as the hardware
// signals it); a store writes only the part inside, and nothing when the box lies wholly
// outside. A load wholly outside is reported: it would load nothing but fill.
#include <algorithm>

#include <catch2/catch.hpp>
#include <stagecraft/interp/interp.hpp>
#include <stagecraft/stagecraft.hpp>

#include "inputs.hpp"

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
