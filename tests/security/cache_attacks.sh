#!/usr/bin/env bash
# The JIT caches against a second local user, and against a machine that lets a build down
# (issue 24's reproductions, docs/cache.md). The scenarios with users need root: they create
# throw-away users and remove them at the end; exit 77 (a CTest skip) without root or useradd.
#
#   cache_attacks.sh STAGECRAFT_BINARY HOST_CXX SCENARIO
#
# Each scenario prints what it checks; any failed check exits 1 with the command's output.
set -uo pipefail
cli_built=$1 cxx=$2 scenario=$3
need_users() {
  [ "$(id -u)" = 0 ] || { echo "skipped: needs root (creates local users)"; exit 77; }
  command -v useradd >/dev/null && command -v runuser >/dev/null || { echo "skipped: no useradd/runuser"; exit 77; }
}

root=$(mktemp -d /tmp/sc-security.XXXXXX)
chmod 0755 "$root"
users=()
cleanup() {
  for u in "${users[@]}"; do userdel "$u" >/dev/null 2>&1; rm -rf "/tmp/stagecraft-cache-$(id -u "$u" 2>/dev/null || echo none)"; done
  rm -rf "$root"
}
trap cleanup EXIT
# The other users run a copy of the CLI (the build tree may be private to root).
mkdir -p "$root/bin" && cp "$cli_built" "$root/bin/stagecraft" && chmod 0755 "$root/bin" "$root/bin/stagecraft"
cli=$root/bin/stagecraft
make_user() {  # NAME: a user without a home directory (as cron jobs and services run)
  local name=$1
  need_users
  userdel "$name" >/dev/null 2>&1
  useradd -M -d /nonexistent -s /usr/sbin/nologin "$name" || { echo "skipped: useradd failed"; exit 77; }
  users+=("$name")
}
as() { local u=$1; shift; runuser -u "$u" -- env -i PATH="$PATH" "$@"; }

RANDOM=24  # the damaged-object positions are the same every run
fails=0
check() {  # WHAT COND...: COND is a shell test
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fails=$((fails + 1)); fi
}
out=$root/out.txt
run() { "$@" >"$out" 2>&1; rc=$?; }
says() { grep -q -- "$1" "$out"; }

# A library whose constructor leaves a mark: what another user would plant as a cached object.
plant_library() {
  printf '#include <cstdio>\n__attribute__((constructor)) static void planted() { std::FILE* f = std::fopen("%s", "w"); if (f) std::fclose(f); }\nextern "C" void sc_host_bind(const void*) {}\nextern "C" void sc_host_entry(const void*, void* const*) {}\n' \
    "$root/planted-code-ran" >"$root/evil.cpp"
  "$cxx" -shared -fPIC -o "$root/evil.so" "$root/evil.cpp" || exit 1
  chmod 0644 "$root/evil.so"
}

