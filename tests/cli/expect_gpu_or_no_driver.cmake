# `run --backend gpu`: on a machine with a driver it must succeed (exit 0); without one it must
# say "no CUDA driver available" and exit 3, which CTest reports as skipped (SKIP_REGULAR_EXPRESSION
# on the marker below: a -P script cannot choose its exit code).
execute_process(COMMAND ${CLI} run ${KERNEL} --backend gpu RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(STATUS "ran on the GPU: ${out}")
elseif(rc EQUAL 3 AND out MATCHES "no CUDA driver available")
  message(STATUS "[skipped: no CUDA driver] ${out}")
else()
  message(FATAL_ERROR "run ${KERNEL} --backend gpu: exit ${rc}\n${out}\n${err}")
endif()
