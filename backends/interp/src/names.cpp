// What the interpreter's reports call things: the user's names and lines, from the IR's debug
// tables. Diagnostics get theirs from ir::at_source; traces carry one line per op.
#include "program.hpp"

namespace stagecraft::interp::detail {

std::vector<std::string> op_sources(ir::Kernel const& k) {
  std::vector<std::string> out;
  out.reserve(k.stmts.size());
  for (std::size_t i = 0; i < k.stmts.size(); ++i) {
    const auto id = static_cast<ir::StmtId>(i);
    const auto where = ir::where(k, id);
    out.push_back(where.empty() ? ir::describe(k, id) : where + ": " + ir::describe(k, id));
  }
  return out;
}

}  // namespace stagecraft::interp::detail
