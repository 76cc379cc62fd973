// The bindings every stagecraft Python module is made of: the registry and the CPU backends
// (interpreter, host) on NumPy arrays, and the GPU path on device pointers. Compiled once into
// stagecraft::python; each module (the package's _stagecraft, a user's kernel module) is one
// small translation unit, python/src/module.cpp, that names itself and calls define_module.
//
// What crosses into Python is plain data: a kernel's parameters (name, dtype, shape, whether it
// writes it), arrays in and out (copied: the CPU backends own their buffers), and a run's
// diagnostics as dicts. stagecraft/__init__.py builds the user-facing API on top (Kernel,
// ProtocolError); errors in what the user asked for leave as UsageError with the CLI's words.
#include <stagecraft/python/bindings.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <stagecraft/hostexec/hostexec.hpp>
#include <stagecraft/interp/interp.hpp>
#include <stagecraft/ir/protocol_error.hpp>
#include <stagecraft/lessons.hpp>
#include <stagecraft/registry.hpp>
#ifdef STAGECRAFT_HAVE_NVRTC
#include <stagecraft/nvrtc/nvrtc.hpp>
#endif
#ifdef STAGECRAFT_HAVE_CUDA_RUNTIME
#include <stagecraft/cuda/runtime.hpp>
#endif

namespace py = pybind11;
using namespace stagecraft;

