#!/usr/bin/env bash
# Lesson 13 in SASS: each way of writing its kernel (`stagecraft lesson 13` prints the model's
# view) compiled by NVRTC, disassembled, and its K loop counted as the static speed gate counts
# it (bench/perf_static.py: instructions per K-tile of the MMA loop, GPU-scope MEMBARs in it).
# Then the lesson's claims are checked: the lesson's kernel has no MEMBAR.GPU in its K loop, the
# generic epilogue (whose cluster barrier must release at .cluster scope) has one and a longer
# loop. (Fewer stages and an unswizzled staging tile cost time, not instructions: the model and
# the wavefront count show those.) Exit 77 (a CTest skip) without nvdisasm.
#   usage: bench/lesson_sass.sh [BUILD_DIR]   (default build/; writes BUILD_DIR/lesson13-sass/)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
cli=$build/cli/stagecraft
out=$build/lesson13-sass
nvdisasm=$(bash "$here/bench/nvdisasm.sh" "$build") || exit $?
rm -rf "$out" && mkdir -p "$out"
export STAGECRAFT_CACHE_DIR=${STAGECRAFT_CACHE_DIR:-$out/cache}
mkdir -p -m 700 "$STAGECRAFT_CACHE_DIR"
"$cli" lesson 13 --cubin-dir "$out" --timeline "$out/lesson13.html" >"$out/lesson13.txt"
fails=0
declare -A kloop membar
printf '| way | SASS per K-tile (kloop) | MEMBAR.GPU in the K loop |\n|---|---|---|\n'
for way in speed two_stages plain_staging generic_epilogue; do
  [ -s "$out/$way.cubin" ] || { echo "lesson_sass: no CUBIN for $way" >&2; exit 2; }
  "$nvdisasm" -c "$out/$way.cubin" >"$out/$way.sass"
  line=$(python3 "$here/bench/perf_static.py" --check-sass "$out/$way.sass" --mma 'HGMMA' --budget-json '{}' | grep '^measured:')
  kloop[$way]=$(sed -E 's/.*kloop=([0-9]+).*/\1/' <<<"$line")
  membar[$way]=$(sed -E 's/.*membar_gpu=([0-9]+).*/\1/' <<<"$line")
  printf '| %s | %s | %s |\n' "$way" "${kloop[$way]}" "${membar[$way]}"
done
[ "${membar[speed]}" = 0 ] || { echo "FAIL: the lesson's kernel has ${membar[speed]} MEMBAR.GPU in its K loop (.release.cta should need none)"; fails=1; }
[ "${membar[generic_epilogue]}" -ge 1 ] || { echo "FAIL: the generic epilogue's K loop has no MEMBAR.GPU: its .release.cluster arrivals should fence"; fails=1; }
[ "${kloop[generic_epilogue]}" -gt "${kloop[speed]}" ] || { echo "FAIL: the generic epilogue's K loop (${kloop[generic_epilogue]}) is no longer than the lesson's (${kloop[speed]})"; fails=1; }
[ "$fails" = 0 ] && echo "lesson 13's SASS says what the lesson says (disassemblies in $out)"
exit "$fails"
