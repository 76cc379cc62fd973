// y[r, c] += sum over j of x[r, 64 j + c], the K dimension split over S CTAs that share nothing:
// no cluster, no barrier, no workspace. CTA (s, rb) sums its share of the ceil(K/64) column
// blocks of row block rb (ceil(blocks/S) of them; the last CTAs may have fewer, or none) in an
// SMEM tile and reduces the tile into y, which every CTA of the row block does at once:
//   tma = 0: store(y.tile(...), load(sum), reduce_add), red.relaxed.gpu.global.add per element;
//   tma = 1: copy_smem_to_gmem(sum, y.block(rb, 0), reduce_add), one cp.reduce.async.bulk.tensor.
// The reductions are atomic and commute, so the order the CTAs run in does not matter; what
// nothing inside the kernel can do is read y afterwards (zoo_read_after_reduce): the caller does.
// y is an input too (y += ...: a beta = 1 epilogue); give it zeros for a plain sum.
//
// i32, so that every order of the S reductions gives the same bits (integer adds wrap and are
// associative): the registered reference is exact. f32 reductions (red.global.add.f32) are
// exercised by tests/interp/test_reduce.cpp with integer-valued floats, whose sums are exact too.
// Any M and K: x's tiles are masked (zeros past column K), y's last row block drops the rows
// past M (masked tile for red, TMA's own bounds for the bulk reduce).
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

#include <algorithm>
#include <cstdint>

namespace stagecraft::examples {
namespace {

template <long long S, bool Tma>
auto splitk_reduce(std::int64_t M, std::int64_t K) {
  const std::int64_t row_blocks = ceil_div(M, 64), blocks = ceil_div(K, 64), per_cta = ceil_div(blocks, S);  // column blocks: all, per CTA
  auto t = shape(64_c, 64_c);
  return kernel<sm_90a>("splitk_reduce", grid(int_c<S>, row_blocks), threads(1_c),
                        gmem<i32>("x", shape(M, K)),     // (row, col)
                        gmem<i32>("y", shape(M, 64_c)),  // (row, col): y += the row blocks' sums
                        smem<i32>(shape(64_c, 64_c)),    // sum: (row, col), this CTA's partial
                        [&](auto x, auto y, auto sum) {
                          auto s = program_id(0_c);
                          auto rb = program_id(1_c);
                          auto steps = max(0_c, min(per_cta, blocks - s * per_cta));  // this CTA's blocks: the last may have fewer
                          auto partial = seq(store(sum, 0), for_(range(steps), [&](auto j) {
                                               return store(sum, load(sum) + load(x.tile(t, masked(0.0), rb, s * per_cta + j)));
                                             }));
                          if constexpr (Tma)
                            // The bulk reduce reads SMEM through the async proxy: fence the tile's
                            // generic stores first. Only the SMEM read must be waited for before exit.
                            return seq(partial, commit_smem(), copy_smem_to_gmem(sum, y.block(rb, 0_c), reduce_add), commit_smem_to_gmem_group(),
                                       wait_smem_to_gmem(0_c, read_only));
                          else
                            return seq(partial, store(y.tile(t, masked(), rb, 0_c), load(sum), reduce_add));
                        });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "splitk_reduce",
    .summary = "y += sum of x's 64-column blocks, K split over CTAs that share nothing: each reduces its partial into y (red.global.add or "
               "a TMA reduce-add)",
    .params = {{.name = "M", .default_value = 128, .help = "rows (any; with tma=1 at least 64: a TMA box must fit in y)", .min = 1},
               {.name = "K", .default_value = 512, .help = "columns (any; split into 64-column blocks over S CTAs)", .min = 1},
               {.name = "S", .default_value = 4, .help = "CTAs per row block, one K slice each", .allowed = {2, 4}},
               {.name = "tma", .default_value = 0, .help = "1: one TMA reduce-add per CTA from SMEM; 0: red.global.add per element",
                .allowed = {0, 1}, .min = 0}},
    .build = [](param_values const& p) {
      return dispatch<2, 4>(p.at("S"), [&](auto S) {
        return dispatch<0, 1>(p.at("tma"), [&](auto T) { return lower(splitk_reduce<decltype(S)::value, decltype(T)::value == 1>(p.at("M"), p.at("K"))); });
      });
    },
    .reference =
        [](std::vector<host_tensor>& t, param_values const& p) {
          auto x = t[0].as<std::int32_t>();
          auto y = t[1].as<std::int32_t>();
          const auto M = p.at("M"), K = p.at("K");
          for (std::int64_t r = 0; r < M; ++r)
            for (std::int64_t c = 0; c < 64; ++c) {
              auto total = static_cast<std::uint32_t>(y[r * 64 + c]);  // wrapping, as the hardware's integer adds
              for (std::int64_t k = c; k < K; k += 64) total += static_cast<std::uint32_t>(x[r * K + k]);
              y[r * 64 + c] = static_cast<std::int32_t>(total);
            }
        },
});

}  // namespace
}  // namespace stagecraft::examples
