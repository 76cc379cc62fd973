#!/usr/bin/env bash
# The edit loop, measured: change one single-kernel file (examples/add_one.cpp), rebuild the
# smallest target that runs it, run it in the interpreter. Each part is timed (wall, and CPU as
# user+sys: the machine may be shared, CPU time is what the work costs), REPS times, median.
# Beside it, JAX's Mosaic GPU interpreter runs the same kernel (bench/edit_loop_jax.py), JAX
# installed from PyPI into its own venv ($BUILD/edit-loop-venv); skipped with a message when
# that is not possible.
#   bench/edit_loop.sh [--levers] [--no-jax] [--installed]
#     --levers     also time the levers one by one, outside the build: the kernel TU at other
#                  optimisation levels and with a precompiled header, the link with other linkers
#     --installed  also the loop of a user's project against the installed package
#                  (bench/edit_loop_project: stagecraft_add_kernel_runner with the package's kernel
#                  flags, precompiled header and lld), for a small kernel (add_one) and a GEMM
#                  (gemm_hopper), with each compiler found among c++ (g++) and clang++-16
#   env: STAGECRAFT_BUILD_DIR (default build/), REPS (default 3)
# Goal (docs/edit_loop.md): edit-to-verdict <= 1 s for a small kernel.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${STAGECRAFT_BUILD_DIR:-$here/build}
reps=${REPS:-3}
levers=0 jax=1 installed=0
for a in "$@"; do
  case "$a" in
    --levers) levers=1 ;;
    --no-jax) jax=0 ;;
    --installed) installed=1 ;;
    *) echo "usage: $0 [--levers] [--no-jax] [--installed]" >&2; exit 64 ;;
  esac
