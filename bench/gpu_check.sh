#!/usr/bin/env bash
# One prepared run for a lent GPU machine (H200 / B200): build if needed, run the gpu-labelled
# tests, every example on the GPU against the reference and the interpreter, compute-sanitizer
# racecheck and synccheck, the TMA pipeline bandwidth against a device-to-device copy, and a
# summary table last. Meant to finish in well under 8 minutes.
#   usage: bench/gpu_check.sh            (uses $STAGECRAFT_BUILD_DIR or ./build, builds if missing)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${STAGECRAFT_BUILD_DIR:-$here/build}
jobs=$(nproc)
declare -a rows
row() { rows+=("$(printf '%-34s %s' "$1" "$2")"); }

if [ ! -x "$build/cli/stagecraft" ] || [ ! -x "$build/bench/gpu_bench" ]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build "$build" -j "$jobs" >/dev/null \
    || { echo "build failed"; exit 1; }
fi
cli="$build/cli/stagecraft"
if command -v nvidia-smi >/dev/null; then nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; fi

# 0. is there a driver at all?
probe=$("$cli" run add_one --backend gpu --set M=256 --set N=512 2>&1); probe_rc=$?
if [ $probe_rc -eq 3 ]; then
  echo "$probe"
  echo; echo "== stagecraft GPU check =="; echo "no CUDA driver on this machine: nothing to check"; exit 3
fi

# 1. gpu-labelled tests
if ctest --test-dir "$build" -L gpu --output-on-failure > /tmp/sc_gpu_tests.log 2>&1; then row "ctest -L gpu" "pass"
else row "ctest -L gpu" "FAIL (see /tmp/sc_gpu_tests.log)"; tail -30 /tmp/sc_gpu_tests.log; fi

# 2. every example on the GPU vs the reference and the interpreter
for k in $("$cli" list | awk '/^[a-z_]+ /{print $1}'); do
  out=$("$cli" run "$k" --backend gpu 2>&1); rc=$?
  ms=$(echo "$out" | sed -n 's/.*: \([0-9.]*\) ms$/\1/p' | head -1)
  if [ $rc -eq 0 ]; then row "run $k --backend gpu" "ok (${ms} ms)"; else row "run $k --backend gpu" "FAIL rc=$rc"; echo "$out" | tail -5; fi
done

# 3. compute-sanitizer
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -n "$san" ]; then
  for tool in racecheck synccheck; do
    for k in add_one handoff; do
      out=$(timeout 120 "$san" --tool "$tool" --error-exitcode 9 "$cli" run "$k" --backend gpu 2>&1); rc=$?
      summary=$(echo "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
      if [ $rc -eq 0 ]; then row "$tool $k" "clean ${summary}"; else row "$tool $k" "FAIL rc=$rc ${summary}"; echo "$out" | tail -8; fi
    done
  done
else
  row "compute-sanitizer" "not found"
fi

# 4. bandwidth: add_one and ws_copy for K=1..6 against a device-to-device copy of the same bytes
"$build/bench/gpu_bench" 8192 | tee /tmp/sc_gpu_bench.log
for k in add_one ws_copy; do
  best=$(awk -v k="$k" '$1 == k {gsub("%","",$NF); if ($NF > m) m = $NF} END {print m}' /tmp/sc_gpu_bench.log)
  row "$k best K, % of D2D copy" "${best:-n/a}%"
done

echo
echo "== stagecraft GPU check =="
printf '%s\n' "${rows[@]}"
