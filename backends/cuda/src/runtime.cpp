#include "stagecraft/cuda/runtime.hpp"

#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "stagecraft/cuda/tensor_map.hpp"
#include "stagecraft/nvrtc/nvrtc.hpp"

namespace stagecraft::cuda {
namespace {

// The driver entry points we use, resolved through cuGetProcAddress.
struct driver {
  void* handle = nullptr;
  std::string error;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, CUfunction_attribute, int) = nullptr;
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                                     const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventQuery)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream) = nullptr;
  CUresult (*cuMemAllocAsync)(CUdeviceptr*, size_t, CUstream) = nullptr;
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream) = nullptr;
  CUcontext context = nullptr;
  CUdevice device = 0;
  status st;
};

driver& load() {
  static driver d = [] {
    driver d;
    d.handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!d.handle) {
      d.st.reason = fmt::format("no CUDA driver available: libcuda.so.1 could not be loaded ({})", ::dlerror());
      return d;
    }
    using gpa_t = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
    auto gpa = reinterpret_cast<gpa_t>(::dlsym(d.handle, "cuGetProcAddress_v2"));
    if (!gpa) {
      d.st.reason = "no CUDA driver available: this libcuda.so.1 has no cuGetProcAddress_v2 (driver older than CUDA 12)";
      return d;
    }
    bool ok = true;
    auto get = [&](const char* name, auto& fn) {
      void* p = nullptr;
      CUdriverProcAddressQueryResult q{};
      if (gpa(name, &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS || !p) ok = false;
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    get("cuInit", d.cuInit);
    get("cuGetErrorString", d.cuGetErrorString);
    get("cuDeviceGet", d.cuDeviceGet);
    get("cuDeviceGetCount", d.cuDeviceGetCount);
    get("cuDeviceGetName", d.cuDeviceGetName);
    get("cuDeviceGetAttribute", d.cuDeviceGetAttribute);
    get("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain);
    get("cuCtxSetCurrent", d.cuCtxSetCurrent);
    get("cuCtxSynchronize", d.cuCtxSynchronize);
    get("cuModuleLoadData", d.cuModuleLoadData);
    get("cuModuleUnload", d.cuModuleUnload);
    get("cuModuleGetFunction", d.cuModuleGetFunction);
    get("cuFuncSetAttribute", d.cuFuncSetAttribute);
    get("cuLaunchKernelEx", d.cuLaunchKernelEx);
    get("cuMemAlloc", d.cuMemAlloc);
    get("cuMemFree", d.cuMemFree);
    get("cuMemcpyHtoD", d.cuMemcpyHtoD);
    get("cuMemcpyDtoH", d.cuMemcpyDtoH);
    get("cuMemcpyDtoD", d.cuMemcpyDtoD);
    get("cuTensorMapEncodeTiled", d.cuTensorMapEncodeTiled);
    get("cuEventCreate", d.cuEventCreate);
    get("cuEventRecord", d.cuEventRecord);
    get("cuEventQuery", d.cuEventQuery);
    get("cuEventElapsedTime", d.cuEventElapsedTime);
    get("cuEventDestroy", d.cuEventDestroy);
    get("cuMemsetD32Async", d.cuMemsetD32Async);
    get("cuMemsetD8", d.cuMemsetD8);
    get("cuMemsetD8Async", d.cuMemsetD8Async);
    get("cuMemAllocAsync", d.cuMemAllocAsync);
    get("cuMemFreeAsync", d.cuMemFreeAsync);
    if (!ok) {
      d.st.reason = "no CUDA driver available: libcuda.so.1 lacks entry points stagecraft needs";
      return d;
    }
    if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
      const char* s = nullptr;
      d.cuGetErrorString(r, &s);
      d.st.reason = fmt::format("no CUDA driver available: cuInit failed ({})", s ? s : "unknown error");
      return d;
    }
    int count = 0;
    if (d.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
      d.st.reason = "no CUDA driver available: the driver sees no device";
      return d;
    }
    char name[256] = {};
    d.cuDeviceGet(&d.device, 0);
    d.cuDeviceGetName(name, sizeof name, d.device);
    d.cuDeviceGetAttribute(&d.st.compute_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d.device);
    d.cuDeviceGetAttribute(&d.st.compute_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d.device);
    d.cuDeviceGetAttribute(&d.st.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d.device);
    d.st.target = target_for(d.st.compute_major, d.st.compute_minor);
    if (!d.st.target)
      d.st.unsupported = fmt::format(
          "device 0 ('{}', compute capability {}.{}) cannot run stagecraft's code: it generates sm_90a (compute capability 9.0: "
          "H100, H200) and sm_100a (10.0: B200, GB200) only",
          name, d.st.compute_major, d.st.compute_minor);
    if (d.cuDevicePrimaryCtxRetain(&d.context, d.device) != CUDA_SUCCESS) {
      d.st.reason = "no CUDA driver available: could not create a context on device 0";
      return d;
    }
    d.st.available = true;
    d.st.device = name;
    return d;
  }();
  return d;
}

std::string error_text(driver& d, CUresult r) {
  const char* s = nullptr;
  d.cuGetErrorString(r, &s);
  return s ? s : fmt::format("CUDA error {}", static_cast<int>(r));
}

void check(driver& d, CUresult r, std::string const& what) {
  if (r == CUDA_SUCCESS) return;
  throw error(fmt::format("CUDA: {} failed: {}", what, error_text(d, r)));
}

// Waits for `done` with a deadline instead of cuEventSynchronize, which would wait for ever on a
// hung kernel.
void wait_for(driver& d, CUevent done, std::uint32_t deadline_ms, std::string const& kernel, bool watchdog) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const CUresult r = d.cuEventQuery(done);
    if (r == CUDA_SUCCESS) return;
    if (r != CUDA_ERROR_NOT_READY)
      throw error(fmt::format("CUDA: running '{}' failed: {}{}", kernel, error_text(d, r),
                              watchdog && (r == CUDA_ERROR_LAUNCH_FAILED || r == CUDA_ERROR_ILLEGAL_INSTRUCTION)
                                  ? " (with the watchdog on, this is most likely a barrier wait that timed out: its report, printed "
                                    "by the device, names the barrier, completion and CTA)"
                                  : ""));
    const auto waited = std::chrono::steady_clock::now() - start;
    if (deadline_ms && waited > std::chrono::milliseconds(deadline_ms))
      throw timeout(fmt::format("'{}' did not finish within {} ms: the kernel hangs (a barrier wait that never completes{}) or needs a "
                                "longer deadline; the device is unusable for the rest of this process",
                                kernel, deadline_ms, watchdog ? " the watchdog did not catch" : "; run with the watchdog on to find it"));
    std::this_thread::sleep_for(waited < std::chrono::milliseconds(2) ? std::chrono::microseconds(20) : std::chrono::microseconds(200));
  }
}