done
src=$here/examples/add_one.cpp
obj=examples/CMakeFiles/stagecraft_examples.dir/add_one.cpp.o
[ -f "$build/build.ninja" ] || { echo "no Ninja build in $build (configure it as the README says)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A real edit misses every cache: ccache would answer a touched file from its cache.
export CCACHE_DISABLE=1

# timed LABEL CMD...: runs CMD, appends "wall cpu" (seconds) to $tmp/LABEL.
timed() {
  local label=$1; shift
  local t
  t=$( { TIMEFORMAT='%R %U %S'; time "$@" >"$tmp/last.out" 2>&1; } 2>&1 ) || { cat "$tmp/last.out" >&2; echo "failed: $*" >&2; exit 1; }
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' <<<"$t" >>"$tmp/$label"
}
# median LABEL: "wall cpu", the medians of the samples (each column on its own).
median() {
  local w c
  w=$(cut -d' ' -f1 "$tmp/$1" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  c=$(cut -d' ' -f2 "$tmp/$1" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  echo "$w $c"
}
row() {  # name, then the labels of its parts
  local name=$1; shift
  local line="| $name |" tw=0 tc=0 m
  for l in "$@"; do
    if [ -s "$tmp/$l" ]; then
      m=$(median "$l")
      line+=" ${m% *} / ${m#* } |"
      tw=$(awk -v a="$tw" -v b="${m% *}" 'BEGIN { print a + b }')
      tc=$(awk -v a="$tc" -v b="${m#* }" 'BEGIN { print a + b }')
    else
      line+=" — |"
    fi
  done
  echo "$line **$tw / $tc** |"
}

has_target() { ninja -C "$build" -t query "$1" >/dev/null 2>&1; }
ninja -C "$build" stagecraft >/dev/null  # up to date before the loop starts
loops=(cli)
if has_target add_one_runner; then ninja -C "$build" add_one_runner >/dev/null; loops+=(runner); fi

for ((i = 0; i < reps; ++i)); do
  for l in "${loops[@]}"; do
    if [ "$l" = cli ]; then target=stagecraft run=("$build/cli/stagecraft" run add_one)
    else target=add_one_runner run=("$build/cli/add_one_runner" add_one); fi
    touch "$src"
    timed "$l.compile" ninja -C "$build" "$obj"
    timed "$l.link" ninja -C "$build" "$target"
    timed "$l.run" "${run[@]}"
    grep -q "verdict: correct" "$tmp/last.out" || { cat "$tmp/last.out" >&2; echo "the run did not say correct" >&2; exit 1; }
  done
done

flags=$(ninja -C "$build" -t commands "$obj" | tail -1 | sed -E 's/^ccache //')
echo "edit loop: $src, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), median of $reps"
echo "kernel TU: ${flags%% *}$(grep -oE ' -(O[0-3s]|g)' <<<"$flags" | tr -d '\n'), linker: $(ninja -C "$build" -t commands cli/stagecraft | tail -1 | grep -oE -- '-fuse-ld=[a-z]+' || echo default)"
echo
echo "| loop | compile TU (wall / cpu s) | link | run | edit-to-verdict |"
echo "|---|---:|---:|---:|---:|"
row "touch add_one.cpp, rebuild and run the CLI (stagecraft run add_one)" cli.compile cli.link cli.run
[[ " ${loops[*]} " == *" runner "* ]] &&
  row "touch add_one.cpp, rebuild and run add_one_runner" runner.compile runner.link runner.run

if [ "$levers" = 1 ]; then
  # The TU's own compile command, its flags varied; output to a scratch file.
  base=$(sed -E 's/ -MD -MT [^ ]+ -MF [^ ]+//; s/ -o [^ ]+ -c / -c /' <<<"$flags")
  compile_with() {  # label, then the -O/-g flags
    local label=$1; shift
    local cmd
    cmd=$(sed -E 's/ -O[0-3s]//g; s/ -g / /g' <<<"$base")
    for ((i = 0; i < reps; ++i)); do timed "$label" $cmd "$@" -o "$tmp/tu.o"; done
  }
  compile_with "O2g" -O2 -g
  compile_with "O1g" -O1 -g
  compile_with "O0g" -O0 -g
  compile_with "O0" -O0
  # A precompiled header of the front end: the kernel's includes, built once with the TU's flags.
  printf '#include <stagecraft/registry.hpp>\n#include <stagecraft/stagecraft.hpp>\n' >"$tmp/front.hpp"
  pchcmd=$(sed -E 's/ -O[0-3s]//g; s/ -g / /g; s/ -c [^ ]+$//' <<<"$base")
  timed pch_build $pchcmd -O0 -g -x c++-header "$tmp/front.hpp" -o "$tmp/front.hpp.gch"
  for ((i = 0; i < reps; ++i)); do timed "O0g_pch" $(sed -E 's/ -O[0-3s]//g; s/ -g / /g' <<<"$base") -O0 -g -include "$tmp/front.hpp" -Winvalid-pch -o "$tmp/tu.o"; done
  # The same file with one ring depth instead of six (what a runner's INSTANTIATE K=4 builds).
  for ((i = 0; i < reps; ++i)); do timed "O0g_k4" $(sed -E 's/ -O[0-3s]//g; s/ -g / /g' <<<"$base") -O0 -g '-DSTAGECRAFT_INSTANTIATE="K=4"' -o "$tmp/tu.o"; done
  # The preprocessor alone: what lighter includes could save at most.
  for ((i = 0; i < reps; ++i)); do timed "preprocess" $(sed -E 's/ -c / -E /' <<<"$base") -o "$tmp/tu.ii"; done
  echo
  echo "kernel TU alone ($(wc -l <"$tmp/tu.ii") preprocessed lines):"
  echo
  echo "| lever | wall / cpu s |"
  echo "|---|---:|"
  for l in O2g O1g O0g O0 O0g_pch O0g_k4 preprocess pch_build; do
    m=$(median "$l")
    case "$l" in
      O2g) d="-O2 -g (RelWithDebInfo without STAGECRAFT_KERNEL_FLAGS)" ;; O1g) d="-O1 -g" ;; O0g) d="-O0 -g" ;; O0) d="-O0" ;;
      O0g_pch) d="-O0 -g with a precompiled header of the front end" ;;
      O0g_k4) d="-O0 -g, one ring depth instantiated instead of six (STAGECRAFT_INSTANTIATE=\"K=4\")" ;; preprocess) d="preprocessing only (-E)" ;;
      pch_build) d="building that precompiled header (once per header change)" ;;
    esac
    echo "| $d | ${m% *} / ${m#* } |"
  done
  # The link of each target, with each linker the machine has.
  echo
  echo "| link | bfd | gold | lld | mold |"
  echo "|---|---:|---:|---:|---:|"
  for target in cli/stagecraft $(has_target add_one_runner && echo cli/add_one_runner); do
    link=$(ninja -C "$build" -t commands "$target" | tail -1 | sed -E 's/^: && //; s/ && :$//; s/ -o [^ ]+ / -o '"${tmp//\//\\/}"'\/linked /; s/ -fuse-ld=[a-z]+//')
    line="| $(basename "$target") |"
    for ld in bfd gold lld mold; do
      if ! command -v "ld.$ld" >/dev/null && ! { [ $ld = mold ] && command -v mold >/dev/null; }; then line+=" — |"; continue; fi
      for ((i = 0; i < reps; ++i)); do (cd "$build" && timed "link_$ld" sh -c "$link -fuse-ld=$ld"); done
      m=$(median "link_$ld"); rm -f "$tmp/link_$ld"
      line+=" ${m% *} / ${m#* } |"
    done
    echo "$line"
  done
