#!/usr/bin/env bash
# The whole test suite: set up and build, then every CTest test (unit, compile-fail).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$here/scripts/setup.sh"
ctest --test-dir "${STAGECRAFT_BUILD_DIR:-$here/build}" --output-on-failure --no-tests=error -j "$(nproc)" "$@"
