# The [gpu] tests either run or say they were skipped, never a pass that tested nothing: without a
# driver gpu_tests must exit with the skip code (and say why); an exit 0 must come from a run
# that skipped nothing.
# Inputs: EXE (gpu_tests), SKIP_CODE.
execute_process(COMMAND ${EXE} "[gpu]" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc STREQUAL "${SKIP_CODE}")
  if(NOT out MATCHES "skipped: no CUDA driver available")
    message(NOTICE "gpu_tests exited with the skip code ${SKIP_CODE} without saying why:\n${out}${err}")
    message(FATAL_ERROR "skip check failed")
  endif()
  message(STATUS "skipped, as it must be without a driver")
elseif(rc EQUAL 0 AND NOT out MATCHES "skipped:")
  message(STATUS "ran on the GPU")
else()
  message(NOTICE "gpu_tests: exit ${rc}; expected ${SKIP_CODE} (skipped, no driver) or 0 with nothing skipped:\n${out}${err}")
  message(FATAL_ERROR "skip check failed")
endif()
