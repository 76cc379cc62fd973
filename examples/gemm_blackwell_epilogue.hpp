// The Blackwell GEMMs' epilogue warpgroup (gemm_blackwell, gemm_blackwell_2cta). For each of the
// CTA's tiles (rounds of them; valid(i): the i-th exists), it waits until the tile's accumulator,
// stage i % 2 of the TMEM ring d, is complete (acc_full), stores its 128 rows BN / W subtiles of
// 128 x W at a time (W: 64 bf16 or 32 i32 columns, 128 bytes) through the two staging buffers cs
// to C's block (m(i), n(i) * BN / W + j)
// with store_tile (one store pending: a subtile's rounding overlaps the store of the one before;
// the buffers alternate across tiles too), and hands the accumulator back to the MMA issuer
// (acc_empty). The caller ends with wait_smem_to_gmem(0_c) and the TMEM dealloc.
#pragma once
#include <string>
#include <utility>

#include <stagecraft/registry.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {

// The input-type parameters of the Blackwell GEMMs: fp8 (e4m3/e5m2) or int8 (s8/u8), at most one,
// and with either K a whole number of 16-byte TMA rows and at least one 128-element stage.
inline void check_8bit_inputs(std::string const& kernel, std::int64_t K, std::int64_t fp8, std::int64_t int8) {
  if (fp8 != 0 && int8 != 0)
    throw usage_error(kernel + ": fp8=" + std::to_string(fp8) + " and int8=" + std::to_string(int8) + " both name the input types: set one");
  for (auto [name, v] : {std::pair{"fp8", fp8}, std::pair{"int8", int8}})
    if (v != 0 && (K % 16 != 0 || K < 128))
      throw usage_error(kernel + ": K=" + std::to_string(K) + " must be a multiple of 16 and at least 128 with " + name + "=" + std::to_string(v) +
                        " (a stage is 128 8-bit elements of K: one 128-byte swizzled row; TMA rows are 16-byte units)");
}

// Round i of the epilogue: tile (mi, ni)'s accumulator, stage i % 2, stored and handed back.
// A subtile is one 128-byte row of C per row of the tile: 64 bf16 columns (rounded from the f32
// accumulator), or 32 i32 columns (kind::i8's s32 accumulator, stored as it is).
template <long long BN, class I, class MI, class NI, class D, class CS, class C, class Full, class Empty>
auto tmem_subtile_tile(I const& i, MI const& mi, NI const& ni, D const& d, CS const& cs, C const& c, Full const& acc_full, Empty const& acc_empty) {
  using TC = typename C::dtype_t;
  constexpr long long W = 1024 / TC::bits;  // columns per subtile
  constexpr long long SUB = BN / W;         // subtiles per tile
  auto acc = stage<2>(i);
  auto subtiles = for_(range(int_c<SUB>), [&](auto j) {
    auto buf = stage<2>(i * int_c<SUB> + j);
    auto sub = async_load_tmem(slice<1>(d[acc], j * int_c<W>, int_c<W>));
    auto value = [&] {
      if constexpr (std::is_same_v<TC, bf16>) return cast<bf16>(sub);
      else return sub;
    };
    // pending 1: the store of two subtiles ago, the last to use this buffer, has read it
    return store_tile(cs[buf], value(), c.block(mi, ni * int_c<SUB> + j), 1_c);
  });
  return seq(barrier_wait(acc_full[acc]), subtiles, barrier_arrive(acc_empty[acc]));
}

template <long long BN, class Valid, class M, class N, class D, class CS, class C, class Full, class Empty>
auto tmem_subtile_epilogue(size_expr rounds, Valid const& valid, M const& m, N const& n, D const& d, CS const& cs, C const& c, Full const& acc_full,
                           Empty const& acc_empty) {
  return for_(range(rounds), [&](auto i) { return if_(valid(i), tmem_subtile_tile<BN>(i, m(i), n(i), d, cs, c, acc_full, acc_empty)); });
}

}  // namespace stagecraft::examples
