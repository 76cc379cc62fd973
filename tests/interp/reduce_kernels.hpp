// Kernels that reduce into GMEM (ops/reduce.hpp), shared by the interpreter's and the host
// backend's tests.
//
// reduce_probe<DT, R, Tma>: three CTAs (no cluster: each its own) each reduce their own 64-column
// block of x (100, 192) into y (100, 64), op R, two row blocks each; the second overhangs x and y
// by 28 rows (masked tiles; TMA drops them). y = y op x[:, 0:64] op x[:, 64:128] op x[:, 128:192].
// Tma: the block goes through SMEM and one cp.reduce.async.bulk.tensor per row block, the SMEM
// tile reused after a read-only bulk wait; otherwise red.global per element.
//
// reduce_then_read<Bug>: a cluster of two CTAs reduces into y, then rank 0 copies y to z. With a
// cluster barrier between (each side arrives after its reduction, rank 0 reads after the wait)
// the read is ordered after both reductions; Bug leaves out rank 1's arrival and rank 0's wait,
// so rank 0's read races rank 1's reduction.
//
// write_then_reduce: CTA 0 overwrites y (a plain store), CTA 1 reduces into it: a plain write
// and a reduction, unordered.
#pragma once
#include <cstdint>
#include <random>

#include <stagecraft/stagecraft.hpp>

namespace stagecraft::testing {

// Integers in every buffer: [-1000, 1000] as floats (sums of a few stay exact in f32), and for
// i32/u32 the full 32-bit range, so adds wrap and u32 values above 2^31 meet min/max.
inline std::vector<host_tensor> integer_buffers(ir::Kernel const& k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<host_tensor> out;
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < t.elements(); ++i) {
      if (p.dtype == ir::DType::f32) t.as<float>()[static_cast<std::size_t>(i)] = static_cast<float>(static_cast<int>(rng() % 2001) - 1000);
      else if (p.dtype == ir::DType::i32) t.as<std::int32_t>()[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(static_cast<std::uint32_t>(rng()));
      else t.as<std::uint32_t>()[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(rng());
    }
    out.push_back(std::move(t));
  }
  return out;
}

template <class DT, ir::Reduce R, bool Tma>
ir::Kernel reduce_probe(const char* name) {
  auto t = shape(64_c, 64_c);
  constexpr reduction<R> op{};
  return lower(kernel<sm_90a>(name, grid(3), threads(1_c),
                              gmem<DT>("x", shape(100_c, 192_c)),  // (row, col): CTA s reduces columns 64 s ..
                              gmem<DT>("y", shape(100_c, 64_c)),   // (row, col)
                              smem<DT>(t),                         // buf: the TMA form's tile
                              [t, op](auto x, auto y, auto buf) {
                                auto s = program_id();
                                return for_(range(2_c), [&](auto rb) {
                                  auto tile = load(x.tile(t, masked(0.0), rb, s));
                                  if constexpr (Tma)
                                    return seq(wait_smem_to_gmem(0_c, read_only), store(buf, tile), commit_smem(),
                                               copy_smem_to_gmem(buf, y.block(rb, 0_c), op), commit_smem_to_gmem_group(),
                                               wait_smem_to_gmem(0_c, read_only));
                                  else
                                    return store(y.tile(t, masked(), rb, 0_c), tile, op);
                                });
                              }));
}

template <bool Bug>
ir::Kernel reduce_then_read() {
  auto t = shape(64_c, 64_c);
  return lower(kernel<sm_90a>(Bug ? "reduce_then_read_unordered" : "reduce_then_read", grid(2_c), threads(1_c), cluster(2_c),
                              gmem<f32>("x", shape(64_c, 128_c)),  // (row, col): rank r reduces columns 64 r ..
                              gmem<f32>("y", t),                   // (row, col): y += both blocks
                              gmem<f32>("z", t),                   // (row, col): y as rank 0 reads it afterwards
                              cluster_barrier("reduced", collective_axes(0_c), arrivals(1_c)),
                              [t](auto x, auto y, auto z, auto reduced) {
                                auto rank = cluster_idx(0_c);
                                auto red = store(y.tile(t, 0_c, 0_c), load(x.tile(t, 0_c, rank)), reduce_add);
                                auto copy = if_(rank == 0_c, store(z.tile(t, 0_c, 0_c), load(y.tile(t, 0_c, 0_c))));
                                if constexpr (Bug) return seq(red, copy);
                                else return seq(red, barrier_arrive(reduced), barrier_wait(reduced), copy);
                              }));
}

inline ir::Kernel write_then_reduce() {
  auto t = shape(64_c, 64_c);
  return lower(kernel<sm_90a>("write_then_reduce", grid(2_c), threads(1_c),
                              gmem<f32>("x", shape(64_c, 128_c)),  // (row, col)
                              gmem<f32>("y", t),                   // (row, col)
                              [t](auto x, auto y) {
                                auto s = program_id();
                                return if_(s == 0_c, store(y.tile(t, 0_c, 0_c), load(x.tile(t, 0_c, 0_c))),
                                           store(y.tile(t, 0_c, 0_c), load(x.tile(t, 0_c, 1_c)), reduce_add));
                              }));
}

}  // namespace stagecraft::testing
