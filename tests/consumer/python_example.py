# A user's kernels from Python: the module my_py_kernels (stagecraft_add_python_module, against
# the installed stagecraft), loaded by the stagecraft package and run in the interpreter.
import numpy as np
import stagecraft as sc

m = sc.load("my_py_kernels")
print([k["name"] for k in m.kernels()])              # ['saxpy']: the module's own registry
k = m.kernel("saxpy", M=256, N=128)
rng = np.random.default_rng(7)
x = rng.uniform(-2, 2, (256, 128)).astype(np.float32)
y0 = rng.uniform(-2, 2, (256, 128)).astype(np.float32)
y = k(x, out=[y0])                                   # y is read and written: out= gives it
np.testing.assert_array_equal(y, k.reference(x, out=[y0]))
k.explore(x, out=[y0], schedules=20)                 # raises sc.ProtocolError on a bad schedule
print("saxpy from Python: equal to its reference under 20 PCT schedules")