CUtensorMapDataType tma_type(ir::DType t) {
  switch (t) {
    case ir::DType::f32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case ir::DType::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case ir::DType::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case ir::DType::i32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case ir::DType::u32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case ir::DType::i8: case ir::DType::u8: case ir::DType::e2m1x2: case ir::DType::ue4m3: case ir::DType::e4m3: case ir::DType::e5m2: case ir::DType::pred:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;  // same bytes; TMA does not convert (pred: never in memory)
    case ir::DType::e2m3: case ir::DType::e3m2:
      return CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;  // packed in GMEM, 16 a 16-byte unit in SMEM (ir/types.hpp)
    case ir::DType::e2m1:
      return CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B;  // the same, 4 bits an element
  }
  return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}
CUtensorMapSwizzle tma_swizzle(int bytes) {
  switch (bytes) {
    case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
    default: return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

}  // namespace

std::optional<ir::Target> target_for(int major, int minor) {
  if (major == 9 && minor == 0) return ir::Target::sm_90a;
  if (major == 10 && minor == 0) return ir::Target::sm_100a;
  return std::nullopt;
}

std::optional<std::string> unusable(status const& st) {
  if (!st.available) return st.reason;
  if (!st.target) return st.unsupported;
  try {
    nvrtc::library_path();
  } catch (nvrtc::unavailable const& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

status driver_status() { return load().st; }

namespace {

driver& usable_for(nvrtc::compiled const& c, ir::Kernel const& k) {
  driver& d = load();
  if (!d.st.available) throw error(d.st.reason);
  if (!d.st.target) throw error(d.st.unsupported);
  if (c.target != *d.st.target)
    throw error(fmt::format("'{}' was compiled for {} but device 0 ('{}') runs {} code", k.name, ir::target_name(c.target), d.st.device,
                            ir::target_name(*d.st.target)));
  check(d, d.cuCtxSetCurrent(d.context), "setting the context");
  return d;
}

// The tensor maps the generated kernel takes, over the GMEM parameters at these device
// addresses: validated in plain English first, then encoded.
std::vector<CUtensorMap> encode_maps(driver& d, nvrtc::compiled const& c, ir::Kernel const& k, std::span<const std::uintptr_t> ptrs) {
  std::vector<CUtensorMap> maps(c.code.maps.size());
  for (std::size_t m = 0; m < maps.size(); ++m) {
    auto const& spec = c.code.maps[m];
    // The shape of this launch's kernel, not the one it was compiled for: with run-time extents
    // one compiled kernel serves many.
    const auto a = encode_args({k.params[spec.param].name, spec.dtype, ptrs[spec.param], k.params[spec.param].shape, spec.box, spec.swizzle, spec.elem_strides,
                                spec.nan_fill});
    std::array<cuuint64_t, 5> dims{};
    std::array<cuuint64_t, 4> strides{};
    std::array<cuuint32_t, 5> box{}, elem_strides{};
    std::copy(a.dims.begin(), a.dims.end(), dims.begin());
    std::copy(a.strides.begin(), a.strides.end(), strides.begin());
    std::copy(a.box.begin(), a.box.end(), box.begin());
    std::copy(a.elem_strides.begin(), a.elem_strides.end(), elem_strides.begin());
    const int rank = static_cast<int>(a.rank);
    check(d,
          d.cuTensorMapEncodeTiled(&maps[m], tma_type(spec.dtype), static_cast<cuuint32_t>(rank), reinterpret_cast<void*>(ptrs[spec.param]),
                                   dims.data(), strides.data(), box.data(), elem_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
                                   tma_swizzle(spec.swizzle), CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                   spec.nan_fill ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
          fmt::format("cuTensorMapEncodeTiled for '{}'", k.params[spec.param].name));
  }
  return maps;
}

// A loaded kernel: module, function and its attributes, kept for the process by cache key, so
// launching the same compiled kernel again costs no module load.
CUfunction function_for(driver& d, nvrtc::compiled const& c, ir::Kernel const& k) {
  static std::mutex m;
  static std::map<std::uint64_t, CUfunction> loaded;
  std::lock_guard lock(m);
  if (c.key != 0)
    if (auto it = loaded.find(c.key); it != loaded.end()) return it->second;
  CUmodule module = nullptr;
  check(d, d.cuModuleLoadData(&module, c.cubin.data()), "loading the CUBIN");
  CUfunction fn = nullptr;
  check(d, d.cuModuleGetFunction(&fn, module, c.code.entry.c_str()), "finding the kernel");
  check(d, d.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(c.code.smem_bytes)),
        "allowing the kernel's dynamic shared memory");
  if (k.cluster_nonportable) check(d, d.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), "allowing a non-portable cluster");
  if (c.key != 0) loaded[c.key] = fn;  // modules of keyless (uncached) compiles are not kept either
  return fn;
}

// Enqueues one launch with the kernel's grid, cluster and dynamic SMEM; `args` holds the maps,
// the GMEM pointers, then the run-time extents (the generated kernel's signature, in order).
void enqueue(driver& d, nvrtc::compiled const& c, ir::Kernel const& k, CUfunction fn, std::vector<CUtensorMap>& maps,
             std::vector<CUdeviceptr>& ptrs, CUstream stream) {
  std::vector<void*> args;
  for (auto& m : maps) args.push_back(&m);
  for (auto& p : ptrs) args.push_back(&p);
  std::vector<long long> extents;
  for (auto const& x : k.extents) extents.push_back(x.value);
  for (auto& x : extents) args.push_back(&x);
  CUlaunchConfig cfg{};
  cfg.gridDimX = static_cast<unsigned>(k.grid[0]);
  cfg.gridDimY = static_cast<unsigned>(k.grid[1]);
  cfg.gridDimZ = static_cast<unsigned>(k.grid[2]);
  cfg.blockDimX = static_cast<unsigned>(c.code.block_threads);
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = static_cast<unsigned>(c.code.smem_bytes);
  cfg.hStream = stream;
  CUlaunchAttribute attr{};
  if (k.cluster_rank > 0) {
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = static_cast<unsigned>(k.cluster[0]);
    attr.value.clusterDim.y = static_cast<unsigned>(k.cluster[1]);
    attr.value.clusterDim.z = static_cast<unsigned>(k.cluster[2]);
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
  }
  check(d, d.cuLaunchKernelEx(&cfg, fn, args.data(), nullptr), fmt::format("launching '{}'", k.name));
}

// One buffer per GMEM parameter, each the parameter's size: the device arrays (and a workspace's
// zero-fill) are sized from them.
void check_buffers(ir::Kernel const& k, std::vector<host_tensor> const& buffers) {
  if (buffers.size() != k.params.size())
    throw error(fmt::format("'{}' takes {} buffers (one per GMEM parameter, workspaces included), got {}", k.name, k.params.size(), buffers.size()));
  for (std::size_t i = 0; i < buffers.size(); ++i)
    if (static_cast<std::int64_t>(buffers[i].bytes.size()) != host_tensor::byte_count(k.params[i].dtype, k.params[i].shape))
      throw error(fmt::format("'{}': the buffer for parameter '{}' has {} bytes, its shape needs {}", k.name, k.params[i].name,
                              buffers[i].bytes.size(), host_tensor::byte_count(k.params[i].dtype, k.params[i].shape)));
  try {  // a bad cu_seqlens reads or writes out of bounds on the GPU: refused before the launch
    check_segment_tables(k, buffers);
  } catch (std::invalid_argument const& e) {
    throw error(e.what());
  }
}

}  // namespace

launch_result launch(nvrtc::compiled const& c, ir::Kernel const& lowered, std::vector<host_tensor> buffers, launch_options const& o) {
  // Run-time extents take the buffers' sizes: the grid, the tensor maps and the extent arguments
  // are this launch's, the code the one compiled for any of them.
  const ir::Kernel bound = lowered.extents.empty() ? ir::Kernel{} : bind_to_buffers(lowered, buffers);
  ir::Kernel const& k = lowered.extents.empty() ? lowered : bound;
  check_buffers(k, buffers);
  driver& d = usable_for(c, k);
  // Device buffers, freed on every path out.
  struct device_buffers {
    driver& d;
    std::vector<CUdeviceptr> p;
    ~device_buffers() {
      for (auto x : p) d.cuMemFree(x);
    }
  } dev{d, {}};
  // Inputs are uploaded; a workspace is zero-filled on the device instead (and before every
  // repeat), whatever its slot holds.
  auto fill = [&](std::size_t i, char const* what) {
    if (k.params[i].workspace) check(d, d.cuMemsetD8(dev.p[i], 0, buffers[i].bytes.size()), fmt::format("zero-filling workspace '{}'", k.params[i].name));
    else check(d, d.cuMemcpyHtoD(dev.p[i], buffers[i].bytes.data(), buffers[i].bytes.size()), what);
  };
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    CUdeviceptr ptr = 0;
    check(d, d.cuMemAlloc(&ptr, std::max<std::size_t>(buffers[i].bytes.size(), 16)), "cuMemAlloc");
    dev.p.push_back(ptr);
    fill(i, "copying an input to the device");
  }
  const std::vector<std::uintptr_t> addrs(dev.p.begin(), dev.p.end());
  auto maps = encode_maps(d, c, k, addrs);
  CUfunction fn = function_for(d, c, k);
  CUevent start = nullptr, stop = nullptr;
  check(d, d.cuEventCreate(&start, CU_EVENT_DEFAULT), "creating an event");
  check(d, d.cuEventCreate(&stop, CU_EVENT_DEFAULT), "creating an event");
  std::vector<float> times;
  launch_result out;
  for (int rep = 0; rep < std::max(o.repeats, 1); ++rep) {
    if (rep > 0)  // every repeat starts from the same inputs
      for (std::size_t i = 0; i < buffers.size(); ++i) fill(i, "resetting an input");
    check(d, d.cuEventRecord(start, nullptr), "recording an event");
    enqueue(d, c, k, fn, maps, dev.p, nullptr);
    check(d, d.cuEventRecord(stop, nullptr), "recording an event");
    wait_for(d, stop, o.deadline_ms, k.name, c.code.options.watchdog_ms > 0);
    float ms = 0;
    check(d, d.cuEventElapsedTime(&ms, start, stop), "timing the kernel");
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  out.milliseconds = times[times.size() / 2];
  d.cuEventDestroy(start);
  d.cuEventDestroy(stop);
  for (std::size_t i = 0; i < buffers.size(); ++i)  // a workspace's slot comes back as given
    if (!k.params[i].workspace) check(d, d.cuMemcpyDtoH(buffers[i].bytes.data(), dev.p[i], buffers[i].bytes.size()), "copying a result back");
  out.buffers = std::move(buffers);
  return out;
}

std::vector<int> caller_params(ir::Kernel const& k) {
  std::vector<int> out;
  for (std::size_t p = 0; p < k.params.size(); ++p)
    if (!k.params[p].workspace) out.push_back(static_cast<int>(p));
  return out;
}

void launch_on_device(nvrtc::compiled const& c, ir::Kernel const& k, std::span<const std::uintptr_t> device_ptrs, void* stream) {
  const auto given = caller_params(k);
  if (device_ptrs.size() != given.size())
    throw error(fmt::format("'{}' takes {} device arrays (one per GMEM parameter that is not a workspace), got {}", k.name, given.size(),
                            device_ptrs.size()));
  driver& d = usable_for(c, k);
  const auto s = static_cast<CUstream>(stream);
  // Workspaces: stream-ordered allocation, zero-fill and free around the launch, so the call
  // stays asynchronous and the memory lives exactly as long as the launch that uses it.
  std::vector<CUdeviceptr> ptrs(k.params.size(), 0), owned;
  auto free_owned = [&] {
    for (auto p : owned) d.cuMemFreeAsync(p, s);
  };
  try {
    for (std::size_t i = 0; i < given.size(); ++i) ptrs[given[i]] = device_ptrs[i];
    for (std::size_t p = 0; p < k.params.size(); ++p) {
      if (!k.params[p].workspace) continue;
      const auto bytes = static_cast<std::size_t>(host_tensor::byte_count(k.params[p].dtype, k.params[p].shape));
      check(d, d.cuMemAllocAsync(&ptrs[p], std::max<std::size_t>(bytes, 16), s), fmt::format("allocating workspace '{}'", k.params[p].name));
      owned.push_back(ptrs[p]);
      check(d, d.cuMemsetD8Async(ptrs[p], 0, bytes, s), fmt::format("zero-filling workspace '{}'", k.params[p].name));
    }
    const std::vector<std::uintptr_t> addrs(ptrs.begin(), ptrs.end());
    auto maps = encode_maps(d, c, k, addrs);
    enqueue(d, c, k, function_for(d, c, k), maps, ptrs, s);
  } catch (...) {
    free_owned();
    throw;
  }
  free_owned();
}

void synchronize(void* stream, std::uint32_t deadline_ms) {
  driver& d = load();
  if (!d.st.available) throw error(d.st.reason);
  CUevent done = nullptr;
  check(d, d.cuEventCreate(&done, CU_EVENT_DISABLE_TIMING), "creating an event");
  check(d, d.cuEventRecord(done, static_cast<CUstream>(stream)), "recording an event");
  try {
    wait_for(d, done, deadline_ms, "the stream's work", false);
  } catch (...) {
    d.cuEventDestroy(done);
    throw;
  }
  d.cuEventDestroy(done);
}

device_memory::device_memory(std::size_t bytes) : bytes_(bytes) {
  driver& d = load();
  if (!d.st.available) throw error(d.st.reason);
  check(d, d.cuCtxSetCurrent(d.context), "setting the context");
  CUdeviceptr p = 0;
  check(d, d.cuMemAlloc(&p, std::max<std::size_t>(bytes, 16)), fmt::format("cuMemAlloc of {} bytes", bytes));
  ptr_ = p;
}
device_memory::~device_memory() {
  if (ptr_) load().cuMemFree(static_cast<CUdeviceptr>(ptr_));
}
void device_memory::upload(std::span<const std::byte> from) {
  if (from.size() != bytes_) throw error(fmt::format("upload of {} bytes into a device array of {}", from.size(), bytes_));
  driver& d = load();
  check(d, d.cuMemcpyHtoD(static_cast<CUdeviceptr>(ptr_), from.data(), from.size()), "copying to the device");
}
void device_memory::download(std::span<std::byte> to) const {
  if (to.size() != bytes_) throw error(fmt::format("download of a device array of {} bytes into {}", bytes_, to.size()));
  driver& d = load();
  check(d, d.cuMemcpyDtoH(to.data(), static_cast<CUdeviceptr>(ptr_), to.size()), "copying from the device");
}

namespace {

// Device memory and events freed on every path out of a benchmark.
struct bench_resources {
  driver& d;
  std::vector<CUdeviceptr> mem;
  CUevent start = nullptr, stop = nullptr;
  explicit bench_resources(driver& dd) : d(dd) {
    check(d, d.cuEventCreate(&start, CU_EVENT_DEFAULT), "creating an event");
    check(d, d.cuEventCreate(&stop, CU_EVENT_DEFAULT), "creating an event");
  }
  ~bench_resources() {
    for (auto p : mem) d.cuMemFree(p);
    if (start) d.cuEventDestroy(start);
    if (stop) d.cuEventDestroy(stop);
  }
  CUdeviceptr alloc(std::size_t bytes) {
    CUdeviceptr p = 0;
    check(d, d.cuMemAlloc(&p, std::max<std::size_t>(bytes, 16)), fmt::format("cuMemAlloc of {} bytes", bytes));
    mem.push_back(p);
    return p;
  }
};

// The timing loop shared by kernels and copies: `enqueue_one` puts one launch on the default stream.
template <class F>
timing time_launches(driver& d, bench_resources& res, timing_options const& o, std::string const& what, bool watchdog, F&& enqueue_one,
                     std::function<void()> after_first = {}, std::function<void()> before_each = {}) {
  timing t;
  int l2 = 0;
  d.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d.device);
  t.l2_bytes = static_cast<std::size_t>(std::max(l2, 0));
  const std::size_t flush_words = std::max<std::size_t>(t.l2_bytes * 2 / 4, 1);
  const CUdeviceptr flush = o.flush_l2 ? res.alloc(flush_words * 4) : 0;
  for (int i = 0; i < std::max(o.warmup, 1); ++i) {
    if (before_each) before_each();
    check(d, d.cuEventRecord(res.start, nullptr), "recording an event");
    enqueue_one();
    check(d, d.cuEventRecord(res.stop, nullptr), "recording an event");
    wait_for(d, res.stop, o.deadline_ms, what, watchdog);
    if (i == 0 && after_first) after_first();
  }
  const auto began = std::chrono::steady_clock::now();
  for (int rep = 0; rep < std::max(o.max_reps, 1); ++rep) {
    if (flush) check(d, d.cuMemsetD32Async(flush, static_cast<unsigned>(rep), flush_words, nullptr), "flushing the L2");
    if (before_each) before_each();
    check(d, d.cuEventRecord(res.start, nullptr), "recording an event");
    enqueue_one();
    check(d, d.cuEventRecord(res.stop, nullptr), "recording an event");
    wait_for(d, res.stop, o.deadline_ms, what, watchdog);
    float ms = 0;
    check(d, d.cuEventElapsedTime(&ms, res.start, res.stop), "timing " + what);
    t.ms.push_back(ms);
    const auto n = t.ms.size();
    if (static_cast<int>(n) < o.min_reps) continue;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() > o.max_seconds) break;
    // The median's 95% interval from order statistics: ranks n/2 -+ 0.98 sqrt(n).
    auto sorted = t.ms;
    std::sort(sorted.begin(), sorted.end());
    const double half = 0.98 * std::sqrt(static_cast<double>(n));
    const auto lo = static_cast<std::size_t>(std::max(0.0, std::floor(n / 2.0 - half)));
    const auto hi = std::min(n - 1, static_cast<std::size_t>(std::ceil(n / 2.0 + half)));
    const double med = sorted[n / 2];
    if (med > 0 && (sorted[hi] - sorted[lo]) / med <= o.target_spread) break;
  }
  return t;
}

}  // namespace

