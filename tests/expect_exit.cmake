# Runs a command and requires BOTH its exit code and a pattern in its output.
#
# A CTest PASS_REGULAR_EXPRESSION replaces the exit-code check instead of adding to it: a run
# that prints "verdict: correct" for its first kernel and then fails (exit 1, 2, 64, a crash)
# still passes. Tests that look for words in the output go through this script instead.
#
#   cmake [-DEXIT=code] [-DREGEX=re] [-DSKIP_EXIT=code] -P expect_exit.cmake -- COMMAND [ARG...]
#
# EXIT: the exit code the command must end with (default 0; a usage test names its 64).
# REGEX: a CMake regular expression that must match its stdout and stderr together (as
#   PASS_REGULAR_EXPRESSION would); optional.
# SKIP_EXIT: an exit code meaning "cannot run here" (no GPU library...): the script then prints
#   "[skipped: ...]" for the test's SKIP_REGULAR_EXPRESSION and succeeds; any other code still
#   has to be EXIT.
if(NOT DEFINED EXIT)
  set(EXIT 0)
endif()
set(cmd "")
set(seen_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(seen_dashes)
    string(REPLACE ";" "\\;" arg "${CMAKE_ARGV${i}}")  # an argument's ';' is not a list separator
    list(APPEND cmd "${arg}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(seen_dashes TRUE)
  endif()
endforeach()
if(NOT cmd)
  message(FATAL_ERROR "expect_exit.cmake: no command after --")
endif()
list(JOIN cmd " " shown)

# One variable for both streams: they are merged in the order produced, and echoed so the test's
# log shows what the command said.
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out
                ECHO_OUTPUT_VARIABLE ECHO_ERROR_VARIABLE)
if(DEFINED SKIP_EXIT AND "${rc}" STREQUAL "${SKIP_EXIT}")
  message(STATUS "[skipped: ${shown} exited with ${rc}, which means it cannot run here]")
  return()
endif()
# NOTICE then FATAL_ERROR: CMake rewraps an error's text, the notice stays as written.
if(NOT "${rc}" STREQUAL "${EXIT}")
  message(NOTICE "expect_exit: `${shown}` exited with '${rc}', expected ${EXIT}")
  message(FATAL_ERROR "wrong exit code")
endif()
if(DEFINED REGEX AND NOT "${REGEX}" STREQUAL "")
  if(NOT "${out}" MATCHES "${REGEX}")
    message(NOTICE "expect_exit: the output of `${shown}` (exit ${rc}, as expected) does not match '${REGEX}'")
    message(FATAL_ERROR "expected output missing")
  endif()
endif()
message(STATUS "expect_exit: exit ${rc} as expected, and the output matches")
