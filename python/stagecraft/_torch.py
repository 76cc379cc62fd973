"""PyTorch: kernels on torch tensors, as torch.library custom ops, and timed beside torch.

Nothing here imports torch until a torch tensor (or torch_op) is seen: NumPy users never pay
for it. A kernel parameter's dtype maps to one torch dtype (no silent conversion): bf16 is
torch.bfloat16, e4m3/e5m2 torch.float8_e4m3fn/float8_e5m2, and the CPU backends see their bits
(uint16, uint8) through a view, so nothing is copied that NumPy does not copy already.
"""
from __future__ import annotations

import re
import statistics
import time
from typing import Any, Callable, Sequence

from ._stagecraft import UsageError

# kernel dtype name -> (torch dtype attribute, NumPy view the CPU backends take, or None: as is)
_DTYPES = {
    "f32": ("float32", None),
    "f16": ("float16", None),
    "bf16": ("bfloat16", "uint16"),
    "i32": ("int32", None),
    "u32": ("uint32", None),
    "i8": ("int8", None),
    "u8": ("uint8", None),
    "e4m3": ("float8_e4m3fn", "uint8"),
    "e5m2": ("float8_e5m2", "uint8"),
    # Block-scaled storage: packed FP4 bytes (a torch.float4_e2m1fn_x2 tensor's .view(torch.uint8))
    # and NVFP4 scale codes, both passed as uint8.
    "e2m1x2": ("uint8", None),
    "ue4m3": ("uint8", None),
    # FP6 operands, packed (four in three bytes, the innermost extent 3/4 of the elements'): uint8.
    "e2m3": ("uint8", None),
    "e3m2": ("uint8", None),
    # kind::f8f6f4's FP4, packed two a byte in GMEM (as e2m1x2's bytes): uint8, half as wide.
    "e2m1": ("uint8", None),
}


def is_tensor(x: Any) -> bool:
    """x is a torch.Tensor (decided without importing torch)."""
    return any(c.__module__ == "torch" and c.__name__ == "Tensor" for c in type(x).__mro__)


def torch_dtype(spec: dict) -> Any:
    import torch

    return getattr(torch, _DTYPES[spec["dtype"]][0])


def check_dtype(kernel_name: str, spec: dict, t: Any) -> None:
    want = torch_dtype(spec)
    if t.dtype != want:
        raise UsageError(
            f"kernel '{kernel_name}': parameter '{spec['name']}' is {spec['dtype']} (torch.{_DTYPES[spec['dtype']][0]}), "
            f"but the tensor is {t.dtype}")


def to_host(t: Any) -> Any:
    """A CPU tensor as the NumPy array the CPU backends read (bf16 and fp8 as their bits)."""
    import torch

    view = {torch.bfloat16: torch.uint16, torch.float8_e4m3fn: torch.uint8, torch.float8_e5m2: torch.uint8}.get(t.dtype)
    t = t.detach().contiguous()
    return (t.view(view) if view is not None else t).numpy()


def from_host(a: Any, spec: dict) -> Any:
    """An output array back as a torch tensor of the parameter's dtype (no copy)."""
    import torch

    return torch.from_numpy(a).view(torch_dtype(spec))


def run_device(kernel: Any, tensors: Sequence[Any], out: Sequence[Any] | None, math: str) -> Any:
    """The kernel on CUDA tensors: outputs allocated on the inputs' device (zero-filled, as the CPU
    path does) or taken from out=, every array dense and of the parameter's dtype, the launch
    enqueued on torch's current stream of that device. Not waited for: torch orders it."""
    import torch

    ins, outs = kernel.inputs, kernel.outputs
    device = tensors[0].device if tensors else (out[0].device if out else None)
    for spec, t in list(zip(ins, tensors)) + list(zip(outs, out or [])):
        if t.device != device:
            raise UsageError(f"kernel '{kernel.name}': parameter '{spec['name']}' is on {t.device}, the others on {device}")
        check_dtype(kernel.name, spec, t)
        if not t.is_contiguous():
            raise UsageError(
                f"kernel '{kernel.name}': parameter '{spec['name']}' is not contiguous (strides {tuple(t.stride())}): the launch reads "
                "dense row-major arrays; pass t.contiguous()")
    if device is not None and device.index not in (None, 0):
        # The runtime holds device 0's primary context (torch's on cuda:0): a launch there with
        # another device's stream and memory would be a driver error, not a result.
        raise UsageError(f"kernel '{kernel.name}': the tensors are on {device}, but stagecraft launches on cuda:0 only "
                         "(CUDA_VISIBLE_DEVICES picks which GPU that is)")
    given = {s["name"]: tuple(t.shape) for s, t in zip(ins, tensors)}
    given.update({s["name"]: tuple(t.shape) for s, t in zip(outs, out or [])})
    shapes = kernel._k.shapes([list(given.get(a["name"], ())) for a in kernel.arrays])
    for a, s in zip(kernel.arrays, shapes):
        if a["name"] in given and given[a["name"]] != tuple(s):
            raise UsageError(f"kernel '{kernel.name}': parameter '{a['name']}' has shape {tuple(s)}, but the tensor is {given[a['name']]}")
    results = list(out) if out is not None else [
        torch.zeros(tuple(s), dtype=torch_dtype(a), device=device) for a, s in zip(kernel.arrays, shapes) if a["output"] and not a["workspace"]]
    by_name = {s["name"]: t for s, t in zip(ins, tensors)}
    by_name.update({s["name"]: t for s, t in zip(outs, results)})
    ptrs = [by_name[a["name"]].data_ptr() for a in kernel.arrays if not a["workspace"]]
    stream = torch.cuda.current_stream(device).cuda_stream
    kernel._k.run_device(ptrs, [list(s) for s in shapes], stream, math)
    return results[0] if len(results) == 1 else tuple(results)


