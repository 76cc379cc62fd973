// y = x + 1 over an (M, N) f32 array, pipelined.
//
// CTA (i, c) owns the 128-row strip i and the c-th of `splits` column ranges; it streams that
// range as 128x64 blocks through a K-deep ring of SMEM stages. Any M and N work: the last strip
// and the last column block may overhang the array (TMA loads fill the outside with zeros, the
// stores drop it), and the last column range may be shorter than the others. TMA needs whole
// 16-byte rows (N a multiple of 4) and a box inside the array (M >= 128, N >= 64); other sizes
// take add_one_masked below, the same blocks through masked generic loads and stores. Each step waits for its stage,
// adds one in place, stores it back with TMA and, once the store of the step D before it has
// read its stage, refills that stage with the block K steps ahead. Everything the hardware
// needs to know (bytes per copy, which barrier, which phase) follows from the types and the
// stage cursor.
#include <fmt/format.h>
#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

template <long long K>
auto add_one(std::int64_t M, std::int64_t N, std::int64_t splits) {
  const std::int64_t blocks = ceil_div(N, 64), per = ceil_div(blocks, splits);  // column blocks: all, per CTA
  // A stage is refilled D steps after its store was issued: 1 lets the store of step j overlap
  // the refill of step j-1's stage; a single stage has nothing to overlap with.
  constexpr long long D = K > 1 ? 1 : 0;
  return kernel<sm_90a>(
      "add_one", grid(ceil_div(M, 128), splits), threads(1_c),
      gmem<f32>("x", shape(M, N)),             // (row, col)
      gmem<f32>("y", shape(M, N)),             // (row, col)
      smem<f32>(shape(int_c<K>, 128_c, 64_c)),  // (stage, row, col)
      barrier(arrivals(1_c), count(int_c<K>)),  // full[stage]: the stage's block has landed
      [&](auto x, auto y, auto buf, auto full) {
        auto row = program_id(0_c);
        auto col = [&](auto j) { return program_id(1_c) * per + j; };
        auto steps = max(0_c, min(per, blocks - program_id(1_c) * per));  // this CTA's blocks: the last range may be short or empty
        auto prologue = for_(range(int_c<K>), [&](auto j) {
          auto s = stage<K>(j);
          return if_(j < steps, copy_gmem_to_smem(x.block(row, col(j)), buf[s], full[s]));
        });
        auto main_loop = for_(range(steps), [&](auto j) {
          auto s = stage<K>(j);
          auto refill = s.advance(int_c<K - D>);  // the stage of step j - D, for step j - D + K
          return seq(barrier_wait(full[s]),
                     store(buf[s], load(buf[s]) + 1.0f),
                     commit_smem(),
                     copy_smem_to_gmem(buf[s], y.block(row, col(j))),
                     commit_smem_to_gmem_group(),
                     if_(j >= int_c<D> && refill.step < steps,
                         seq(wait_smem_to_gmem(int_c<D>, read_only),
                             copy_gmem_to_smem(x.block(row, col(refill.step)), buf[refill], full[refill]))));
        });
        return seq(prologue, main_loop, wait_smem_to_gmem(0_c));
      });
}

// Sizes TMA cannot address: each 128x64 block is a masked generic load (zeros outside the array)
// and a masked store (nothing written outside), straight from GMEM to registers and back. No
// ring: there is nothing asynchronous to overlap, and each thread's loads are independent.
auto add_one_masked(std::int64_t M, std::int64_t N, std::int64_t splits) {
  const std::int64_t blocks = ceil_div(N, 64), per = ceil_div(blocks, splits);
  return kernel<sm_90a>(
      "add_one", grid(ceil_div(M, 128), splits), threads(1_c),
      gmem<f32>("x", shape(M, N)),  // (row, col)
      gmem<f32>("y", shape(M, N)),  // (row, col)
      [&](auto x, auto y) {
        auto row = program_id(0_c);
        auto steps = max(0_c, min(per, blocks - program_id(1_c) * per));
        auto t = shape(128_c, 64_c);
        return for_(range(steps), [&](auto j) {
          auto col = program_id(1_c) * per + j;
          return store(y.tile(t, masked(), row, col), load(x.tile(t, masked(0.0), row, col)) + 1.0f);
        });
      });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "add_one",
    .summary = "y = x + 1; each CTA streams 128x64 f32 blocks through a K-deep TMA ring",
    .params = {{.name = "M", .default_value = 512, .help = "rows (any; the last strip may overhang; under 128: masked generic path)", .min = 1},
               {.name = "N", .default_value = 1024, .help = "columns (any; TMA needs a multiple of 4 and at least 64, other N take the masked generic path)", .min = 1},
               {.name = "K", .default_value = 4, .help = "ring depth (stages)", .allowed = {1, 2, 3, 4, 5, 6}},
               {.name = "splits", .default_value = 2, .help = "CTAs per row strip (grid y)", .min = 1, .max = 64}},
    .build =
        [](param_values const& p) {
          const auto M = p.at("M"), N = p.at("N"), splits = p.at("splits");
          if (ceil_div(N, 64) < splits)
            throw usage_error(fmt::format("add_one: splits = {} CTAs per row strip, but N = {} has only {} column blocks of 64 (take splits <= {})",
                                          splits, N, ceil_div(N, 64), ceil_div(N, 64)));
          if (N % 4 != 0 || N < 64 || M < 128) return lower(add_one_masked(M, N, splits));
          return dispatch<"K", 1, 2, 3, 4, 5, 6>(p, [&](auto K) { return lower(add_one<decltype(K)::value>(M, N, splits)); });
        },
    .reference =
        [](std::vector<host_tensor>& t, param_values const&) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] + 1.0f;
        },
});

}  // namespace
}  // namespace stagecraft::examples
