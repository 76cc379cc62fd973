#!/usr/bin/env bash
# Prints the path of an nvdisasm, installing the nvidia-cuda-nvdisasm PyPI wheel into
# BUILD/sass-venv on first use (the CUDA toolkit in the image ships none; the product never
# needs it, only the SASS checks do). Exit 77 (a CTest skip) when it can be neither found nor
# installed: a machine without PyPI cannot read SASS.
#   usage: bench/nvdisasm.sh BUILD_DIR
set -euo pipefail
venv=$1/sass-venv
# (no venv yet is not an error: under pipefail a failing find would end the script silently)
found() { [ -d "$venv" ] || return 0; find "$venv" -type f -name nvdisasm -perm -u+x 2>/dev/null | head -1 || true; }
nvdisasm=$(found)
if [ -z "$nvdisasm" ]; then
  { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } >&2 || { echo "nvdisasm.sh: python3 -m venv failed" >&2; exit 77; }
  "$venv/bin/python" -m pip install --quiet nvidia-cuda-nvdisasm >&2 || { echo "nvdisasm.sh: the nvidia-cuda-nvdisasm wheel cannot be installed here" >&2; exit 77; }
  nvdisasm=$(found)
fi
[ -n "$nvdisasm" ] || { echo "nvdisasm.sh: the nvidia-cuda-nvdisasm wheel has no nvdisasm binary" >&2; exit 77; }
echo "$nvdisasm"
