#include "library.hpp"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "stagecraft/nvrtc/nvrtc.hpp"

namespace stagecraft::nvrtc::detail {
namespace {

// Sonames newest first. NVRTC 12.8+ also targets sm_90a and sm_100a, and every entry point we
// use has kept its signature since 11.x.
constexpr const char* sonames[] = {"libnvrtc.so.13", "libnvrtc.so.12"};

// Folders to try, in order: what the user names, the toolkit's usual homes, then the pip wheels
// (nvidia-cuda-nvrtc puts CUDA 13 in nvidia/cu13/lib and CUDA 12 in nvidia/cuda_nvrtc/lib).
// The loader's own search (LD_LIBRARY_PATH, ld.so.cache) is tried between the toolkit and the
// wheels, by bare soname.
std::vector<std::string> toolkit_dirs() {
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char* v = std::getenv(var); v && *v)
      for (const char* sub : {"/lib64", "/lib", "/targets/x86_64-linux/lib", "/targets/sbsa-linux/lib"}) dirs.push_back(std::string(v) + sub);
#ifdef STAGECRAFT_CUDA_LIBRARY_DIR
  dirs.push_back(STAGECRAFT_CUDA_LIBRARY_DIR);  // where configure found the toolkit
#endif
  for (const char* d : {"/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/local/cuda/targets/x86_64-linux/lib",
                        "/usr/local/cuda/targets/sbsa-linux/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64"})
    dirs.push_back(d);
  return dirs;
}

std::vector<std::string> wheel_dirs() {
  std::vector<std::string> patterns;
  for (const char* root : {"/usr/lib/python3*", "/usr/local/lib/python3*", "/opt/*/lib/python3*", "/opt/*/.venv/lib/python3*",
                           "/opt/conda/lib/python3*"})
    for (const char* pkg : {"site-packages", "dist-packages"}) patterns.push_back(fmt::format("{}/{}", root, pkg));
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char* v = std::getenv(var); v && *v) patterns.push_back(std::string(v) + "/lib/python3*/site-packages");
  if (const char* h = std::getenv("HOME"); h && *h) patterns.push_back(std::string(h) + "/.local/lib/python3*/site-packages");
  std::vector<std::string> dirs;
  for (auto const& p : patterns)
    for (const char* sub : {"/nvidia/cu13/lib", "/nvidia/cuda_nvrtc/lib"}) {
      glob_t g{};
      if (::glob((p + sub).c_str(), 0, nullptr, &g) == 0)
        for (std::size_t i = 0; i < g.gl_pathc; ++i) dirs.emplace_back(g.gl_pathv[i]);
      ::globfree(&g);
    }
  return dirs;
}

template <class F>
bool bind(void* h, const char* name, F& fn) {
  fn = reinterpret_cast<F>(::dlsym(h, name));
  return fn != nullptr;
}

// libnvrtc dlopens its builtins library by soname (libnvrtc-builtins.so.13.0), which the
// loader finds only on its own path. Loading it first from NVRTC's folder makes that later
// dlopen return this copy (the loader matches loaded objects by soname), so a toolkit or wheel
// off the loader's path works; without it every compile fails with "failed to open
// libnvrtc-builtins" (seen in the bundle's minimal-root test).
void preload_builtins(std::filesystem::path const& dir) {
  glob_t g{};
  if (::glob((dir / "libnvrtc-builtins.so.*").c_str(), 0, nullptr, &g) == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) ::dlopen(g.gl_pathv[i], RTLD_NOW | RTLD_LOCAL);  // kept loaded for the process
  ::globfree(&g);
}

// One candidate: a path (or a bare soname for the loader's search). Returns the handle or null,
// appending why to `tried`.
void* open(std::string const& what, std::vector<std::string>& tried) {
  if (what.find('/') != std::string::npos) {
    std::error_code ec;
    if (!std::filesystem::exists(what, ec)) return nullptr;  // not worth listing every absent path
    preload_builtins(std::filesystem::path(what).parent_path());
  }
  void* h = ::dlopen(what.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) tried.push_back(fmt::format("{} ({})", what, ::dlerror()));
  return h;
}

library load_once() {
  std::vector<std::string> candidates;
  if (const char* v = std::getenv("STAGECRAFT_NVRTC"); v && *v) {
    // A file, or a folder holding one of the sonames.
    std::error_code ec;
    if (std::filesystem::is_directory(v, ec))
      for (const char* so : sonames) candidates.push_back(fmt::format("{}/{}", v, so));
    else
      candidates.emplace_back(v);
  }
  for (auto const& d : toolkit_dirs())
    for (const char* so : sonames) candidates.push_back(fmt::format("{}/{}", d, so));
  for (const char* so : sonames) candidates.emplace_back(so);
  for (auto const& d : wheel_dirs())
    for (const char* so : sonames) candidates.push_back(fmt::format("{}/{}", d, so));

  std::vector<std::string> tried;
  for (auto const& c : candidates) {
    void* h = open(c, tried);
    if (!h) continue;
    library lib;
    bool ok = bind(h, "nvrtcVersion", lib.version) && bind(h, "nvrtcGetErrorString", lib.error_string) &&
              bind(h, "nvrtcCreateProgram", lib.create) && bind(h, "nvrtcCompileProgram", lib.compile) &&
              bind(h, "nvrtcDestroyProgram", lib.destroy) && bind(h, "nvrtcGetProgramLogSize", lib.log_size) &&
              bind(h, "nvrtcGetProgramLog", lib.log) && bind(h, "nvrtcGetPTXSize", lib.ptx_size) && bind(h, "nvrtcGetPTX", lib.ptx) &&
              bind(h, "nvrtcGetCUBINSize", lib.cubin_size) && bind(h, "nvrtcGetCUBIN", lib.cubin);
    if (!ok) {
      tried.push_back(fmt::format("{} (lacks an entry point stagecraft needs)", c));
      ::dlclose(h);
      continue;
    }
    Dl_info info{};
    lib.path = ::dladdr(reinterpret_cast<void*>(lib.version), &info) && info.dli_fname ? info.dli_fname : c;
    return lib;
  }
  throw unavailable(fmt::format(
      "NVRTC not available: no loadable libnvrtc.so.13 or .so.12 in $STAGECRAFT_NVRTC, $CUDA_HOME/$CUDA_PATH, /usr/local/cuda, "
      "the loader's path or the nvidia-cuda-nvrtc Python wheel{}{}; install the CUDA toolkit, or point STAGECRAFT_NVRTC at "
      "libnvrtc.so.13 or its folder",
      tried.empty() ? "" : "; tried: ", fmt::join(tried, "; ")));
}

}  // namespace

library const& load() {
  // A failed load is remembered too: the message is the same every time and the search is not
  // repeated per kernel.
  static const auto result = []() -> std::pair<library, std::string> {
    try {
      return {load_once(), {}};
    } catch (unavailable const& e) {
      return {library{}, e.what()};
    }
  }();
  if (!result.second.empty()) throw unavailable(result.second);
  return result.first;
}

}  // namespace stagecraft::nvrtc::detail
