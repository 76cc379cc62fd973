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