case $scenario in
foreign_directory)
  # Issue 24, reproductions 1-3: another user's (or a world-writable) cache directory is never
  # read from, never written through.
  make_user scsec_a
  plant_library
  shared=$root/shared && mkdir "$shared" && chown scsec_a "$shared" && chmod 0755 "$shared"  # as a umask of 022 leaves it
  run as scsec_a STAGECRAFT_CACHE_DIR="$shared" "$cli" run add_one --backend host
  check "the other user's own run works and fills its cache (exit $rc)" [ "$rc" = 0 ]
  for so in "$shared"/host/*.so; do as scsec_a cp "$root/evil.so" "$so"; done
  check "the other user planted objects" [ -n "$(ls "$shared"/host/*.so 2>/dev/null)" ]
  run env STAGECRAFT_CACHE_DIR="$shared" "$cli" run add_one --backend host
  cat "$out"
  check "root's run is correct (exit $rc)" [ "$rc" = 0 ]
  check "root's run names the directory and why it is not used" says "not using the cache directory $shared: it is owned by uid $(id -u scsec_a)"
  check "the planted constructor never ran" [ ! -e "$root/planted-code-ran" ]
  # A directory root owns but anyone may write is refused as well.
  open=$root/open && mkdir -m 0777 "$open" && chmod 0777 "$open"
  run env STAGECRAFT_CACHE_DIR="$open" "$cli" run add_one --backend host
  check "a world-writable directory of root's is refused (exit $rc)" [ "$rc" = 0 ]
  check "... by its mode" says "not using the cache directory $open: its mode 0777 lets every user write it"
  if "$cli" ptx add_one -o "$root/x.ptx" >/dev/null 2>&1; then
    # Reproduction 2: links at the names a cache write would use, pointing at a file of root's.
    victim=$root/victim.txt && echo "root's data" >"$victim" && chmod 0644 "$victim"
    as scsec_a STAGECRAFT_CACHE_DIR="$shared" "$cli" ptx add_one -o /dev/null >/dev/null 2>&1
    # shellcheck disable=SC2016
    as scsec_a bash -c 'for e in "$1"/*.scjit; do
        for pid in $(seq "$2" $(( $2 + 400 ))); do ln -sf "$3" "$e.$pid.tmp"; done
        rm -f "$e"  # a miss: root would compile and write the entry
      done' _ "$shared" $$ "$victim"
    run env STAGECRAFT_CACHE_DIR="$shared" "$cli" ptx add_one -o "$root/x.ptx"
    check "root's ptx through links still works (exit $rc)" [ "$rc" = 0 ]
    check "root's file is untouched" [ "$(cat "$victim")" = "root's data" ]
    # Reproduction 3: an entry the other user wrote is never served.
    as scsec_a STAGECRAFT_CACHE_DIR="$shared" "$cli" ptx add_one -o /dev/null >/dev/null 2>&1
    run env STAGECRAFT_CACHE_DIR="$shared" "$cli" ptx add_one -o "$root/y.ptx"
    check "root's ptx compiles afresh, never '(from cache)' of another user" bash -c "! grep -q 'from cache' '$out'"
  else
    echo "note: no NVRTC here: the ptx reproductions (2, 3) are not run"
  fi
  ;;
homeless)
  # Reproductions 1 and 7: without HOME each user gets a cache of their own (0700), and one
  # user's directory never locks another out.
  make_user scsec_a
  make_user scsec_b
  for u in scsec_a scsec_b; do
    run as "$u" "$cli" run add_one --backend host
    check "$u without HOME: correct (exit $rc)" [ "$rc" = 0 ]
    d=/tmp/stagecraft-cache-$(id -u "$u")
    check "$u's cache is $d, its own, mode 0700" [ "$(stat -c '%U %a' "$d" 2>/dev/null)" = "$u 700" ]
  done
  # A directory planted at another user's per-user name is refused, and that user still runs.
  victim_dir=/tmp/stagecraft-cache-$(id -u scsec_b)
  rm -rf "$victim_dir"
  as scsec_a mkdir -m 0777 "$victim_dir"
  run as scsec_b "$cli" run add_one --backend host
  check "a directory planted at scsec_b's name: scsec_b still runs (exit $rc)" [ "$rc" = 0 ]
  check "... and is told why it is not used" says "not using the cache directory $victim_dir: it is owned by uid $(id -u scsec_a)"
  check "... and nothing was created in it" [ -z "$(ls -A "$victim_dir")" ]
  rm -rf "$victim_dir"
  # root without HOME uses its own home from the password database, never a shared directory.
  run env -u HOME -u XDG_CACHE_HOME -u STAGECRAFT_CACHE_DIR "$cli" run add_one --backend host
  check "root without HOME: correct (exit $rc)" [ "$rc" = 0 ]
  check "root's objects are under its home" [ -n "$(ls "$(getent passwd root | cut -d: -f6)"/.cache/stagecraft/host/*.so 2>/dev/null)" ]
  ;;
read_only)
  # Reproduction 7: a cache the user may not write costs the cache, not the run.
  make_user scsec_a
  ro=$root/ro && mkdir "$ro" && chown scsec_a "$ro"
  as scsec_a mkdir -m 0700 "$ro/host"
  as scsec_a chmod 0500 "$ro" "$ro/host"
  run as scsec_a STAGECRAFT_CACHE_DIR="$ro" "$cli" run add_one --backend host
  check "host backend with a read-only cache: correct (exit $rc)" [ "$rc" = 0 ]
  check "... and says the cache cannot be written" says "cache directory $ro/host cannot be written"
  check "... and leaves no scratch behind in the temporary directory" [ -z "$(find /tmp -maxdepth 1 -user scsec_a -name 'build-*' 2>/dev/null)" ]
  ;;
damaged_objects)
  # Reproduction 4: a cached object with a flipped bit, truncated or emptied is rebuilt and the
  # run is correct; the damage is named, never blamed on the kernel.
  export STAGECRAFT_CACHE_DIR=$root/cache
  run "$cli" run add_one --backend host
  check "first run compiles and is correct (exit $rc)" [ "$rc" = 0 ]
  so=$(ls "$STAGECRAFT_CACHE_DIR"/host/*.so)
  size=$(stat -c %s "$so")
  for i in $(seq 1 30); do
    # a seeded position (RANDOM is seeded below), one bit
    at=$(( (RANDOM * 32768 + RANDOM) % size )) bit=$(( RANDOM % 8 ))
    python3 -c "import sys; p, at, bit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]); b = bytearray(open(p, 'rb').read()); b[at] ^= 1 << bit; open(p, 'wb').write(b)" "$so" "$at" "$bit"
    run "$cli" run add_one --backend host
    check "bit $bit of byte $at flipped: correct (exit $rc) and rebuilt" [ "$rc" = 0 ] && check "... the damage named" says "is not used (.*damaged\|.*trailer\|.*too short)"
    [ "$rc" = 0 ] || cat "$out"
  done
  truncate -s 7000 "$so"
  run "$cli" run add_one --backend host
  check "truncated to 7000 bytes: correct (exit $rc)" [ "$rc" = 0 ]
  : >"$so"
  run "$cli" run add_one --backend host
  check "emptied: correct (exit $rc)" [ "$rc" = 0 ]
  run "$cli" run add_one --backend host
  check "the rebuilt object is served from the cache afterwards, silently" bash -c "[ $rc = 0 ] && grep -q 'cached object' '$out' && ! grep -q warning '$out'"
  ;;
environment)
  # Reproduction 7: a machine without a compiler, an assembler or disk space is exit 69 with
  # what is missing, not "a bug in stagecraft" (70).
  export STAGECRAFT_CACHE_DIR=$root/cache
  run env STAGECRAFT_HOST_CXX=/nonexistent/c++ "$cli" run add_one --backend host
  check "no host compiler: exit 69 (got $rc)" [ "$rc" = 69 ] && check "... naming it" says "'/nonexistent/c++' cannot be started here"
  run env PATH=/nonexistent "$cli" run add_one --backend host --set K=2
  if [ "$rc" = 0 ] && "$cxx" --version 2>/dev/null | grep -q clang; then
    echo "note: $cxx assembles and links without PATH (clang's integrated assembler): the missing-'as' case does not apply"
  else
    check "PATH without 'as': exit 69 (got $rc)" [ "$rc" = 69 ] && check "... naming the assembler" says "the compiler cannot start 'as'"
    check "... not called our bug" bash -c "! grep -q 'please report' '$out'"
  fi
  if [ "$(id -u)" = 0 ] && mkdir "$root/full" && mount -t tmpfs -o size=400k,mode=0700 tmpfs "$root/full" 2>/dev/null; then
    mkdir "$root/full/host"
    avail=$(df -k "$root/full" | awk 'END {print $4}')
    dd if=/dev/zero of="$root/full/fill" bs=1k count=$((avail - 30)) 2>/dev/null
    run env STAGECRAFT_CACHE_DIR="$root/full" "$cli" run add_one --backend host --set K=3
    umount "$root/full"
    check "a disk that fills while the object is built: exit 69 (got $rc)" [ "$rc" = 69 ] && check "... saying so" says "disk"
  else
    echo "note: cannot mount a small tmpfs here: the full-disk case is not run"
  fi
  ;;
scratch)
  # Reproduction 8: a compile killed with -9 leaves its scratch directory; the next compile
  # removes it once its process is gone (and a minute has passed), and keeps a live one.
  export STAGECRAFT_CACHE_DIR=$root/cache
  run "$cli" run add_one --backend host
  # The victim in a session of its own, so that kill -9 takes the compiler it started too: killed
  # alone, its `sh -c "c++ ..."` went on writing into the scratch directory after the `touch`
  # below, which then looked a few seconds old and was rightly kept (seen once under the
  # sanitizer step's load).
  ( exec setsid "$cli" run add_one --backend host --set K=3 >/dev/null 2>&1 ) & victim=$!
  for _ in $(seq 1 200); do [ -n "$(ls -d "$STAGECRAFT_CACHE_DIR"/host/build-"$victim"-* 2>/dev/null)" ] && break; sleep 0.01; done
  kill -9 -- -"$victim" 2>/dev/null; wait "$victim" 2>/dev/null
  for _ in $(seq 1 500); do kill -0 -- -"$victim" 2>/dev/null || break; sleep 0.01; done
  mkdir -p "$STAGECRAFT_CACHE_DIR/host/build-$victim-killed" "$STAGECRAFT_CACHE_DIR/host/build-$$-alive1"
  touch -d '2 hours ago' "$STAGECRAFT_CACHE_DIR"/host/build-*
  run "$cli" run add_one --backend host --set K=2
  check "the next compile is correct (exit $rc)" [ "$rc" = 0 ]
  check "the killed compile's scratch is gone" [ -z "$(ls -d "$STAGECRAFT_CACHE_DIR"/host/build-"$victim"-* 2>/dev/null)" ]
  check "a live process's scratch is kept" [ -d "$STAGECRAFT_CACHE_DIR/host/build-$$-alive1" ]
  check "a finished compile leaves no scratch of its own" [ "$(ls -d "$STAGECRAFT_CACHE_DIR"/host/build-* | wc -l)" = 1 ]
  ;;
*) echo "unknown scenario $scenario"; exit 2 ;;
esac
[ "$fails" = 0 ] || { echo "--- last command's output:"; cat "$out"; exit 1; }
echo "all checks passed"
