// The verifier's protocol errors (issue 27): kept out of kernel.hpp, which every kernel includes,
// so that only the verifier, the CLI and its runners see it.
#pragma once
#include <string>

#include "stagecraft/ir/kernel.hpp"

namespace stagecraft::ir {

// A well-formed kernel whose statement tree breaks the protocol its ops follow, as the verifier
// can tell without running it: TMEM never freed, freed inside a loop, used after its dealloc.
// These are the user's mistakes, of the kind the interpreter's checks report when they show only
// in a run: the CLI reports them as a protocol error (exit 2), with `check` in the verdict.
struct ProtocolError : VerifyError {
  ProtocolError(std::string const& what, char const* check_name) : VerifyError(what), check(check_name) {}
  char const* check;  // "tmem-not-freed", "tmem-use-after-dealloc", "tmem-dealloc-in-loop"
};

}  // namespace stagecraft::ir
