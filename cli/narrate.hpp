// A readable account of an interpreter run, for lessons: one line per event in the order the
// schedule ran them, optionally only those that touch one barrier.
#pragma once
#include <string>
#include <vector>

#include "stagecraft/interp/trace.hpp"

namespace stagecraft::cli {

// `barrier` ("b1", "b1[0]") keeps the events whose label names it, plus diagnostics; empty keeps all.
std::vector<std::string> narrate(interp::trace const& t, std::string const& barrier = {});

}  // namespace stagecraft::cli
