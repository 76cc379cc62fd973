// `stagecraft lesson NN --step`: the learner drives the schedule. At every step the interpreter
// offers what may move next (the runnable warpgroups, the async operations in flight) and the
// state of every barrier; the learner picks one by its number or name, and sees the diagnostic
// the moment their schedule causes it.
#pragma once
#include <istream>
#include <optional>
#include <vector>

#include "stagecraft/host/tensor.hpp"
#include "stagecraft/interp/interp.hpp"
#include "stagecraft/ir/kernel.hpp"

namespace stagecraft::cli {

// Runs k on `inputs` under the choices read from `in`, one line each (so a session can be
// scripted and tested): a number from the list or a name ("wg1", "async3") moves it; "u"
// undoes the learner's last choice (the run replays the earlier ones exactly: the interpreter
// is deterministic); "r" runs the rest under the eager schedule (as does the end of the input);
// "q" stops the run where it is (the result is then empty). A step with one choice moves by
// itself. Prints the session to stdout. `o` gives the checks and tracing; its schedule is
// replaced by the learner's.
std::optional<interp::result> run_stepping(ir::Kernel const& k, std::vector<host_tensor> const& inputs, interp::options o, std::istream& in);

}  // namespace stagecraft::cli
