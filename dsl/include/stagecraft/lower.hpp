// lower(kernel) -> ir::Kernel. The work happens in the IR library, compiled once.
#pragma once
#include "stagecraft/core/tree.hpp"
#include "stagecraft/ir/kernel.hpp"
#include "stagecraft/kernel.hpp"

namespace stagecraft {

namespace ir {
// Flattens the front end's tree, renumbers variables in binding order and verifies the result.
Kernel lower(tree::KernelDesc const& desc);
}  // namespace ir

template <target Target>
ir::Kernel lower(kernel_def<Target> const& k) {
  return ir::lower(k.desc);
}

}  // namespace stagecraft
