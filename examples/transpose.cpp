// y = x^T for an (M, N) f32 array: 32 x 32 blocks come in by TMA into a K-deep ring of 128-byte
// swizzled stages, are transposed through SMEM into one of two swizzled out-slots, and go out by
// TMA to the mirrored block of y. Any M and N: the last blocks overhang both arrays, TMA fills
// x's outside with zeros and drops y's. TMA's rows are whole 16-byte units (M and N multiples
// of 4) and its boxes fit the arrays (M, N >= 32); other sizes take transpose_masked below.
//
// The transpose itself is `store(out[o], transpose(load(in[s])))`: a view, no arithmetic. Both
// tiles are 32 x 32 four-byte elements with 128-byte rows, swizzled, so the code generator
// writes them in the order of stagecraft/ir/transpose_order.hpp, where every warp instruction
// touches 32 different banks on the read and on the write side (the row-major order would
// touch 8: 4-way conflicts on both). Swizzling, not padding, because TMA writes dense boxes.
#include <utility>

#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {
namespace {

// Both variants' parameters: x (row, col) and y (col, row) of x; one CTA per 32-row strip.
auto arrays(std::int64_t M, std::int64_t N) { return std::pair{gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(N, M))}; }

template <long long K>
auto transpose_kernel(std::int64_t M, std::int64_t N) {
  const std::int64_t steps = ceil_div(N, 32);
  auto [x_decl, y_decl] = arrays(M, N);
  return kernel<sm_90a>(
      "transpose", grid(ceil_div(M, 32)), threads(1_c), x_decl, y_decl,
      smem<f32>(shape(int_c<K>, 32_c, 32_c), swizzle(128_c)),  // in: (stage, row, col)
      smem<f32>(shape(2_c, 32_c, 32_c), swizzle(128_c)),       // out: (slot, col, row)
      barrier(arrivals(1_c), count(int_c<K>)),                 // full[stage]
      [&](auto x, auto y, auto in, auto out, auto full) {
        auto row = program_id();
        auto prologue = for_(range(int_c<K>), [&](auto j) {
          auto s = stage<K>(j);
          return if_(j < steps, copy_gmem_to_smem(x.block(row, j), in[s], full[s]));
        });
        auto main_loop = for_(range(steps), [&](auto j) {
          auto s = stage<K>(j);
          auto o = stage<2>(j);
          return seq(barrier_wait(full[s]),
                     wait_smem_to_gmem(1_c, read_only),  // out[o]'s store from step j-2 has read it
                     store(out[o], transpose(load(in[s]))),
                     commit_smem(),
                     copy_smem_to_gmem(out[o], y.block(j, row)),
                     commit_smem_to_gmem_group(),
                     // in[s] was read by the generic loads above (program order); refill it.
                     if_(j + int_c<K> < steps, copy_gmem_to_smem(x.block(row, j + int_c<K>), in[s], full[s])));
        });
        return seq(prologue, main_loop, wait_smem_to_gmem(0_c));
      });
}

// Sizes TMA cannot address: each 32x32 block is a masked generic load of x, transposed in
// registers (a view: no arithmetic) and stored masked into y. Correct at any size; without the
// swizzled SMEM hop one side of each warp's access is strided, so it is the slow path.
auto transpose_masked(std::int64_t M, std::int64_t N) {
  const std::int64_t steps = ceil_div(N, 32);
  auto [x_decl, y_decl] = arrays(M, N);
  return kernel<sm_90a>("transpose", grid(ceil_div(M, 32)), threads(1_c), x_decl, y_decl, [&](auto x, auto y) {
    auto row = program_id();
    auto t = shape(32_c, 32_c);
    return for_(range(steps), [&](auto j) { return store(y.tile(t, masked(), j, row), transpose(load(x.tile(t, masked(0.0), row, j)))); });
  });
}

STAGECRAFT_REGISTER(kernel_entry{
    .name = "transpose",
    .summary = "y = x^T for an (M, N) f32 array: 32x32 blocks TMA in, transposed through swizzled SMEM (bank-conflict free), TMA out",
    .params = {{.name = "M", .default_value = 256, .help = "rows of x (any; TMA needs multiples of 4 and at least 32 for M and N, other sizes take the masked generic path)", .min = 1},
               {.name = "N", .default_value = 512, .help = "columns of x (any, as M)", .min = 1},
               {.name = "K", .default_value = 2, .help = "ring depth (stages)", .allowed = {1, 2, 3, 4}}},
    .build =
        [](param_values const& p) {
          const auto M = p.at("M"), N = p.at("N");
          if (M % 4 != 0 || N % 4 != 0 || M < 32 || N < 32) return lower(transpose_masked(M, N));
          return dispatch<1, 2, 3, 4>(p.at("K"), [&](auto K) { return lower(transpose_kernel<decltype(K)::value>(M, N)); });
        },
    .reference =
        [](std::vector<host_tensor>& t, param_values const& p) {
          auto x = t[0].as<float>();
          auto y = t[1].as<float>();
          const auto M = static_cast<std::size_t>(p.at("M")), N = static_cast<std::size_t>(p.at("N"));
          for (std::size_t r = 0; r < M; ++r)
            for (std::size_t c = 0; c < N; ++c) y[c * M + r] = x[r * N + c];
        },
});

}  // namespace
}  // namespace stagecraft::examples
