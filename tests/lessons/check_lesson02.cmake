# Lesson 02 shows the seed errors exactly as the compiler prints them: compile each ko file of
# examples/lessons/02_indexing with STAGECRAFT_KO and require docs/lessons/02.md to hold every
# `error:` line (and the note that carries the number) verbatim, from `error:`/`note:` on.
#   cmake -DCXX=... -DSOURCE_DIR=... -DINCLUDES=... -P check_lesson02.cmake
foreach(dir IN LISTS INCLUDES)
  list(APPEND incs "-I${dir}")
endforeach()
file(READ ${SOURCE_DIR}/docs/lessons/02.md doc)
foreach(name ko_unindexed ko_not_array)
  execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -fno-diagnostics-color -DSTAGECRAFT_KO ${incs}
                          ${SOURCE_DIR}/examples/lessons/02_indexing/${name}.cpp
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${name}.cpp compiled with STAGECRAFT_KO: the lesson's mistake is not a compile error")
  endif()
  string(REPLACE "\n" ";" lines "${err}")
  set(n 0)
  foreach(line IN LISTS lines)
    if(line MATCHES "(error: .*)$" OR line MATCHES "(note: .*diagnostic<.*evaluates to false)$")
      math(EXPR n "${n} + 1")
      string(FIND "${doc}" "${CMAKE_MATCH_1}" at)
      if(at EQUAL -1)
        message(FATAL_ERROR "docs/lessons/02.md does not show this line of ${name}.cpp's diagnostic as the compiler prints it:\n  ${CMAKE_MATCH_1}")
      endif()
    endif()
  endforeach()
  if(n EQUAL 0)
    message(FATAL_ERROR "${name}.cpp: no error line in the compiler's output:\n${err}")
  endif()
  message(STATUS "${name}: ${n} line(s) of the diagnostic shown verbatim")
endforeach()
