#!/usr/bin/env bash
# Installs every Debian package stagecraft needs, then configures and builds it.
# Runs as root on a fresh Debian 12 machine (CI, a developer box); idempotent.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${STAGECRAFT_BUILD_DIR:-$here/build}

packages=(
  cmake ninja-build g++ pkg-config
  libboost-dev            # Boost.Hana: compile-time shapes, integral constants, heterogeneous lists
  libboost-context-dev    # Boost.Context: the host backend runs every CUDA thread as a fiber
  librange-v3-dev         # range-v3: IR walks and CLI listings
  catch2                  # Catch2 v2.13 (Catch2::Catch2WithMain)
  libcli11-dev            # the stagecraft CLI
  libfmt-dev              # formatting of diagnostics and the IR printer
  nlohmann-json3-dev      # trace / report export
  libbenchmark-dev        # CPU microbenchmarks
  lld                     # the linker (faster links: docs/edit_loop.md); the build falls back to ld without it
  python3-dev pybind11-dev python3-numpy  # the Python package (python/, docs/python.md)
)
# Headless Chromium renders the lesson timelines in a test (tests/lessons/check_timelines.sh);
# large, so only on request (CI asks for it).
[ "${STAGECRAFT_WITH_CHROMIUM:-0}" = 1 ] && packages+=(chromium)
# PyPI's torch for the Python package's torch test (python.torch); a venv of Debian's python3,
# so python3-venv; only on request (CI asks for it). About 5.4 GB installed (torch pulls its
# CUDA libraries: the CPU-only wheel is not on PyPI; --no-cache-dir keeps pip from keeping a
# second copy of the wheels); 51 s here.
[ "${STAGECRAFT_WITH_TORCH:-0}" = 1 ] && packages+=(python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# STAGECRAFT_SETUP_ONLY=1: packages only (scripts/gpu_bundle.sh configures a build of its own).
[ "${STAGECRAFT_SETUP_ONLY:-0}" = 1 ] && exit 0

# torch in <build>/torch-venv (it sees Debian's NumPy, which the extension is built against). A
# failed install is not a failed setup: python.torch then reports itself skipped, and says why.
# The venv is made where it stays (a venv's scripts name its path: one built elsewhere and moved
# has a pip that cannot start) and counts as installed once torch imports in it.
torch_version=2.15.0
torch_venv=$build/torch-venv
if [ "${STAGECRAFT_WITH_TORCH:-0}" = 1 ] && [ ! -f "$torch_venv/.stagecraft-torch-$torch_version" ]; then
  started=$(date +%s)
  mkdir -p "$build"
  rm -rf "$torch_venv" "$build/torch-venv.partial"
  if /usr/bin/python3 -m venv --system-site-packages "$torch_venv" &&
     "$torch_venv/bin/python" -m pip install -q --no-cache-dir --disable-pip-version-check "torch==$torch_version" &&
     "$torch_venv/bin/python" -c "import torch" 2>/dev/null; then
    touch "$torch_venv/.stagecraft-torch-$torch_version"
    echo "setup: torch $torch_version installed in $torch_venv in $(( $(date +%s) - started )) s"
  else
    rm -rf "$torch_venv"
    echo "setup: warning: torch $torch_version could not be installed from PyPI: python.torch will be skipped"
  fi
fi

gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$here" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=${STAGECRAFT_BUILD_TYPE:-RelWithDebInfo}
# Arguments name the targets to build (the main job builds only the CLI, which links the
# examples); none: everything, tests and benchmarks included.
targets=()
[ $# -gt 0 ] && targets=(--target "$@")
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