# torch.library.Library objects per namespace: an op lives as long as its library object.
_libraries: dict[str, Any] = {}


def _identifier(name: str) -> str:
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else "_" + s


def op_name(kernel: Any) -> str:
    """A default op name: the kernel's name and its parameter values (run-time extents left out)."""
    values = "_".join(f"{k}_{v}" for k, v in sorted(kernel.values.items()) if not k.endswith("?"))
    return _identifier(f"{kernel.name}_{values}" if values else kernel.name)


def torch_op(kernel: Any, name: str | None = None, **options: Any) -> Any:
    """Registers `kernel` as the torch.library custom op `name` ("namespace::op"; default
    stagecraft::<kernel>_<values>) taking the kernel's inputs and returning its outputs, with a
    fake (meta) implementation from the kernel's shapes, so torch.compile traces it without a
    graph break. CPU tensors run in the backend `options` name (the interpreter by default, every
    protocol check on), CUDA tensors on the GPU; returns the op (torch.ops.<namespace>.<op>)."""
    import torch

    qualified = name or f"stagecraft::{op_name(kernel)}"
    if qualified.count("::") != 1:
        raise UsageError(f"torch_op: the name '{qualified}' is not 'namespace::op'")
    namespace, op = qualified.split("::")
    library = _libraries.get(namespace)
    if library is None:
        library = _libraries[namespace] = torch.library.Library(namespace, "FRAGMENT")
    ins, outs = kernel.inputs, kernel.outputs
    if not outs:
        raise UsageError(f"torch_op: kernel '{kernel.name}' writes no array a functional op could return")
    args = ", ".join(f"Tensor {_identifier(a['name'])}" for a in ins)
    returns = "Tensor" if len(outs) == 1 else "(" + ", ".join("Tensor" for _ in outs) + ")"
    library.define(f"{op}({args}) -> {returns}")

    def run(*tensors: Any) -> Any:
        return kernel(*tensors, **options)

    def fake(*tensors: Any) -> Any:
        # Output shapes from the inputs' (a kernel with run-time extents takes them from there).
        given = {a["name"]: [int(d) for d in t.shape] for a, t in zip(ins, tensors)}
        shapes = kernel._k.shapes([given.get(a["name"], []) for a in kernel.arrays])
        device = tensors[0].device if tensors else torch.device("cpu")
        made = [torch.empty(tuple(s), dtype=torch_dtype(a), device=device) for a, s in zip(kernel.arrays, shapes)
                if a["output"] and not a["workspace"]]
        return made[0] if len(made) == 1 else tuple(made)

    library.impl(op, run, "CPU")
    library.impl(op, run, "CUDA")
    torch.library.register_fake(qualified, fake, lib=library)
    return getattr(getattr(torch.ops, namespace), op)


def bench(fn: Callable[..., Any], *args: Any, baseline: Callable[..., Any] | None = None, repeats: int = 10, warmup: int = 1) -> dict:
    """Times fn(*args) (and baseline(*args)) in this process: the median of `repeats` calls after
    `warmup`. On the CPU with time.perf_counter; with CUDA tensors with CUDA events around each
    call on torch's current stream, after zeroing a 256 MiB buffer that evicts L2."""
    if repeats < 1 or warmup < 0:
        raise UsageError(f"bench: repeats={repeats} must be at least 1 and warmup={warmup} at least 0")
    cuda = any(is_tensor(a) and a.device.type == "cuda" for a in args)

    def timed(f: Callable[..., Any]) -> float:
        for _ in range(warmup):
            f(*args)
        times = []
        if cuda:
            import torch

            flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
            for _ in range(repeats):
                flush.zero_()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                f(*args)
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end))
        else:
            for _ in range(repeats):
                t0 = time.perf_counter()
                f(*args)
                times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    result = {"ms": timed(fn), "device": "cuda" if cuda else "cpu", "repeats": repeats}
    if baseline is not None:
        result["baseline_ms"] = timed(baseline)
        result["ratio"] = result["baseline_ms"] / result["ms"]  # > 1: fn is faster than the baseline
    return result
