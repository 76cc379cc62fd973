// One stagecraft Python module: STAGECRAFT_PY_MODULE names it (_stagecraft, the package's own,
// unless stagecraft_add_python_module names a user's); its contents come from
// stagecraft::python (bindings.cpp), linked with the registry of the kernels built into it.
#include <stagecraft/python/bindings.hpp>

#ifndef STAGECRAFT_PY_MODULE
#define STAGECRAFT_PY_MODULE _stagecraft
#endif
#define STAGECRAFT_PY_STR2(x) #x
#define STAGECRAFT_PY_STR(x) STAGECRAFT_PY_STR2(x)

PYBIND11_MODULE(STAGECRAFT_PY_MODULE, m) { stagecraft::python::define_module(m, STAGECRAFT_PY_STR(STAGECRAFT_PY_MODULE)); }
