#!/usr/bin/env bash
# CTest label `bundle`: proves the GPU bundle is self-contained, here, without a GPU.
#   usage: check_bundle.sh BUNDLE_DIR [SOURCE_DIR]   (with SOURCE_DIR: (re)builds the bundle
#                                                    there first, incrementally)
# 1. Every binary needs only glibc (ELF NEEDED and ldd: nothing missing, nothing else).
# 2. Each starts with an empty environment and gives the documented no-driver answer; the
#    interpreter runs a kernel correctly.
# 3. In a minimal root file system (a chroot holding the bundle and glibc, nothing else) the
#    same holds, and NVRTC is reported missing; with only the CUDA toolkit's library folder
#    added, the bundle JIT-compiles a kernel. Skipped, with the reason, where no chroot can be
#    made (not root, or no chroot(8)).
# 4. A dry run of gpu_check.sh: exit 3 and a summary, printed last, saying there is no driver.
set -uo pipefail
bundle=$1
src=${2:-}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

if [ -n "$src" ]; then
  echo "== building the bundle (scripts/gpu_bundle.sh $bundle)"
  STAGECRAFT_BUNDLE_BUILD_DIR=${STAGECRAFT_BUNDLE_BUILD_DIR:-$(dirname "$bundle")/build-bundle} \
    "$src/scripts/gpu_bundle.sh" "$bundle" || { echo "FAIL: scripts/gpu_bundle.sh"; exit 1; }
fi
[ -x "$bundle/bin/stagecraft-gpu" ] || { echo "FAIL: no bundle at $bundle"; exit 1; }
bundle=$(cd "$bundle" && pwd)
# The one multi-call binary: `stagecraft-gpu TOOL ARGS...` (bench/multicall.cpp).
sg=$bundle/bin/stagecraft-gpu
has_tool() { "$sg" --tools | grep -qx "$1"; }
echo "== bundle: $bundle ($(du -sh "$bundle" | cut -f1))"
ls -l "$bundle" "$bundle/bin"

