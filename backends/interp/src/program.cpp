#include "program.hpp"

namespace stagecraft::interp::detail {
namespace {

void emit(ir::Kernel const& k, ir::StmtId id, std::vector<instr>& out) {
  auto const& s = k.stmts[id];
  auto here = [&] { return static_cast<int>(out.size()); };
  switch (s.op) {
    case ir::StmtOp::seq:
      for (auto c : s.body) emit(k, c, out);
      return;
    case ir::StmtOp::for_: {
      out.push_back({code::loop_init, id, -1, s.var});
      const int test = here();
      out.push_back({code::loop_test, id, -1, s.var});
      emit(k, s.body[0], out);
      out.push_back({code::loop_next, id, test, s.var});
      out[test].target = here();
      return;
    }
    case ir::StmtOp::if_: {
      const int branch = here();
      out.push_back({code::jump_zero, id});
      emit(k, s.body[0], out);
      if (s.body.size() > 1) {
        const int skip = here();
        out.push_back({code::jump, id});
        out[branch].target = here();
        emit(k, s.body[1], out);
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
  emit(k, k.body, out);
  out.push_back({code::end});
  return out;
}

}  // namespace stagecraft::interp::detail
