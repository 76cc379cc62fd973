# Every binary must start on a machine without a CUDA driver: no libcuda (the driver is dlopen'ed
# at run time) in what the loader resolves, directly or through another library, and nothing the
# loader cannot find. With NVRTC dlopen'ed too (STAGECRAFT_NVRTC_DLOPEN), no libnvrtc either.
# Inputs: BINARIES (;-separated paths), FORBIDDEN (a regex of library names), LDD.
set(bad "")
foreach(bin IN LISTS BINARIES)
  execute_process(COMMAND ${LDD} ${bin} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(APPEND bad "${bin}: ldd failed (exit ${rc}): ${err}\n")
    continue()
  endif()
  string(REGEX MATCHALL "[^\n]+" lines "${out}")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    if(line MATCHES "^(${FORBIDDEN})")
      string(APPEND bad "${bin} needs ${line}: a machine without that library could not start it; load it with dlopen\n")
    endif()
    if(line MATCHES "not found")
      string(APPEND bad "${bin}: the loader cannot find ${line}\n")
    endif()
  endforeach()
endforeach()
if(bad)
  message(NOTICE "${bad}")  # as printed: CMake rewraps an error message's text
  message(FATAL_ERROR "binary check failed")
endif()
list(LENGTH BINARIES n)
message(STATUS "${n} binaries, none needs ${FORBIDDEN}")