# glibc's own libraries are the only ones a binary may need.
allowed='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$'
bins=("$bundle"/bin/*)
for b in "${bins[@]}"; do
  n=$(basename "$b")
  needed=$(readelf -d "$b" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
  echo "-- $n needs: $(echo $needed)"
  ldd "$b" | sed 's/^/   /'
  bad=$(echo "$needed" | grep -Ev "$allowed")
  [ -z "$bad" ] && ok "$n needs only glibc" || fail "$n needs $(echo $bad) (not part of glibc)"
  ldd "$b" | grep -q 'not found' && fail "$n: ldd reports a missing library"
  file "$b" 2>/dev/null | grep -q 'not stripped' && fail "$n is not stripped"
done

# expect NAME WANT_RC REGEX CMD...: runs CMD, checks its exit code and output.
expect() {
  local name=$1 want=$2 regex=$3
  shift 3
  local got rc
  got=$("$@" 2>&1); rc=$?
  if [ "$rc" -eq "$want" ] && echo "$got" | grep -Eq "$regex"; then ok "$name (exit $rc)"
  else fail "$name: exit $rc (want $want), output:"; echo "$got" | tail -8 | sed 's/^/   /'; fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
e=(env -i "STAGECRAFT_CACHE_DIR=$work/cache")
expect "stagecraft device, empty environment" 3 "no CUDA driver available" "${e[@]}" "$sg" stagecraft device
expect "stagecraft run --backend gpu, empty environment" 3 "no CUDA driver available" "${e[@]}" "$sg" stagecraft run add_one --backend gpu
expect "stagecraft run (interpreter), empty environment" 0 "verdict: correct" "${e[@]}" "$sg" stagecraft run handoff --policy pct --seed 2
expect "gpu_bench, empty environment" 3 "no CUDA driver available" "${e[@]}" "$sg" gpu_bench
expect "gemm_bench, empty environment" 3 "no CUDA driver available" "${e[@]}" "$sg" gemm_bench
if has_tool attention_bench; then
  expect "attention_bench, empty environment" 3 "no CUDA driver available" "${e[@]}" "$sg" attention_bench
fi
# Without a driver the GPU tests skip: exit 77, CTest's SKIP_RETURN_CODE (tests/gpu/main.cpp).
expect "gpu_tests, empty environment" 77 "skipped: no CUDA driver available" "${e[@]}" "$sg" gpu_tests -s
# Started through a link named for the tool, as gpu_check.sh starts them; an unknown tool is a usage error.
ln -s "$sg" "$work/gemm_bench"
expect "gemm_bench through a link of that name" 3 "no CUDA driver available" "${e[@]}" "$work/gemm_bench"
expect "stagecraft-gpu with no tool" 64 "usage: stagecraft-gpu TOOL .*stagecraft gpu_tests gpu_bench gemm_bench" "${e[@]}" "$sg" nvcc

# A minimal root: the bundle, the dynamic loader and glibc's libraries, and no other file.
libs_into() {  # ROOT FILE: the libraries ldd resolves for FILE, copied to ROOT at their own paths
  local l
  for l in $(ldd "$2" 2>/dev/null | grep -o '/[^ ]*'); do
    [ -e "$1$l" ] && continue
    mkdir -p "$1$(dirname "$l")"
    cp -L "$l" "$1$l"
  done
}
if [ "$(id -u)" -ne 0 ] || ! command -v chroot >/dev/null; then
  echo "skip: minimal root file system (needs root and chroot(8)); the empty-environment checks above still ran"
else
  root=$work/root
  mkdir -p "$root/tmp" "$root/bundle"
  cp -a "$bundle/." "$root/bundle/"
  for b in "${bins[@]}"; do libs_into "$root" "$b"; done
  echo "-- minimal root: $(find "$root" -type f | wc -l) files: $(cd "$root" && find . -type f | sort | tr '\n' ' ')"
  chroot_bin=$(command -v chroot)  # env -i below clears PATH
  c=("$chroot_bin" "$root" /bundle/bin/stagecraft-gpu stagecraft)
  ce=(env -i STAGECRAFT_CACHE_DIR=/tmp/cache)
  expect "chroot: stagecraft device" 3 "NVRTC not available.*" "${ce[@]}" "${c[@]}" device
  expect "chroot: stagecraft run (interpreter)" 0 "verdict: correct" "${ce[@]}" "${c[@]}" run add_one --policy lazy
  expect "chroot: stagecraft ptx without NVRTC" 3 "NVRTC not available" "${ce[@]}" "${c[@]}" ptx add_one -o /tmp/a.ptx
  expect "chroot: gpu_bench" 3 "no CUDA driver available" "${ce[@]}" "$chroot_bin" "$root" /bundle/bin/stagecraft-gpu gpu_bench
  expect "chroot: gemm_bench" 3 "no CUDA driver available" "${ce[@]}" "$chroot_bin" "$root" /bundle/bin/stagecraft-gpu gemm_bench
  has_tool attention_bench && expect "chroot: attention_bench" 3 "no CUDA driver available" "${ce[@]}" "$chroot_bin" "$root" /bundle/bin/stagecraft-gpu attention_bench

  # Add only the CUDA toolkit's library folder (as a lent machine has it, somewhere): NVRTC is
  # found through CUDA_HOME and the bundle generates and compiles PTX.
  cudalib=""
  for d in ${CUDA_HOME:+$CUDA_HOME/lib64} /usr/local/cuda/lib64 /usr/local/cuda/lib; do
    [ -e "$d/libnvrtc.so.13" ] || [ -e "$d/libnvrtc.so.12" ] && { cudalib=$(cd "$d" && pwd -P); break; }
  done
  if [ -z "$cudalib" ]; then
    echo "skip: NVRTC inside the minimal root (no CUDA toolkit library folder on this machine)"
  else
    mkdir -p "$root/opt/cuda/lib64"
    for f in "$cudalib"/libnvrtc.so.1[23] "$cudalib"/libnvrtc-builtins.so.1[23]*; do
      [ -e "$f" ] || continue
      cp -l "$f" "$root/opt/cuda/lib64/" 2>/dev/null || cp "$f" "$root/opt/cuda/lib64/"
      libs_into "$root" "$f"  # NVRTC's own needs (its builtins want libstdc++), which a GPU machine has
    done
    expect "chroot + CUDA lib folder: stagecraft ptx" 0 "add_one on sm_90a: .* 0 spill bytes" \
      "${ce[@]}" CUDA_HOME=/opt/cuda "${c[@]}" ptx add_one -o /tmp/a.ptx
    expect "chroot + CUDA lib folder: stagecraft device" 3 "NVRTC 1[0-9.]+ \(/opt/cuda/lib64/libnvrtc" \
      "${ce[@]}" CUDA_HOME=/opt/cuda "${c[@]}" device
    # The same libraries where the nvidia-cuda-nvrtc wheel puts them, and no CUDA_HOME.
    wheel=$root/usr/local/lib/python3.12/site-packages/nvidia/cu13
    mkdir -p "$wheel" && mv "$root/opt/cuda/lib64" "$wheel/lib"
    expect "chroot + the nvrtc wheel only: stagecraft ptx" 0 "add_one on sm_90a: .* 0 spill bytes" "${ce[@]}" "${c[@]}" ptx add_one -o /tmp/a.ptx
  fi
fi

# The check script, dry: no driver here, so exit 3 and a summary that says so, printed last.
cd "$work"
got=$(env -i PATH=/usr/bin:/bin "$bundle/gpu_check.sh" "$work/check" 2>&1); rc=$?
echo "-- gpu_check.sh dry run (exit $rc):"
echo "$got" | sed 's/^/   /'
[ $rc -eq 3 ] && ok "gpu_check.sh exits 3 without a driver" || fail "gpu_check.sh exit $rc (want 3)"
echo "$got" | tail -1 | grep -q '^total: ' && echo "$got" | grep -q '^== stagecraft GPU check: summary ==' \
  && ok "the summary is printed last" || fail "the summary is not the last thing printed"
echo "$got" | grep -q 'verdict: no CUDA driver on this machine' && ok "the verdict names the missing driver" || fail "no no-driver verdict"
for f in summary.txt summary.json logs.tar.gz logs/device.log; do
  [ -s "$work/check/$f" ] && ok "gpu_check wrote $f" || fail "gpu_check did not write $f"
done
grep -q '"no_driver": true' "$work/check/summary.json" && ok "summary.json says no_driver" || fail "summary.json lacks no_driver: true"
if command -v python3 >/dev/null; then
  python3 -m json.tool "$work/check/summary.json" >/dev/null && ok "summary.json parses" || fail "summary.json is not valid JSON"
fi

echo
[ $fails -eq 0 ] && { echo "bundle: all checks passed"; exit 0; }
echo "bundle: $fails check(s) failed"
exit 1
