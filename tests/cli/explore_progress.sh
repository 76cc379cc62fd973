#!/usr/bin/env bash
# `run --explore` on a terminal: a progress line on stderr, rewritten in place (\r and erase to
# the end of the line), from the first schedule to the last, then erased before the results;
# on a file or a pipe, nothing. The terminal is script(1)'s pseudo-terminal (util-linux);
# without script the test is skipped (exit 77).
#   explore_progress.sh STAGECRAFT WORKDIR
set -u
cli=$1
work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
if ! command -v script > /dev/null; then
  echo "[skipped: no script(1) to give stagecraft a terminal]"
  exit 77
fi
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
cr_el=$'\r\033[K'

# stdout to a file, stderr to the terminal: what the terminal shows is the progress alone.
script -qec "'$cli' run handoff --explore 300 > out.txt" /dev/null > tty.txt
rc=$?
[ $rc = 0 ] || fail "exit code $rc on a terminal"
tty=$(cat tty.txt)
[[ $tty == "${cr_el}explore handoff: 1/300 schedules, "* ]] || fail "the terminal does not start with the first schedule's line: $(cat -A tty.txt | head -c 200)"
[[ $tty == *"${cr_el}explore handoff: 300/300 schedules, "*" s${cr_el}" ]] ||
  fail "the terminal does not end with the last schedule's line, then erases it: $(cat -A tty.txt | tail -c 200)"
grep -q "^explored 300 schedule(s) (seeds 0..299): no diagnostic" out.txt || fail "stdout: $(cat out.txt)"
# With a budget, the line says so.
script -qec "'$cli' run handoff --explore 300 --time-budget 600 > /dev/null" /dev/null > tty.txt
grep -q "schedules, [0-9.]* s of the 600 s budget" tty.txt || fail "no budget in the progress line: $(cat -A tty.txt | head -c 200)"

# Not a terminal: stderr stays empty, so logs and tests see none of it.
"$cli" run handoff --explore 300 > out.txt 2> err.txt
[ ! -s err.txt ] || fail "stderr to a file has: $(cat -A err.txt | head -c 200)"

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "a progress line on a terminal, none elsewhere"
