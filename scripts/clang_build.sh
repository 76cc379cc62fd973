#!/usr/bin/env bash
# The tree built with Debian's clang (against libstdc++, like the g++ build) into build-clang/,
# then the whole CTest suite: the code must not depend on one compiler's leniency.
#   STAGECRAFT_CLANG   the compiler (default: clang++)
#   extra arguments    go to ctest (e.g. -R unit)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${STAGECRAFT_CLANG_BUILD_DIR:-$here/build-clang}
cxx=${STAGECRAFT_CLANG:-clang++}

if ! command -v "$cxx" >/dev/null; then
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends clang
fi

gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$here" -B "$build" "${gen[@]}" "${launcher[@]}" -DCMAKE_CXX_COMPILER="$cxx" \
      -DCMAKE_BUILD_TYPE=${STAGECRAFT_BUILD_TYPE:-RelWithDebInfo} -DSTAGECRAFT_PYTHON=OFF
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure --no-tests=error -j "$(nproc)" "$@"