timing benchmark(nvrtc::compiled const& c, ir::Kernel const& k, std::vector<host_tensor> buffers, timing_options const& o) {
  check_buffers(k, buffers);
  driver& d = usable_for(c, k);
  bench_resources res(d);
  std::vector<CUdeviceptr> ptrs;
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    auto const& b = buffers[i];
    ptrs.push_back(res.alloc(b.bytes.size()));
    if (!k.params[i].workspace) check(d, d.cuMemcpyHtoD(ptrs.back(), b.bytes.data(), b.bytes.size()), "copying an input to the device");
  }
  const std::vector<std::uintptr_t> addrs(ptrs.begin(), ptrs.end());
  auto maps = encode_maps(d, c, k, addrs);
  CUfunction fn = function_for(d, c, k);
  // Every launch finds its workspaces zeroed, as a single launch does; the fill is enqueued
  // before the start event, so it is not timed.
  auto zero_workspaces = [&] {
    for (std::size_t i = 0; i < buffers.size(); ++i)
      if (k.params[i].workspace)
        check(d, d.cuMemsetD8Async(ptrs[i], 0, buffers[i].bytes.size(), nullptr), fmt::format("zero-filling workspace '{}'", k.params[i].name));
  };
  auto t = time_launches(
      d, res, o, "'" + k.name + "'", c.code.options.watchdog_ms > 0, [&] { enqueue(d, c, k, fn, maps, ptrs, nullptr); },
      [&] {
        for (std::size_t i = 0; i < buffers.size(); ++i)
          if (!k.params[i].workspace) check(d, d.cuMemcpyDtoH(buffers[i].bytes.data(), ptrs[i], buffers[i].bytes.size()), "copying a result back");
      },
      zero_workspaces);
  t.buffers = std::move(buffers);
  return t;
}

