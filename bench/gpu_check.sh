#!/usr/bin/env bash
# The GPU check: one prepared run for a lent GPU machine, cheapest steps first, every step under
# `timeout`, the whole run inside a time budget (8 minutes by default), all logs and a summary
# (text and JSON) in OUTDIR, and the summary printed last whatever happens (docs/gpu.md).
#
#   usage: gpu_check.sh OUTDIR [STEP...]      STEP: a step name or a prefix (e.g. sanitizer)
#
# It runs from the GPU bundle (scripts/gpu_bundle.sh copies it to gpu-bundle/gpu_check.sh, next
# to bin/) with nothing else installed, or from a checkout with a build in $STAGECRAFT_BUILD_DIR
# or ./build. Exit: 0 every step passed or was skipped for a stated reason, 1 a step failed or
# timed out, 3 no CUDA driver (or no usable device/NVRTC): nothing could run, 64 usage.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then
  echo "usage: $0 OUTDIR [STEP...]" >&2
  exit 64
fi
out=$1
shift
only=("$@")
mkdir -p "$out/logs" || exit 64
out=$(cd "$out" && pwd)

if [ -x "$here/bin/stagecraft-gpu" ]; then
  # The bundle's one multi-call binary: a link per tool, named as the steps below call them.
  bin=$(mktemp -d)
  for t in $("$here/bin/stagecraft-gpu" --tools); do ln -s "$here/bin/stagecraft-gpu" "$bin/$t"; done
  layout=bundle
else
  b=${STAGECRAFT_BUILD_DIR:-$here/../build}
  bin=$(mktemp -d)
  for f in cli/stagecraft tests/gpu_tests bench/gemm_bench bench/attention_bench; do [ -x "$b/$f" ] && ln -s "$(cd "$b" && pwd)/$f" "$bin/"; done
  layout="build $b"
fi
cli=$bin/stagecraft
[ -x "$cli" ] || { echo "gpu_check: no stagecraft binary (build the project or the bundle first: scripts/gpu_bundle.sh)" >&2; exit 64; }

export STAGECRAFT_CACHE_DIR=$out/jit-cache
budget_s=${GPU_CHECK_BUDGET_S:-480}
reserve_s=15  # kept back for the summary and the log archive
t0=$(date +%s)
names=() states=() secs=() details=()
any_fail=0
no_driver=""

record() {  # name state seconds detail
  names+=("$1"); states+=("$2"); secs+=("$3"); details+=("$4")
  [ "$2" = FAIL ] || [ "$2" = TIMEOUT ] && any_fail=1
  printf '[%4ds] %-30s %-8s %s\n' "$(( $(date +%s) - t0 ))" "$1" "$2" "$4"
}

