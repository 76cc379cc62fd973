// What the attention examples (attention_hopper, its backward pass, attention_varlen) share: a
// statement per head-dimension chunk, the online softmax step on a block of raw scores, and the
// algorithm's reference for one query row in double.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <stagecraft/host/tensor.hpp>
#include <stagecraft/ir/fp8.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::examples {

// seq(f(int_c<0>), ..., f(int_c<N - 1>)): one statement per head-dimension chunk.
template <long long N, class F>
auto each(F const& f) {
  return [&]<long long... I>(std::integer_sequence<long long, I...>) { return seq(f(int_c<I>)...); }(std::make_integer_sequence<long long, N>{});
}

// log2(e) / sqrt(D), in f32: the kernels scale raw scores by it and take exp2.
inline float attention_scale(long long D) { return static_cast<float>(1.4426950408889634 / std::sqrt(static_cast<double>(D))); }

// The online softmax, on the masked raw scores in S (a (64, keys) accumulator): P overwrites S
// in its own registers (computed once, then summed and fed to every P V wgmma: a tile value is
// recomputed wherever it is used, a register store is not), alpha = exp2(m - m') and l and m move
// on. The row max is taken of the raw scores and scaled once per row: max<1>(S) * scale is
// max<1>(S * scale) bit for bit (rounding is monotonic, scale >= 0), and S * scale then has one
// use, S * scale - m', which fast mode contracts into one FFMA per element (FA3's form).
// scale: a constant, or a (64) row-vector accumulator known at run time (fp8 attention's
// descaled scale, every row the same value); m, mn (m'), l, alpha: (64) row-vector accumulators.
template <class S, class M, class MN, class L, class A, class C, class Tile>
auto online_softmax(S const& Sacc, M const& m, MN const& mn, L const& l, A const& alpha, C const& scale, Tile const& s_tile) {
  auto per_row = [&] {
    if constexpr (std::is_arithmetic_v<C>) return scale;
    else return load(scale);
  };
  auto per_element = [&] {
    if constexpr (std::is_arithmetic_v<C>) return scale;
    else return broadcast<1>(load(scale), s_tile);
  };
  return seq(store(mn, max(load(m), max<1>(load(Sacc)) * per_row())), store(alpha, exp2(load(m) - load(mn))),
             store(Sacc, exp2(load(Sacc) * per_element() - broadcast<1>(load(mn), s_tile))), store(l, load(l) * load(alpha) + sum<1>(load(Sacc))),
             store(m, load(mn)));
}

// The type P V's operand P is rounded to: bf16, or e4m3 in the fp8 kernels.
enum class attention_p { bf16, e4m3 };

// Query row `q_row` of q against the `len` keys at rows kv_base.. of k and v (causal: the first
// r + 1 of them), the kernels' algorithm in double: BK-key blocks, running max and sum, P rounded
// to bf16 (or e4m3) where the kernel rounds it (the P V operand; l sums the unrounded P), O / l written to
// row q_row of o. What is left between the two is f32 against double arithmetic and the wgmma
// accumulation order, which the MMA tolerance bounds (docs/interpreter.md); a bf16 P that rounds
// the other way in the kernel moves an output by at most 2^-8 |v| p / l (e4m3: 2^-4 |v| p / l).
// Tensors are (rows, D), or with vt_len > 0 v is V^T, (slices, D, vt_len): key kv_base + c, column d
// at (kv_base / vt_len, d, c). descales (fp8 attention): the scores are scaled by
// descaled_scale(D, dq, dk) instead of attention_scale(D), and O by dv. lse: element q_row gets
// ln(sum over the row's keys of exp(s ln 2)), s the scaled scores (attention_hopper's LSE output).
struct attention_descales {
  double q = 1, k = 1, v = 1;
};
// The scores' scale with descales, in f32 as the kernel computes it: |dq dk| log2(e) / sqrt(D).
// The magnitude: a dequantization scale is positive, and a negative product would turn the row
// max the softmax subtracts into a row min.
inline float descaled_scale(long long D, double dq, double dk) {
  return std::abs(static_cast<float>(dq) * static_cast<float>(dk)) * attention_scale(D);
}
inline void attention_row_reference(host_tensor const& q, host_tensor const& k, host_tensor const& v, host_tensor& o, std::int64_t q_row,
                                    std::int64_t kv_base, std::int64_t len, std::int64_t r, bool causal, std::int64_t D, std::int64_t BK,
                                    attention_p p_type = attention_p::bf16, std::int64_t vt_len = 0, attention_descales const* descales = nullptr,
                                    host_tensor* lse = nullptr) {
  auto v_at = [&](std::int64_t c, std::int64_t d) {
    return vt_len > 0 ? v.get((kv_base / vt_len * D + d) * vt_len + c) : v.get((kv_base + c) * D + d);
  };
  auto round_p = [&](double pf) {
    const auto f = static_cast<float>(pf);
    return p_type == attention_p::e4m3 ? static_cast<double>(ir::e4m3_to_f32(ir::f32_to_e4m3(f))) : static_cast<double>(bf16_to_f32(f32_to_bf16(f)));
  };
  const double scale = descales ? descaled_scale(D, descales->q, descales->k) : attention_scale(D);
  std::vector<double> L(static_cast<std::size_t>(BK)), out(static_cast<std::size_t>(D), 0.0);
  double m = -1e30, l = 0;
  for (std::int64_t j = 0; j * BK <= (causal ? r : len - 1); ++j) {
    double mx = -1e30;
    for (std::int64_t c = 0; c < BK; ++c) {
      const std::int64_t key = j * BK + c;
      auto& s = L[static_cast<std::size_t>(c)];
      s = -1e30;  // past the keys (the kernel's mask) or, causal, after the row
      if (key < len && !(causal && key > r)) {
        double dot = 0;
        for (std::int64_t d = 0; d < D; ++d) dot += q.get(q_row * D + d) * k.get((kv_base + key) * D + d);
        s = dot * scale;
      }
      mx = std::max(mx, s);
    }
    const double mn = std::max(m, mx), alpha = std::exp2(m - mn);
    double sum = 0;
    for (auto& x : out) x *= alpha;
    for (std::int64_t c = 0; c < BK; ++c) {
      const double pf = std::exp2(L[static_cast<std::size_t>(c)] - mn);
      sum += pf;
      if (j * BK + c >= len) continue;  // P = 0 there (and V is another sequence's, or the fill)
      const double pb = round_p(pf);
      for (std::int64_t d = 0; d < D; ++d) out[static_cast<std::size_t>(d)] += pb * v_at(j * BK + c, d);
    }
    l = l * alpha + sum;
    m = mn;
  }
  const double out_scale = descales ? static_cast<double>(static_cast<float>(descales->v)) : 1.0;
  for (std::int64_t d = 0; d < D; ++d) o.set(q_row * D + d, out[static_cast<std::size_t>(d)] / l * out_scale);
  // The natural log-sum-exp of the row's scaled scores: m and l are in base 2.
  if (lse) lse->set(q_row, (m + std::log2(l)) * 0.6931471805599453);
}

}  // namespace stagecraft::examples
