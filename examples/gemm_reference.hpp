// The reference every GEMM example is checked against: C = A * B^T, summed in double and
// rounded once into C's type. Tensors in declaration order: a (M, K), b (N, K), c (M, N), however
// a kernel shapes them (gemm_hopper declares A as (M / 64, 64, K): the same bytes).
#pragma once
#include <cstdint>
#include <vector>

#include <stagecraft/registry.hpp>

namespace stagecraft::examples {

inline void gemm_abt_reference(std::vector<host_tensor>& t, param_values const& p) {
  const std::int64_t M = p.at("M"), N = p.at("N"), K = p.at("K");
  auto const& a = t[0];
  auto const& b = t[1];
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += a.get(i * K + k) * b.get(j * K + k);
      t[2].set(i * N + j, sum);
    }
}

// C = relu(A) * B^T (gemm_blackwell_ts): A's elements clamped at 0, the rest as above.
inline void gemm_relu_abt_reference(std::vector<host_tensor>& t, param_values const& p) {
  const std::int64_t M = p.at("M"), N = p.at("N"), K = p.at("K");
  auto const& a = t[0];
  auto const& b = t[1];
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += (a.get(i * K + k) > 0 ? a.get(i * K + k) : 0.0) * b.get(j * K + k);
      t[2].set(i * N + j, sum);
    }
}

}  // namespace stagecraft::examples
