// The comparison of MMA outputs and fast-math outputs with their references (interp.hpp's
// mma_tolerance, and the fast math bound documented beside it).
#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "stagecraft/interp/interp.hpp"
#include "stagecraft/ir/math.hpp"
#include "stagecraft/ir/mx_formats.hpp"
#include "stagecraft/ir/tcgen05.hpp"
#include "stagecraft/ir/wgmma.hpp"

namespace stagecraft::interp {
namespace {

int mantissa_bits(ir::DType output) {
  return output == ir::DType::bf16 ? 7 : output == ir::DType::f16 ? 10 : output == ir::DType::e4m3 ? 3 : output == ir::DType::e5m2 ? 2 : 23;
}

// The trip count of a for_ statement: its bounds are constants in every kernel the front end
// lowers with static sizes. Bounds computed at run time (from program_id, say) are taken as the
// largest extent of any GMEM dimension, which a loop over blocks of a tensor cannot exceed.
std::int64_t trip_count(ir::Kernel const& k, ir::Stmt const& s) {
  auto const& lo = k.exprs[s.e0];
  auto const& hi = k.exprs[s.e1];
  if (lo.op == ir::ExprOp::constant && hi.op == ir::ExprOp::constant) return std::max<std::int64_t>(0, hi.value - lo.value);
  std::int64_t most = 1;
  for (auto const& p : k.params)
    for (auto d : p.shape) most = std::max(most, d);
  return most;
}

}  // namespace

double mma_tolerance::bound(double reference, ir::DType output, int param) const {
  double b = 0;
  if (k > 0) {
    const double kd = static_cast<double>(k);
    const double u_in = input == ir::DType::f32 ? std::ldexp(1.0, -9) : 0.0;
    // Accumulators narrower than f32 round once per instruction (ik products), not per product.
    const double steps = std::ceil(kd / ir::wgmma::instr_k(ir::dtype_bits(input)));
    // The 8- and 4-bit float kinds' internal accumulation, as fp8's (FP4's is not documented either).
    const bool narrow = ir::dtype_is_f8f6f4(input) || input == ir::DType::e2m1x2;
    const double u_step = accumulator == ir::DType::f16 ? std::ldexp(1.0, -10) : narrow ? std::ldexp(1.0, -13) : 0.0;
    // Scale factors (the blockwise fp8 GEMM's Sa and Sb) multiply every product: |a b sa sb|.
    const double sum_bound = kd * max_input * max_input * std::pow(std::max(max_input, 1.0), scale_factors) * block_scale;
    b += (kd * std::ldexp(1.0, -23) + steps * u_step + u_in) * sum_bound + std::ldexp(std::abs(reference), -mantissa_bits(output));
  }
  if (math_units > 0) {
    const double r = param >= 0 && static_cast<std::size_t>(param) < param_scale.size() ? param_scale[static_cast<std::size_t>(param)] : math_scale;
    b += math_units * std::ldexp(1.0, -24) * (std::abs(reference) + r) + std::ldexp(1.0, -125);
    if (k == 0) b += std::ldexp(std::abs(reference), -mantissa_bits(output));  // the output's own rounding may go the other way
  }
  return b;
}

bool mma_tolerance::within(double got, double reference, ir::DType output, int param) const {
  if (got == reference || (std::isnan(got) && std::isnan(reference))) return true;
  if (!ir::dtype_is_float(output)) return false;  // integer outputs (s8 MMA into s32) are exact
  return std::abs(got - reference) <= bound(reference, output, param);
}

std::string mma_tolerance::rule() const {
  std::string mma = k > 0 ? fmt::format("the MMA bound (K = {}, {} inputs{}, max |input| {})", k, input == ir::DType::f32 ? "tf32" : ir::dtype_name(input),
                                        scale_factors > 0  ? fmt::format(" with {} scale factors", scale_factors)
                                        : block_scale != 1 ? fmt::format(" with block scales up to {} per product", block_scale)
                                                           : "",
                                        max_input)
                          : "";
  std::string fast = math_units > 0 ? fmt::format("the fast-math bound (E = {:.4g} units of 2^-24, R up to {:.4g})", math_units, math_scale) : "";
  if (!mma.empty() && !fast.empty()) return mma + " plus " + fast;
  return mma.empty() ? fast : mma;
}

double fast_math_units(ir::Kernel const& k, double max_exp_arg) {
  // L(v) * (e(v) + [multiply]) summed over the value tree, L the product of enclosing reduction lengths.
  std::function<double(ir::ValueId, double)> tree = [&](ir::ValueId id, double l) -> double {
    if (id == ir::none) return 0.0;
    auto const& v = k.values[id];
    double e = 0;
    if (ir::dtype_is_float(v.dtype)) {
      e = ir::fast_error_units(v.op) + (v.op == ir::ValueOp::exp ? max_exp_arg : 0.0);
      if (v.op == ir::ValueOp::mul) e += 1;
    }
    double inner = l;
    if (ir::value_is_reduction(v.op)) inner *= static_cast<double>(k.values[v.a].shape[static_cast<std::size_t>(v.scalar)]);
    return l * e + tree(v.a, inner) + tree(v.b, inner) + tree(v.c, inner);
  };
  auto reads_destination = [&](ir::Stmt const& s) {
    if (s.refs.empty() || s.refs[0] == ir::none) return false;
    auto const& dst = k.refs[s.refs[0]];
    std::vector<ir::ValueId> stack{s.value};
    while (!stack.empty()) {
      auto const& v = k.values[stack.back()];
      stack.pop_back();
      if (v.op == ir::ValueOp::load && k.refs[v.ref].base == dst.base && k.refs[v.ref].id == dst.id) return true;
      for (auto c : {v.a, v.b, v.c})
        if (c != ir::none) stack.push_back(c);
    }
    return false;
  };
  std::function<double(ir::StmtId, double)> walk = [&](ir::StmtId id, double trips) -> double {
    auto const& s = k.stmts[id];
    double e = 0;
    if (s.value != ir::none) e += (reads_destination(s) ? trips : 1.0) * tree(s.value, 1.0);
    const double inner = s.op == ir::StmtOp::for_ ? trips * static_cast<double>(trip_count(k, s)) : trips;
    for (auto c : s.body) e += walk(c, inner);
    return e;
  };
  return walk(k.body, 1.0);
}

mma_tolerance between_fast_runs(mma_tolerance t) {
  t.math_units *= 2;
  return t;
}

std::optional<mma_tolerance> tolerance_of(ir::Kernel const& k, result const& r, std::vector<host_tensor> const& inputs) {
  const bool mma = std::any_of(k.stmts.begin(), k.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::wgmma || s.op == ir::StmtOp::tcgen05_mma; });
  mma_tolerance t;
  const auto outs = written_params(k);
  if (r.math == ir::math_mode::fast) {
    t.math_units = fast_math_units(k, r.max_exp_arg);
    t.param_scale.assign(k.params.size(), 0.0);
    for (int p : outs)
      if (static_cast<std::size_t>(p) < r.buffers.size())
        for (std::int64_t i = 0; i < r.buffers[p].elements(); ++i) {
          const double x = std::abs(r.buffers[p].get(i));
          if (std::isfinite(x)) t.param_scale[static_cast<std::size_t>(p)] = std::max(t.param_scale[static_cast<std::size_t>(p)], x);
        }
    for (double x : t.param_scale) t.math_scale = std::max(t.math_scale, x);
  }
  if (mma && r.mma_k > 0) {
    t.k = r.mma_k * ir::tcgen05::values_per_element(r.mma_input);  // products: two per e2m1x2 element
    t.input = r.mma_input;
    t.accumulator = r.mma_accumulator;
    int scale_inputs = 0;
    // A block-scaled MMA's u8 inputs are its ue8m0 scale codes: each product is multiplied by a
    // scale of A's and one of B's, so by at most the largest value squared.
    const bool block_scaled = std::any_of(k.stmts.begin(), k.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::tcgen05_mma && s.flag; });
    double largest_scale = 0;
    for (std::size_t p = 0; p < inputs.size() && p < k.params.size(); ++p) {
      if (k.params[p].workspace || std::find(outs.begin(), outs.end(), static_cast<int>(p)) != outs.end()) continue;
      if (block_scaled && (k.params[p].dtype == ir::DType::u8 || k.params[p].dtype == ir::DType::ue4m3)) {
        const bool ue8m0 = k.params[p].dtype == ir::DType::u8;
        for (std::int64_t i = 0; i < inputs[p].elements(); ++i) {
          const auto code = static_cast<unsigned>(inputs[p].get(i));
          largest_scale = std::max(largest_scale, static_cast<double>(ue8m0 ? ir::mx::decode_ue8m0(code) : ir::mx::decode(ir::mx::ue4m3, code)));
        }
        continue;
      }
      // Packed FP4 operands: the values are the two e2m1 codes of each byte, not the byte.
      if (k.params[p].dtype == ir::DType::e2m1x2) {
        for (std::int64_t i = 0; i < inputs[p].elements(); ++i)
          for (int h = 0; h < 2; ++h)
            t.max_input = std::max(t.max_input, std::abs(static_cast<double>(
                                                    ir::mx::decode(ir::mx::e2m1, ir::mx::unpack_e2m1(static_cast<std::uint8_t>(inputs[p].get(i)), h)))));
        continue;
      }
      // Unit-packed operands (FP6, kind::f8f6f4's FP4): the values their codes decode to.
      if (ir::dtype_is_unit_packed(k.params[p].dtype)) {
        for (std::int64_t i = 0; i < inputs[p].elements(); ++i)
          t.max_input = std::max(t.max_input, std::abs(static_cast<double>(
                                                  ir::mx::decode(ir::mx::unit_format(k.params[p].dtype), static_cast<unsigned>(inputs[p].get(i))))));
        continue;
      }
      // An index table (x.at(i): offsets, row counts) places the operands; its values are not ones.
      if (std::any_of(k.exprs.begin(), k.exprs.end(), [&](ir::Expr const& e) { return e.op == ir::ExprOp::load && e.value == static_cast<std::int64_t>(p); }))
        continue;
      // With 16-bit operands, a read-only parameter of another type is no operand: attention
      // backward's f32 LSE and delta (an LSE of 6 would otherwise widen the bound 9-fold).
      if (ir::dtype_bits(t.input) == 16 && k.params[p].dtype != t.input) continue;
      scale_inputs += ir::dtype_is_float(k.params[p].dtype) && !ir::dtype_is_fp8(k.params[p].dtype) ? 1 : 0;
      for (std::int64_t i = 0; i < inputs[p].elements(); ++i) t.max_input = std::max(t.max_input, std::abs(inputs[p].get(i)));
    }
    // An fp8 kernel's wider float inputs (f32 beside e4m3 operands) are its scale factors; its
    // fp8 inputs are operands (a GEMM's two, attention's Q, K and V).
    if (ir::dtype_is_fp8(t.input)) t.scale_factors = scale_inputs;
    if (block_scaled && largest_scale > 0) t.block_scale = largest_scale * largest_scale;
  }
  if (t.k == 0 && t.math_units == 0) return std::nullopt;
  // Integer outputs (s8 MMA into s32) are exact: compared bit for bit, with no bound to print.
  if (std::none_of(outs.begin(), outs.end(), [&](int p) { return ir::dtype_is_float(k.params[p].dtype); })) return std::nullopt;
  return t;
}

}  // namespace stagecraft::interp
