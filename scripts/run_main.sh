#!/usr/bin/env bash
# The main job: set up and build, then run the stagecraft CLI on the bundled kernels.
# (Until the interpreter lands this lists the kernels and prints each one's lowered IR.)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$here/scripts/setup.sh"
cli="${STAGECRAFT_BUILD_DIR:-$here/build}/cli/stagecraft"
"$cli" list
"$cli" show --all
