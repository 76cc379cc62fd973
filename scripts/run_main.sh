#!/usr/bin/env bash
# The main job: set up and build, then run every bundled kernel through the interpreter
# (seeded random inputs, checked against its C++ reference, all protocol/race checks on) and
# write one timeline.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Only the CLI and the examples it links: the tests and benchmarks are the test command's to
# build, and a first result should not wait for them.
"$here/scripts/setup.sh" stagecraft
build="${STAGECRAFT_BUILD_DIR:-$here/build}"
cli="$build/cli/stagecraft"
"$cli" list
"$cli" run --all --policy eager
"$cli" run --all --policy pct --explore 50
"$cli" run add_one --set M=256 --set N=512 --policy pct --seed 1 --timeline "$build/add_one.html" --trace "$build/add_one.json"
echo "timeline: $build/add_one.html (Chrome/Perfetto trace: $build/add_one.json)"
