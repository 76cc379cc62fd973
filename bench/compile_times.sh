#!/usr/bin/env bash
# Compile time of each example translation unit (g++ -O2 -g, one TU at a time, the way the build
# compiles it) and of the IR library's sources for comparison. Target: <= 10 s per example TU.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cxx=${CXX:-g++}
flags=(-std=c++20 -O2 -g -c -I"$here/dsl/include" -o /dev/null)
ms() { echo $(( $(date +%s%N) / 1000000 )); }
fmt_s() { printf '%d.%02d' $(( $1 / 1000 )) $(( ($1 % 1000) / 10 )); }
printf '%-34s %8s\n' "translation unit" "seconds"
worst=0
for src in "$here"/examples/*.cpp "$here"/dsl/src/ir/*.cpp; do
  start=$(ms)
  "$cxx" "${flags[@]}" "$src"
  t=$(( $(ms) - start ))
  printf '%-34s %8s\n' "${src#"$here"/}" "$(fmt_s $t)"
  case "$src" in */examples/*) (( t > worst )) && worst=$t ;; esac
done
printf '%-34s %8s  (target <= 10 s)\n' "slowest example TU" "$(fmt_s $worst)"
