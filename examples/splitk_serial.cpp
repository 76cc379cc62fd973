// Deterministic split-K: y[r, c] += sum over j of x[r, 64 j + c], K split over S CTAs per row
// block as in splitk_reduce, but the partials are added into y in slice order, 0 to S-1, whatever
// order the CTAs run in, so the f32 sum has the same bits on every run (cuBLAS's deterministic
// mode; CUTLASS's "serial" split-K). The order is kept by grid-wide semaphores: CTA (s, rb)
// waits until slice s-1 has added its partial, adds its own with a plain load and store, and
// signals slice s+1. turn(rb, s) counts "slice s may go" for row block rb.
//
// Slices are the grid's first axis, so slice s-1 is launched before slice s: a CTA waits only for
// one launched before it, which is what keeps a grid larger than the GPU from deadlocking
// (ops/semaphore.hpp). The cost is the serial chain: S adds of y per row block, one after the
// other, against splitk_reduce's S atomic reductions at once; what it buys is reproducibility.
//
// f32 with a reference that adds in the same order: exact. Any M and K (masked tiles).
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include <algorithm>
#include <cstdint>

namespace stagecraft::examples {
namespace {

template <long long S>
auto splitk_serial(std::int64_t M, std::int64_t K) {
  const std::int64_t row_blocks = ceil_div(M, 64), blocks = ceil_div(K, 64), per_cta = ceil_div(blocks, S);
  auto t = shape(64_c, 64_c);
  return kernel<sm_90a>("splitk_serial", grid(int_c<S>, row_blocks), threads(1_c),
                        gmem<f32>("x", shape(M, K)),                    // (row, col)
                        gmem<f32>("y", shape(M, 64_c)),                 // (row, col): y += the slices' partials, in slice order
                        semaphores("turn", shape(row_blocks, int_c<S>)),  // (row block, slice): 1 once slice s may add
                        smem<f32>(shape(64_c, 64_c)),                   // sum: (row, col), this CTA's partial
                        [&](auto x, auto y, auto turn, auto sum) {
                          auto s = program_id(0_c);
                          auto rb = program_id(1_c);
                          auto steps = max(0_c, min(per_cta, blocks - s * per_cta));
                          auto yt = y.tile(t, masked(), rb, 0_c);
                          return seq(store(sum, 0.0f),
                                     for_(range(steps), [&](auto j) {
                                       return store(sum, load(sum) + load(x.tile(t, masked(0.0), rb, s * per_cta + j)));
                                     }),
                                     if_(s > 0_c, semaphore_wait(turn(rb, s))),  // slice s-1's y is visible
                                     store(yt, load(yt) + load(sum)),
                                     if_(s + 1_c < int_c<S>, semaphore_signal(turn(rb, s + 1_c))));  // and ours to slice s+1
                        });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "splitk_serial",
    .summary = "deterministic split-K: y += sum of x's 64-column blocks, the K slices' partials added in slice order, CTAs taking "
               "turns through grid-wide semaphores",
    .params = {{.name = "M", .default_value = 128, .help = "rows (any)", .min = 1},
               {.name = "K", .default_value = 512, .help = "columns (any; split into 64-column blocks over S CTAs)", .min = 1},
               {.name = "S", .default_value = 4, .help = "CTAs per row block, one K slice each, adding in turn", .allowed = {2, 4}}},
    .build = [](param_values const& p) {
      return dispatch<2, 4>(p.at("S"), [&](auto S) { return lower(splitk_serial<decltype(S)::value>(p.at("M"), p.at("K"))); });
    },
    .reference =
        [](std::vector<host_tensor>& t, param_values const& p) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          const auto M = p.at("M"), K = p.at("K"), S = p.at("S");
          const std::int64_t blocks = (K + 63) / 64, per_cta = (blocks + S - 1) / S;
          for (std::int64_t r = 0; r < M; ++r)
            for (std::int64_t c = 0; c < 64; ++c) {
              float acc = y[r * 64 + c];
              for (std::int64_t s = 0; s < S; ++s) {  // each slice's partial in f32, in its own order, then added in slice order
                float part = 0.0f;
                for (std::int64_t b = s * per_cta; b < std::min(blocks, (s + 1) * per_cta); ++b) {
                  const std::int64_t k = b * 64 + c;
                  part += k < K ? x[r * K + k] : 0.0f;
                }
                acc += part;
              }
              y[r * 64 + c] = acc;
            }
        },
});

}  // namespace
}  // namespace stagecraft::examples
