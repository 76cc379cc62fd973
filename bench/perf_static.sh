#!/usr/bin/env bash
# The static speed gate: SASS per K-tile, fences and cache invalidations in the MMA loops and
# spills of every GEMM and attention kernel against bench/perf_budgets.json (bench/perf_static.py
# says how each is counted). Runs without a GPU; needs NVRTC and the nvdisasm wheel.
#   usage: bench/perf_static.sh [--only REGEX]     (a build with the CLI in $STAGECRAFT_BUILD_DIR or ./build)
# Exit: 0 within budget, 1 over a budget, 2 a step failed, 77 no NVRTC or no nvdisasm (a skip).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${STAGECRAFT_BUILD_DIR:-$here/build}
cli=$build/cli/stagecraft
[ -x "$cli" ] || { echo "perf_static: no $cli (build the stagecraft target first)" >&2; exit 2; }
"$cli" ptx add_one -o /dev/null >/dev/null 2>&1 || { echo "perf_static: skipped: this build or machine has no NVRTC"; exit 77; }
nvdisasm=$("$here/bench/nvdisasm.sh" "$build") || exit $?
exec python3 "$here/bench/perf_static.py" --cli "$cli" --nvdisasm "$nvdisasm" --budgets "$here/bench/perf_budgets.json" --out "$build/perf-static" "$@"
