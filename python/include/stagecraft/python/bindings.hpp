// stagecraft::python: the Python bindings as a library, so that a module of kernels (the
// package's own, or a user's built by stagecraft_add_python_module) compiles only a few lines
// of its own instead of the whole binding code again.
#pragma once

#include <string>

#include <pybind11/pybind11.h>

namespace stagecraft::python {

// Fills module `m` (named `name`) with the registry of the shared object it is linked into: its
// kernels, the backends' calls and the package's exceptions (UsageError, ... from
// stagecraft._stagecraft, which a module other than _stagecraft imports).
void define_module(pybind11::module_& m, std::string const& name);

}  // namespace stagecraft::python
