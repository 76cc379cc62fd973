#!/usr/bin/env bash
# A file system that fills while an output is written: exit 69 (the machine's failure) with the
# reason, the file that was there kept whole, no temporary left. It needs a small file system of
# its own (a 64 KiB tmpfs, mounted as root); elsewhere it is skipped (exit 77).
#   outputs_full_disk.sh STAGECRAFT WORKDIR
set -u
cli=$1
work=$2
mnt=$work/small
mkdir -p "$mnt" || exit 1
if ! mount -t tmpfs -o size=64k tmpfs "$mnt" 2> /dev/null; then
  echo "[skipped: cannot mount a small tmpfs here (needs root)]"
  exit 77
fi
trap 'umount "$mnt"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

echo "old trace" > "$mnt/t.json"
# add_one's trace takes over 200 KiB.
"$cli" run add_one --trace "$mnt/t.json" > /dev/null 2> "$work/err.txt"
rc=$?
[ $rc = 69 ] || fail "exit code $rc, expected 69"
grep -q "cannot write '$mnt/t.json' (--trace): No space left on device" "$work/err.txt" || fail "stderr says '$(cat "$work/err.txt")'"
[ "$(cat "$mnt/t.json")" = "old trace" ] || fail "t.json now holds '$(head -c 80 "$mnt/t.json")'"
left=$(find "$mnt" -name '.*.stagecraft-*')
[ -z "$left" ] || fail "temporaries left behind: $left"

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "a full file system: exit 69, the old file kept, no temporary left"
