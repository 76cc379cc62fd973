#!/usr/bin/env bash
# Compile time of each example translation unit, one TU at a time: with g++ -O2 (the target:
# <= 10 s each) and with -O2 -g (what the RelWithDebInfo build compiles). The IR library's
# sources are listed for comparison.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cxx=${CXX:-g++}
ms() { echo $(( $(date +%s%N) / 1000000 )); }
fmt_s() { printf '%d.%02d' $(( $1 / 1000 )) $(( ($1 % 1000) / 10 )); }
time_tu() {  # flags... file -> milliseconds
  local start; start=$(ms)
  "$cxx" -std=c++20 -c -I"$here/dsl/include" -o /dev/null "$@"
  echo $(( $(ms) - start ))
}
printf '%-34s %8s %8s\n' "translation unit" "-O2" "-O2 -g"
worst=0
for src in "$here"/examples/*.cpp "$here"/dsl/src/ir/*.cpp; do
  t=$(time_tu -O2 "$src")
  tg=$(time_tu -O2 -g "$src")
  printf '%-34s %8s %8s\n' "${src#"$here"/}" "$(fmt_s "$t")" "$(fmt_s "$tg")"
  case "$src" in */examples/*) (( t > worst )) && worst=$t ;; esac
done
printf '%-34s %8s  (target <= 10 s with -O2)\n' "slowest example TU" "$(fmt_s $worst)"
