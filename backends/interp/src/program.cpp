#include "program.hpp"

namespace stagecraft::interp::detail {
namespace {

// breaks: per enclosing loop, the jump_nonzero instructions of its break_ifs, which jump past its
// end once that is known.
void emit(ir::Kernel const& k, ir::StmtId id, std::vector<instr>& out, std::vector<std::vector<int>>& breaks) {
  auto const& s = k.stmts[id];
  auto here = [&] { return static_cast<int>(out.size()); };
  switch (s.op) {
    case ir::StmtOp::seq:
      for (auto c : s.body) emit(k, c, out, breaks);
      return;
    case ir::StmtOp::for_: {
      out.push_back({code::loop_init, id, -1, s.var});
      const int test = here();
      out.push_back({code::loop_test, id, -1, s.var});
      breaks.emplace_back();
      emit(k, s.body[0], out, breaks);
      out.push_back({code::loop_next, id, test, s.var});
      out[test].target = here();
      for (int b : breaks.back()) out[static_cast<std::size_t>(b)].target = here();
      breaks.pop_back();
      return;
    }
    case ir::StmtOp::break_if: {  // the verifier puts every break_if inside a loop
      breaks.back().push_back(here());
      out.push_back({code::jump_nonzero, id});
      return;
    }
    case ir::StmtOp::if_: {
      const int branch = here();
      out.push_back({code::jump_zero, id});
      emit(k, s.body[0], out, breaks);
      if (s.body.size() > 1) {
        const int skip = here();
        out.push_back({code::jump, id});
        out[branch].target = here();
        emit(k, s.body[1], out, breaks);
        out[skip].target = here();
      } else {
        out[branch].target = here();
      }
      return;
    }
    default:
      out.push_back({code::op, id});
  }
}

}  // namespace

std::vector<instr> flatten(ir::Kernel const& k) {
  std::vector<instr> out;
  std::vector<std::vector<int>> breaks;
  emit(k, k.body, out, breaks);
  out.push_back({code::end});
  return out;
}

}  // namespace stagecraft::interp::detail
