#!/usr/bin/env bash
# The SASS of the GEMMs: does the CUBIN NVRTC builds really issue tensor-core instructions
# (HGMMA, Hopper's wgmma; QGMMA for gemm_fp8; UTCHMMA, Blackwell's tcgen05.mma of 16-bit inputs,
# for gemm_blackwell on sm_100a; with a tmem[...] A operand and STTM for gemm_blackwell_ts; the
# block-scaled UTCQMMA and the scale copies' UTCCP for gemm_blackwell_mx) and
# TMA (UTMALDG/UTMASTG)? nvdisasm comes from the
# nvidia-cuda-nvdisasm PyPI wheel, installed into build/sass-venv by this script (not by the
# product, which never needs it). Runs without a GPU.
#   usage: bench/sass_check.sh [OUTDIR]     (default: build/sass; a build with the CLI in
#                                           $STAGECRAFT_BUILD_DIR or ./build)
# Exit: 0 the tensor-core instruction found in each, 1 not found or a step failed, 77 no nvdisasm.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${STAGECRAFT_BUILD_DIR:-$here/build}
out=${1:-$build/sass}
cli=$build/cli/stagecraft
[ -x "$cli" ] || { echo "sass_check: no $cli (build the stagecraft target first)" >&2; exit 1; }
mkdir -p "$out"

nvdisasm=$("$here/bench/nvdisasm.sh" "$build") || exit $?
echo "nvdisasm: $nvdisasm ($("$nvdisasm" --version | tail -1))"

