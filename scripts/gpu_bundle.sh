#!/usr/bin/env bash
# Makes gpu-bundle/: everything a lent GPU machine needs to produce evidence on its first call,
# and nothing it lacks (docs/gpu.md). The binaries come from a Release build with
# STAGECRAFT_PORTABLE (fmt compiled in, libstdc++/libgcc static), so they need only glibc;
# the driver and NVRTC are dlopen'ed where the machine keeps them.
#   usage: scripts/gpu_bundle.sh [OUT_DIR]     (default: ./gpu-bundle; build in ./build-bundle)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$here/gpu-bundle}
build=${STAGECRAFT_BUNDLE_BUILD_DIR:-$here/build-bundle}
# The device tool carries the bundle with the working tree (about 3 MiB) in 64 MiB at most. It
# was five binaries (41 MB with --gc-sections, each holding the front end, the backends and every
# kernel); one multi-call binary holds them once, and 16 MiB is the GEMM-speed issue's budget.
limit_mib=16

STAGECRAFT_SETUP_ONLY=1 "$here/scripts/setup.sh"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Kernel files at -O1, not the edit loop's -O0: the registry's builders are most of the binary
# (attention_hopper.cpp's 52 instantiations are 4.8 MB of text at -O0, 2.0 MB at -O1, for 27 %
# more compile time; -Os 1.7 MB for 140 % more), and the bundle is built once per stop.
# The rest at -O2, not CMake's -O3 for Release: the bundle is built in every CI run (the test
# bundle.self_contained), where -O3 cost 39 % more compile time (cli/cli.cpp: 22.6 s of CPU
# against 16.3 s), and the host side of a GPU run (code generation, NVRTC calls, checking the
# output) does not need it.
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DSTAGECRAFT_PORTABLE=ON -DSTAGECRAFT_PYTHON=OFF -DSTAGECRAFT_KERNEL_FLAGS=-O1 \
  "${launcher[@]}" >/dev/null
grep -q '^STAGECRAFT_NVRTC_HEADER_DIR:PATH=/' "$build/CMakeCache.txt" \
  || { echo "gpu_bundle: no CUDA toolkit headers found at configure time: the bundle would have no GPU path" >&2; exit 1; }
# One multi-call binary (bench/multicall.cpp): the CLI, gpu_tests, gpu_bench, gemm_bench and,
# where cuDNN 9 was found at configure time, attention_bench, sharing one copy of everything
# (as five binaries they were 41 MB). bin/stagecraft-gpu TOOL ARGS..., or through a link named TOOL.
binaries=(tests/stagecraft-gpu)
cmake --build "$build" -j "$(nproc)" --target stagecraft_gpu

rm -rf "$out"
mkdir -p "$out/bin"
for b in "${binaries[@]}"; do
  install -m 755 "$build/$b" "$out/bin/"
  strip --strip-all "$out/bin/${b##*/}"
done
install -m 755 "$here/bench/gpu_check.sh" "$out/gpu_check.sh"

# What the bundle is, for whoever reads its results later.
{
  echo "stagecraft GPU bundle"
  echo "revision: $(git -C "$here" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$here" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
  echo "compiler: $(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt") ($("$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")" --version | head -1))"
  echo "flags: $(sed -n 's/^CMAKE_CXX_FLAGS_RELEASE:[A-Z]*=//p' "$build/CMakeCache.txt") -std=c++20; link: -static-libstdc++ -static-libgcc; fmt compiled in (cmake/portable_fmt.cpp)"
  echo "CUDA headers: $(sed -n 's/^STAGECRAFT_NVRTC_HEADER_DIR:PATH=//p' "$build/CMakeCache.txt")"
  echo "files:"
  (cd "$out" && find . -type f ! -name MANIFEST | sort | while read -r f; do printf '  %-24s %9d bytes  sha256 %s\n' "${f#./}" "$(stat -c %s "$f")" "$(sha256sum "$f" | cut -c1-16)"; done)
  echo "tools (bin/stagecraft-gpu TOOL ...): $("$out/bin/stagecraft-gpu" --tools | tr '\n' ' ')"
  for b in "$out"/bin/*; do
    echo "needs ($(basename "$b")): $(readelf -d "$b" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
  done
} > "$out/MANIFEST"

size_kib=$(du -sk "$out" | cut -f1)
cat "$out/MANIFEST"
echo "bundle: $out, $((size_kib / 1024)) MiB ($size_kib KiB)"
if [ "$size_kib" -gt $((limit_mib * 1024)) ]; then
  echo "gpu_bundle: the bundle is over ${limit_mib} MiB" >&2
  exit 1
fi
