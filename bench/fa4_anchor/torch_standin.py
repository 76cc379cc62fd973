"""A stand-in for `torch` (and `triton`) so that flash_attn.cute and quack import for compiling only:
every attribute is a placeholder class; calling one with a single callable returns it (decorators pass through)."""
import sys, types, importlib.abc, importlib.machinery

class _M(type):
    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        s = _M(f"{cls.__name__}.{name}", (), {})
        setattr(cls, name, s)
        return s
    def __call__(cls, *a, **k):
        if len(a) == 1 and not k and callable(a[0]) and not isinstance(a[0], _M):
            return _Wrapped(a[0])
        return _M(f"{cls.__name__}()", (), {})
    def __getitem__(cls, k):
        return cls
    def __iter__(cls):
        return iter(())
    def __bool__(cls):
        return False

class _Wrapped:
    def __init__(self, fn):
        self.__wrapped__ = fn
    def __call__(self, *a, **k):
        return self.__wrapped__(*a, **k)
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _M(f"wrapped.{name}", (), {})

class _Mod(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        s = _M(f"{self.__name__}.{name}", (), {})
        setattr(self, name, s)
        return s

class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] in ("torch", "triton"):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None
    def create_module(self, spec):
        m = _Mod(spec.name)
        m.__path__ = []
        return m
    def exec_module(self, module):
        if module.__name__ == "torch":
            module.__version__ = "0.0.0-standin"
            module.version = types.SimpleNamespace(cuda="13.0")

sys.meta_path.insert(0, _Finder())
