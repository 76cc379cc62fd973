#!/usr/bin/env bash
# Outputs are written whole or not at all (cli/internal.hpp, output_file): a run that fails, is
# interrupted or times out leaves the file the user had; a finished run replaces it whole, with
# its permissions, through its symbolic link; no temporary is left behind on any path.
#   outputs_kept.sh STAGECRAFT WORKDIR
set -u
cli=$1
work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
# The file holds exactly what it held before.
expect_kept() {  # what file old_text
  local got
  got=$(cat "$2" 2>/dev/null || echo '<missing>')
  [ "$got" = "$3" ] || fail "$1: '$2' now holds '${got:0:80}', expected it kept as '$3'"
}
expect_no_temporaries() {  # what
  local left
  left=$(find . -name '.*.stagecraft-*')
  [ -z "$left" ] || fail "$1: temporaries left behind: $left"
}
expect_rc() {  # what got expected
  [ "$2" = "$3" ] || fail "$1: exit code $2, expected $3"
}

# A usage error found after the outputs were opened (--pct-depth is checked after --results'
# file): nothing ran, so nothing may change.
echo old > r.jsonl
"$cli" run add_one --explore 2 --results r.jsonl --pct-depth 0 > out.txt 2> err.txt
expect_rc "usage error" $? 64
grep -q -- "--pct-depth must be at least 1" err.txt || fail "usage error: stderr says '$(cat err.txt)'"
expect_kept "usage error" r.jsonl old
expect_no_temporaries "usage error"

# An exploration interrupted by SIGINT (Ctrl-C) and by SIGTERM (timeout's and batch systems'
# signal) while it runs: the old results stay, and the temporary is removed by the handler. The
# exploration would take hours, so it is surely running when the signal comes.
for sig in INT TERM; do
  echo "old $sig" > r.jsonl
  echo "old $sig" > trace.json
  timeout -s $sig 1.5 "$cli" run --all --explore 100000000 --shard 1/4 --results r.jsonl > /dev/null 2>&1
  expect_rc "SIG$sig during run --results" $? 124
  expect_kept "SIG$sig during run --results" r.jsonl "old $sig"
  timeout -s $sig 1.5 "$cli" run handoff --explore 100000000 --trace trace.json > /dev/null 2>&1
  expect_rc "SIG$sig during run --trace" $? 124
  expect_kept "SIG$sig during run --trace" trace.json "old $sig"
  expect_no_temporaries "SIG$sig"
done

# A finished run replaces the file whole, keeps a replaced file's permissions (private results
# stay private), gives a new file the umask's, and writes through a symbolic link, not over it.
echo old > r.jsonl
chmod 600 r.jsonl
"$cli" run add_one --explore 2 --results r.jsonl > /dev/null 2> err.txt
expect_rc "finished run" $? 0
head -c 17 r.jsonl | grep -q '^{"record":"shard"' || fail "finished run: r.jsonl starts with '$(head -c 40 r.jsonl)'"
[ "$(stat -c %a r.jsonl)" = 600 ] || fail "finished run: r.jsonl has mode $(stat -c %a r.jsonl), expected 600 as before"
(umask 027 && "$cli" run add_one --explore 2 --results fresh.jsonl > /dev/null 2>&1)
[ "$(stat -c %a fresh.jsonl)" = 640 ] || fail "new file under umask 027: mode $(stat -c %a fresh.jsonl), expected 640"
mkdir -p real && echo old > real/target.json && ln -sf real/target.json link.json
"$cli" run add_one --trace link.json > /dev/null 2>&1
expect_rc "through a link" $? 0
[ -L link.json ] || fail "through a link: link.json is no longer a symbolic link"
grep -q traceEvents real/target.json || fail "through a link: real/target.json holds '$(head -c 40 real/target.json)'"
expect_no_temporaries "finished runs"

# Streams and devices are written in place: /dev/stdout (a pipe here) gets the trace, and is
# not replaced by a file.
"$cli" run add_one --trace /dev/stdout 2> err.txt | cat > stdout.txt
expect_rc "--trace /dev/stdout" "${PIPESTATUS[0]}" 0
grep -q traceEvents stdout.txt && grep -q "verdict: correct" stdout.txt || fail "--trace /dev/stdout: stdout has '$(head -c 80 stdout.txt)'"
[ -L /dev/stdout ] || fail "/dev/stdout is no longer a symbolic link: $(ls -l /dev/stdout)"

# A full device is the machine's failure (69), with the reason.
"$cli" run add_one --trace /dev/full > /dev/null 2> err.txt
expect_rc "--trace /dev/full" $? 69
grep -q "cannot write '/dev/full' (--trace): No space left on device" err.txt || fail "--trace /dev/full: stderr says '$(cat err.txt)'"

# merge -o and a failed merge (a shard missing): the old merged file stays.
"$cli" run add_one --explore 4 --shard 0/2 --results s0.jsonl > /dev/null 2>&1
echo old > merged.jsonl
"$cli" merge s0.jsonl -o merged.jsonl > /dev/null 2> err.txt
expect_rc "merge with a shard missing" $? 64
expect_kept "merge with a shard missing" merged.jsonl old
expect_no_temporaries "merge"

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "outputs kept on usage errors, SIGINT and SIGTERM; replaced whole on success"
