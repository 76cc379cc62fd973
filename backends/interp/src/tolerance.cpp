// The comparison of MMA outputs with their references (interp.hpp's mma_tolerance).
#include <algorithm>
#include <cmath>

#include "stagecraft/interp/interp.hpp"
#include "stagecraft/ir/wgmma.hpp"

namespace stagecraft::interp {

double mma_tolerance::bound(double reference, ir::DType output) const {
  const double kd = static_cast<double>(k);
  const double u_in = input == ir::DType::f32 ? std::ldexp(1.0, -9) : 0.0;
  // Accumulators narrower than f32 round once per instruction (ik products), not per product.
  const double steps = std::ceil(kd / ir::wgmma::instr_k(ir::dtype_bits(input)));
  const double u_step = accumulator == ir::DType::f16 ? std::ldexp(1.0, -10) : ir::dtype_is_fp8(input) ? std::ldexp(1.0, -13) : 0.0;
  const double sum_bound = kd * max_input * max_input;
  const int mantissa = output == ir::DType::bf16 ? 7 : output == ir::DType::f16 ? 10 : output == ir::DType::e4m3 ? 3
                       : output == ir::DType::e5m2 ? 2 : 23;
  return (kd * std::ldexp(1.0, -23) + steps * u_step + u_in) * sum_bound + std::ldexp(std::abs(reference), -mantissa);
}

std::optional<mma_tolerance> tolerance_of(ir::Kernel const& k, result const& r, std::vector<host_tensor> const& inputs) {
  const bool mma = std::any_of(k.stmts.begin(), k.stmts.end(), [](ir::Stmt const& s) { return s.op == ir::StmtOp::wgmma || s.op == ir::StmtOp::tcgen05_mma; });
  if (!mma || r.mma_k == 0) return std::nullopt;
  mma_tolerance t;
  t.k = r.mma_k;
  t.input = r.mma_input;
  t.accumulator = r.mma_accumulator;
  const auto outs = written_params(k);
  for (std::size_t p = 0; p < inputs.size() && p < k.params.size(); ++p) {
    if (k.params[p].workspace || std::find(outs.begin(), outs.end(), static_cast<int>(p)) != outs.end()) continue;
    for (std::int64_t i = 0; i < inputs[p].elements(); ++i) t.max_input = std::max(t.max_input, std::abs(inputs[p].get(i)));
  }
  return t;
}

}  // namespace stagecraft::interp
