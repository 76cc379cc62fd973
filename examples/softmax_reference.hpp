// The reference the row-softmax examples are checked against: y = softmax of each row of x (the
// last dimension), in the kernels' own order and precision: f32 folds from column 0 and the
// shared exp (stagecraft/ir/math.hpp), so the interpreter, the host backend and the GPU's exact
// mode give these bits. Tensors in declaration order: x, y, both (rows, cols).
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

#include <stagecraft/ir/math.hpp>
#include <stagecraft/registry.hpp>

namespace stagecraft::examples {

inline void softmax_rows_reference(std::vector<host_tensor>& t, param_values const&) {
  auto x = t[0].as<float>();
  auto y = t[1].as<float>();
  const auto cols = static_cast<std::size_t>(t[0].shape.back());
  for (std::size_t r = 0; r < x.size() / cols; ++r) {
    const float* xr = &x[r * cols];
    float mx = xr[0];
    for (std::size_t c = 1; c < cols; ++c) mx = std::fmax(mx, xr[c]);
    float s = ir::math_exp(xr[0] - mx);
    for (std::size_t c = 1; c < cols; ++c) s += ir::math_exp(xr[c] - mx);
    for (std::size_t c = 0; c < cols; ++c) y[r * cols + c] = ir::math_exp(xr[c] - mx) / s;
  }
}

}  // namespace stagecraft::examples
