// Per-row state in registers across loop iterations: an online softmax over three (64, 64)
// blocks held in wgmma accumulators, with the running max and sum in row-vector accumulators
// (accumulator<f32>(shape(64_c))), the steps attention takes between its two wgmmas. No wgmma
// runs, so the host backend can execute the generated row reductions and broadcasts.
//
// The reference is parameterised by the association of a row sum: the interpreter folds left to
// right; generated code folds each thread's registers, then the quad's four partial sums with
// two butterfly shuffles (docs/codegen.md). Max and min do not depend on it.
#pragma once
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include <stagecraft/host/tensor.hpp>
#include <stagecraft/ir/math.hpp>
#include <stagecraft/stagecraft.hpp>

namespace stagecraft::testing::row_state {

constexpr std::int64_t rows = 64, cols = 64, blocks = 3;

inline ir::Kernel online_softmax_kernel() {
  auto s = shape(64_c, 64_c);
  auto r = shape(64_c);
  return lower(kernel<sm_90a>(
      "acc_online_softmax", grid(1), threads(1_c), gmem<f32>("x", shape(64_c, 192_c)), gmem<f32>("y", s), gmem<f32>("m_out", r),
      gmem<f32>("l_out", r), gmem<f32>("row_sum", r), gmem<f32>("row_min", r), accumulator<f32>("S", s), accumulator<f32>("O", s),
      accumulator<f32>("m", r), accumulator<f32>("m_new", r), accumulator<f32>("l", r),
      [=](auto x, auto y, auto m_out, auto l_out, auto row_sum, auto row_min, auto S, auto O, auto m, auto mn, auto l) {
        auto step = for_(range(3_c), [&](auto kb) {
          auto alpha = exp2(load(m) - load(mn));
          auto P = exp2(load(S) - broadcast<1>(load(mn), s));
          return seq(store(S, load(x.tile(s, 0_c, kb))), store(mn, max(load(m), max<1>(load(S)))), store(l, load(l) * alpha + sum<1>(P)),
                     store(O, load(O) * broadcast<1>(alpha, s) + P), store(m, load(mn)));
        });
        return seq(store(m, -1e30f), store(l, 0.0f), store(O, 0.0f), step, store(y.tile(s, 0_c, 0_c), load(O) / broadcast<1>(load(l), s)),
                   store(m_out.tile(r, 0_c), load(m)), store(l_out.tile(r, 0_c), load(l)), store(row_sum.tile(r, 0_c), sum<1>(load(S))),
                   store(row_min.tile(r, 0_c), min<1>(load(S) * 2.0f)));
      }));
}

// The loop attention runs, on two (64, 64) K/V blocks already in SMEM: S = Q K^T by wgmma, the
// running max and sum updated from S's rows, O rescaled, and O += P V with P = exp2(S - m)
// computed from S's registers as wgmma's register A (no SMEM round trip, no shuffle for P).
inline ir::Kernel attention_block_kernel() {
  auto s = shape(64_c, 64_c);
  auto r = shape(64_c);
  return lower(kernel<sm_90a>(
      "acc_attention_block", grid(1), threads(1_c), gmem<bf16>("q", s), gmem<bf16>("k", shape(128_c, 64_c)), gmem<bf16>("v", shape(128_c, 64_c)),
      gmem<f32>("o", s), smem<bf16>(s, swizzle(128_c)), smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)),
      smem<bf16>(shape(2_c, 64_c, 64_c), swizzle(128_c)), barrier(arrivals(1_c), count(5_c)), accumulator<f32>("S", s), accumulator<f32>("O", s),
      accumulator<f32>("m", r), accumulator<f32>("m_new", r), accumulator<f32>("l", r),
      [=](auto q, auto k, auto v, auto o, auto qs, auto ks, auto vs, auto bar, auto S, auto O, auto m, auto mn, auto l) {
        auto loads = seq(copy_gmem_to_smem(q.block(0_c, 0_c), qs, bar[0_c]), copy_gmem_to_smem(k.block(0_c, 0_c), ks[0_c], bar[1_c]),
                         copy_gmem_to_smem(k.block(1_c, 0_c), ks[1_c], bar[2_c]), copy_gmem_to_smem(v.block(0_c, 0_c), vs[0_c], bar[3_c]),
                         copy_gmem_to_smem(v.block(1_c, 0_c), vs[1_c], bar[4_c]));
        auto step = for_(range(2_c), [&](auto j) {
          auto alpha = exp2(load(m) - load(mn));
          auto P = exp2(load(S) * 0.125f - broadcast<1>(load(mn), s));
          return seq(store(S, 0.0f), wgmma(S, qs, transpose(ks[j])), wgmma_commit(), wgmma_wait(0_c),
                     store(mn, max(load(m), max<1>(load(S) * 0.125f))), store(l, load(l) * alpha + sum<1>(P)),
                     store(O, load(O) * broadcast<1>(alpha, s)), wgmma(O, cast<bf16>(P), vs[j]), wgmma_commit(), wgmma_wait(0_c),
                     store(m, load(mn)));
        });
        return seq(loads, barrier_wait(bar[0_c]), barrier_wait(bar[1_c]), barrier_wait(bar[2_c]), barrier_wait(bar[3_c]), barrier_wait(bar[4_c]),
                   store(m, -1e30f), store(mn, -1e30f), store(l, 0.0f), store(O, 0.0f), step,
                   store(o.tile(s, 0_c, 0_c), load(O) / broadcast<1>(load(l), s)));
      }));
}

