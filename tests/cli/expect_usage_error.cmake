# The CLI must answer a user's mistake with exit code 64 (or EXIT) and a one-line message on
# stderr, never a crash; with EXPECT, the message must contain that text (the numbers, the
# reason), so a test cannot pass on some other error that happens to share the exit code.
if(NOT DEFINED EXIT)
  set(EXIT 64)
endif()
if(EMPTY_LAST)  # a CMake list drops empty elements: `--trace ""` needs its own call
  execute_process(COMMAND ${CLI} ${ARGS} "" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
else()
  execute_process(COMMAND ${CLI} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
endif()
if(NOT rc EQUAL EXIT)
  message(FATAL_ERROR "stagecraft ${ARGS}: expected exit code ${EXIT}, got '${rc}'\nstdout: ${out}\nstderr: ${err}")
endif()
string(STRIP "${err}" err)
string(FIND "${err}" "\n" nl)
if(NOT nl EQUAL -1 OR err STREQUAL "")
  message(FATAL_ERROR "stagecraft ${ARGS}: expected one line on stderr, got:\n${err}")
endif()
# EXPECT may be a list: every part must be in the message (around a part that varies, such as
# the path of the source line a message points at).
foreach(part IN LISTS EXPECT)
  string(FIND "${err}" "${part}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "stagecraft ${ARGS}: the message does not say '${part}':\n${err}")
  endif()
endforeach()
message(STATUS "${err}")
