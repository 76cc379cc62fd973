"""The Python package with PyTorch (CTest `python.torch`, label `python`): kernels on torch CPU
tensors (torch tensors back, bf16 as torch.bfloat16), as torch.library custom ops traced by
torch.compile(fullgraph=True) (a graph break fails it), their fake implementations, a lesson's
buggy twin raising ProtocolError through the op, sc.bench beside a torch baseline, and the CUDA
path's "no CUDA driver" on a machine without one. Inputs are seeded random, never all zeros.

torch comes from the venv scripts/setup.sh makes with STAGECRAFT_WITH_TORCH=1 (its path in
STAGECRAFT_TORCH_PYTHON): the test re-runs itself there. Without torch it exits 77, which CTest
reports as skipped."""
import os
import sys

venv_python = os.environ.get("STAGECRAFT_TORCH_PYTHON", "")
try:
    import torch
except ImportError:
    if venv_python and os.path.exists(venv_python) and not os.environ.get("STAGECRAFT_TORCH_REEXEC"):
        os.environ["STAGECRAFT_TORCH_REEXEC"] = "1"  # once: the venv's python without torch skips
        os.execv(venv_python, [venv_python] + sys.argv)
    print("skipped: torch is not installed (scripts/setup.sh with STAGECRAFT_WITH_TORCH=1 installs it)")
    sys.exit(77)

import unittest

import numpy as np

import stagecraft as sc


def bf16(shape, seed):
    return torch.from_numpy(np.random.default_rng(seed).uniform(-2, 2, shape).astype(np.float32)).to(torch.bfloat16)


class Tensors(unittest.TestCase):
    def test_add_one_takes_and_returns_torch_tensors_on_both_cpu_backends(self):
        k = sc.kernel("add_one", M=128, N=128)
        x = torch.from_numpy(np.random.default_rng(1).uniform(-2, 2, (128, 128)).astype(np.float32))
        for backend in ("interp", "host"):
            y = k(x, backend=backend)
            self.assertIsInstance(y, torch.Tensor)
            self.assertEqual(y.dtype, torch.float32)
            self.assertTrue(torch.equal(y, x + 1), backend)

    def test_gemm_small_on_bfloat16_tensors_is_a_times_b_transposed(self):
        k = sc.kernel("gemm_small", M=64, N=128, K=64)
        a, b = bf16((64, 64), 2), bf16((128, 64), 3)
        c = k(a, b)
        self.assertEqual((c.dtype, tuple(c.shape)), (torch.float32, (64, 128)))
        # The same bits as the NumPy path (bf16 as uint16 there), and a @ b.T within the MMA bound
        # (K = 64 exact products of bf16 values in [-2, 2]: f32 rounding only).
        np.testing.assert_array_equal(c.numpy(), k(a.view(torch.uint16).numpy(), b.view(torch.uint16).numpy()))
        torch.testing.assert_close(c, a.float() @ b.float().T, rtol=0, atol=64 * 2**-23 * 64 * 4)

    def test_a_tensor_of_another_dtype_is_a_usage_error_in_torchs_words(self):
        k = sc.kernel("gemm_small", M=64, N=128, K=64)
        with self.assertRaisesRegex(sc.UsageError, r"parameter 'a' is bf16 \(torch.bfloat16\), but the tensor is torch.float32"):
            k(bf16((64, 64), 2).float(), bf16((128, 64), 3))
        with self.assertRaisesRegex(sc.UsageError, r"backend=\"gpu\" takes CUDA tensors"):
            k(bf16((64, 64), 2), bf16((128, 64), 3), backend="gpu")


