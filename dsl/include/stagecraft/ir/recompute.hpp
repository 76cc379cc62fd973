// Reductions that the generated code computes again for every element they are broadcast to.
//
// The code generator evaluates a stored tile expression element by element: a reduction inside
// it (sum<1>(x * x) in `x * rsqrt(sum<1>(x * x) / N + eps)`) is folded afresh for each output
// element that reads it, N times the work of folding it once per row. Only the walk of a wgmma
// D fragment hoists its row reductions (codegen.cpp, hoist_rows). The interpreter and the cost
// model compute such a reduction once, so neither shows the cost: this analysis says it, and
// `stagecraft run` and `stagecraft ptx` print it (issue 27, rough edge 2).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernel.hpp"

namespace stagecraft::ir {

struct recomputed_reduction {
  StmtId op = none;          // the store whose value holds the reduction
  ValueId reduction = none;
  std::int64_t length = 0;   // elements one result folds
  std::int64_t times = 0;    // output elements of the store that fold it again, per result
  std::string message;       // what `run` and `ptx` print: the op, the numbers, the fix, the line
};

// Every reduction (sum, max, min) in a stored tile expression whose result has fewer elements
// than the store (so each result is broadcast), in stores that do not walk a D fragment.
std::vector<recomputed_reduction> recomputed_reductions(Kernel const& k);

}  // namespace stagecraft::ir
