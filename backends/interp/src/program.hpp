// The statement tree of an ir::Kernel flattened into a small instruction list: loops and
// conditionals become jumps, leaves stay "execute op #N". Agents then run with a program counter.
#pragma once
#include <string>
#include <vector>

#include "stagecraft/ir/kernel.hpp"

namespace stagecraft::interp::detail {

enum class code : std::uint8_t {
  op,         // execute the leaf statement `stmt`
  loop_init,  // var = lo; hi_of[var] = hi (bounds are evaluated once, on entry)
  loop_test,  // if var >= hi_of[var]: goto target
  loop_next,  // ++var; goto target
  jump_zero,  // if !cond(stmt): goto target
  jump_nonzero,  // if cond(stmt) (a break_if's e0): goto target, past its loop
  jump,       // goto target
  end,
};

struct instr {
  code what;
  ir::StmtId stmt = ir::none;
  int target = -1;
  int var = -1;
};

std::vector<instr> flatten(ir::Kernel const& k);

// Per op number, where the user wrote it and the op as written (names.cpp): the trace's sources.
std::vector<std::string> op_sources(ir::Kernel const& k);

}  // namespace stagecraft::interp::detail
