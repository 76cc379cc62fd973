"""Compile FA4 (flash_attn/cute/flash_fwd_sm100.py, FlashAttentionForwardSm100) forward for sm_100a
without a GPU, mirroring the arguments flash_attn/cute/interface.py::_flash_attn_fwd builds for:
  bf16 Q/K/V/O, hdim 128, non-causal, batch 1, 16 heads (MHA, qhead_per_kvhead=1), seqlen_q=seqlen_k=4096,
  no varlen / paged KV / lse (return_lse=False, no grad), num_splits=1.
Interface config for that on arch 100 (CUDA 13): tile_m=128, tile_n=128, q_stage=2, pack_gqa=False,
  use_2cta_instrs=True (unless FA_DISABLE_2CTA=1), use_clc_scheduler=False, is_static_persistent=True.
Run:
  bench/fa4_anchor/run.sh FLASH_ATTENTION_DIR  (sets up the environment below and counts the loops)
  by hand: CUTE_DSL_ARCH=sm_100a CUTE_DSL_KEEP=ptx,cubin CUTE_DSL_DUMP_DIR=OUT PYTHONPATH=bench/fa4_anchor:FA VENV/bin/python compile_fa4.py
torch/triton are replaced by an import-time stand-in (torch_standin.py): only FA4/quack host-side helpers use them.
"""
import math, os, sys
import torch_standin  # noqa: F401  (must precede flash_attn / quack imports)

import cutlass
import cutlass.cute as cute
from cutlass import BFloat16, Float32
from quack.compile_utils import make_fake_tensor as fake_tensor
from flash_attn.cute.flash_fwd_sm100 import FlashAttentionForwardSm100
from flash_attn.cute.utils import AuxData
from flash_attn.cute import utils as fa_utils

# No driver here: StaticPersistentTileScheduler.get_grid_shape (host side, launch grid only) asks
# cutlass.utils.HardwareInfo() for the SM count. Substitute a B200 value (148 SMs); kernel code is unaffected.
class _FakeHardwareInfo:
    def __init__(self, *a, **k): pass
    def get_device_multiprocessor_count(self): return int(os.environ.get("FLASH_ATTENTION_NUM_SMS", "148"))
cutlass.utils.HardwareInfo = _FakeHardwareInfo

use_2cta = not fa_utils._get_disable_2cta_default(is_fwd=True)
head_dim = head_dim_v = 128
tile_m, tile_n, q_stage = 128, 128, 2
seqlen = 4096
print(f"use_2cta_instrs={use_2cta} tile=({tile_m},{tile_n}) q_stage={q_stage}", flush=True)

fa_fwd = FlashAttentionForwardSm100(
    head_dim, head_dim_v,
    qhead_per_kvhead=1, is_causal=False, is_local=False, is_split_kv=False, pack_gqa=False,
    m_block_size=tile_m, n_block_size=tile_n, q_stage=q_stage, is_static_persistent=True,
    score_mod=None, mask_mod=None, has_aux_tensors=False, paged_kv_non_tma=False, is_varlen_q=False,
    q_subtile_factor=1, kv_subtile_factor=1, use_2cta_instrs=use_2cta, use_clc_scheduler=False,
    seqlen_k_per_split=None, has_tile_count_semaphore=False,
)

sym = cute.sym_int
div = 128 // BFloat16.width  # 16-byte alignment, as to_cute_tensor(assumed_align=16)
b, sq, sk, h, d = sym(), sym(), sym(), sym(), sym()
mQ = fake_tensor(BFloat16, (b, sq, h, d), divisibility=div)
mK = fake_tensor(BFloat16, (b, sk, h, d), divisibility=div)
mV = fake_tensor(BFloat16, (b, sk, h, d), divisibility=div)
mO = fake_tensor(BFloat16, (b, sq, h, d), divisibility=div)
stream = cute.runtime.make_fake_stream(use_tvm_ffi_env_stream=True)
softmax_scale = 1.0 / math.sqrt(head_dim)

args = [fa_fwd, mQ, mK, mV, mO, None, softmax_scale,
        None, None, None, None, None,   # cu_seqlens_q/k, seqused_q/k, page_table
        None, None,                     # window_size_left/right
        None,                           # learnable_sink
        None,                           # descale_tensors
        None,                           # blocksparse tensors
        AuxData(None, None),
        None, None, None, None, None, None, None,  # scheduler metadata tensors
        seqlen,                          # max_seqlen_q (interface passes the python int)
        stream]
compiled = cute.compile(*args, options="--enable-tvm-ffi")
print("compiled:", compiled, getattr(compiled, "function_name", None), flush=True)