// Its reference in double: softmax(Q K^T / 8) V.
inline void attention_block_reference(std::vector<host_tensor>& b) {
  for (std::int64_t r = 0; r < 64; ++r) {
    std::vector<double> p(128);
    double mx = -1e300, total = 0;
    for (std::int64_t j = 0; j < 128; ++j) {
      double d = 0;
      for (std::int64_t c = 0; c < 64; ++c) d += b[0].get(r * 64 + c) * b[1].get(j * 64 + c);
      p[j] = d / 8;
      mx = std::max(mx, p[j]);
    }
    for (auto& x : p) total += (x = std::exp2(x - mx));
    for (std::int64_t c = 0; c < 64; ++c) {
      double acc = 0;
      for (std::int64_t j = 0; j < 128; ++j) acc += p[j] * b[2].get(j * 64 + c);
      b[3].set(r * 64 + c, acc / total);
    }
  }
}

// A row sum in a given association.
using row_sum_fn = std::function<float(std::vector<float> const&)>;

// The interpreter's: -0 + x0 + x1 + ... left to right.
inline float sum_in_order(std::vector<float> const& x) {
  float r = -0.0f;
  for (float v : x) r = r + v;
  return r;
}

// Generated code's: lane q of a quad holds columns 8j + 2q + {0, 1} (j ascending) and folds them
// in that order from -0; the butterflies then give every lane (p0 + p1) + (p2 + p3).
inline float sum_by_quad(std::vector<float> const& x) {
  float p[4];
  for (int q = 0; q < 4; ++q) {
    p[q] = -0.0f;
    for (std::size_t j = 0; j < x.size() / 8; ++j)
      for (int b = 0; b < 2; ++b) p[q] = p[q] + x[8 * j + 2 * q + b];
  }
  return (p[0] + p[1]) + (p[2] + p[3]);
}

inline void reference(std::vector<host_tensor>& b, row_sum_fn const& rsum) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float m = -1e30f, l = 0.0f;
    std::vector<float> o(cols, 0.0f), s(cols), p(cols);
    for (std::int64_t kb = 0; kb < blocks; ++kb) {
      float mx = std::nanf("");
      for (std::int64_t c = 0; c < cols; ++c) {
        s[c] = static_cast<float>(b[0].get(r * cols * blocks + kb * cols + c));
        mx = std::fmax(mx, s[c]);
      }
      const float mn = std::fmax(m, mx);
      const float alpha = ir::math_exp2(m - mn);
      for (std::int64_t c = 0; c < cols; ++c) p[c] = ir::math_exp2(s[c] - mn);
      l = l * alpha + rsum(p);
      for (std::int64_t c = 0; c < cols; ++c) o[c] = o[c] * alpha + p[c];
      m = mn;
    }
    float mn2 = std::nanf("");
    for (std::int64_t c = 0; c < cols; ++c) {
      b[1].set(r * cols + c, o[c] / l);
      mn2 = std::fmin(mn2, s[c] * 2.0f);
    }
    b[2].set(r, m);
    b[3].set(r, l);
    b[4].set(r, rsum(s));
    b[5].set(r, mn2);
  }
}

// Logits over [-6, 6]: the running max moves between blocks, so the rescaling is exercised.
inline std::vector<host_tensor> inputs(ir::Kernel const& k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> real(-6.0f, 6.0f);
  std::vector<host_tensor> out;
  for (auto const& p : k.params) {
    auto t = host_tensor::zeros(p.dtype, p.shape);
    for (std::int64_t i = 0; i < t.elements(); ++i) t.set(i, real(rng));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace stagecraft::testing::row_state