namespace {

// A kernel specialised for parameter values: what sc.kernel(name, **values) holds.
struct bound_kernel {
  std::string name;
  param_values values;
  ir::Kernel k;
  std::vector<bool> written;  // per GMEM parameter: the kernel writes it (an output)
  // Given the buffers and the values of the run: a kernel with run-time extents ("M?": 1) runs at
  // its arrays' sizes, and the reference must see those, not the ones it was lowered at.
  std::function<void(std::vector<host_tensor>&, param_values const&)> reference;
};

void find_outputs(bound_kernel& b) {
  b.written.assign(b.k.params.size(), false);
  for (int i : interp::written_params(b.k)) b.written[static_cast<std::size_t>(i)] = true;
}

// NumPy's name for a dtype's storage: bf16 and the fp8 formats travel as their bit patterns
// (uint16, uint8): NumPy has no such types.
const char* numpy_name(ir::DType t) {
  switch (t) {
    case ir::DType::f32: return "float32";
    case ir::DType::f16: return "float16";
    case ir::DType::bf16: return "uint16";
    case ir::DType::i32: return "int32";
    case ir::DType::u32: return "uint32";
    case ir::DType::i8: return "int8";
    case ir::DType::u8: case ir::DType::e2m1x2: case ir::DType::ue4m3: return "uint8";
    case ir::DType::e2m3: case ir::DType::e3m2: case ir::DType::e2m1: return "uint8";  // packed: numpy_shape
    case ir::DType::e4m3: case ir::DType::e5m2: case ir::DType::pred: return "uint8";
  }
  return "?";
}

std::string shape_text(std::vector<std::int64_t> const& s) { return fmt::format("({})", fmt::join(s, ", ")); }

// The NumPy array of a parameter: its shape, except a unit-packed type's, whose bytes are packed
// (FP6: four elements in three bytes, e2m1: two in one; ir/types.hpp), so its innermost extent is
// 3/4 (1/2) of the elements'. logical_shape is the way back.
std::vector<std::int64_t> numpy_shape(ir::DType t, std::vector<std::int64_t> s) {
  if (ir::dtype_is_unit_packed(t) && !s.empty()) s.back() = s.back() * ir::unit_bits(t) / 8;
  return s;
}
std::vector<std::int64_t> logical_shape(ir::DType t, std::vector<std::int64_t> s) {
  if (ir::dtype_is_unit_packed(t) && !s.empty()) s.back() = s.back() * 8 / ir::unit_bits(t);
  return s;
}

bound_kernel bind(std::string const& name, std::map<std::string, std::int64_t> const& overrides) {
  auto const& e = registry::global().find(name);
  bound_kernel b{name, registry::resolve(e, overrides), {}, {}, {}};
  b.k = registry::build(e, b.values);
  b.reference = [&e](std::vector<host_tensor>& t, param_values const& values) { e.reference(t, values); };
  find_outputs(b);
  return b;
}

// A lesson's kernel, or one of its buggy twins (`stagecraft lesson NN --buggy=twin`).
bound_kernel bind_lesson(std::string const& number, std::string const& twin) {
  auto const& l = lesson_registry::global().find(number);
  bound_kernel b{l.slug, {}, {}, {}, [r = l.reference](std::vector<host_tensor>& t, param_values const&) { r(t); }};
  if (twin.empty()) {
    b.k = l.build();
  } else {
    auto t = std::find_if(l.twins.begin(), l.twins.end(), [&](lesson_twin const& x) { return x.name == twin; });
    if (t == l.twins.end()) {
      std::vector<std::string> names;
      for (auto const& x : l.twins) names.push_back(x.name);
      throw usage_error(fmt::format("lesson {:02d} ({}) has no buggy twin '{}' (its twins: {})", l.number, l.slug, twin, fmt::join(names, ", ")));
    }
    b.name += "." + twin;
    b.k = t->build();
  }
  find_outputs(b);
  return b;
}

// The kernel at the run-time extents these shapes give (one per GMEM parameter; an empty one:
// not given, it takes the bound shape); the kernel itself when it has none.
// `shapes`: the arrays' (NumPy or torch) shapes, numpy_shape's for FP6 parameters.
ir::Kernel bound_to(bound_kernel const& b, std::vector<std::vector<std::int64_t>> shapes) {
  if (b.k.extents.empty()) return b.k;
  if (shapes.size() != b.k.params.size())
    throw usage_error(fmt::format("kernel '{}': {} shapes for {} parameters", b.name, shapes.size(), b.k.params.size()));
  for (std::size_t i = 0; i < shapes.size(); ++i) shapes[i] = logical_shape(b.k.params[i].dtype, std::move(shapes[i]));
  try {
    return ir::bind_to(b.k, shapes);
  } catch (ir::ConfigError const& e) {
    throw usage_error(e.what());
  }
}

// One host_tensor per GMEM parameter: the user's arrays where given (dtype and shape checked
// with the parameter's words), zeros elsewhere (outputs not given, workspaces).
std::vector<host_tensor> buffers_of(bound_kernel const& b, std::vector<py::object> const& arrays) {
  if (arrays.size() != b.k.params.size())
    throw usage_error(fmt::format("kernel '{}': {} arrays for {} parameters", b.name, arrays.size(), b.k.params.size()));
  // Run-time extents are read off the arrays given (an output left None takes the bound shape);
  // the runs bind the same way from the buffers this returns.
  std::vector<std::vector<std::int64_t>> shapes(arrays.size());
  if (!b.k.extents.empty())
    for (std::size_t i = 0; i < arrays.size(); ++i)
      if (!arrays[i].is_none())
        if (auto a = py::array::ensure(arrays[i])) shapes[i].assign(a.shape(), a.shape() + a.ndim());
  const ir::Kernel k = bound_to(b, shapes);
  std::vector<host_tensor> out;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    auto const& p = k.params[i];
    auto t = host_tensor::zeros(p.dtype, p.shape);
    if (!arrays[i].is_none()) {
      auto a = py::array::ensure(arrays[i]);
      if (!a) throw usage_error(fmt::format("kernel '{}': parameter '{}' needs an array (anything NumPy converts), got {}", b.name, p.name,
                                            std::string(py::str(py::type::of(arrays[i])))));
      std::vector<std::int64_t> shape(a.shape(), a.shape() + a.ndim());
      const std::string dt = py::str(a.dtype());
      if (dt != numpy_name(p.dtype) || shape != numpy_shape(p.dtype, p.shape))
        throw usage_error(fmt::format("kernel '{}': parameter '{}' is {} of shape {} (NumPy {} of shape {}), but the array is {} of shape {}", b.name,
                                      p.name, ir::dtype_name(p.dtype), shape_text(p.shape), numpy_name(p.dtype), shape_text(numpy_shape(p.dtype, p.shape)),
                                      dt, shape_text(shape)));
      // A copy in C order whatever the array's strides: the CPU backends own their buffers.
      auto c = py::array::ensure(a, py::array::c_style);
      std::memcpy(t.bytes.data(), c.data(), t.bytes.size());
    }
    out.push_back(std::move(t));
  }
  return out;
}

py::array to_numpy(host_tensor const& t) {
  const auto shape = numpy_shape(t.dtype, t.shape);
  py::array a(py::dtype(numpy_name(t.dtype)), std::vector<py::ssize_t>(shape.begin(), shape.end()));
  std::memcpy(a.mutable_data(), t.bytes.data(), t.bytes.size());
  return a;
}

