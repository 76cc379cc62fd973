"""The Python package on NumPy arrays (CTest label `python`): the interpreter and the host
backend through sc.kernel, errors with the CLI's words, a lesson's buggy twin raising
ProtocolError with the CLI's text. Inputs are seeded random, never all zeros."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import stagecraft as sc


def to_bf16_bits(x):
    """float32 -> bfloat16 bit patterns, round to nearest even (as the kernels' bf16)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def random_input(spec, rng):
    shape = spec["shape"]
    if spec["numpy"] == "float32":
        return rng.uniform(-2, 2, shape).astype(np.float32)
    if spec["dtype"] == "bf16":
        return to_bf16_bits(rng.uniform(-2, 2, shape))
    if spec["numpy"] == "float16":
        return rng.uniform(-2, 2, shape).astype(np.float16)
    return rng.integers(-100, 100, shape).astype(spec["numpy"])


class Registry(unittest.TestCase):
    def test_kernels_lists_every_registered_kernel_with_its_rules(self):
        names = [k["name"] for k in sc.kernels()]
        self.assertIn("add_one", names)
        self.assertIn("gemm_small", names)
        gemm = next(k for k in sc.kernels() if k["name"] == "gemm_small")
        self.assertEqual([p["name"] for p in gemm["params"]], ["M", "N", "K", "S", "int8"])
        self.assertEqual(next(p for p in gemm["params"] if p["name"] == "S")["allowed"], [1, 2, 3, 4])
        self.assertEqual(next(p for p in gemm["params"] if p["name"] == "int8")["allowed"], [0, 1, 2])

    def test_a_kernel_names_its_arrays_inputs_and_outputs(self):
        k = sc.kernel("gemm_small", M=64, N=128, K=64)
        self.assertEqual(k.values["M"], 64)
        self.assertEqual([a["name"] for a in k.inputs], ["a", "b"])
        self.assertEqual([(a["name"], a["dtype"], a["shape"]) for a in k.outputs], [("c", "f32", (64, 128))])


class Runs(unittest.TestCase):
    def test_add_one_is_x_plus_one_on_the_interpreter_and_the_host_backend(self):
        k = sc.kernel("add_one", M=200, N=132)
        x = np.random.default_rng(1).uniform(-2, 2, (200, 132)).astype(np.float32)
        y = k(x)
        np.testing.assert_array_equal(y, x + np.float32(1))
        np.testing.assert_array_equal(k(x, policy="lazy"), y)
        np.testing.assert_array_equal(k(x, backend="host", seed=3), y)
        self.assertEqual(k.explore(x, schedules=4), 4)

    def test_dlpack_inputs_are_taken_without_numpy_in_the_callers_hands(self):
        class Exporter:  # a CPU tensor of another framework: only the DLPack protocol
            def __init__(self, a):
                self.a = a

            def __dlpack__(self, stream=None):
                return self.a.__dlpack__()

            def __dlpack_device__(self):
                return self.a.__dlpack_device__()

        k = sc.kernel("add_one", M=128, N=128)
        x = np.random.default_rng(5).uniform(-2, 2, (128, 128)).astype(np.float32)
        np.testing.assert_array_equal(k(Exporter(x)), x + np.float32(1))

    def test_gemm_small_is_a_times_b_transposed_within_the_mma_bound(self):
        M, N, K = 64, 128, 72
        k = sc.kernel("gemm_small", M=M, N=N, K=K)
        rng = np.random.default_rng(2)
        a, b = to_bf16_bits(rng.uniform(-1, 1, (M, K))), to_bf16_bits(rng.uniform(-1, 1, (N, K)))
        c = k(a, b)
        exact = from_bf16_bits(a).astype(np.float64) @ from_bf16_bits(b).astype(np.float64).T
        # f32 accumulation of K products of magnitude <= 1: K roundings of sums up to K.
        bound = K * 2.0**-23 * K + 2.0**-23 * np.abs(exact)
        self.assertTrue(np.all(np.abs(c - exact) <= bound), float(np.max(np.abs(c - exact))))
        self.assertTrue(np.all(np.abs(k.reference(a, b) - exact) <= bound))

    def test_fp6_operands_are_packed_uint8_arrays_three_quarters_as_wide(self):
        # MXFP6 (e2m3): A and B are (128, 256) of FP6, uint8 arrays of (128, 192), four codes in
        # three bytes; the scales are ue8m0 codes near 1 (2^-3 .. 2^3).
        k = sc.kernel("gemm_blackwell_mx", fmt=5, M=128, N=128, K=256)
        shapes = {a["name"]: tuple(a["shape"]) for a in k.arrays}
        self.assertEqual(shapes["a"], (128, 192))
        self.assertEqual(shapes["b"], (128, 192))
        rng = np.random.default_rng(9)
        a = rng.integers(0, 256, (128, 192)).astype(np.uint8)
        b = rng.integers(0, 256, (128, 192)).astype(np.uint8)
        sfa = rng.integers(124, 131, shapes["sfa"]).astype(np.uint8)
        sfb = rng.integers(124, 131, shapes["sfb"]).astype(np.uint8)
        c = k(a, b, sfa, sfb)
        # FP6 products are exact in f32, the scales powers of two: the sum rounds once, as the reference's.
        np.testing.assert_array_equal(from_bf16_bits(c), from_bf16_bits(k.reference(a, b, sfa, sfb)))
        np.testing.assert_array_equal(k(a, b, sfa, sfb, backend="host", seed=1), c)
        with self.assertRaisesRegex(sc.UsageError, r"parameter 'a' is e2m3 of shape \(128, 256\) \(NumPy uint8 of shape \(128, 192\)\)"):
            k(a[:, :128], b, sfa, sfb)

    def test_a_run_time_extent_takes_each_calls_arrays_size(self):
        k = sc.kernel("softmax_rows", M=1000, dynamic=["M"])
        self.assertIn("param x: gmem f32[M=1000, 128]", k.show())
        rng = np.random.default_rng(5)
        for m in (333, 16, 1025):
            x = rng.uniform(-2, 2, (m, 128)).astype(np.float32)
            y = k(x)
            self.assertEqual(y.shape, (m, 128))
            np.testing.assert_array_equal(y, k.reference(x))
            np.testing.assert_array_equal(k(x, backend="host", seed=1), y)
        with self.assertRaisesRegex(sc.UsageError, "N cannot be a run-time extent"):
            sc.kernel("gemm_small", dynamic=["N"])

    def test_softmax_masked_normalises_rows_of_any_width(self):
        k = sc.kernel("softmax_masked", M=37, N=100)
        x = np.random.default_rng(3).uniform(-4, 4, (37, 100)).astype(np.float32)
        y = k(x)
        e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5)
        np.testing.assert_array_equal(y, k.reference(x))