fails=0
# Hopper's SASS names the tensor-core op by input kind: HGMMA for f16/bf16/tf32, QGMMA for fp8.
# Blackwell's tcgen05.mma kind::f16 is UTCHMMA (the "UTC" family: the unified tensor core; also
# UTCBAR for tcgen05.commit); TMEM loads are LDTM.
# A kernel may carry one parameter after `@` (gemm_blackwell_2cta@mc=2: two pairs multicasting A);
# its files are named with `_` for `@` and `=`.
for spec in "gemm_hopper:HGMMA:sm_90a" "gemm_small:HGMMA:sm_90a" "gemm_fp8:QGMMA:sm_90a" "gemm_fp8_blockwise:QGMMA:sm_90a" "gemm_blackwell:UTCHMMA:sm_100a" "gemm_blackwell_2cta:UTCHMMA:sm_100a" \
            "gemm_blackwell_2cta@mc=2:UTCHMMA:sm_100a" "gemm_blackwell_ts:UTCHMMA:sm_100a" "gemm_blackwell_mx:UTCQMMA:sm_100a" \
            "gemm_blackwell_mx@fmt=3:UTCOMMA:sm_100a" "gemm_blackwell_mx@fmt=4:UTCOMMA.4X:sm_100a" "gemm_blackwell_mx@fmt=5:UTCQMMA:sm_100a" "attention_blackwell:UTCHMMA:sm_100a"; do
  arch=${spec##*:}
  spec=${spec%:*}
  op=${spec#*:}
  spec=${spec%%:*}
  kernel=${spec%%@*}
  sets=()
  [ "$kernel" = "$spec" ] || sets=(--set "${spec#*@}")
  spec=${spec//[@=]/_}
  "$cli" ptx "$kernel" "${sets[@]}" --arch "$arch" --cubin "$out/$spec.cubin" -o "$out/$spec.ptx"
  "$nvdisasm" "$out/$spec.cubin" > "$out/$spec.sass"
  hgmma=$(grep -c "$op" "$out/$spec.sass" || true)
  tma=$(grep -c -E 'UTMALDG|UTMASTG' "$out/$spec.sass" || true)
  instr=$(grep -c -E '^\s+/\*[0-9a-f]{4}\*/' "$out/$spec.sass" || true)
  local_mem=$(grep -c -E '\b(LDL|STL)\b' "$out/$spec.sass" || true)
  echo "$spec: $instr instructions, $hgmma $op, $tma TMA (UTMALDG/UTMASTG), $local_mem local-memory (LDL/STL); $out/$spec.sass"
  grep -m3 "$op" "$out/$spec.sass" | sed 's/^ */  /' | cut -c1-150
  [ "$hgmma" -gt 0 ] || { echo "sass_check: $spec has no $op"; fails=1; }
  [ "$local_mem" -eq 0 ] || { echo "sass_check: $spec touches local memory"; fails=1; }
  if [ "$arch" = sm_100a ]; then
    # tcgen05.commit is UTCBAR, tcgen05.ld LDTM, tcgen05.alloc/dealloc UTCATOMSWS (an atomic on
    # the TMEM allocation bitmap).
    commits=$(grep -c 'UTCBAR' "$out/$spec.sass" || true)
    loads=$(grep -c 'LDTM' "$out/$spec.sass" || true)
    allocs=$(grep -c 'UTCATOMSWS' "$out/$spec.sass" || true)
    # The pair kernels' MMAs are UTCHMMA.2CTA; multicast TMA loads print as UTMALDG.MULTICAST.
    pair=$(grep -c 'UTC[A-Z]*MMA\.2CTA' "$out/$spec.sass" || true)
    mcast=$(grep -c 'UTMALDG.*MULTICAST' "$out/$spec.sass" || true)
    echo "$spec: $commits UTCBAR (tcgen05.commit), $loads LDTM (tcgen05.ld), $allocs UTCATOMSWS (TMEM alloc/dealloc), $pair .2CTA MMA, $mcast multicast UTMALDG"
    [ "$commits" -gt 0 ] && [ "$loads" -gt 0 ] && [ "$allocs" -gt 0 ] || { echo "sass_check: $spec lacks a tcgen05 commit, TMEM load or allocation"; fails=1; }
    if [ "$spec" = gemm_blackwell_ts ] || [ "$spec" = attention_blackwell ]; then
      # A from TMEM: the MMA's first operand is tmem[...] where the SMEM form has gdesc[...]; tcgen05.st is STTM.
      # (attention_blackwell: P V with P in TMEM; P, and S's exponentials, written by STTM.)
      ts=$(grep -c -E 'UTCHMMA tmem\[' "$out/$spec.sass" || true)
      stores=$(grep -c 'STTM' "$out/$spec.sass" || true)
      echo "$spec: $ts UTCHMMA with A from TMEM, $stores STTM (tcgen05.st)"
      [ "$ts" -gt 0 ] && [ "$stores" -gt 0 ] || { echo "sass_check: $spec lacks the A-from-TMEM MMA or the TMEM store"; fails=1; }
    fi
    if [ "$kernel" = gemm_blackwell_mx ]; then
      # Block scaling: tcgen05.cp 32x128b.warpx4 is UTCCP.T.S.4x32dp128bit; the MMA reads two more
      # TMEM operands (the scales) than UTCHMMA does. FP4 (fmt=3 kind::mxf4, fmt=4
      # kind::mxf4nvf4) is UTCOMMA, .4X for NVFP4's four scales an instruction; FP6 (fmt=5, kind::mxf8f6f4 as
      # MXFP8, the format in the instruction descriptor) is UTCQMMA.
      cps=$(grep -c 'UTCCP' "$out/$spec.sass" || true)
      scaled=$(grep -c -E "$op gdesc\[[^]]*\], gdesc\[[^]]*\], tmem\[[^]]*\], tmem\[[^]]*\], idesc\[[^]]*\], tmem\[" "$out/$spec.sass" || true)
      echo "$spec: $cps UTCCP (tcgen05.cp), $scaled $op with scale operands in TMEM"
      [ "$cps" -gt 0 ] && [ "$scaled" -gt 0 ] || { echo "sass_check: $spec lacks the scale copy or the block-scaled MMA"; fails=1; }
    fi
  fi
done
exit $fails