timing benchmark_copy(std::size_t bytes, timing_options const& o) {
  driver& d = load();
  if (!d.st.available) throw error(d.st.reason);
  check(d, d.cuCtxSetCurrent(d.context), "setting the context");
  bench_resources res(d);
  const CUdeviceptr a = res.alloc(bytes), b = res.alloc(bytes);
  return time_launches(d, res, o, "a device-to-device copy", false, [&] { check(d, d.cuMemcpyDtoD(b, a, bytes), "cuMemcpyDtoD"); });
}

float device_copy_ms(std::size_t bytes, int repeats) {
  driver& d = load();
  if (!d.st.available) throw error(d.st.reason);
  check(d, d.cuCtxSetCurrent(d.context), "setting the context");
  CUdeviceptr a = 0, b = 0;
  check(d, d.cuMemAlloc(&a, bytes), "cuMemAlloc");
  check(d, d.cuMemAlloc(&b, bytes), "cuMemAlloc");
  CUevent start = nullptr, stop = nullptr;
  check(d, d.cuEventCreate(&start, CU_EVENT_DEFAULT), "creating an event");
  check(d, d.cuEventCreate(&stop, CU_EVENT_DEFAULT), "creating an event");
  std::vector<float> times;
  for (int rep = 0; rep < std::max(repeats, 1) + 1; ++rep) {  // the first one warms up
    check(d, d.cuEventRecord(start, nullptr), "recording an event");
    check(d, d.cuMemcpyDtoD(b, a, bytes), "cuMemcpyDtoD");
    check(d, d.cuEventRecord(stop, nullptr), "recording an event");
    wait_for(d, stop, 10000, "a device-to-device copy", false);
    float ms = 0;
    check(d, d.cuEventElapsedTime(&ms, start, stop), "timing the copy");
    if (rep > 0) times.push_back(ms);
  }
  d.cuEventDestroy(start);
  d.cuEventDestroy(stop);
  d.cuMemFree(a);
  d.cuMemFree(b);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace stagecraft::cuda
