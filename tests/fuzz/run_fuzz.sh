#!/usr/bin/env bash
# Fuzzes each target for a bounded time (CI calls this with 45 s).
#
#   tests/fuzz/run_fuzz.sh SECONDS [TARGET...]      (targets: ir cli; default both)
#
# Builds the targets (build_fuzzers.sh, into ${STAGECRAFT_FUZZ_DIR:-build-fuzz}, from the g++
# build in ${STAGECRAFT_BUILD_DIR:-build}), then runs the targets side by side, each on a scratch copy
# of its committed corpus, so new coverage does not touch the repository. Exits non-zero if any
# target crashed, leaked, timed out or ran out of memory; the failing input is kept in
# $STAGECRAFT_FUZZ_DIR/artifacts/TARGET/ to be minimised (-minimize_crash=1), fixed, and then
# committed to tests/fuzz/corpus/TARGET/ as a regression test (fuzz.replay.TARGET replays it).
# Without clang, says so and exits 0: the corpus replay still runs in CTest.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
[[ $# -ge 1 && "$1" =~ ^[0-9]+$ ]] || { echo "usage: $0 SECONDS [ir] [cli]" >&2; exit 64; }
seconds="$1"
shift
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(ir cli)
if ! command -v "${CXX_FUZZ:-clang++}" >/dev/null; then
  echo "run_fuzz: no clang++ here: skipping fuzzing (the corpus replay runs in CTest)"
  exit 0
fi
build="${STAGECRAFT_BUILD_DIR:-$root/build}"
fuzz="${STAGECRAFT_FUZZ_DIR:-$root/build-fuzz}"
# Absolute: fuzz_cli changes into a scratch directory, and libFuzzer writes the corpus and
# artifacts through these paths afterwards.
mkdir -p "$fuzz"
fuzz="$(cd "$fuzz" && pwd)"
ninja -C "$build" stagecraft_examples stagecraft_host stagecraft_tensor_map >/dev/null
"$here/build_fuzzers.sh" "$build" "$fuzz"

# The targets run side by side, one per core (CI has two cores and two targets), each into its
# own log, whose last 40 lines are printed once all are done: 45 s each, 45 s in all.
fuzz_one() {
  local t=$1 work="$fuzz/corpus/$1" artifacts="$fuzz/artifacts/$1" dict=()
  rm -rf "$work" "$artifacts"
  mkdir -p "$work" "$artifacts"
  cp "$here/corpus/$t"/* "$work"/
  [[ -e "$here/$t.dict" ]] && dict=(-dict="$here/$t.dict")
  echo "run_fuzz: fuzz_$t for ${seconds} s"
  # -timeout: one input may take at most 10 s (the interpreter is step-limited, the CLI runs
  # small kernels); -rss_limit_mb: a run may not need more than 2 GiB.
  local rc=0
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "${dict[@]}" -artifact_prefix="$artifacts/" "$work" >"$fuzz/fuzz_$t.log" 2>&1 || rc=$?
  tail -n 40 "$fuzz/fuzz_$t.log"
  [[ $rc -eq 0 ]] || { echo "run_fuzz: fuzz_$t exited $rc"; return 1; }
  if compgen -G "$artifacts/*" >/dev/null; then
    echo "run_fuzz: fuzz_$t FAILED: $(ls "$artifacts")"
    return 1
  fi
}
status=0
pids=()
for t in "${targets[@]}"; do
  fuzz_one "$t" >"$fuzz/run_$t.out" 2>&1 &
  pids+=($!)
done
for i in "${!targets[@]}"; do
  wait "${pids[$i]}" || status=1
  cat "$fuzz/run_${targets[$i]}.out"
done
exit $status
