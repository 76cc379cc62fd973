# Sharded exploration equals the unsharded run: `run --all --explore N` in SHARDS shards, merged,
# gives the very bytes the unsharded run's results merge to, and both agree with what the
# classic (text) run prints: the same verdict per kernel and the same first failing seed.
#   -DCLI=stagecraft -DWORK=dir -DEXPLORE=200 -DSHARDS=4 [-DSEED=s] [-DEXPECT_FAILS="s1;s2"]
# EXPECT_FAILS pins the first failing seeds, so a test meant to have its first failure in a
# shard other than 0 cannot quietly turn into one whose failures all sit in shard 0.
if(NOT DEFINED SEED)
  set(SEED 0)
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(run_cli out_rc out_text)
  execute_process(COMMAND ${CLI} ${ARGN} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(e)
    message(FATAL_ERROR "stagecraft ${ARGN}: unexpected stderr: ${e}")
  endif()
  set(${out_rc} ${rc} PARENT_SCOPE)
  set(${out_text} "${o}" PARENT_SCOPE)
endfunction()

run_cli(classic_rc classic run --all --explore ${EXPLORE} --seed ${SEED})
run_cli(full_rc ignored run --all --explore ${EXPLORE} --seed ${SEED} --results full.jsonl)
if(NOT full_rc EQUAL classic_rc)
  message(FATAL_ERROR "run --results exits ${full_rc}, the classic run ${classic_rc}")
endif()
set(shards)
math(EXPR last "${SHARDS} - 1")
foreach(i RANGE ${last})
  run_cli(rc ignored run --all --explore ${EXPLORE} --seed ${SEED} --shard ${i}/${SHARDS} --results shard${i}.jsonl)
  list(APPEND shards shard${i}.jsonl)
endforeach()
run_cli(m1_rc ignored merge full.jsonl -o merged1.jsonl)
# Reversed order on purpose: merging must not depend on the order the files come in.
list(REVERSE shards)
run_cli(mn_rc ignored merge ${shards} -o mergedN.jsonl)
if(NOT m1_rc EQUAL classic_rc OR NOT mn_rc EQUAL classic_rc)
  message(FATAL_ERROR "exit codes differ: classic ${classic_rc}, merged unsharded ${m1_rc}, merged shards ${mn_rc}")
endif()
file(READ ${WORK}/merged1.jsonl m1)
file(READ ${WORK}/mergedN.jsonl mn)
if(NOT m1 STREQUAL mn)
  message(FATAL_ERROR "the merged shards differ from the unsharded run:\n--- unsharded\n${m1}\n--- ${SHARDS} shards\n${mn}")
endif()

# Against the classic run's text: every kernel's verdict, and the first failing seed.
string(REGEX MATCHALL "verdict: correct" ok_classic "${classic}")
string(REGEX MATCHALL "\"verdict\":\"correct\"" ok_merged "${m1}")
list(LENGTH ok_classic n_ok_classic)
list(LENGTH ok_merged n_ok_merged)
string(REGEX MATCHALL "seed [0-9]+ fails" fails_classic "${classic}")
string(REGEX MATCHALL "\"failing_seed\":[0-9]+" fails_merged "${m1}")
string(REGEX REPLACE "seed ([0-9]+) fails" "\\1" fails_classic "${fails_classic}")
string(REGEX REPLACE "\"failing_seed\":([0-9]+)" "\\1" fails_merged "${fails_merged}")
if(NOT n_ok_classic EQUAL n_ok_merged OR NOT "${fails_classic}" STREQUAL "${fails_merged}")
  message(FATAL_ERROR "classic run: ${n_ok_classic} correct, failing seeds '${fails_classic}'; merged: ${n_ok_merged} correct, "
                      "failing seeds '${fails_merged}'\n${classic}\n${m1}")
endif()
if(DEFINED EXPECT_FAILS AND NOT "${fails_merged}" STREQUAL "${EXPECT_FAILS}")
  message(FATAL_ERROR "first failing seeds '${fails_merged}', expected '${EXPECT_FAILS}'")
endif()
message(STATUS "${SHARDS} shards merged equal the unsharded run: ${n_ok_merged} correct, failing seeds '${fails_merged}'")
