#!/usr/bin/env bash
# Builds the libFuzzer targets with clang: fuzz_ir (mutated IR through verify, print, hash,
# code generation and the interpreter) and fuzz_cli (the CLI's argument handling).
#
#   tests/fuzz/build_fuzzers.sh GXX_BUILD_DIR OUT_DIR
#
# Everything the targets exercise (the IR library, the interpreter, the code generator, the
# CLI) is compiled here with clang, -fsanitize=fuzzer,address,undefined. The bundled examples
# are the exception: they are template-heavy user code that clang-14 does not compile yet
# (issue 11, item 14), so fuzz_cli links the example objects of an ordinary g++ build
# (GXX_BUILD_DIR, with the stagecraft_examples target built). Both compilers use libstdc++, so
# the objects link; the examples only build kernels and are not instrumented.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
[[ $# -eq 2 ]] || { echo "usage: $0 GXX_BUILD_DIR OUT_DIR" >&2; exit 64; }
gxx_build="$(cd "$1" && pwd)"
out="$2"
mkdir -p "$out/obj"
out="$(cd "$out" && pwd)"

CXX="${CXX_FUZZ:-clang++}"
command -v "$CXX" >/dev/null || { echo "build_fuzzers: $CXX not found (set CXX_FUZZ)" >&2; exit 69; }
launcher=()
command -v ccache >/dev/null && launcher=(ccache)
flags=(-std=c++20 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
       -I"$root/dsl/include" -I"$root/backends/interp/include" -I"$root/backends/nvrtc/include" -I"$root/cli/include"
       -I"$root/backends/host/include" -I"$root/backends/cuda/include" -I"$root/backends/bench/include"
       -I"$root/tests/fuzz" -DSTAGECRAFT_LIBFUZZER=1)

examples=("$gxx_build"/examples/CMakeFiles/stagecraft_examples.dir/*.o)
[[ -e "${examples[0]}" ]] || { echo "build_fuzzers: no example objects in $gxx_build (ninja -C $gxx_build stagecraft_examples)" >&2; exit 66; }

lib_sources=(dsl/src/tree.cpp dsl/src/ir/lower.cpp dsl/src/ir/verify.cpp dsl/src/ir/bind.cpp dsl/src/ir/print.cpp dsl/src/ir/wgmma.cpp dsl/src/ir/tcgen05.cpp dsl/src/ir/scopes.cpp dsl/src/ir/recompute.cpp dsl/src/ir/roles.cpp dsl/src/registry.cpp dsl/src/tensor.cpp
             dsl/src/lessons.cpp backends/interp/src/program.cpp backends/interp/src/machine.cpp backends/interp/src/trace.cpp
             backends/interp/src/views.cpp backends/interp/src/scheduler.cpp backends/interp/src/stepping.cpp backends/interp/src/statements.cpp
             backends/interp/src/mbarrier.cpp backends/interp/src/named_barrier.cpp backends/interp/src/semaphore.cpp backends/interp/src/memory.cpp backends/interp/src/tiles.cpp
             backends/interp/src/reports.cpp backends/interp/src/engines/tma.cpp backends/interp/src/engines/wgmma.cpp backends/interp/src/engines/tcgen05.cpp backends/interp/src/engines/clc.cpp backends/interp/src/tolerance.cpp
             backends/interp/src/names.cpp
             backends/nvrtc/src/codegen.cpp backends/nvrtc/src/wgmma.cpp backends/nvrtc/src/tcgen05.cpp backends/nvrtc/src/disk_cache.cpp tests/fuzz/ir_codec.cpp)
# The CLI's bench and merge subcommands, with the model's machine table generated as CMake does.
cmake -DIN="$root/data/machines.json" -DOUT="$out/obj/machines_data.cpp" -P "$root/backends/bench/embed_machines.cmake"
cli_sources=(cli/cli.cpp cli/narrate.cpp cli/step.cpp cli/verdict.cpp cli/shard.cpp cli/shard_file.cpp cli/output_file.cpp cli/explore_clock.cpp cli/bench.cpp backends/bench/src/bench.cpp backends/bench/src/model.cpp
             backends/bench/src/report.cpp backends/bench/src/calibrate.cpp "$out/obj/machines_data.cpp" tests/fuzz/fuzz_cli.cpp)
ir_sources=(tests/fuzz/fuzz_ir.cpp)

obj() { echo "$out/obj/$(echo "$1" | tr '/' '_').o"; }
# Sources clang-14 may not compile yet (structured bindings captured by lambdas, issue 11 item
# 14): if clang fails on one of these, its object from the g++ build is linked instead, with a
# note (uninstrumented: no coverage feedback or sanitizer checks inside it).
gxx_fallback=(dsl/src/registry.cpp)
gxx_object() { echo "$gxx_build/dsl/CMakeFiles/stagecraft_dsl.dir/src/$(basename "$1").o"; }
compile() {  # one source; run two at a time
  local src="$1" o path
  o="$(obj "$src")"
  path="$root/$src"
  [[ "$src" == /* ]] && path="$src"  # generated, outside the tree
  if [[ ! -e "$o" || "$path" -nt "$o" ]]; then
    echo "  clang  $src"
    if ! "${launcher[@]}" "$CXX" "${flags[@]}" -c "$path" -o "$o" 2>"$o.log"; then
      if [[ " ${gxx_fallback[*]} " == *" $src "* && -e "$(gxx_object "$src")" ]]; then
        echo "  NOTE   clang cannot compile $src yet ($(grep -m1 error: "$o.log" | sed 's/.*error: //')): linking the g++ object"
        cp "$(gxx_object "$src")" "$o"
      else
        cat "$o.log" >&2
        return 1
      fi
    fi
  fi
}
echo "build_fuzzers: compiling with $("$CXX" --version | head -1)"
# Headers change too: rebuild everything when any header is newer than the last build.
stamp="$out/obj/.stamp"
if [[ -e "$stamp" ]] && find "$root/dsl/include" "$root/backends" "$root/cli/include" "$root/tests/fuzz" -name '*.hpp' -newer "$stamp" | grep -q .; then
  rm -f "$out"/obj/*.o
fi
pids=()
for src in "${lib_sources[@]}" "${cli_sources[@]}" "${ir_sources[@]}"; do
  compile "$src" &
  pids+=($!)
  if (( ${#pids[@]} >= ${FUZZ_JOBS:-2} )); then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done
touch "$stamp"

link=(-fsanitize=fuzzer,address,undefined -lfmt)
lib_objs=()
for s in "${lib_sources[@]}"; do lib_objs+=("$(obj "$s")"); done
"$CXX" "$(obj tests/fuzz/fuzz_ir.cpp)" "${lib_objs[@]}" "${link[@]}" -o "$out/fuzz_ir"
# The host backend (which the CLI links for --backend host, skipped by the fuzzer) comes from the
# g++ build too, uninstrumented, with the tensor-map checks it uses and Boost.Context.
host_libs=("$gxx_build/backends/host/libstagecraft_host.a" "$gxx_build/backends/cuda/libstagecraft_tensor_map.a")
for l in "${host_libs[@]}"; do [[ -e "$l" ]] || { echo "build_fuzzers: $l missing (ninja -C $gxx_build stagecraft_host)" >&2; exit 66; }; done
cli_objs=()
for s in "${cli_sources[@]}"; do cli_objs+=("$(obj "$s")"); done
"$CXX" "${cli_objs[@]}" "${lib_objs[@]}" "${examples[@]}" "${host_libs[@]}" \
  -l:libboost_context.a -ldl "${link[@]}" -o "$out/fuzz_cli"
echo "build_fuzzers: $out/fuzz_ir $out/fuzz_cli"