class Errors(unittest.TestCase):
    def test_an_extension_whose_pybind11_misreads_numpy_2_refuses_to_import(self):
        # Measured with pip's NumPy 2.4 and Debian's pybind11 2.10: add_one returned x[0, 0] + 1
        # everywhere. The guard is checked with NumPy's version string changed in a fresh process.
        script = ("import numpy; numpy.__version__ = '2.4.6'\n"
                  "try:\n    import stagecraft\nexcept ImportError as e:\n    print('refused:', e)\n")
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=os.environ).stdout
        if sc._pybind11_version < (2, 12):
            self.assertIn("refused: stagecraft's extension was built with pybind11 2.", out)
            self.assertIn("which reads NumPy 2.4.6's arrays wrongly", out)
        else:
            self.assertNotIn("refused", out)

    def test_an_unknown_kernel_or_a_bad_value_is_a_usage_error_in_the_clis_words(self):
        with self.assertRaisesRegex(sc.UsageError, "no_such_kernel"):
            sc.kernel("no_such_kernel")
        with self.assertRaisesRegex(sc.UsageError, "N=130 must be a multiple of 4"):
            sc.kernel("gemm_small", N=130)

    def test_an_array_of_the_wrong_dtype_or_shape_names_the_parameter(self):
        k = sc.kernel("add_one", M=128, N=128)
        with self.assertRaisesRegex(sc.UsageError, r"parameter 'x' is f32 of shape \(128, 128\) \(NumPy float32 of shape \(128, 128\)\), but the array is float64 of shape \(128, 128\)"):
            k(np.ones((128, 128)))
        with self.assertRaisesRegex(sc.UsageError, r"takes 1 input array\(s\) \(x\), got 2"):
            k(np.ones((128, 128), np.float32), np.ones((128, 128), np.float32))

    def test_the_gpu_path_takes_cuda_tensors_and_without_a_driver_says_so(self):
        k = sc.kernel("add_one", M=128, N=128)
        with self.assertRaisesRegex(sc.UsageError, r"backend=\"gpu\" takes CUDA tensors"):
            k(np.ones((128, 128), np.float32), backend="gpu")
        with self.assertRaisesRegex(sc.UsageError, "backend 'tpu' is not one of interp, host, gpu"):
            k(np.ones((128, 128), np.float32), backend="tpu")
        # The launch itself (what CUDA tensors reach): a machine without a driver gets the CLI's
        # "no CUDA driver available", as NoDeviceError, before any address is looked at.
        if not os.path.exists("/dev/nvidiactl"):
            with self.assertRaisesRegex(sc.NoDeviceError, r"kernel 'add_one': no CUDA driver available"):
                k._k.run_device([0, 0], [[], []], 0, "fast")

    def test_a_lessons_buggy_twin_raises_protocol_error_with_the_clis_text(self):
        lesson = sc.lessons()[0]
        twin = lesson["twins"][0]
        k = sc.lesson(lesson["number"], buggy=twin["name"])
        rng = np.random.default_rng(4)
        inputs = [random_input(a, rng) for a in k.inputs]
        with self.assertRaises(sc.ProtocolError) as caught:
            k(*inputs, policy=twin["policy"])
        self.assertEqual(caught.exception.kind, twin["expect"])
        cli = os.environ.get("STAGECRAFT_CLI") and os.path.abspath(os.environ["STAGECRAFT_CLI"])
        if cli:  # the CLI's run of the same twin prints the same diagnostic
            with tempfile.TemporaryDirectory() as scratch:  # where the CLI writes the lesson's timeline
                out = subprocess.run([cli, "lesson", str(lesson["number"]), f"--buggy={twin['name']}"], capture_output=True, text=True,
                                     cwd=scratch)
            self.assertIn(caught.exception.message.split(": ", 1)[1].splitlines()[0], out.stdout + out.stderr)
        np.testing.assert_array_equal(sc.lesson(lesson["number"])(*inputs), sc.lesson(lesson["number"]).reference(*inputs))


if __name__ == "__main__":
    unittest.main(verbosity=2)