wanted() {
  [ ${#only[@]} -eq 0 ] && return 0
  local o
  for o in "${only[@]}"; do [ "${1#"$o"}" != "$1" ] && return 0; done
  return 1
}

# step NAME LIMIT_S CMD...: runs CMD under timeout, output to logs/NAME.log; sets $rc and $log.
# The limit shrinks to what is left of the budget; a step that cannot start in time is skipped.
step() {
  local name=$1 limit=$2
  shift 2
  log=$out/logs/$name.log
  rc=0
  local left=$(( budget_s - reserve_s - ($(date +%s) - t0) ))
  if [ "$left" -lt 5 ]; then
    rc=125; record "$name" skip 0 "out of time (budget ${budget_s} s)"; return 1
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  local s=$(date +%s)
  timeout -k 5 "$limit" "$@" >"$log" 2>&1
  rc=$?
  step_s=$(( $(date +%s) - s ))
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    rc=124; record "$name" TIMEOUT "$step_s" "killed after ${limit} s (see logs/$name.log)"; return 1
  fi
  return 0
}

last_line() { grep -a -v '^\s*$' "$1" | tail -1 | cut -c1-160; }

json_escape() { printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/ /g' | tr -d '\000-\037'; }

summary() {
  local total=$(( $(date +%s) - t0 )) i
  {
    echo
    echo "== stagecraft GPU check: summary =="
    echo "bundle: $layout; $(head -2 "$here/MANIFEST" 2>/dev/null | tail -1)"
    echo "results: $out (summary.txt, summary.json, logs/, logs.tar.gz)"
    printf '%-30s %-8s %6s  %s\n' step status seconds detail
    for i in "${!names[@]}"; do printf '%-30s %-8s %6s  %s\n' "${names[$i]}" "${states[$i]}" "${secs[$i]}" "${details[$i]}"; done
    if [ -n "$no_driver" ]; then echo "verdict: no CUDA driver on this machine: nothing ran on a GPU ($no_driver)"
    elif [ $any_fail -ne 0 ]; then echo "verdict: FAILURES (see the FAIL/TIMEOUT lines and their logs)"
    else echo "verdict: all steps passed or were skipped for the reason given"; fi
    echo "total: ${total} s of a ${budget_s} s budget"
  } > "$out/summary.txt"
  {
    printf '{\n  "layout": "%s",\n  "total_s": %d,\n  "budget_s": %d,\n  "no_driver": %s,\n  "failed": %s,\n  "steps": [\n' \
      "$(json_escape "$layout")" "$total" "$budget_s" "$([ -n "$no_driver" ] && echo true || echo false)" \
      "$([ $any_fail -ne 0 ] && echo true || echo false)"
    for i in "${!names[@]}"; do
      printf '    {"step": "%s", "status": "%s", "seconds": %s, "detail": "%s"}%s\n' "$(json_escape "${names[$i]}")" "${states[$i]}" \
        "${secs[$i]}" "$(json_escape "${details[$i]}")" "$([ "$i" -lt $(( ${#names[@]} - 1 )) ] && echo ,)"
    done
    printf '  ]\n}\n'
  } > "$out/summary.json"
  tar -czf "$out/logs.tar.gz" -C "$out" logs 2>/dev/null
  cat "$out/summary.txt"
}
trap summary EXIT
trap 'record interrupted FAIL 0 "the check was interrupted"; exit 1' INT TERM

echo "stagecraft GPU check: $layout, results in $out, budget ${budget_s} s"

# 1. the device: driver, NVRTC, device 0 and the target stagecraft picks for it
if command -v nvidia-smi >/dev/null; then
  timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader >"$out/logs/nvidia-smi.log" 2>&1
fi
step device 30 "$cli" device
case $rc in
  0) record device pass "$step_s" "$(grep -a '^device 0' "$log" | cut -c1-120); $(grep -a '^target' "$log")" ;;
  3) no_driver=$(last_line "$log"); record device skip "$step_s" "$no_driver" ;;
  124) ;;
  *) record device FAIL "$step_s" "exit $rc: $(last_line "$log")" ;;
esac
if [ -n "$no_driver" ] || [ $rc -ne 0 ]; then
  for s in gpu-tests watchdog examples sanitizer bandwidth calibrate gemm attention sass; do wanted "$s" && record "$s" skip 0 "no usable GPU (see device)"; done
  [ -n "$no_driver" ] && exit 3
  exit 1
fi

# 2. the GPU tests (watchdog on); the watchdog's own trap test in a process of its own, since a
#    trap leaves the context unusable
if wanted gpu-tests && [ -x "$bin/gpu_tests" ]; then
  if step gpu-tests 120 "$bin/gpu_tests" "~[watchdog]"; then
    if [ $rc -eq 0 ]; then record gpu-tests pass "$step_s" "$(grep -a 'passed\|test cases' "$log" | tail -1)"
    elif [ $rc -eq 77 ]; then record gpu-tests skip "$step_s" "$(grep -a -m1 -o 'skipped: .*' "$log" | cut -c1-140)"
    else record gpu-tests FAIL "$step_s" "exit $rc: $(grep -a -m1 'FAILED\|error' "$log" | cut -c1-120)"; fi
  fi
fi
if wanted watchdog && [ -x "$bin/gpu_tests" ]; then
  if step watchdog 30 "$bin/gpu_tests" "[watchdog]"; then
    if [ $rc -eq 0 ]; then record watchdog pass "$step_s" "a lost arrival trapped with its report ($(grep -a -m1 -o 'stagecraft watchdog:.*' "$log" | cut -c1-100))"
    elif [ $rc -eq 77 ]; then record watchdog skip "$step_s" "$(grep -a -m1 -o 'skipped: .*' "$log" | cut -c1-140)"
    else record watchdog FAIL "$step_s" "exit $rc: $(grep -a -m1 'FAILED\|error' "$log" | cut -c1-120)"; fi
  fi
