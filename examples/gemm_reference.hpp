// The reference every GEMM example is checked against: C = A * B^T, summed in double and
// rounded once into C's type. Tensors in declaration order: a (M, K), b (N, K), c (M, N).
#pragma once
#include <cstdint>
#include <vector>

#include <stagecraft/registry.hpp>

namespace stagecraft::examples {

// C = f(A) * B^T, f applied to each element of A (the identity for the plain GEMM).
template <class F>
void gemm_fabt_reference(std::vector<host_tensor>& t, param_values const& p, F f) {
  const std::int64_t M = p.at("M"), N = p.at("N"), K = p.at("K");
  auto const& a = t[0];
  auto const& b = t[1];
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += f(a.get(i * K + k)) * b.get(j * K + k);
      t[2].set(i * N + j, sum);
    }
}

inline void gemm_abt_reference(std::vector<host_tensor>& t, param_values const& p) {
  gemm_fabt_reference(t, p, [](double x) { return x; });
}

// C += A * B^T (gemm_splitk): C's initial contents plus the product, in double, rounded once.
inline void gemm_abt_accumulate_reference(std::vector<host_tensor>& t, param_values const& p) {
  const std::int64_t M = p.at("M"), N = p.at("N"), K = p.at("K");
  auto const& a = t[0];
  auto const& b = t[1];
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double sum = t[2].get(i * N + j);
      for (std::int64_t k = 0; k < K; ++k) sum += a.get(i * K + k) * b.get(j * K + k);
      t[2].set(i * N + j, sum);
    }
}

// The same, M, N and K read from the tensors' shapes (the lessons' kernels have no parameters).
inline void gemm_abt_reference_of_shapes(std::vector<host_tensor>& t) {
  gemm_abt_reference(t, {{"M", t[0].shape[0]}, {"N", t[1].shape[0]}, {"K", t[0].shape[1]}});
}

// C = relu(A) * B^T (gemm_blackwell_ts): A's elements clamped at 0.
inline void gemm_relu_abt_reference(std::vector<host_tensor>& t, param_values const& p) {
  gemm_fabt_reference(t, p, [](double x) { return x > 0 ? x : 0.0; });
}

}  // namespace stagecraft::examples
