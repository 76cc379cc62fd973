#!/usr/bin/env bash
# CTest label `lessons`: `stagecraft lesson NN --step` driven by lines on stdin, as a learner's
# scripted session. Each case feeds the choices, then checks the transcript and the exit code.
#   usage: check_step.sh STAGECRAFT_CLI OUT_DIR
set -uo pipefail
cli=$1
out=$2
mkdir -p "$out"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# session NAME INPUT ARGS...: runs the CLI with INPUT on stdin; the transcript goes to OUT_DIR/NAME.txt.
session() {
  local name=$1 input=$2; shift 2
  printf '%b' "$input" | "$cli" lesson "$@" --step --timeline "$out/$name.html" >"$out/$name.txt" 2>&1
  echo $? >"$out/$name.rc"
}
expect() {  # NAME EXIT REGEX...: the exit code, and each (extended) regex somewhere in the transcript
  local name=$1 want=$2; shift 2
  local rc before=$fails
  rc=$(cat "$out/$name.rc")
  [ "$rc" = "$want" ] || fail "$name: exit $rc, expected $want"
  for re in "$@"; do grep -Eq -- "$re" "$out/$name.txt" || fail "$name: no line matching '$re'"; done
  [ "$fails" = "$before" ] && echo "ok: $name"
}
absent() {  # NAME REGEX: must not appear
  grep -Eq -- "$2" "$out/$1.txt" && fail "$1: unexpected '$2'"
  return 0
}

# Lesson 01's twin (warpgroup 1 reads without waiting). The learner lets warpgroup 0 write first,
# then moves warpgroup 1's read before the arrive: the read is not ordered after the write.
session race '1\n2\n' 01 --buggy=no_wait
expect race 0 'what moves next\?' '1  wg0 +op #2 store' '2  wg1 +op #4 store' 'step +1: wg1 moves' \
  '^Your schedule caused it' 'data-race: .*not ordered after the earlier write by warpgroup 0' 'Fix: barrier_wait\(ready\)'
# The opposite choice: warpgroup 1 reads first, before anything was written.
session early '2\n' 01 --buggy=no_wait
expect early 0 'step +0: wg1 moves' 'poison-read: .*which nothing has written' 'another face of the same mistake'
absent early 'data-race:'
# Undo: the learner lets the writer go first, takes it back and moves the reader instead: the
# run replays to the first choice and ends as the opposite order does.
session undo '1\nu\n2\n' 01 --buggy=no_wait
expect undo 0 'step +0: wg0 moves' 'undone: the run replays' 'step +0: wg1 moves' 'poison-read'
# The correct warp-specialized kernel of lesson 08 under the learner's order (the consumers are
# blocked until the first stage lands: they are never offered before), by name and by number;
# the end of the input runs the rest eagerly.
session correct 'wg0\n1\n' 08
expect correct 0 'blocked: wg1 at op #[0-9]+ barrier_wait\(b1\[v1 % 2\]\).*waits for completion #1 of b1\[0\]' \
  '2  async0 +TMA load of op #[0-9]+ .*lands 32768 bytes and completes them on b1\[0\]' 'step +2: async0 moves' 'end of input' 'verdict: correct'
# A choice that is not on the list is asked again; q stops without a verdict.
session bad 'wg7\nq\n' 01 --buggy=no_wait
expect bad 0 "'wg7' is not a choice here" 'stopped by the learner'
absent bad 'verdict'
# The timeline of the learner's schedule is written.
[ -s "$out/race.html" ] && grep -q 'data-race' "$out/race.html" && echo "ok: race.html has the diagnostic" || fail "race.html"

[ "$fails" = 0 ] || { echo "$fails check(s) failed; transcripts in $out"; exit 1; }
echo "all --step sessions behaved"
