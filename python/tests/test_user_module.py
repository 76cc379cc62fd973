"""A user's kernels as a Python module: tests/consumer/saxpy.cpp built by
stagecraft_add_python_module(stagecraft_test_user_kernels ...), loaded with sc.load."""
import unittest

import numpy as np

import stagecraft as sc


class UserModule(unittest.TestCase):
    def test_a_user_module_lists_and_runs_its_own_kernels(self):
        m = sc.load("stagecraft_test_user_kernels")
        self.assertEqual([k["name"] for k in m.kernels()], ["saxpy"])  # its registry: the user's kernels only
        k = m.kernel("saxpy", M=256, N=128)
        self.assertEqual([a["name"] for a in k.inputs], ["x"])
        self.assertEqual([a["name"] for a in k.outputs], ["y"])  # read and written: given by out=
        rng = np.random.default_rng(6)
        x = rng.uniform(-2, 2, (256, 128)).astype(np.float32)
        y0 = rng.uniform(-2, 2, (256, 128)).astype(np.float32)
        y = k(x, out=[y0])
        np.testing.assert_array_equal(y, np.float32(3) * x + y0)  # alpha = 3, rounded like the kernel
        np.testing.assert_array_equal(k(x, out=[y0], backend="host"), y)
        np.testing.assert_array_equal(k.reference(x, out=[y0]), y)

    def test_its_errors_are_the_packages(self):
        m = sc.load("stagecraft_test_user_kernels")
        with self.assertRaisesRegex(sc.UsageError, "M=100"):
            m.kernel("saxpy", M=100)
        with self.assertRaisesRegex(sc.UsageError, "add_one"):
            m.kernel("add_one")  # a bundled kernel is not in the user's registry
        with self.assertRaisesRegex(sc.UsageError, "no stagecraft kernel module 'no_such_module'"):
            sc.load("no_such_module")


if __name__ == "__main__":
    unittest.main(verbosity=2)