fi

# 3. every example on the GPU against the reference and the interpreter, and the configurations
# whose layouts only hardware can confirm: the block-scaled formats' element packing (FP4 nibbles,
# FP6 and kind::f8f6f4's FP4 in TMA's 16-byte units, issue 28), each beside its defaults.
kernels=$("$cli" list 2>/dev/null | awk '/^[a-z_0-9]+ /{print $1}')
extra="gemm_blackwell_mx@fmt=mxfp4 gemm_blackwell_mx@fmt=nvfp4 gemm_blackwell_mx@fmt=mxfp6 gemm_blackwell_mx@fmt=mxfp6_e3m2 gemm_blackwell_mx@fmt=mxfp8_mxfp4"
if wanted examples; then
  for k in $kernels $extra; do
    sets=()
    [ "${k#*@}" = "$k" ] || sets=(--set "${k#*@}")
    step "example-$k" 60 "$cli" run "${k%%@*}" "${sets[@]}" --backend gpu || continue
    ms=$(sed -n 's/.*: \([0-9.]*\) ms$/\1/p' "$log" | head -1)
    case $rc in
      0) record "example-$k" pass "$step_s" "${ms} ms, $(grep -a -c 'verdict: correct' "$log")/2 comparisons exact" ;;
      *) record "example-$k" FAIL "$step_s" "exit $rc: $(grep -a -m1 'verdict\|error\|watchdog' "$log" | cut -c1-140)" ;;
    esac
  done
fi

# 4. compute-sanitizer on two kernels (a TMA ring and a two-warpgroup handoff)
san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
if wanted sanitizer; then
  if [ -z "$san" ]; then
    record sanitizer skip 0 "compute-sanitizer not found"
  else
    for tool in racecheck synccheck memcheck; do
      for k in add_one handoff; do
        # The tools slow kernels down by orders of magnitude: longer watchdog and deadline, so
        # neither fires on a kernel that is merely instrumented.
        step "sanitizer-$tool-$k" 90 "$san" --tool "$tool" --error-exitcode 9 "$cli" run "$k" --backend gpu \
          --watchdog-ms 30000 --deadline-ms 80000 || continue
        sum=$(grep -a -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^========= //')
        if [ $rc -eq 0 ]; then record "sanitizer-$tool-$k" pass "$step_s" "$sum"
        else record "sanitizer-$tool-$k" FAIL "$step_s" "exit $rc: ${sum:-$(last_line "$log")}"; fi
      done
    done
  fi
fi

# 5. pipeline bandwidth: `stagecraft bench` sweeps add_one and ws_copy over K = 1..6 at 8192 x 8192
#    f32 against a device-to-device copy of the same bytes measured in the same run (L2 flushed
#    between launches, each configuration checked against its reference); the JSON, CSV and SVG
#    are kept in OUTDIR. Then the cost model is fitted to the add_one sweep (--calibrate) and its
#    error before and after is the detail.
#    best_of CSV KERNEL: "KERNEL best K=k: P% of D2D" from the sweep's CSV (columns by header name).
best_of() {
  awk -F, -v k="$2" 'NR == 1 {for (i = 1; i <= NF; i++) col[$i] = i; next}
    $col["of_baseline"] + 0 > best {best = $col["of_baseline"] + 0; at = $col["K"]}
    END {if (at == "") printf "%s: no point ran", k; else printf "%s best K=%s: %.0f%% of D2D", k, at, 100 * best}' "$1"
}
if wanted bandwidth; then
  for k in add_one ws_copy; do
    sets=(--set M=8192 --set N=8192)
    [ "$k" = add_one ] && sets+=(--set splits=1)
    step "bandwidth-$k" 150 "$cli" bench "$k" "${sets[@]}" --sweep K=1..6 --backend gpu --max-seconds 1 --no-progress \
      --json "$out/logs/bandwidth-$k.json" --csv "$out/logs/bandwidth-$k.csv" --svg "$out/logs/bandwidth-$k.svg" || continue
    if [ $rc -eq 0 ]; then
      record "bandwidth-$k" pass "$step_s" "$(best_of "$out/logs/bandwidth-$k.csv" "$k")"
    else
      record "bandwidth-$k" FAIL "$step_s" "exit $rc: $(grep -a -m1 'WRONG\|error' "$log" | cut -c1-140 || last_line "$log")"
    fi
  done
fi
if wanted calibrate; then
  if step calibrate 120 "$cli" bench add_one --set M=8192 --set N=8192 --set splits=1 --sweep K=1..6 --backend gpu --calibrate \
       --max-seconds 1 --no-progress --fitted "$out/logs/fitted-machine.json"; then
    if [ $rc -eq 0 ]; then
      worst=$(awk '/^K=/ {gsub("%", "", $(NF-1)); gsub("%", "", $NF); b = $(NF-1) < 0 ? -$(NF-1) : $(NF-1); a = $NF < 0 ? -$NF : $NF;
                          if (b > wb) wb = b; if (a > wa) wa = a} END {printf "model error, worst of K=1..6: %.0f%% before, %.0f%% after fitting", wb, wa}' "$log")
      record calibrate pass "$step_s" "$worst (fitted-machine.json)"
    else
      record calibrate FAIL "$step_s" "exit $rc: $(last_line "$log")"
    fi
  fi
fi

# 6. tensor-core benchmarks: gemm_hopper (on Hopper) or gemm_blackwell (on Blackwell) against
#    cuBLAS at 2048^3, 4096^3 and 8192^3, checked element by element against cuBLAS's result
if wanted gemm && [ -x "$bin/gemm_bench" ]; then
  if step gemm 180 "$bin/gemm_bench"; then
    table=$(awk '$1 ~ /^[0-9]+$/ && NF >= 10 {printf "%s^3 %s %s: %s TFLOP/s = %s of cuBLAS (%s); ", $1, $2, $3, $5, $8, $10}' "$log")
    case $rc in
      0) record gemm pass "$step_s" "${table% ; }" ;;
      3) record gemm skip "$step_s" "$(last_line "$log")" ;;
      *) record gemm FAIL "$step_s" "exit $rc: ${table:-$(last_line "$log")}" ;;
    esac
  fi