py::list arrays_of(std::vector<host_tensor> const& ts) {
  py::list l;
  for (auto const& t : ts) l.append(to_numpy(t));
  return l;
}

py::dict diagnostic_dict(interp::diagnostic const& d) {
  py::dict o;
  o["kind"] = interp::check_name(d.kind);
  o["message"] = d.message;
  o["op"] = d.op;
  o["cta"] = d.cta;
  o["warpgroup"] = d.warpgroup;
  return o;
}

interp::policy policy_of(std::string const& s) {
  for (auto p : {interp::policy::eager, interp::policy::lazy, interp::policy::random, interp::policy::pct})
    if (s == interp::policy_name(p)) return p;
  throw usage_error(fmt::format("policy '{}' is not one of eager, lazy, random, pct", s));
}

ir::math_mode math_of(std::string const& s) {
  if (auto m = ir::parse_math_mode(s)) return *m;
  throw usage_error(fmt::format("math '{}' is not one of exact, fast", s));
}

struct no_device_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct device_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The kernel on the caller's device memory (torch CUDA tensors): one address per parameter that
// is not a workspace, in declaration order, each a dense row-major array of the parameter's
// dtype and shape (the Python side checks both), enqueued on `stream` (a CUstream as an integer;
// 0: the default stream) and not waited for, as any op on that stream. NVRTC compiles once per
// kernel and math mode (nvrtc's cache); the launch is cuda::launch_on_device.
void run_device(bound_kernel const& b, std::vector<std::uintptr_t> const& ptrs, std::vector<std::vector<std::int64_t>> const& shapes,
                std::uintptr_t stream, std::string const& math) {
  const auto mode = math_of(math);
#ifdef STAGECRAFT_HAVE_CUDA_RUNTIME
  const auto st = cuda::driver_status();
  if (auto why = cuda::unusable(st)) throw no_device_error(fmt::format("kernel '{}': {}", b.name, *why));
  ir::Kernel k = bound_to(b, shapes);
  k.target = *st.target;
  const auto c = nvrtc::compile(k, k.target, {.codegen = {.math = mode}});
  try {
    py::gil_scoped_release unlocked;
    cuda::launch_on_device(c, k, ptrs, reinterpret_cast<void*>(stream));
  } catch (cuda::error const& e) {
    throw device_error(fmt::format("kernel '{}' on {}: {}", b.name, st.device, e.what()));
  }
#else
  (void)ptrs, (void)shapes, (void)stream, (void)mode;
  throw no_device_error(fmt::format("kernel '{}': no CUDA driver available: this build of stagecraft has no CUDA toolkit (configure found none)", b.name));
#endif
}

}  // namespace

