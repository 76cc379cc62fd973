#!/bin/sh
# Stands in for a test executable the loader cannot start (what a missing libcuda.so.1 did).
echo "$0: error while loading shared libraries: libcuda.so.1: cannot open shared object file" >&2
exit 127
