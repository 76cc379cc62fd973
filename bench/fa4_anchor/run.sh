#!/usr/bin/env bash
# The anchor of attention_blackwell's perf-static budgets (bench/perf_budgets.json): FlashAttention-4's
# forward kernel (flash-attention's flash_attn/cute, CuTe DSL) compiled for sm_100a without a GPU,
# and its loops counted from the SASS, 1-CTA and 2-CTA MMA. By hand, not in CI: it needs PyPI for
# nvidia-cutlass-dsl and its helpers, and a flash-attention checkout (git clone
# https://github.com/Dao-AILab/flash-attention; counted at commit 0251105).
#
# usage: bench/fa4_anchor/run.sh FLASH_ATTENTION_DIR [BUILD_DIR]
# The softmax warpgroup's loop is the one with MUFU.EX2 and 4 LDTM, the MMA warp's the one with UTC*MMA.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fa=$(cd "${1:?usage: run.sh FLASH_ATTENTION_DIR [BUILD_DIR]}" && pwd)
build=$(cd "${2:-$here/../../build}" && pwd)
out=$build/fa4_anchor
venv=$out/venv
mkdir -p "$out"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  # torch is not installed: torch_standin.py stands in for the host-side helpers that import it.
  "$venv/bin/pip" install -q "nvidia-cutlass-dsl[cu13]==4.8.1" einops "apache-tvm-ffi==0.1.15.post2"
  "$venv/bin/pip" install -q --no-deps "quack-kernels==0.6.5"
fi
nvdisasm=$(bash "$here/../nvdisasm.sh" "$build")
for mma in 1cta 2cta; do
  dir=$out/$mma
  rm -rf "$dir" && mkdir -p "$dir"
  disable=0
  [ "$mma" = 1cta ] && disable=1
  (cd "$dir" && FA_DISABLE_2CTA=$disable CUTE_DSL_ARCH=sm_100a CUTE_DSL_KEEP=ptx,cubin CUTE_DSL_DUMP_DIR="$dir" \
     PYTHONPATH="$here:$fa" "$venv/bin/python" -W ignore "$here/compile_fa4.py")
  cubin=$(find "$dir" -name '*.cubin' | head -1)
  [ -n "$cubin" ] || { echo "fa4_anchor: no cubin under $dir" >&2; exit 1; }
  "$nvdisasm" -c "$cubin" > "$dir/fa4.sass"
  # An indirect branch's targets come from the cubin's EIATTR_INDIRECT_BRANCH_TARGETS.
  targets=$("$nvdisasm" "$cubin" | awk '/EIATTR_INDIRECT_BRANCH_TARGETS/{f=1; next} f && /EIATTR_/{f=0} f' | grep -o '\.L_x_[0-9]*' | tr '\n' ' ' || true)
  echo "== FA4 forward, hdim 128 bf16, $mma MMA: $cubin"
  BRX_TARGETS="$targets" python3 "$here/sass_cfg_loops.py" "$dir/fa4.sass" | grep -E "MUFU.EX2|UTCMMA" || true
done
