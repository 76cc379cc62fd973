#!/usr/bin/env bash
# How much a user reads when a kernel is rejected at compile time: every compile-fail case in
# tests/failtest/ compiled (ko side) with g++ and with clang, the whole diagnostic measured.
#   bytes, lines   the compiler's full output (what lands on the user's screen)
#   key            does the first `error:` line say what is wrong?
#                  yes  it matches the case's `// expect:` regex, numbers included
#                  text it matches it with each number replaced by a marker (the
#                       static_assert literal, e.g. "num_barriers = N"; the numbers follow in
#                       the very next note)
#                  no   the first error is something else (a cascade, a library internal)
# Usage: tests/failtest/error_sizes.sh [case-regex]     (env: GXX, CLANGXX, ERROR_SIZES_KEEP=dir)
# Prints a Markdown table. The flags are the suite's own (check.cmake): no flag trims output.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
gxx=${GXX:-g++}
clangxx=${CLANGXX:-clang++}
filter=${1:-.}
keep=${ERROR_SIZES_KEEP:-}
[ -n "$keep" ] && mkdir -p "$keep"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

compilers=()
for c in "$gxx" "$clangxx"; do
  if command -v "$c" >/dev/null; then compilers+=("$c"); else echo "($c not found: its columns are skipped)" >&2; fi
done

# Relative paths, from the repository root: the byte counts do not depend on where it lives.
cd "$here"
flags=(-std=c++20 -fsyntax-only -fno-diagnostics-color -DSTAGECRAFT_KO -Idsl/include)

# One compile: prints "bytes lines key".
measure() {
  local cxx=$1 src=$2 expect=$3 out=$4
  "$cxx" "${flags[@]}" "$src" >"$out" 2>&1
  local rc=$?
  local bytes lines first key
  bytes=$(wc -c <"$out")
  lines=$(wc -l <"$out")
  first=$(grep -m1 'error: ' "$out" || true)
  local loose
  loose=$(printf '%s' "$expect" | sed -E 's/[0-9]+/[A-Za-z0-9_]+/g')
  if [ "$rc" -eq 0 ]; then key="ACCEPTED"
  elif printf '%s' "$first" | grep -Eq -- "$expect"; then key=yes
  elif printf '%s' "$first" | grep -Eq -- "$loose"; then key=text
  else key=no
  fi
  echo "$bytes $lines $key"
}

header="| case |"
rule="|---|"
for c in "${compilers[@]}"; do
  n=$(basename "$c")
  header+=" $n bytes | $n lines | $n key |"
  rule+="---:|---:|:---:|"
done
echo "$header" | tee "$tmp/table"
echo "$rule" | tee -a "$tmp/table"
for src in tests/failtest/*.cpp; do
  name=$(basename "$src" .cpp)
  [[ "$name" =~ $filter ]] || continue
  expect=$(head -1 "$src" | sed -n 's|^// expect: ||p')
  row="| $name |"
  for c in "${compilers[@]}"; do
    out="$tmp/$name.$(basename "$c").txt"
    read -r bytes lines key < <(measure "$c" "$src" "$expect" "$out")
    row+=" $bytes | $lines | $key |"
    [ -n "$keep" ] && cp "$out" "$keep/"
  done
  echo "$row" | tee -a "$tmp/table"
done
echo
# One line per compiler: the worst case, the mean, and how many first lines say it all.
for i in "${!compilers[@]}"; do
  awk -F'|' -v c="$(basename "${compilers[$i]}")" -v col=$((3 + 3 * i)) '
    NR > 2 { n++; b += $col; l += $(col + 1); if ($(col + 1) > m) { m = $(col + 1); w = $2 }
             if ($(col + 2) ~ /yes/) y++ }
    END { if (n) printf "%s: %d cases, %.1f lines and %.0f bytes on average, at most %d (%s); key message on the first error line in %d\n",
                        c, n, l / n, b / n, m, w, y }' "$tmp/table"
done