class CustomOps(unittest.TestCase):
    def test_a_kernel_as_an_op_runs_eagerly_and_under_torch_compile_without_a_graph_break(self):
        k = sc.kernel("gemm_small", M=64, N=128, K=64)
        op = sc.torch_op(k)
        self.assertEqual(str(op), "stagecraft.gemm_small_K_64_M_64_N_128_S_2_int8_0")
        a, b = bf16((64, 64), 4), bf16((128, 64), 5)
        want = k(a, b)
        self.assertTrue(torch.equal(op(a, b), want))
        # fullgraph=True raises on any graph break: the op must trace through its fake.
        f = torch.compile(lambda a, b: torch.relu(op(a, b)) * 2, fullgraph=True)
        self.assertTrue(torch.equal(f(a, b), torch.relu(want) * 2))

    def test_the_fake_gives_shapes_and_dtypes_without_running_even_for_run_time_extents(self):
        from torch._subclasses.fake_tensor import FakeTensorMode

        op = sc.torch_op(sc.kernel("softmax_rows", M=1000, dynamic=["M"]), "sctests::softmax_rows_any_m")
        with FakeTensorMode():
            x = torch.empty(321, 128)
            y = op(x)
            self.assertEqual((tuple(y.shape), y.dtype), ((321, 128), torch.float32))
        x = torch.from_numpy(np.random.default_rng(6).uniform(-2, 2, (77, 128)).astype(np.float32))
        self.assertTrue(torch.equal(op(x), sc.kernel("softmax_rows", M=77)(x)))

    def test_a_lessons_buggy_twin_raises_protocol_error_through_the_op(self):
        lesson = sc.lessons()[0]
        twin = lesson["twins"][0]
        k = sc.lesson(lesson["number"], buggy=twin["name"])
        op = sc.torch_op(k, f"sctests::lesson_twin", policy=twin["policy"])
        rng = np.random.default_rng(7)
        inputs = [torch.from_numpy(rng.uniform(-2, 2, a["shape"]).astype(np.float32)) for a in k.inputs]
        with self.assertRaises(sc.ProtocolError) as caught:
            op(*inputs)
        self.assertEqual(caught.exception.kind, twin["expect"])

    def test_a_bad_op_name_is_a_usage_error(self):
        with self.assertRaisesRegex(sc.UsageError, "is not 'namespace::op'"):
            sc.torch_op(sc.kernel("add_one", M=128, N=128), "no_namespace")


class Bench(unittest.TestCase):
    def test_bench_times_a_kernel_and_a_torch_baseline_in_one_process(self):
        k = sc.kernel("add_one", M=128, N=128)
        x = torch.from_numpy(np.random.default_rng(8).uniform(-2, 2, (128, 128)).astype(np.float32))
        r = sc.bench(k, x, baseline=lambda x: x + 1, repeats=3)
        self.assertEqual((r["device"], r["repeats"]), ("cpu", 3))
        self.assertGreater(r["ms"], 0)
        self.assertGreater(r["baseline_ms"], 0)
        self.assertAlmostEqual(r["ratio"], r["baseline_ms"] / r["ms"])
        with self.assertRaisesRegex(sc.UsageError, "repeats=0 must be at least 1"):
            sc.bench(k, x, repeats=0)


class Device(unittest.TestCase):
    @unittest.skipIf(torch.cuda.is_available(), "a CUDA device is present: this checks the machine without one")
    def test_without_a_gpu_the_device_path_says_no_cuda_driver(self):
        k = sc.kernel("add_one", M=128, N=128)
        with self.assertRaisesRegex(sc.NoDeviceError, r"kernel 'add_one': no CUDA driver available"):
            k._k.run_device([0, 0], [[], []], 0, "fast")

    @unittest.skipUnless(torch.cuda.is_available(), "no CUDA device")
    def test_add_one_on_cuda_tensors_equals_the_interpreter(self):
        k = sc.kernel("add_one", M=128, N=128)
        x = torch.from_numpy(np.random.default_rng(9).uniform(-2, 2, (128, 128)).astype(np.float32))
        y = k(x.cuda())
        self.assertEqual(y.device.type, "cuda")
        self.assertTrue(torch.equal(y.cpu(), k(x)))

    @unittest.skipUnless(torch.cuda.is_available(), "no CUDA device")
    def test_a_cuda_graph_captures_the_op_and_replays_it_on_new_inputs(self):
        # Warm-up outside the capture (NVRTC, the module load: not capturable), then the op inside
        # torch.cuda.graph: the launch, the outputs' zero-fill and any workspace's stream-ordered
        # allocation become graph nodes; a replay reads the static input's new contents.
        k = sc.kernel("add_one", M=128, N=128)
        op = sc.torch_op(k)
        rng = np.random.default_rng(10)
        first, second = (torch.from_numpy(rng.uniform(-2, 2, (128, 128)).astype(np.float32)) for _ in range(2))
        x = first.cuda()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            op(x)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = op(x)
        x.copy_(second.cuda())
        g.replay()
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(y.cpu(), k(second)))

    @unittest.skipUnless(torch.cuda.device_count() > 1, "fewer than two CUDA devices")
    def test_tensors_on_a_second_gpu_are_a_usage_error(self):
        k = sc.kernel("add_one", M=128, N=128)
        with self.assertRaisesRegex(sc.UsageError, "launches on cuda:0 only"):
            k(torch.zeros(128, 128, device="cuda:1"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