// The module's contents: `name` is _stagecraft for the package's own (the bundled kernels and
// lessons), the user's for a module of their kernels (stagecraft_add_python_module,
// cmake/stagecraftHelpers.cmake), which has the same bindings over its own registry (each
// module links its own copy of the front end) and raises the package's exceptions.
void stagecraft::python::define_module(py::module_& m, std::string const& name) {
  m.doc() = "stagecraft's C++ core: a kernel registry and the CPU backends (see the stagecraft package)";
  // pybind11 before 2.12 reads NumPy 2's dtypes with NumPy 1's layout (an element size in the
  // wrong place: arrays copied wrongly, no error); stagecraft/__init__.py refuses that pairing.
  m.attr("pybind11_version") = py::make_tuple(PYBIND11_VERSION_MAJOR, PYBIND11_VERSION_MINOR);
  // A mistake in what the user asked for: the CLI's usage errors and the verifier's
  // configuration errors (a value its ops do not allow), one line each. A protocol error the
  // verifier finds before any run (e.g. TMEM never freed): VerifierProtocolError. One class of
  // each for every module: the package's, which a user module imports.
  // (Held for the life of the process: a static py::object would be released after Python.)
  // No usable GPU (no driver, no device stagecraft generates code for, a build without the
  // toolkit): NoDeviceError, the CLI's "no CUDA driver available" line; a driver call that failed
  // on a GPU: DeviceError with the driver's words.
  static PyObject *usage = nullptr, *protocol = nullptr, *no_device = nullptr, *device = nullptr;
  if (name == "_stagecraft") {
    usage = py::exception<usage_error>(m, "UsageError").release().ptr();
    protocol = py::exception<ir::ProtocolError>(m, "VerifierProtocolError").release().ptr();
    no_device = py::exception<no_device_error>(m, "NoDeviceError", PyExc_RuntimeError).release().ptr();
    device = py::exception<device_error>(m, "DeviceError", PyExc_RuntimeError).release().ptr();
  } else {
    auto core = py::module_::import("stagecraft._stagecraft");
    usage = py::object(core.attr("UsageError")).release().ptr();
    protocol = py::object(core.attr("VerifierProtocolError")).release().ptr();
    no_device = py::object(core.attr("NoDeviceError")).release().ptr();
    device = py::object(core.attr("DeviceError")).release().ptr();
  }
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (no_device_error const& e) {
      PyErr_SetString(no_device, e.what());
    } catch (device_error const& e) {
      PyErr_SetString(device, e.what());
    } catch (ir::ProtocolError const& e) {
      PyErr_SetObject(protocol, py::make_tuple(e.what(), e.check).ptr());
    } catch (ir::ConfigError const& e) {
      PyErr_SetString(usage, e.what());
    } catch (usage_error const& e) {
      PyErr_SetString(usage, e.what());
    } catch (std::invalid_argument const& e) {
      PyErr_SetString(usage, e.what());
    }
  });

  m.def("kernels", [] {
    py::list out;
    for (auto const* e : registry::global().all()) {
      py::list params;
      for (auto const& p : e->params) {
        py::dict d;
        d["name"] = p.name;
        d["default"] = p.default_value;
        d["help"] = p.help;
        d["allowed"] = p.allowed;
        d["min"] = p.min;
        d["max"] = p.max;
        d["multiple_of"] = p.multiple_of;
        d["run_time"] = p.run_time;  // may be a launch argument (the CLI's --dynamic NAME; here {"M?": 1})
        params.append(d);
      }
      py::dict k;
      k["name"] = e->name;
      k["summary"] = e->summary;
      k["params"] = params;
      out.append(k);
    }
    return out;
  }, "The registered kernels: name, summary and each integer parameter's default and rule.");

  py::class_<bound_kernel>(m, "BoundKernel", py::module_local())
      .def_readonly("name", &bound_kernel::name)
      .def_readonly("values", &bound_kernel::values)
      .def_property_readonly("arrays",
                             [](bound_kernel const& b) {
                               py::list l;
                               for (std::size_t i = 0; i < b.k.params.size(); ++i) {
                                 auto const& p = b.k.params[i];
                                 py::dict d;
                                 d["name"] = p.name;
                                 d["dtype"] = ir::dtype_name(p.dtype);
                                 d["numpy"] = numpy_name(p.dtype);
                                 d["shape"] = py::tuple(py::cast(numpy_shape(p.dtype, p.shape)));  // the array's (FP6: packed bytes)
                                 d["output"] = static_cast<bool>(b.written[i]);
                                 d["workspace"] = p.workspace;
                                 l.append(d);
                               }
                               return l;
                             })
      .def("show", [](bound_kernel const& b) { return ir::print(b.k); }, "The kernel's IR, as `stagecraft show` prints it.")
      .def(
          "shapes",
          [](bound_kernel const& b, std::vector<std::vector<std::int64_t>> const& shapes) {
            py::list l;
            for (auto const& p : bound_to(b, shapes).params) l.append(py::tuple(py::cast(numpy_shape(p.dtype, p.shape))));
            return l;
          },
          py::arg("shapes"), "Every GMEM parameter's array shape (FP6 packed: the innermost extent 3/4 of the elements') at the run-time extents these shapes give (one per parameter, [] where not given).")
      .def("run_device", &run_device, py::arg("ptrs"), py::arg("shapes"), py::arg("stream") = 0, py::arg("math") = "fast",
           "Enqueues the kernel on device memory (one address per non-workspace parameter) on a CUDA stream.")
      .def(
          "run_interp",
          [](bound_kernel const& b, std::vector<py::object> const& arrays, std::string const& policy, std::uint64_t seed, bool checks,
             std::string const& math) {
            interp::options o{.schedule = policy_of(policy), .seed = seed, .checks = checks, .math = math_of(math)};
            auto buffers = buffers_of(b, arrays);
            interp::result r;
            {
              py::gil_scoped_release unlocked;
              r = interp::run(b.k, std::move(buffers), o);
            }
            py::list diags;
            for (auto const& d : r.diagnostics) diags.append(diagnostic_dict(d));
            return py::make_tuple(arrays_of(r.buffers), diags, r.steps);
          },
          py::arg("arrays"), py::arg("policy") = "eager", py::arg("seed") = 0, py::arg("checks") = true, py::arg("math") = "exact")
      .def(
          "run_host",
          [](bound_kernel const& b, std::vector<py::object> const& arrays, std::uint64_t seed) {
            auto buffers = buffers_of(b, arrays);
            hostexec::result r;
            {
              py::gil_scoped_release unlocked;
              r = hostexec::run(b.k, std::move(buffers), {.seed = seed});
            }
            py::list diags;
            if (!r.ok()) {
              py::dict d;
              d["kind"] = hostexec::failure_name(r.kind);
              d["message"] = r.message;
              d["op"] = -1;
              d["cta"] = -1;
              d["warpgroup"] = -1;
              diags.append(d);
            }
            return py::make_tuple(arrays_of(r.buffers), diags, r.steps);
          },
          py::arg("arrays"), py::arg("seed") = 0)
      .def(
          "explore",
          [](bound_kernel const& b, std::vector<py::object> const& arrays, int schedules, std::string const& policy, std::uint64_t seed) {
            if (schedules < 1) throw usage_error(fmt::format("explore: schedules={} must be at least 1", schedules));
            interp::options o{.schedule = policy_of(policy), .seed = seed};
            const auto buffers = buffers_of(b, arrays);
            interp::exploration x;
            {
              py::gil_scoped_release unlocked;
              x = interp::explore(b.k, buffers, o, schedules);
            }
            py::object failure = py::none();
            if (x.failure) failure = diagnostic_dict(x.failure->diagnostics.front());
            return py::make_tuple(x.schedules, x.failing_seed ? py::cast(*x.failing_seed) : py::none(), failure);
          },
          py::arg("arrays"), py::arg("schedules") = 100, py::arg("policy") = "pct", py::arg("seed") = 0)
      .def(
          "reference",
          [](bound_kernel const& b, std::vector<py::object> const& arrays) {
            auto buffers = buffers_of(b, arrays);
            auto values = b.values;  // run-time extents at the arrays' sizes
            for (auto const& x : bind_to_buffers(b.k, buffers).extents) values[x.name] = x.value;
            b.reference(buffers, values);
            return arrays_of(buffers);
          },
          py::arg("arrays"), "What the registered C++ reference computes from the same arrays (every parameter after it).")
      .def(
          "ptx",
          [](bound_kernel const& b, std::string const& arch) {
#ifdef STAGECRAFT_HAVE_NVRTC
            auto t = b.k.target;
            if (!arch.empty()) {
              if (arch == "sm_90a") t = ir::Target::sm_90a;
              else if (arch == "sm_100a") t = ir::Target::sm_100a;
              else throw usage_error(fmt::format("arch '{}' is not one of sm_90a, sm_100a", arch));
            }
            auto k = b.k;
            k.target = t;
            const auto c = nvrtc::compile(k, t);
            py::dict d;
            d["ptx"] = c.ptx;
            d["registers"] = c.registers;
            d["spill_bytes"] = c.spill_bytes;
            return d;
#else
            (void)b, (void)arch;
            throw usage_error("this build of stagecraft has no NVRTC (the CUDA toolkit was not found when it was configured)");
#endif
          },
          py::arg("arch") = "");

  m.def("bind", &bind, py::arg("name"), py::arg("values"), "Specialise, lower and verify a registered kernel.");
  m.def("bind_lesson", &bind_lesson, py::arg("number"), py::arg("twin") = "", "A lesson's kernel, or its buggy twin of that name.");
  m.def("lessons", [] {
    py::list out;
    for (auto const* l : lesson_registry::global().all()) {
      py::list twins;
      for (auto const& t : l->twins) {
        py::dict d;
        d["name"] = t.name;
        d["mistake"] = t.mistake;
        d["expect"] = t.expect;
        d["policy"] = t.policy;
        twins.append(d);
      }
      py::dict d;
      d["number"] = l->number;
      d["slug"] = l->slug;
      d["title"] = l->title;
      d["twins"] = twins;
      out.append(d);
    }
    return out;
  }, "The lessons: number, slug, title and each buggy twin's mistake and expected check.");
}
