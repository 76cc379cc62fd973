// y = 2 * x[::R, :]: every R-th row of an (M, N) f32 array, doubled, with the row decimation
// done by TMA itself (element strides in the tensor map), pipelined.
//
// CTA i owns 32 rows of y, i.e. the footprint of 32 * R rows of x. It streams them as 32x64
// blocks through a K-deep ring: x.block(strides(R, 1), i, j) names the (32 R, 64) footprint at
// block (i, j) and TMA lands only its rows 0, R, 2R, ... densely in the 32x64 stage, completing
// the stage's 8 KiB on its barrier (the bytes that land, not the bytes traversed). The SMEM side
// is an ordinary dense view: the loads, the store and the TMA store back to y never see a stride.
// Any M >= 256 and N (a multiple of 4): the last footprints overhang x (TMA lands zeros for the
// rows past M) and the last blocks of y are cut at its ceil(M / R) rows and N columns.
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

template <long long R, long long K>
auto downsample_rows(std::int64_t M, std::int64_t N) {
  const std::int64_t steps = ceil_div(N, 64), rows = ceil_div(M, R);  // column blocks per CTA, rows of y
  constexpr long long D = K > 1 ? 1 : 0;  // refill a stage D steps after its store (add_one's ring)
  return kernel<sm_90a>(
      "downsample_rows", grid(ceil_div(rows, 32)), threads(1_c),
      gmem<f32>("x", shape(M, N)),              // (row, col)
      gmem<f32>("y", shape(rows, N)),            // (row / R, col)
      smem<f32>(shape(int_c<K>, 32_c, 64_c)),   // (stage, row / R, col): dense, as TMA lands it
      barrier(arrivals(1_c), count(int_c<K>)),  // full[stage]
      [&](auto x, auto y, auto buf, auto full) {
        auto row = program_id(0_c);
        auto every_rth = strides(int_c<R>, 1_c);  // TMA does not stride the innermost dimension
        auto prologue = for_(range(int_c<K>), [&](auto j) {
          auto s = stage<K>(j);
          return if_(j < steps, copy_gmem_to_smem(x.block(every_rth, row, j), buf[s], full[s]));
        });
        auto main_loop = for_(range(steps), [&](auto j) {
          auto s = stage<K>(j);
          auto refill = s.advance(int_c<K - D>);  // the stage of step j - D, for step j - D + K
          return seq(barrier_wait(full[s]),
                     store(buf[s], load(buf[s]) * 2.0f),
                     commit_smem(),
                     copy_smem_to_gmem(buf[s], y.block(row, j)),
                     commit_smem_to_gmem_group(),
                     if_(j >= int_c<D> && refill.step < steps,
                         seq(wait_smem_to_gmem(int_c<D>, read_only),
                             copy_gmem_to_smem(x.block(every_rth, row, refill.step), buf[refill], full[refill]))));
        });
        return seq(prologue, main_loop, wait_smem_to_gmem(0_c));
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "downsample_rows",
    .summary = "y = 2 * x[::R, :]; TMA element strides decimate the rows on the way into a K-deep ring of 32x64 stages",
    .params = {{.name = "M", .default_value = 512, .help = "rows of x (any)", .min = 256},
               {.name = "N", .default_value = 512, .help = "columns (a multiple of 4)", .min = 64, .multiple_of = 4},
               {.name = "R", .default_value = 2, .help = "row stride (TMA element stride, 32 * R <= 256 rows traversed)", .allowed = {2, 4, 8}},
               {.name = "K", .default_value = 2, .help = "ring depth (stages)", .allowed = {1, 2, 3}}},
    .build =
        [](param_values const& p) {
          return dispatch<2, 4, 8>(p.at("R"), [&](auto R) {
            return dispatch<1, 2, 3>(p.at("K"), [&](auto K) { return lower(downsample_rows<decltype(R)::value, decltype(K)::value>(p.at("M"), p.at("N"))); });
          });
        },
    .reference =
        [](std::vector<host_tensor>& t, param_values const& p) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          const std::int64_t R = p.at("R"), N = t[0].shape[1];
          for (std::int64_t r = 0; r < t[1].shape[0]; ++r)
            for (std::int64_t c = 0; c < N; ++c) y[r * N + c] = x[r * R * N + c] * 2.0f;
        },
});

}  // namespace
}  // namespace stagecraft::examples
