# stagecraft_add_kernels(TARGET FILES a.cpp b.cpp ...)
#
# Adds kernel translation units (files that STAGECRAFT_REGISTER kernels) to TARGET so that their
# registrations always run. A registration is a static initialiser nothing refers to, so a
# linker drops it from a static library; here the files become an OBJECT library whose objects
# are linked into TARGET itself (an executable or shared library), or, when TARGET is a static
# library, into everything that links TARGET (so no consumer can lose them).
function(stagecraft_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "FILES")
  if(NOT arg_FILES)
    message(FATAL_ERROR "stagecraft_add_kernels(${target}): no FILES given")
  endif()
  set(objects ${target}_stagecraft_kernels)
  add_library(${objects} OBJECT ${arg_FILES})
  target_link_libraries(${objects} PUBLIC stagecraft::dsl)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "STATIC_LIBRARY" OR type STREQUAL "INTERFACE_LIBRARY")
    target_sources(${target} INTERFACE $<TARGET_OBJECTS:${objects}>)
    target_link_libraries(${target} INTERFACE stagecraft::dsl)
  else()
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${objects}>)
    target_link_libraries(${target} PRIVATE stagecraft::dsl)
  endif()
endfunction()

# stagecraft_add_python_module(NAME FILES a.cpp ... [INCLUDES dir ...] [OUTPUT_DIRECTORY dir])
#
# The kernel files (their STAGECRAFT_REGISTER entries) as the Python module NAME, which the
# stagecraft package loads: `sc.load("NAME").kernel("saxpy", M=256)(x)` (docs/python.md). The
# module has a registry of its own (these files' kernels only), the package's bindings
# (stagecraft::python) and its exceptions; it is one small generated translation unit plus the
# user's files. Against an installed stagecraft: find_package(stagecraft COMPONENTS python),
# which finds the Python the bindings were built for and pybind11. The module lands in
# OUTPUT_DIRECTORY (default: the current binary directory); put that on sys.path.
function(stagecraft_add_python_module name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "OUTPUT_DIRECTORY" "FILES;INCLUDES")
  if(NOT arg_FILES)
    message(FATAL_ERROR "stagecraft_add_python_module(${name}): no FILES given")
  endif()
  if(NOT TARGET stagecraft::python OR NOT COMMAND pybind11_add_module)
    message(FATAL_ERROR "stagecraft_add_python_module(${name}): stagecraft's python component is not here: find_package(stagecraft "
                        "COMPONENTS python) first (stagecraft builds it where Python's headers and pybind11 are found: "
                        "apt-get install python3-dev pybind11-dev)")
  endif()
  # pybind11 adds -flto to Release modules; GCC's LTO objects need a linker plugin that lld lacks
  # (a module with no PyInit_ in it).
  set(CMAKE_INTERPROCEDURAL_OPTIMIZATION OFF)
  pybind11_add_module(${name} MODULE ${STAGECRAFT_PYTHON_MODULE_SOURCE} ${arg_FILES})
  target_compile_definitions(${name} PRIVATE STAGECRAFT_PY_MODULE=${name})
  target_include_directories(${name} PRIVATE ${arg_INCLUDES})
  target_link_libraries(${name} PRIVATE stagecraft::python)
  if(arg_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${arg_OUTPUT_DIRECTORY})
  endif()
endfunction()

# ---- the kernel author's edit loop (docs/edit_loop.md) -------------------------------------------
# Kernel construction runs once per run: optimising it buys nothing a user can measure and costs
# most of a kernel file's compile. Kernel files are compiled with these flags after the build
# type's, and (STAGECRAFT_KERNEL_PCH) against one precompiled header of the public headers, built
# once per build tree: the edited file then parses only itself.
set(STAGECRAFT_KERNEL_FLAGS "-O0" CACHE STRING "Compile flags for kernel translation units (appended after the build type's)")
option(STAGECRAFT_KERNEL_PCH "Compile kernel files against a precompiled header of stagecraft's headers" ON)

# stagecraft_kernel_options(OBJECT_TARGET [INSTANTIATE "<param>=<value> ..."]): the kernel flags,
# the parameter values to build (STAGECRAFT_INSTANTIATE, registry.hpp), and the precompiled
# header where the compiler handles it (clang before 16 crashes building one of these headers:
# LambdaExpr::children). The header reads STAGECRAFT_INSTANTIATE, so each set of values gets a
# precompiled header of its own (one per set and build tree, built once).
function(stagecraft_kernel_options objects)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "INSTANTIATE" "")
  target_compile_options(${objects} PRIVATE ${STAGECRAFT_KERNEL_FLAGS})
  set(defs "")
  if(arg_INSTANTIATE)
    set(defs "STAGECRAFT_INSTANTIATE=\"${arg_INSTANTIATE}\"")
    target_compile_definitions(${objects} PRIVATE ${defs})
  endif()
  if(NOT STAGECRAFT_KERNEL_PCH OR (CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 16))
    return()
  endif()
  string(MD5 key "${arg_INSTANTIATE}")
  string(SUBSTRING ${key} 0 8 key)
  set(pch stagecraft_kernel_pch_${key})
  if(NOT TARGET ${pch})
    set(src ${CMAKE_BINARY_DIR}/${pch}.cpp)
    if(NOT EXISTS ${src})
      file(WRITE ${src} "// The translation unit that builds stagecraft's precompiled header for kernel files.\n")
    endif()
    add_library(${pch} OBJECT ${src})
    target_link_libraries(${pch} PUBLIC stagecraft::dsl)
    target_compile_options(${pch} PRIVATE ${STAGECRAFT_KERNEL_FLAGS})
    if(defs)
      target_compile_definitions(${pch} PRIVATE ${defs})
    endif()
    target_precompile_headers(${pch} PRIVATE <stagecraft/stagecraft.hpp> <stagecraft/registry.hpp>)
  endif()
  target_precompile_headers(${objects} REUSE_FROM ${pch})
endfunction()

# stagecraft_add_kernel_runner(NAME FILES <kernel sources> | OBJECTS <objects>
#                              [INSTANTIATE <param>=<value> ...]): a small program that runs the
# kernels it links in the interpreter with their default parameters and prints the CLI's verdict
# (`NAME [kernel ...]`). It links the front end, the interpreter and those kernels only, not the
# code generator or the CUDA backends, so an edit relinks a small program; with lld when the
# compiler can use it. FILES are compiled as kernel files (stagecraft_kernel_options).
# INSTANTIATE: the parameter values the runner runs (the defaults), so that a kernel's named
# dispatch<"K", ...>(values, f) builds only those (STAGECRAFT_INSTANTIATE, registry.hpp).
function(stagecraft_add_kernel_runner name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "OBJECTS;FILES;INSTANTIATE")
  add_executable(${name} ${arg_OBJECTS})
  target_link_libraries(${name} PRIVATE stagecraft::runner)
  if(arg_FILES)
    stagecraft_add_kernels(${name} FILES ${arg_FILES})
    list(JOIN arg_INSTANTIATE " " only)
    stagecraft_kernel_options(${name}_stagecraft_kernels INSTANTIATE "${only}")
  endif()
  include(CheckLinkerFlag)
  check_linker_flag(CXX -fuse-ld=lld STAGECRAFT_RUNNER_HAVE_LLD)
  if(STAGECRAFT_RUNNER_HAVE_LLD)
    target_link_options(${name} PRIVATE -fuse-ld=lld)
  endif()
endfunction()
