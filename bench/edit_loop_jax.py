# The JAX side of bench/edit_loop.sh: the same small kernel as examples/add_one.cpp (y = x + 1,
# each CTA streams its 128-row strip as 128x64 f32 blocks through a K-deep SMEM ring fed by TMA
# copies and barriers, stores with TMA), written with Pallas' Mosaic GPU API and run by JAX's
# Mosaic GPU interpreter (InterpretGPUParams), which runs on the CPU. Prints the time to import
# JAX and the time to trace, interpret and check the kernel, then the verdict.
import sys
import time

t_start = time.perf_counter()
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax._src.pallas.mosaic_gpu.interpret.params import InterpretGPUParams

t_imported = time.perf_counter()
M, N, K = (int(a) for a in (sys.argv[1:4] if len(sys.argv) >= 4 else (512, 1024, 2)))
steps = N // 64


def body(x_gmem, y_gmem, buf, full):
    row = jax.lax.axis_index("strip")

    def load(j):
        s = j % K
        plgpu.copy_gmem_to_smem(x_gmem.at[pl.ds(row * 128, 128), pl.ds(j * 64, 64)], buf.at[s], full.at[s])

    for j in range(min(K, steps)):  # the prologue fills the ring
        load(j)

    def step(j, carry):
        s = j % K
        plgpu.barrier_wait(full.at[s])
        buf[s] = buf[s] + 1.0
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(buf.at[s], y_gmem.at[pl.ds(row * 128, 128), pl.ds(j * 64, 64)])

        @pl.when(j + K < steps)
        def _():
            plgpu.wait_smem_to_gmem(0, wait_read_only=True)  # the stage's store has read it
            load(j + K)

        return carry

    jax.lax.fori_loop(0, steps, step, 0)
    plgpu.wait_smem_to_gmem(0)


def kernel(x_gmem, y_gmem):
    pl.run_scoped(lambda buf, full: body(x_gmem, y_gmem, buf, full),
                  plgpu.SMEM((K, 128, 64), jnp.float32), plgpu.Barrier(num_barriers=K))


add_one = plgpu.kernel(kernel, out_shape=jax.ShapeDtypeStruct((M, N), jnp.float32), grid=(M // 128,),
                       grid_names=("strip",), interpret=InterpretGPUParams(uninitialized_memory="zero"))
x = np.random.default_rng(1).uniform(-2, 2, (M, N)).astype(np.float32)
y = np.asarray(add_one(jnp.asarray(x)).block_until_ready())
t_done = time.perf_counter()
bad = int((y != x + 1.0).sum())
print(f"jax {jax.__version__} on {jax.devices()[0].platform}: Mosaic GPU interpreter (InterpretGPUParams)")
print(f"import {t_imported - t_start:.3f} s, trace+interpret {t_done - t_imported:.3f} s")
print("verdict: correct" if bad == 0 else f"verdict: wrong result ({bad} of {y.size} elements)")
sys.exit(0 if bad == 0 else 1)
