#!/usr/bin/env bash
# `run --explore N --time-budget S`: an exploration far too long for the budget stops when the
# budget is spent, says how many schedules ran and that the budget (not a diagnostic) stopped
# it, in the exploration line and in the verdict, and exits as a clean exploration does (0).
# Nothing on stderr: it is not a terminal, so there is no progress line.
#   explore_budget.sh STAGECRAFT WORKDIR
set -u
cli=$1
work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

check_budget_run() {  # what, max seconds, explored-line regex, verdict regex, command...
  local what=$1 limit=$2 explored=$3 verdict=$4
  shift 4
  local start=$SECONDS
  "$@" > out.txt 2> err.txt
  local rc=$? took=$((SECONDS - start))
  [ $rc = 0 ] || fail "$what: exit code $rc, expected 0 (no diagnostic in the schedules that ran)"
  [ $took -le "$limit" ] || fail "$what: took $took s, the budget should have stopped it well before $limit s"
  grep -Eq "$explored" out.txt || fail "$what: no line matching '$explored' in:
$(cat out.txt)"
  grep -Eq "$verdict" out.txt || fail "$what: no verdict matching '$verdict' in:
$(cat out.txt)"
  [ ! -s err.txt ] || fail "$what: stderr is not a terminal, yet it has: $(cat -A err.txt | head -c 300)"
}

n=100000000
check_budget_run "interpreter" 20 \
  "^explored [0-9]+ of $n schedule\(s\) \(seeds 0\.\.[0-9]+\): no diagnostic in those; the --time-budget of 1 s ran out before the other [0-9]+$" \
  "^verdict: correct \(.*\), after only [0-9]+ of the $n schedules asked \(the --time-budget of 1 s ran out\)$" \
  "$cli" run handoff --explore $n --time-budget 1
# The budget is for the whole command: every kernel of --all still gets one schedule and a
# verdict saying how few ran.
check_budget_run "run --all" 120 \
  "^explored 1 of $n schedule\(s\) \(seeds 0\.\.0\): no diagnostic in those; the --time-budget of 0.5 s ran out" \
  "after only 1 of the $n schedules asked \(the --time-budget of 0.5 s ran out\)$" \
  "$cli" run --all --explore $n --time-budget 0.5
kernels=$("$cli" list | grep -c '^[a-z]')
verdicts=$(grep -c '^verdict: correct' out.txt)
[ "$verdicts" = "$kernels" ] || fail "run --all: $verdicts correct verdicts for $kernels kernels"
check_budget_run "host backend" 60 \
  "^verdict: correct \(524288 output elements match the interpreter" \
  "^verdict: correct on the [0-9]+ host schedule\(s\) that ran \(seeds 0\.\.[0-9]+\), only [0-9]+ of the $n asked: the --time-budget of 1 s ran out$" \
  "$cli" run add_one --backend host --explore $n --time-budget 1

# A budget that is not spent changes nothing: the usual line and verdict, no caveat.
"$cli" run handoff --explore 20 --time-budget 600 > out.txt 2> err.txt
rc=$?
[ $rc = 0 ] || fail "unspent budget: exit code $rc"
grep -q "^explored 20 schedule(s) (seeds 0..19): no diagnostic$" out.txt || fail "unspent budget: $(cat out.txt)"
grep -q "after only" out.txt && fail "unspent budget: a caveat in the verdict: $(cat out.txt)"

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "--time-budget stops the exploration, says how many of N ran, exits 0"
