// Seeded random inputs for interpreter tests (never all zeros).
#pragma once
#include <random>

#include <stagecraft/host/tensor.hpp>
#include <stagecraft/ir/kernel.hpp>

namespace stagecraft::testing {

inline std::vector<host_tensor> random_buffers(ir::Kernel const& k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::uniform_int_distribution<int> integer(-100, 100);
  std::vector<host_tensor> out;
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < t.elements(); ++i) t.set(i, ir::dtype_is_float(p.dtype) ? real(rng) : integer(rng));
    out.push_back(std::move(t));
  }
  seed_segment_tables(k, out, seed);  // a ragged batch's offsets must be a valid table
  return out;
}

}  // namespace stagecraft::testing