elif wanted gemm; then
  record gemm skip 0 "gemm_bench is not in this bundle or build"
fi
# attention_hopper against cuDNN's fused attention at S = 1k..16k, D = 128, causal and not, both
# checked on sampled rows against a double-precision reference
if wanted attention && [ -x "$bin/attention_bench" ]; then
  if step attention 240 "$bin/attention_bench"; then
    table=$(awk '$1 ~ /^[0-9]+$/ && NF >= 10 {printf "S=%s causal=%s: %s TFLOP/s = %s of cuDNN (%s TFLOP/s, %s); ", $1, $2, $5, $8, $7, $10}' "$log")
    case $rc in
      0) record attention pass "$step_s" "${table% ; }" ;;
      3) record attention skip "$step_s" "$(last_line "$log")" ;;
      *) record attention FAIL "$step_s" "exit $rc: ${table:-$(last_line "$log")}" ;;
    esac
  fi
elif wanted attention; then
  record attention skip 0 "attention_bench is not in this bundle or build (it is built only where cuDNN 9 was found)"
fi

# 7. the SASS of one kernel, kept for reading
if wanted sass; then
  objdump=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null | head -1)
  target=$(sed -n 's/^target: //p' "$out/logs/device.log")
  if [ -z "$objdump" ]; then
    record sass skip 0 "cuobjdump not found"
  elif step sass 60 sh -c "\"$cli\" ptx add_one --arch $target --cubin \"$out/add_one.cubin\" -o \"$out/add_one.ptx\" && \"$objdump\" -sass \"$out/add_one.cubin\" > \"$out/add_one.sass\""; then
    if [ $rc -eq 0 ]; then record sass pass "$step_s" "add_one.sass: $(grep -c -E '^\s+/\*[0-9a-f]{4}\*/' "$out/add_one.sass") instructions, $(grep -c -E 'UTMALDG|UTMASTG' "$out/add_one.sass") TMA (UTMALDG/UTMASTG)"
    else record sass FAIL "$step_s" "exit $rc: $(last_line "$log")"; fi
  fi
fi

[ $any_fail -ne 0 ] && exit 1
exit 0
