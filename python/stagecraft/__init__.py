"""stagecraft from Python: the registered kernels on NumPy arrays, on the CPU.

    import numpy as np, stagecraft as sc
    k = sc.kernel("add_one", M=256, N=256)     # specialised, lowered, verified
    y = k(x)                                    # the interpreter, every protocol check on
    y = k(x, backend="host")                    # the generated CUDA C++, run on the CPU
    k.explore(x, schedules=100)                 # PCT schedules; raises on the first failure

    y = k(x_torch)                              # torch CPU tensors in, torch tensors out
    y = k(x_cuda)                               # CUDA tensors: NVRTC, launched on torch's stream
    op = sc.torch_op(k)                         # a torch.library custom op (torch.compile traces it)
    sc.bench(k, x, baseline=lambda x: x + 1)    # both timed in this process

A kernel's arrays are its GMEM parameters in declaration order (``k.arrays`` lists them). The
call takes the ones it only reads, positionally, and returns the ones it writes (one array, or a
tuple in order); ``out=`` gives outputs their initial contents (a kernel that accumulates into
one). dtypes and shapes must match exactly (NumPy: bf16 and fp8 travel as their uint16 / uint8
bit patterns; torch: torch.bfloat16, torch.float8_e4m3fn, ...). A race, a deadlock or any other
protocol error raises ProtocolError with the interpreter's message; a bad kernel name, parameter
value or array raises UsageError; no usable GPU for CUDA tensors raises NoDeviceError.

Not yet (issue 26): a JAX FFI target. See docs/python.md.
"""
from __future__ import annotations

import importlib

from typing import Any, Sequence

import numpy as np

from ._stagecraft import pybind11_version as _pybind11_version

if _pybind11_version < (2, 12) and int(np.__version__.split(".")[0]) >= 2:
    # Measured: add_one on a NumPy 2 array returned x[0, 0] + 1 everywhere (the copy read the
    # array with NumPy 1's dtype layout). A wrong answer must not be possible, so: no import.
    raise ImportError(
        f"stagecraft's extension was built with pybind11 {_pybind11_version[0]}.{_pybind11_version[1]}, which reads NumPy "
        f"{np.__version__}'s arrays wrongly (NumPy 2 needs pybind11 >= 2.12): install numpy<2 (pip install 'numpy<2'), "
        "or build stagecraft against pybind11 >= 2.12")

from ._stagecraft import UsageError, VerifierProtocolError, bind as _bind, bind_lesson as _bind_lesson, kernels as _kernels
from ._stagecraft import DeviceError, NoDeviceError, lessons as _lessons
from . import _torch

__all__ = ["kernels", "kernel", "lessons", "lesson", "load", "torch_op", "bench", "Kernel", "Module", "ProtocolError", "UsageError",
           "NoDeviceError", "DeviceError"]


class ProtocolError(Exception):
    """A kernel broke the barrier protocol (race, deadlock, missed phase, ...).

    kind: the check's name ("data-race", "deadlock", ...); op: the op's number as
    ``stagecraft show`` prints it (-1 when none); message: the full diagnostic; seed: the
    schedule's seed where exploration found it.
    """

    def __init__(self, message: str, kind: str, op: int = -1, cta: int = -1, warpgroup: int = -1, seed: int | None = None):
        super().__init__(message)
        self.message, self.kind, self.op, self.cta, self.warpgroup, self.seed = message, kind, op, cta, warpgroup, seed

    @classmethod
    def _from(cls, d: dict, seed: int | None = None) -> "ProtocolError":
        message = d["message"] if d["message"].startswith(d["kind"] + ":") else f"{d['kind']}: {d['message']}"
        return cls(message, d["kind"], d["op"], d["cta"], d["warpgroup"], seed)


def _host_array(x: Any) -> Any:
    """A CPU array NumPy can read: NumPy arrays as they are, torch CPU tensors through a view
    (bf16 and fp8 as their bits), anything else exporting DLPack on the CPU through
    np.from_dlpack, without a copy."""
    if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack__"):
        return x
    device = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
    if device != 1:  # kDLCPU
        raise UsageError(f"a tensor on DLPack device type {device}: the CPU backends (interp, host) take CPU arrays; CUDA tensors run "
                         "with backend=\"gpu\" (the default for them)")
    return _torch.to_host(x) if _torch.is_tensor(x) else np.from_dlpack(x)


