// Small kernels shared by the unit tests.
#pragma once
#include <random>

#include <stagecraft/stagecraft.hpp>

namespace stagecraft::testing {

// A K-deep ring that adds `addend` to every element of x, written out to y.
template <long long K>
auto ring_kernel(std::int64_t M, std::int64_t N, float addend = 1.0f, const char* name = "ring") {
  const std::int64_t steps = N / 64;
  return kernel<sm_90a>(name, grid(M / 64), threads(1_c), gmem<f32>("x", shape(M, N)), gmem<f32>("y", shape(M, N)),
                        smem<f32>(shape(int_c<K>, 64_c, 64_c)), barrier(arrivals(1_c), count(int_c<K>)),
                        [&](auto x, auto y, auto buf, auto full) {
                          auto pro = for_(range(int_c<K>), [&](auto j) {
                            auto s = stage<K>(j);
                            return if_(j < steps, copy_gmem_to_smem(x.block(program_id(), j), buf[s], full[s]));
                          });
                          auto loop = for_(range(steps), [&](auto j) {
                            auto s = stage<K>(j);
                            return seq(barrier_wait(full[s]), store(buf[s], load(buf[s]) + addend), commit_smem(),
                                       copy_smem_to_gmem(buf[s], y.block(program_id(), j)), commit_smem_to_gmem_group(),
                                       wait_smem_to_gmem(0_c, read_only),
                                       if_(j + int_c<K> < steps, copy_gmem_to_smem(x.block(program_id(), j + int_c<K>), buf[s], full[s])));
                          });
                          return seq(pro, loop, wait_smem_to_gmem(0_c));
                        });
}

inline std::mt19937_64 seeded_rng(std::uint64_t seed) { return std::mt19937_64(seed); }

}  // namespace stagecraft::testing
