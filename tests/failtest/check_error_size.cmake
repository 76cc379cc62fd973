# A compile error must fit on a screen: compile SOURCE's ko side as check.cmake does and fail
# when the compiler's whole output (what the user reads) is longer than MAX_LINES lines.
# Inputs: CXX, SOURCE, INCLUDES (;-separated), STD, MAX_LINES
set(args -std=${STD} -fsyntax-only -fno-diagnostics-color -DSTAGECRAFT_KO)
foreach(dir IN LISTS INCLUDES)
  list(APPEND args "-I${dir}")
endforeach()
execute_process(COMMAND ${CXX} ${args} ${SOURCE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled with STAGECRAFT_KO: there is no error to measure")
endif()
set(log "${out}${err}")
string(REGEX MATCHALL "\n" newlines "${log}")
list(LENGTH newlines lines)
string(LENGTH "${log}" bytes)
if(lines GREATER MAX_LINES)
  message(FATAL_ERROR "${SOURCE}: the compile error is ${lines} lines (${bytes} bytes), more than ${MAX_LINES}:\n${log}")
endif()
message(STATUS "${SOURCE}: ${lines} lines, ${bytes} bytes (at most ${MAX_LINES})")
