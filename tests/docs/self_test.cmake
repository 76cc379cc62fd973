# check_reference.cmake must be able to fail: hand it copies of docs/reference.md with one entry
# removed and with one snippet edited, and require each to be rejected with the right message.
# Inputs: ROOT (source root), WORK (a scratch directory).
file(READ "${ROOT}/docs/reference.md" doc)
file(MAKE_DIRECTORY "${WORK}")

function(expect_rejected check label from to expect)
  string(REPLACE "${from}" "${to}" damaged "${doc}")
  if(damaged STREQUAL doc)
    message(FATAL_ERROR "${label}: `${from}` is no longer in docs/reference.md; give the self-test another victim")
  endif()
  file(WRITE "${WORK}/${label}.md" "${damaged}")
  execute_process(COMMAND ${CMAKE_COMMAND} -DCHECK=${check} -DROOT=${ROOT} -DDOC=${WORK}/${label}.md
                          -P ${CMAKE_CURRENT_LIST_DIR}/check_reference.cmake
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${label}: check `${check}` accepted a damaged page:\n${out}${err}")
  endif()
  if(NOT "${out}${err}" MATCHES "${expect}")
    message(FATAL_ERROR "${label}: check `${check}` failed, but without `${expect}`:\n${out}${err}")
  endif()
  message(STATUS "${label}: rejected as it must be")
endfunction()

expect_rejected(entries missing_entry "\n### `commit_smem`\n" "\n### commit_smem\n"
                "commit_smem   \\(dsl/include/stagecraft/ops/copy.hpp\\)")
expect_rejected(entries uncited_failtest "`tmem_budget`" "tmem_budget"
                "failtest `tmem_budget`")
expect_rejected(entries unquoted_rule "`wgmma_wait(n): n must be in [0, 7]`" "`wgmma_wait(n): n in [0, 7]`"
                "rule message not quoted: \"wgmma_wait\\(n\\): n must be in \\[0, 7\\]\"")
expect_rejected(entries unquoted_numbered_rule "`{op}: MMA inputs are f16" "`MMA inputs are f16"
                "rule message piece not quoted: \": MMA inputs are f16")
expect_rejected(snippets edited_snippet "wait_smem_to_gmem(1_c, read_only),  // out[o]'s store"
                "wait_smem_to_gmem(0_c, read_only),  // out[o]'s store"
                "snippet `stream_ring` in docs/reference.md differs")
expect_rejected(snippets unmarked_kernel "<!-- snippet: ws_scale -->\n" ""
                "a whole kernel is shown without a")