def kernels() -> list[dict]:
    """The registered kernels: name, summary and each parameter's default and rule."""
    return _kernels()


class Kernel:
    """A registered kernel specialised for parameter values (sc.kernel(name, **values))."""

    def __init__(self, name: str, _lesson: tuple[str, str] | None = None, _module: Any = None, dynamic: Sequence[str] = (), **values: int):
        # dynamic=["M"]: M a run-time extent (the CLI's --dynamic M): the kernel then runs on
        # arrays of any M, compiled once.
        values = {**values, **{f"{d}?": 1 for d in dynamic}}
        try:
            if _lesson is not None:
                self._k = _bind_lesson(*_lesson)
            else:
                self._k = (_module.bind if _module is not None else _bind)(name, {k: int(v) for k, v in values.items()})
        except VerifierProtocolError as e:
            message, kind = e.args
            raise ProtocolError(f"{kind}: {message}", kind) from None
        self.name = self._k.name
        self.values: dict[str, int] = dict(self._k.values)
        self.arrays: list[dict] = list(self._k.arrays)

    def __repr__(self) -> str:
        values = " ".join(f"{k}={v}" for k, v in sorted(self.values.items()))
        return f"<stagecraft kernel {self.name} ({values})>"

    @property
    def inputs(self) -> list[dict]:
        return [a for a in self.arrays if not a["output"] and not a["workspace"]]

    @property
    def outputs(self) -> list[dict]:
        return [a for a in self.arrays if a["output"] and not a["workspace"]]

    def _check_counts(self, inputs: Sequence[Any], out: Sequence[Any] | None) -> None:
        ins, outs = self.inputs, self.outputs
        if len(inputs) != len(ins):
            names = ", ".join(a["name"] for a in ins)
            raise UsageError(f"kernel '{self.name}' takes {len(ins)} input array(s) ({names}), got {len(inputs)}")
        if out is not None and len(out) != len(outs):
            names = ", ".join(a["name"] for a in outs)
            raise UsageError(f"kernel '{self.name}': out= needs {len(outs)} array(s) ({names}), got {len(out)}")

    def _all_arrays(self, inputs: Sequence[Any], out: Sequence[Any] | None) -> list[Any]:
        ins, outs = self.inputs, self.outputs
        self._check_counts(inputs, out)
        for a, x in list(zip(ins, inputs)) + list(zip(outs, out or [])):
            if _torch.is_tensor(x):
                _torch.check_dtype(self.name, a, x)
        given = {a["name"]: _host_array(x) for a, x in zip(ins, inputs)}
        if out is not None:
            given.update({a["name"]: _host_array(x) for a, x in zip(outs, out)})
        return [given.get(a["name"]) for a in self.arrays]

    def _outputs(self, buffers: list[np.ndarray], torch_out: bool = False) -> Any:
        picked = tuple(_torch.from_host(b, a) if torch_out else b for a, b in zip(self.arrays, buffers) if a["output"] and not a["workspace"])
        return picked[0] if len(picked) == 1 else picked

    def __call__(self, *inputs: Any, backend: str | None = None, policy: str = "eager", seed: int = 0, checks: bool = True,
                 math: str | None = None, out: Sequence[Any] | None = None) -> Any:
        """Runs the kernel and returns its outputs (torch tensors if given torch tensors).

        backend: "interp" (the interpreter; policy eager, lazy, random or pct with seed), "host"
        (the generated code compiled for the CPU, scheduled from seed), or "gpu" (CUDA tensors:
        NVRTC, launched on torch's current stream). Default: "gpu" for CUDA tensors, else
        "interp". math: "exact" or "fast"; default exact on the CPU, fast on the GPU (the CLI's).
        """
        tensors = [x for x in list(inputs) + list(out or []) if _torch.is_tensor(x)]
        on_gpu = any(t.device.type == "cuda" for t in tensors)
        backend = backend or ("gpu" if on_gpu else "interp")
        if backend == "gpu":
            if len(tensors) != len(inputs) + len(out or []) or not all(t.device.type == "cuda" for t in tensors):
                raise UsageError(f"kernel '{self.name}': backend=\"gpu\" takes CUDA tensors (torch), every array on the device")
            self._check_counts(inputs, out)
            return _torch.run_device(self, inputs, out, math or "fast")
        arrays = self._all_arrays(inputs, out)
        if backend == "interp":
            buffers, diagnostics, _ = self._k.run_interp(arrays, policy=policy, seed=seed, checks=checks, math=math or "exact")
        elif backend == "host":
            buffers, diagnostics, _ = self._k.run_host(arrays, seed=seed)
        else:
            raise UsageError(f"backend '{backend}' is not one of interp, host, gpu")
        if diagnostics:
            raise ProtocolError._from(diagnostics[0])
        return self._outputs(buffers, torch_out=bool(tensors))

    def explore(self, *inputs: Any, schedules: int = 100, policy: str = "pct", seed: int = 0, out: Sequence[Any] | None = None) -> int:
        """Runs up to `schedules` schedules (seeds seed, seed+1, ...); raises ProtocolError at the
        first one with a diagnostic (its seed replays it), else returns how many ran."""
        ran, failing_seed, failure = self._k.explore(self._all_arrays(inputs, out), schedules=schedules, policy=policy, seed=seed)
        if failure is not None:
            raise ProtocolError._from(failure, failing_seed)
        return ran

    def reference(self, *inputs: Any, out: Sequence[Any] | None = None) -> Any:
        """The registered C++ reference's outputs for the same inputs."""
        return self._outputs(self._k.reference(self._all_arrays(inputs, out)))

    def show(self) -> str:
        """The kernel's IR, as `stagecraft show` prints it."""
        return self._k.show()

    def ptx(self, arch: str = "") -> dict:
        """NVRTC's PTX for the kernel (needs the CUDA toolkit's NVRTC, not a GPU): ptx, registers, spill_bytes."""
        return dict(self._k.ptx(arch))


