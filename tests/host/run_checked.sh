#!/usr/bin/env bash
# run_checked.sh LIMIT_KB CLI ARGS...
#   Runs `CLI ARGS...` (a `stagecraft run ... --backend host`) under `ulimit -v LIMIT_KB` ("none":
#   no limit) and passes only if it exits 0 and prints a verdict, every one of them "correct".
# run_checked.sh LIMIT_KB CLI --every-example MIN
#   The same for `CLI run NAME --backend host` of every kernel `CLI list` names, tensor-core ones
#   included; every one must pass, and at least MIN of them, so the test cannot pass vacuously.
# CTest reads the exit code: no PASS_REGULAR_EXPRESSION, which would override it.
set -u
limit=$1 cli=$2
shift 2
if [ "$limit" != none ]; then ulimit -v "$limit" || { echo "cannot set ulimit -v $limit"; exit 2; }; fi

# check NAME ARGS...: 0 correct, 1 anything else (output shown)
check() {
  local name=$1 out rc
  shift
  out=$("$cli" "$@" 2>&1)
  rc=$?
  if [ $rc -ne 0 ] || ! grep -q "^verdict: correct" <<<"$out" || grep "^verdict:" <<<"$out" | grep -qv "^verdict: correct"; then
    echo "$name: FAILED under ulimit -v $limit (exit $rc):"
    echo "$out" | tail -20
    return 1
  fi
  echo "$name: $(grep -m1 '^verdict:' <<<"$out")"
  return 0
}

if [ "${1:-}" != --every-example ]; then
  check "$*" "$@"
  rc=$?
  [ $rc -eq 0 ] && exit 0
  exit 1
fi
min=$2
names=$("$cli" list | grep -v '^ ' | awk '{print $1}')
passed=0 failed=0
for k in $names; do
  if check "$k" run "$k" --backend host; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "under ulimit -v $limit: $passed correct, $failed failed"
[ $failed -eq 0 ] && [ $passed -ge "$min" ] || exit 1