fi

if [ "$installed" = 1 ]; then
  # The package as a user gets it: installed into a prefix of its own, then a project of two
  # kernel files configured against it (Release, as a user's default), once per compiler.
  prefix=$build/edit-loop-prefix
  ninja -C "$build" stagecraft_runner >/dev/null
  cmake --install "$build" --prefix "$prefix" >/dev/null
  echo
  echo "installed package ($prefix), a user's project (bench/edit_loop_project), Release + the package's kernel flags:"
  echo
  echo "| compiler | kernel | compile TU | link | run | edit-to-verdict |"
  echo "|---|---|---:|---:|---:|---:|"
  for cxx in c++ clang++-16; do
    command -v "$cxx" >/dev/null || { echo "| $cxx | (not installed) | | | | |"; continue; }
    proj=$tmp/project-$cxx
    mkdir -p "$proj"
    cp "$here/bench/edit_loop_project/CMakeLists.txt" "$here/examples/add_one.cpp" "$here/examples/gemm_hopper.cpp" "$here/examples/gemm_reference.hpp" "$proj/"
    cmake -S "$proj" -B "$proj/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/configure.log" 2>&1 ||
      { cat "$tmp/configure.log" >&2; echo "configuring the project with $cxx failed" >&2; exit 1; }
    ninja -C "$proj/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; echo "building the project with $cxx failed" >&2; exit 1; }
    for k in add_one:small_runner gemm_hopper:gemm_runner; do
      file=${k%%:*} runner=${k#*:}
      o=CMakeFiles/${runner}_stagecraft_kernels.dir/$file.cpp.o
      for ((i = 0; i < reps; ++i)); do
        touch "$proj/$file.cpp"
        timed "$cxx.$file.compile" ninja -C "$proj/build" "$o"
        timed "$cxx.$file.link" ninja -C "$proj/build" "$runner"
        timed "$cxx.$file.run" "$proj/build/$runner"
        grep -q "verdict: correct" "$tmp/last.out" || { cat "$tmp/last.out" >&2; echo "$runner did not say correct" >&2; exit 1; }
      done
      row "$cxx | $file" "$cxx.$file.compile" "$cxx.$file.link" "$cxx.$file.run"
    done
  done
fi

if [ "$jax" = 1 ]; then
  echo
  venv=$build/edit-loop-venv
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import jax, absl' 2>/dev/null; then
    { python3 -m venv "$venv" && "$venv/bin/pip" install -q jax absl-py; } >"$tmp/pip.log" 2>&1 ||
      { echo "JAX: skipped (could not install jax from PyPI into $venv: $(tail -1 "$tmp/pip.log"))"; exit 0; }
  fi
  for ((i = 0; i < reps; ++i)); do
    timed jax "$venv/bin/python" -W ignore "$here/bench/edit_loop_jax.py"
    grep -q "verdict: correct" "$tmp/last.out" || { cat "$tmp/last.out"; echo "JAX: the run did not say correct"; exit 1; }
    grep -oE 'import [0-9.]+ s, trace\+interpret [0-9.]+ s' "$tmp/last.out" >>"$tmp/jax_parts"
  done
  m=$(median jax)
  echo "JAX: $(head -1 "$tmp/last.out")"
  echo "| JAX, python bench/edit_loop_jax.py (import, trace, interpret, check) | ${m% *} / ${m#* } | in-process, each run: $(paste -sd';' "$tmp/jax_parts") |"
fi
