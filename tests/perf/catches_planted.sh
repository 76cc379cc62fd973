#!/usr/bin/env bash
# The static speed gate can fail: gemm_hopper's real SASS passes its budget, and the same SASS
# with a GPU-scope MEMBAR, or with the dozen integer instructions of a 64-bit modulo, planted in
# its K-loop fails it, naming the number that went over; so does its epilogue report with the
# bank conflicts of an unswizzled staging tile.
#   usage: catches_planted.sh BUILD_DIR
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$1
STAGECRAFT_BUILD_DIR=$build "$here/bench/perf_static.sh" --only '^gemm_hopper$' >/dev/null; rc=$?
[ "$rc" = 0 ] || { echo "the gate on gemm_hopper exited $rc"; exit "$rc"; }
sass=$build/perf-static/gemm_hopper.sass
budget=$(python3 -c "import json,sys; print(json.dumps(next(k['budget'] for k in json.load(open(sys.argv[1]))['kernels'] if k['name'] == 'gemm_hopper')))" "$here/bench/perf_budgets.json")
gate() { python3 "$here/bench/perf_static.py" --check-sass "$1" --mma '^HGMMA' --budget-json "$budget"; }
# plant FILE LINE...: the lines inserted right after the K-loop's first HGMMA
plant() {
  local out=$1; shift
  python3 - "$here/bench" "$sass" "$out" "$@" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1])
import perf_static as ps
src, out, extra = sys.argv[2], sys.argv[3], sys.argv[4:]
text = open(src).read()
first, last = ps.k_loop_spans(text, re.compile(r"^HGMMA"))[0]
# the line of the K-loop's first HGMMA: count instruction lines as perf_static does
lines, seen, at = text.splitlines(), -1, None
for i, l in enumerate(lines):
    m = ps.INSTR.search(l)
    if m and not ps.LABEL.match(l):
        seen += 1
        if first <= seen <= last and ps.opcode(m.group(2)).startswith("HGMMA"):
            at = i
            break
planted = [f"        /*ffff*/                   {x} ;" for x in extra]
open(out, "w").write("\n".join(lines[:at + 1] + planted + lines[at + 1:]) + "\n")
PY
}
fails=0
expect() {  # WHAT RC REGEX FILE
  local out; out=$(gate "$4"); local rc=$?
  if [ "$rc" = "$2" ] && grep -qE "$3" <<<"$out"; then echo "ok: $1"; else echo "FAILED: $1 (exit $rc, wanted $2 and /$3/):"; echo "$out"; fails=1; fi
}
expect "the real SASS is within its budget" 0 "measured: kloop=" "$sass"
plant "$build/perf-static/planted_membar.sass" "MEMBAR.ALL.GPU"
expect "a planted MEMBAR.ALL.GPU fails the gate" 1 "membar_gpu = [0-9]+ is over its budget" "$build/perf-static/planted_membar.sass"
plant "$build/perf-static/planted_modulo.sass" "IMAD.WIDE.U32 R2, R4, R5, RZ" "IMAD.HI.U32 R6, R2, R7, RZ" "IMAD R8, R6, R9, RZ" \
  "IADD3 R10, P0, R4, -R8, RZ" "ISETP.GE.U32.AND P1, PT, R10, R9, PT" "@P1 IADD3 R10, R10, -R9, RZ" "IADD3.X R11, RZ, RZ, RZ, P0, !PT" \
  "ISETP.GE.U32.AND P2, PT, R10, R9, PT" "@P2 IADD3 R10, R10, -R9, RZ" "LOP3.LUT R12, R10, 0x3, RZ, 0xc0, !PT"
expect "a planted 64-bit modulo fails the gate" 1 "kloop = [0-9]+ is over its budget" "$build/perf-static/planted_modulo.sass"
# The epilogue's bank conflicts: what `stagecraft ptx` said about the real kernel passes; the same
# report with the count an unswizzled (64, 128) bf16 subtile gives (rows 256 bytes apart on the
# same banks: 8-way, 256 wavefronts per warp for its 8 stmatrix, as for 32 pair stores; the codegen test "the generator
# counts each epilogue store's SMEM wavefronts" measures 512 for an unswizzled (64, 256) half) fails.
log=$build/perf-static/gemm_hopper.log
logate() { python3 "$here/bench/perf_static.py" --check-log "$1" --budget-json "$budget"; }
expect_log() {  # WHAT RC REGEX FILE
  local out; out=$(logate "$4"); local rc=$?
  if [ "$rc" = "$2" ] && grep -qE "$3" <<<"$out"; then echo "ok: $1"; else echo "FAILED: $1 (exit $rc, wanted $2 and /$3/):"; echo "$out"; fails=1; fi
}
expect_log "the real epilogue report is within its budget" 0 "smem_extra_wavefronts=0" "$log"
sed 's/32 SMEM wavefronts per warp (ideal 32)/256 SMEM wavefronts per warp (ideal 32)/' "$log" >"$build/perf-static/planted_unswizzled.log"
grep -q "256 SMEM wavefronts per warp" "$build/perf-static/planted_unswizzled.log" || { echo "FAILED: nothing to plant in $log"; exit 1; }
expect_log "a planted unswizzled epilogue fails the gate" 1 "smem_extra_wavefronts = [0-9]+ is over its budget of 0" "$build/perf-static/planted_unswizzled.log"
# A back edge from past an EXIT is not a K-loop: ptxas puts a barrier wait's retry out of line,
# after the kernel's exits, and branches back into the body from there. Here a peeled first step
# (two HGMMAs before the loop, as attention_hopper overlap=1 has) lies under such an edge; the
# K-loop is the 4 instructions of .L_x_1 (with the edge counted, 12: the gate said 2899 for 426).
cat >"$build/perf-static/out_of_line_retry.sass" <<'SASS'
.L_x_0:
        /*0000*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R7+URZ+0x18008], R2 ;
        /*0010*/              @!P0 BRA `(.L_x_9) ;
        /*0020*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT ;
        /*0030*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR8], R24 ;
.L_x_1:
        /*0040*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], R24 ;
        /*0050*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR8], R24 ;
        /*0060*/                   IADD3 R4, R4, 0x1, RZ ;
        /*0070*/               @P1 BRA `(.L_x_1) ;
        /*0080*/                   EXIT ;
.L_x_9:
        /*0090*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R7+URZ+0x18008], R2 ;
        /*00a0*/              @!P0 BRA `(.L_x_9) ;
        /*00b0*/                   BRA `(.L_x_0) ;
SASS
out=$(python3 "$here/bench/perf_static.py" --check-sass "$build/perf-static/out_of_line_retry.sass" --mma '^HGMMA' --budget-json '{"kloop": 4}'); rc=$?
if [ "$rc" = 0 ] && grep -qE "kloop=4 " <<<"$out"; then echo "ok: a retry branching back from past an EXIT is not a K-loop"; else
  echo "FAILED: a retry branching back from past an EXIT is not a K-loop (exit $rc):"; echo "$out"; fails=1; fi
exit $fails
