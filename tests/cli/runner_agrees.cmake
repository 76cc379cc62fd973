# A kernel runner (stagecraft_add_kernel_runner) must give the CLI's verdict: same inputs, same
# interpreter, same reference, so the same verdict line, step count included, and exit code 0.
#   cmake -DRUNNER=... -DCLI=... -DKERNEL=... -P runner_agrees.cmake
execute_process(COMMAND ${RUNNER} ${KERNEL} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
execute_process(COMMAND ${CLI} run ${KERNEL} RESULT_VARIABLE cli_rc OUTPUT_VARIABLE cli_out ERROR_VARIABLE cli_err)
if(NOT rc EQUAL 0 OR NOT cli_rc EQUAL 0)
  message(FATAL_ERROR "runner exit ${rc}, CLI exit ${cli_rc}\nrunner: ${out}${err}\nCLI: ${cli_out}${cli_err}")
endif()
string(REGEX MATCH "verdict: [^\n]*" verdict "${out}")
string(REGEX MATCH "verdict: [^\n]*" cli_verdict "${cli_out}")
if(NOT verdict MATCHES "^verdict: correct \\([0-9]+ output elements" OR NOT verdict STREQUAL cli_verdict)
  message(FATAL_ERROR "the runner and `stagecraft run ${KERNEL}` disagree:\n  runner: ${verdict}\n  CLI:    ${cli_verdict}")
endif()
message(STATUS "${KERNEL}: ${verdict}")
