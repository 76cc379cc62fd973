# Test discovery must find tests. catch_discover_tests reads the exit code of
# `--list-test-names-only` as the number of tests, so an executable that cannot start (a missing
# shared library: exit 127, nothing on stdout) looks like one with 127 tests and registers none:
# its tests vanish from CTest without an error. Here the listing must name at least one test and
# agree with the count Catch returns (capped at 255, like any exit code).
# Input: EXE (the test executable).
execute_process(COMMAND ${EXE} --list-test-names-only
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
# A name may not hold a ';': catch_discover_tests cuts the CTest test's name there, and the
# filter it runs with then matches nothing, so the test "passed" without running (27 did, until
# 2026-12-05). Name the offenders and stop the build.
if(out MATCHES ";")
  string(REGEX MATCHALL "[^\r\n]*;[^\r\n]*" bad "${out}")
  string(REPLACE ";" "<;>" bad "${bad}")
  message(NOTICE "test discovery: ${EXE} has test names with a ';', which CTest would cut and then run nothing: ${bad}")
  message(FATAL_ERROR "test discovery failed")
endif()
string(REPLACE ";" "," listing "${out}")
string(REGEX MATCHALL "[^\r\n]+" names "${listing}")
list(LENGTH names n)
set(expected_rc ${n})
if(expected_rc GREATER 255)
  set(expected_rc 255)
endif()
# NOTICE, not FATAL_ERROR, for the text: CMake rewraps error messages, which breaks a test's regex.
if(n EQUAL 0)
  message(NOTICE "test discovery: ${EXE} lists no tests (exit ${rc}); its tests would vanish from CTest.\n${out}${err}")
  message(FATAL_ERROR "test discovery failed")
elseif(NOT rc STREQUAL "${expected_rc}")
  message(NOTICE "test discovery: ${EXE} printed ${n} test name(s) but exited with ${rc}, not the count; "
                 "something failed after the listing (a sanitizer at exit?).\n${out}${err}")
  message(FATAL_ERROR "test discovery failed")
endif()
message(VERBOSE "test discovery: ${EXE} lists ${n} test(s)")
