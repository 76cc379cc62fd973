// Failures of the machine stagecraft runs on, kept apart from the user's kernel (exit 1/2) and
// from stagecraft's own bugs (exit 70): a host compiler or assembler that is missing or fails
// to start, a disk that fills, a cache or output directory we may not write. The CLI exits 69
// (sysexits' EX_UNAVAILABLE) with the message, which names what is missing and where.
#pragma once
#include <stdexcept>

namespace stagecraft {

struct environment_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace stagecraft