def kernel(name: str, dynamic: Sequence[str] = (), **values: int) -> Kernel:
    """A registered kernel specialised for `values` (parameters not given take their defaults).
    Sizes named in `dynamic` are run-time extents: taken from the arrays of each call."""
    return Kernel(name, dynamic=dynamic, **values)


def torch_op(k: Kernel, name: str | None = None, **options: Any) -> Any:
    """k as a torch.library custom op ("namespace::op"; default stagecraft::<kernel>_<values>):
    its inputs in, its outputs out, a fake implementation from its shapes, so that
    torch.compile(fullgraph=True) traces it. `options` are the call's (backend, policy, seed,
    math); CPU tensors run there, CUDA tensors on the GPU. Returns torch.ops.<namespace>.<op>."""
    return _torch.torch_op(k, name, **options)


def bench(fn: Any, *args: Any, baseline: Any = None, repeats: int = 10, warmup: int = 1) -> dict:
    """Times fn(*args), a kernel or any callable, and baseline(*args) in this process: medians
    in ms ("ms", "baseline_ms") and "ratio" = baseline_ms / ms (> 1: fn is faster). CPU arrays are
    timed with time.perf_counter (the interpreter checks every access: a correctness tool, not a
    speed one); CUDA tensors with CUDA events, L2 flushed before each call."""
    return _torch.bench(fn, *args, baseline=baseline, repeats=repeats, warmup=warmup)


def lessons() -> list[dict]:
    """The lessons on barrier semantics: number, slug, title and their buggy twins."""
    return _lessons()


def lesson(number: int | str, buggy: str | None = None) -> Kernel:
    """A lesson's kernel (`stagecraft lesson NN`), or its buggy twin (`--buggy=NAME`)."""
    return Kernel("", _lesson=(str(number), buggy or ""))


class Module:
    """A module of the user's own kernels (CMake: stagecraft_add_python_module(NAME FILES ...))."""

    def __init__(self, name: str):
        try:
            self._m = importlib.import_module(name)
        except ImportError as e:
            raise UsageError(f"no stagecraft kernel module '{name}' on sys.path ({e}); build it with stagecraft_add_python_module") from None
        if not hasattr(self._m, "bind") or not hasattr(self._m, "kernels"):
            raise UsageError(f"module '{name}' is not a stagecraft kernel module (stagecraft_add_python_module)")
        self.name = name

    def __repr__(self) -> str:
        return f"<stagecraft module {self.name}: {', '.join(k['name'] for k in self.kernels())}>"

    def kernels(self) -> list[dict]:
        """The module's kernels, as sc.kernels() lists the bundled ones."""
        return self._m.kernels()

    def kernel(self, name: str, **values: int) -> Kernel:
        """One of the module's kernels specialised for `values`."""
        return Kernel(name, _module=self._m, **values)


def load(name: str) -> Module:
    """The user's kernel module NAME (built by stagecraft_add_python_module, found on sys.path)."""
    return Module(name)
